// Fuzz target: the launch-spec reader. A spec's text in; a validated LaunchSpec or an InputError
// out. Paths in the spec resolve against a folder that does not exist, so no file is read.
#include "common/error.hpp"
#include "fuzz/fuzz_target.hpp"
#include "gpu/launch_spec.hpp"

using namespace gpusc;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    parseLaunchSpec(fuzz::text(data, size), "fuzz.yaml", "/nonexistent-gpusc-fuzz");
  } catch (const InputError&) {
  }
  return 0;
}
