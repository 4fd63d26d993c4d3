// The implementation an rtl.* key selects (docs/rtl-cosim.md): the C++ model alone, the
// verilated RTL in its place, or both in lockstep.
#pragma once

#include <cstdint>
#include <string>

namespace gpusc {

enum class RtlMode : uint8_t { Model, Verilated, Lockstep };

// InputError naming `key` for any other value (the configuration's OneOf rejects those first).
RtlMode parseRtlMode(const char* key, const std::string& value);

}  // namespace gpusc
