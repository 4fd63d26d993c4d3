// A GoogleTest testbench that defines no test, linked with gpusc::gtest_main and the model (so
// libsystemc, which brings a main() of its own, is linked too). It must fail: see the
// gtest_main.* tests in tests/CMakeLists.txt.
#include <gtest/gtest.h>

#include "gpu/device.hpp"

// Something of the model, so the testbench really depends on it.
[[maybe_unused]] static const char* kPlatform = gpusc::kDefaultPlatform;
