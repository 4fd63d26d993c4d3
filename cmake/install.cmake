# Install rules and the exported CMake package: `cmake --install build --prefix P` puts
#   P/include/gpusc/...                      the model's headers (by subsystem) and the catalog's
#   P/lib/libgpusc_*.a                       gpusc::models (with its verilated RTL blocks),
#                                            gpusc::catalog, gpusc::gtest_main
#   P/lib/cmake/gpusc/gpuscConfig.cmake      find_package(gpusc) (+ version and targets files)
#   P/bin/gpusc                              the command-line tool
# The built-in platforms and the catalog's PTX are compiled into the libraries, so an installed
# testbench needs no data files.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(GPUSC_CMAKE_DIR "${CMAKE_INSTALL_LIBDIR}/cmake/gpusc")

install(DIRECTORY "${PROJECT_SOURCE_DIR}/models/" DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}/gpusc"
        FILES_MATCHING PATTERN "*.hpp")
install(FILES "${PROJECT_SOURCE_DIR}/stimuli/catalog.hpp" "${PROJECT_SOURCE_DIR}/stimuli/shader_catalog.hpp"
        DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}/gpusc")

install(TARGETS gpusc_models gpusc_rtl_blocks gpusc_catalog gpusc_gtest_main gpusc_deps
        EXPORT gpuscTargets
        ARCHIVE DESTINATION "${CMAKE_INSTALL_LIBDIR}"
        LIBRARY DESTINATION "${CMAKE_INSTALL_LIBDIR}")
install(TARGETS gpusc RUNTIME DESTINATION "${CMAKE_INSTALL_BINDIR}")
# The CUDA runtime library of gpusc exec, in a folder of its own (programs find it first there,
# as libcudart.so.13); gpusc looks for it at ../lib/gpusc beside its executable.
install(TARGETS gpusc_cudart LIBRARY DESTINATION "lib/gpusc")
install(CODE "execute_process(COMMAND \"${CMAKE_COMMAND}\" -E create_symlink libgpusc_cudart.so
              \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/lib/gpusc/libcudart.so.13\")")
install(EXPORT gpuscTargets NAMESPACE gpusc:: DESTINATION "${GPUSC_CMAKE_DIR}")

configure_package_config_file("${PROJECT_SOURCE_DIR}/cmake/gpuscConfig.cmake.in"
                              "${PROJECT_BINARY_DIR}/gpuscConfig.cmake"
                              INSTALL_DESTINATION "${GPUSC_CMAKE_DIR}")
# 0.x: a minor version may change the API (docs/testbench-api.md says what is stable).
write_basic_package_version_file("${PROJECT_BINARY_DIR}/gpuscConfigVersion.cmake"
                                 COMPATIBILITY SameMinorVersion)
install(FILES "${PROJECT_BINARY_DIR}/gpuscConfig.cmake" "${PROJECT_BINARY_DIR}/gpuscConfigVersion.cmake"
        DESTINATION "${GPUSC_CMAKE_DIR}")
