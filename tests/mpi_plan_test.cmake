# Runs `mpirun -np 2 gpufabric plan case6-gigabit --mpi --db DB --format json` and passes only if
# it exits 0 and prints exactly what one process prints, and the database it wrote holds every
# candidate (a resumed single-process run then evaluates nothing and gives the same answer).
# The database, and whatever Open MPI and the ranks write to TMPDIR (session directories), go to a
# fresh directory of this test's own, removed at the end, pass or fail.
execute_process(COMMAND mktemp -d RESULT_VARIABLE rc OUTPUT_VARIABLE scratch OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "mktemp -d failed")
endif()
set(ENV{TMPDIR} "${scratch}")
set(db "${scratch}/mpi-plan.db")
function(fail msg)
  file(REMOVE_RECURSE "${scratch}")
  message(FATAL_ERROR "${msg}")
endfunction()
execute_process(COMMAND ${GPUFABRIC_BIN} plan case6-gigabit --format json --quiet
                RESULT_VARIABLE rc1 OUTPUT_VARIABLE one ERROR_VARIABLE err1 TIMEOUT 300)
if(NOT rc1 EQUAL 0)
  fail("one process exited with ${rc1}: ${err1}")
endif()
execute_process(COMMAND ${MPIEXEC} ${MPIEXEC_NUMPROC_FLAG} 2 --allow-run-as-root --oversubscribe ${GPUFABRIC_BIN}
                        plan case6-gigabit --mpi --db ${db} --format json --quiet --threads 1
                RESULT_VARIABLE rc2 OUTPUT_VARIABLE two ERROR_VARIABLE err2 TIMEOUT 300)
if(NOT rc2 EQUAL 0)
  fail("mpirun exited with ${rc2}: ${err2}")
endif()
if(NOT one STREQUAL two)
  fail("two MPI ranks answered differently from one process:\n--- one\n${one}\n--- two\n${two}")
endif()
execute_process(COMMAND ${GPUFABRIC_BIN} plan --db ${db} --show --format json
                RESULT_VARIABLE rc3 OUTPUT_VARIABLE shown ERROR_VARIABLE err3 TIMEOUT 300)
if(NOT rc3 EQUAL 0)
  fail("--show of the MPI run's database exited with ${rc3}: ${err3}")
endif()
string(JSON n1 ERROR_VARIABLE bad1 LENGTH "${one}" candidates)
string(JSON n3 ERROR_VARIABLE bad3 LENGTH "${shown}" candidates)
if(bad1 OR bad3)
  fail("not the expected JSON: ${bad1} ${bad3}")
endif()
if(NOT n1 EQUAL n3)
  fail("the MPI run stored ${n3} candidates, one process found ${n1}")
endif()
message("two ranks: same answer as one process, ${n3} candidates stored")
file(REMOVE_RECURSE "${scratch}")
