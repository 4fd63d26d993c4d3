// What every fuzz target shares: the libFuzzer entry point and the rule for its verdicts.
//
// A target turns its input into a result or one of the errors a user may see (InputError, and
// for a whole run KernelFault); it returns normally for those. Anything else (another
// exception, InternalError, a crash, a sanitizer report, a hang) is a finding: the exception
// escapes, libFuzzer (or the replay tool, tests/fuzz/replay_main.cpp) reports it with the input.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace gpusc::fuzz {

inline std::string text(const uint8_t* data, size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

}  // namespace gpusc::fuzz
