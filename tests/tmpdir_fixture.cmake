# The temporary directory every test of a ctest run is given as TMPDIR (see CMakeLists.txt here).
#   MODE=setup: DIR made fresh and empty, so what a previous run left cannot hide or mask anything.
#   MODE=check: passes only if DIR is empty again, that is, every test removed what it wrote
#               (gf::test::ScratchDir, mktemp -d with a trap); otherwise fails, listing what is
#               left, and leaves it there to be looked at (the next run's setup removes it).
if(NOT DIR)
  message(FATAL_ERROR "tmpdir_fixture.cmake: -DDIR=... is required")
endif()
if(MODE STREQUAL "setup")
  file(REMOVE_RECURSE "${DIR}")
  file(MAKE_DIRECTORY "${DIR}")
elseif(MODE STREQUAL "check")
  # Hidden files and dangling symlinks are listed too; symlinks are not followed.
  file(GLOB_RECURSE left LIST_DIRECTORIES true RELATIVE "${DIR}" "${DIR}/*")
  list(LENGTH left n)
  if(n GREATER 0)
    list(SUBLIST left 0 50 shown)
    list(JOIN shown "\n  " shown)
    message(FATAL_ERROR "${n} entries left in the tests' temporary directory ${DIR} (a test wrote outside its "
                        "own ScratchDir or mktemp -d directory, or did not remove it):\n  ${shown}")
  endif()
  message("the tests' temporary directory ${DIR} is empty")
else()
  message(FATAL_ERROR "tmpdir_fixture.cmake: MODE must be setup or check, not '${MODE}'")
endif()
