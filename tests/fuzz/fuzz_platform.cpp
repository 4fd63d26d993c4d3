// Fuzz target: the platform reader with --set overrides. The input is a platform file; each of
// its lines that starts with "#set " (a YAML comment, so the file reads the same) is also given
// as a --set override, e.g. "#set gpu.num_sms=4". A platform that loads must also load again
// from the YAML gpusc writes for it (config.yaml of a run), and give the same configuration.
#include <sstream>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "common/platform_config.hpp"
#include "fuzz/fuzz_target.hpp"

using namespace gpusc;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text = fuzz::text(data, size);
  std::vector<std::string> sets;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);)
    if (line.rfind("#set ", 0) == 0) sets.push_back(line.substr(5));
  std::string written;
  try {
    written = config::toYaml(config::load<PlatformConfig>(text, "fuzz.yaml", sets));
  } catch (const InputError&) {
    return 0;
  }
  // Not caught: the resolved configuration gpusc writes must always be readable.
  const std::string again =
      config::toYaml(config::load<PlatformConfig>(written, "config.yaml", {}));
  if (again != written)
    throw InternalError("the written configuration reads back differently:\n" + written +
                        "\n----\n" + again);
  return 0;
}
