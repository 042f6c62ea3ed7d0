# The error-band table compiled into gpufabric (data/validation/error_bands.yaml) must be the one
# the model and the validation rows give today: `gpufabric validate --bands` recomputes it.
# A change to the model or to the rows that moves a band fails here until `make bands` is run.
execute_process(COMMAND ${GPUFABRIC} validate --bands OUTPUT_VARIABLE fresh RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "gpufabric validate --bands failed (exit ${rc})")
endif()
file(READ ${BANDS} stored)
if(NOT fresh STREQUAL stored)
  message(FATAL_ERROR "${BANDS} is stale: the model or the validation rows moved the error bands; run `make bands`")
endif()
