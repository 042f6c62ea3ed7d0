# Runs `mpirun ... gpufabric probe --mpi --quick` and passes only if it exits 0 AND prints a
# point-to-point bandwidth line (CTest's PASS_REGULAR_EXPRESSION alone would ignore the exit code).
# Whatever Open MPI and the ranks write to TMPDIR (session directories, the storage probe's file)
# goes to a fresh directory of this test's own, removed at the end, pass or fail.
execute_process(COMMAND mktemp -d RESULT_VARIABLE rc OUTPUT_VARIABLE scratch OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "mktemp -d failed")
endif()
set(ENV{TMPDIR} "${scratch}")
function(fail msg)
  file(REMOVE_RECURSE "${scratch}")
  message(FATAL_ERROR "${msg}")
endfunction()
execute_process(COMMAND ${MPIEXEC} ${MPIEXEC_NUMPROC_FLAG} 2 --allow-run-as-root --oversubscribe ${GPUFABRIC_BIN}
                        probe --mpi --quick
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 120)
message("${out}")
if(NOT rc EQUAL 0)
  fail("mpirun exited with ${rc}: ${err}")
endif()
if(NOT out MATCHES "rank 0 \\([^)]*\\) <-> rank 1 \\([^)]*\\): 64 MiB ping-pong bandwidth [0-9.]+ GB/s")
  fail("no point-to-point bandwidth line in the output")
endif()
if(NOT out MATCHES "MPI_Allreduce over 2 rank")
  fail("no MPI_Allreduce line in the output")
endif()
file(REMOVE_RECURSE "${scratch}")
