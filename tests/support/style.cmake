# Fails when a C++ or CUDA source is not formatted with the root .clang-format (test
# style.clang_format). Fix with: clang-format -i <files>
file(GLOB_RECURSE files
     "${SRC}/models/*.cpp" "${SRC}/models/*.hpp" "${SRC}/testbenches/*.cpp" "${SRC}/testbenches/*.hpp"
     "${SRC}/stimuli/*.cpp" "${SRC}/stimuli/*.hpp" "${SRC}/stimuli/*.cu" "${SRC}/stimuli/*.cuh" "${SRC}/tests/*.cpp" "${SRC}/tests/*.hpp")
execute_process(COMMAND "${CLANG_FORMAT}" --dry-run -Werror ${files} RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "clang-format finds unformatted code:\n${err}")
endif()
