# The package.* tests: gpusc used from another CMake project (tests/consumer).
#   MODE=install       installs the build (BUILD) into WORK/prefix, configures and builds the
#                      consumer with find_package(gpusc) against it, and runs its testbench;
#                      the consumer must compile against the installed headers only.
#   MODE=subdirectory  configures the consumer with add_subdirectory(SRC): its ctest must list
#                      only the consumer's own test, none of gpusc's.
# CXX and LAUNCHER: the compiler (and ccache) of the gpusc build.
file(REMOVE_RECURSE "${WORK}")
function(run what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (${rc}):\n${out}${err}")
  endif()
  set(out "${out}${err}" PARENT_SCOPE)
endfunction()
set(configure ${CMAKE_COMMAND} -S "${SRC}/tests/consumer" -B "${WORK}/build" -G Ninja
              -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=${CXX} -DCMAKE_EXPORT_COMPILE_COMMANDS=ON)
if(LAUNCHER)
  list(APPEND configure -DCMAKE_CXX_COMPILER_LAUNCHER=${LAUNCHER})
endif()

if(MODE STREQUAL "install")
  run("cmake --install" ${CMAKE_COMMAND} --install "${BUILD}" --prefix "${WORK}/prefix")
  foreach(f lib/cmake/gpusc/gpuscConfig.cmake lib/cmake/gpusc/gpuscConfigVersion.cmake
            lib/cmake/gpusc/gpuscTargets.cmake include/gpusc/gpu/device.hpp include/gpusc/catalog.hpp
            bin/gpusc)
    if(NOT EXISTS "${WORK}/prefix/${f}")
      message(FATAL_ERROR "cmake --install did not install ${f}")
    endif()
  endforeach()
  run("configuring the consumer" ${configure} "-DCMAKE_PREFIX_PATH=${WORK}/prefix")
  run("building the consumer" ${CMAKE_COMMAND} --build "${WORK}/build")
  file(READ "${WORK}/build/compile_commands.json" commands)
  string(FIND "${commands}" "${SRC}/models" leak)
  if(NOT leak EQUAL -1)
    message(FATAL_ERROR "the consumer compiled against gpusc's source tree, not the install:\n${commands}")
  endif()
  run("the consumer's testbench" "${WORK}/build/consumer")
  if(NOT out MATCHES "\\[  PASSED  \\] 2 tests")
    message(FATAL_ERROR "the consumer's testbench did not pass 2 tests:\n${out}")
  endif()
elseif(MODE STREQUAL "subdirectory")
  run("configuring the consumer with add_subdirectory" ${configure} "-DGPUSC_SOURCE_DIR=${SRC}")
  run("ctest -N" ${CMAKE_CTEST_COMMAND} -N --test-dir "${WORK}/build")
  if(NOT out MATCHES "Test +#1: consumer\n" OR NOT out MATCHES "Total Tests: 1\n")
    message(FATAL_ERROR "the parent project's ctest is not just its own test:\n${out}")
  endif()
else()
  message(FATAL_ERROR "MODE must be install or subdirectory")
endif()
