// Fuzz target: the PTX lexer, parser and decoder. A module's text in; every entry decoded, or
// an InputError out.
#include "common/error.hpp"
#include "fuzz/fuzz_target.hpp"
#include "gpu/device.hpp"

using namespace gpusc;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // Loading a module allocates its .global variables, so a device holds them; decoding does
  // not depend on the platform beyond that.
  static const PlatformConfig cfg = loadPlatform(kDefaultPlatform);
  Device dev(cfg, ExecMode::Functional);
  try {
    Module& m = dev.loadModule(fuzz::text(data, size), "fuzz.ptx");
    for (const auto& name : m.entryNames()) m.kernel(name);
  } catch (const InputError&) {
  }
  return 0;
}
