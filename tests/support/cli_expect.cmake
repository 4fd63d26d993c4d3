# Runs the gpusc executable with ARGS (a ;-list) in WORKDIR and checks its exit code (RC) and
# that its combined output matches REGEX; with FILE and FILE_REGEX, also that the file FILE
# (relative to WORKDIR) exists and matches FILE_REGEX. Used by the cli.* tests.
file(REMOVE_RECURSE "${WORKDIR}")
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
if(FILE)
  if(NOT EXISTS "${WORKDIR}/${FILE}")
    message(FATAL_ERROR "${FILE} was not written")
  endif()
  file(READ "${WORKDIR}/${FILE}" content)
  if(NOT content MATCHES "${FILE_REGEX}")
    message(FATAL_ERROR "${FILE} does not match '${FILE_REGEX}'\n--- ${FILE} ---\n${content}")
  endif()
endif()
