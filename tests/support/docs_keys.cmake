# Fails when a generated table in a document differs from what gpusc prints. By default (test
# docs.configuration_reference) the tables of docs/configuration.md: the GPU platform's keys
# (`gpusc list keys --markdown`) and the shader cluster's (`gpusc list shader-keys --markdown`);
# with -DWHAT=ptx (test docs.ptx_support_table) the instruction table of docs/ptx-support.md.
# Each table follows its marker line and ends at the first blank line (or the end of the file).
file(READ "${DOC}" doc)
if(NOT DEFINED WHAT)
  set(WHAT keys shader-keys)
endif()
foreach(what ${WHAT})
  execute_process(COMMAND "${EXE}" list ${what} --markdown OUTPUT_VARIABLE want RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "gpusc list ${what} failed")
  endif()
  set(marker "<!-- generated: gpusc list ${what} --markdown -->\n")
  string(FIND "${doc}" "${marker}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "${DOC} has no generated-table marker for 'gpusc list ${what}'")
  endif()
  string(LENGTH "${marker}" markerLength)
  math(EXPR start "${at} + ${markerLength}")
  string(SUBSTRING "${doc}" ${start} -1 rest)
  string(FIND "${rest}" "\n\n" stop)
  if(stop EQUAL -1)
    set(have "${rest}")
  else()
    math(EXPR stop "${stop} + 1")
    string(SUBSTRING "${rest}" 0 ${stop} have)
  endif()
  if(NOT have STREQUAL want)
    message(FATAL_ERROR "${DOC} is out of date: regenerate its table with\n"
                        "  build/gpusc list ${what} --markdown")
  endif()
endforeach()
