#include "common/platform_config.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/embedded.hpp"
#include "common/strings.hpp"

namespace gpusc {

namespace {
std::string platformName(const EmbeddedFile& f) {
  std::string p = f.path;
  auto slash = p.rfind('/');
  std::string base = slash == std::string::npos ? p : p.substr(slash + 1);
  return base.substr(0, base.rfind('.'));
}
}  // namespace

std::vector<std::string> builtinPlatformNames() {
  // platforms/shader-*.yaml describe shader clusters (models/shader), not GPUs.
  std::vector<std::string> names;
  for (const EmbeddedFile* f : listEmbedded(kEmbeddedPlatforms))
    if (!startsWith(platformName(*f), "shader-")) names.push_back(platformName(*f));
  return names;
}

PlatformConfig loadPlatform(const std::string& nameOrFile, const std::vector<std::string>& sets) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::is_regular_file(nameOrFile, ec)) {
    std::ifstream in(nameOrFile);
    if (!in) throw InputError(fmt::format("{}: cannot read platform file", nameOrFile));
    std::stringstream ss;
    ss << in.rdbuf();
    return config::load<PlatformConfig>(ss.str(), nameOrFile, sets);
  }
  for (const EmbeddedFile* f : listEmbedded(kEmbeddedPlatforms)) {
    if (platformName(*f) == nameOrFile && !startsWith(nameOrFile, "shader-"))
      return config::load<PlatformConfig>(f->text, f->path, sets);
  }
  auto names = builtinPlatformNames();
  throw InputError(fmt::format("--platform {}: no such file or built-in platform{} (built-in: {})",
                               nameOrFile, didYouMean(nameOrFile, names), join(names, ", ")));
}

}  // namespace gpusc
