# Fails when the generated key table in docs/configuration.md differs from `gpusc list keys
# --markdown` (test docs.configuration_reference).
execute_process(COMMAND "${EXE}" list keys --markdown OUTPUT_VARIABLE want RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "gpusc list keys failed")
endif()
file(READ "${DOC}" doc)
string(FIND "${doc}" "<!-- generated: gpusc list keys --markdown -->\n" at)
if(at EQUAL -1)
  message(FATAL_ERROR "${DOC} has no generated-table marker")
endif()
string(LENGTH "<!-- generated: gpusc list keys --markdown -->\n" markerLength)
math(EXPR start "${at} + ${markerLength}")
string(SUBSTRING "${doc}" ${start} -1 have)
if(NOT have STREQUAL want)
  message(FATAL_ERROR "docs/configuration.md is out of date: regenerate its table with\n"
                      "  build/gpusc list keys --markdown")
endif()
