# Runs the gpusc executable with ARGS (a ;-list) in WORKDIR and checks its exit code (RC) and
# that its combined output matches REGEX. Used by the cli.* tests.
file(MAKE_DIRECTORY "${WORKDIR}")
execute_process(COMMAND "${EXE}" ${ARGS} WORKING_DIRECTORY "${WORKDIR}" RESULT_VARIABLE rc
                OUTPUT_VARIABLE out ERROR_VARIABLE err)
set(all "${out}${err}")
if(NOT rc STREQUAL RC)
  message(FATAL_ERROR "exit code ${rc}, expected ${RC}\n--- output ---\n${all}")
endif()
if(NOT all MATCHES "${REGEX}")
  message(FATAL_ERROR "output does not match '${REGEX}'\n--- output ---\n${all}")
endif()
