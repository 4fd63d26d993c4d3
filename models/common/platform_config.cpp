#include "common/platform_config.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/embedded.hpp"
#include "common/file_io.hpp"
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

std::vector<std::string> builtinPlatformNames(PlatformKind kind) {
  // platforms/shader-*.yaml describe shader clusters (models/shader), not GPUs.
  std::vector<std::string> names;
  for (const EmbeddedFile* f : listEmbedded(kEmbeddedPlatforms))
    if (startsWith(platformName(*f), "shader-") == (kind == PlatformKind::ShaderCluster))
      names.push_back(platformName(*f));
  return names;
}

PlatformText findPlatform(const std::string& nameOrFile, PlatformKind kind) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const auto names = builtinPlatformNames(kind);
  // A built-in name is the built-in platform, whatever the current folder holds (a file of
  // that name is read when named as a path: ./gtx480).
  if (nameOrFile.find('/') == std::string::npos &&
      std::find(names.begin(), names.end(), nameOrFile) != names.end())
    for (const EmbeddedFile* f : listEmbedded(kEmbeddedPlatforms))
      if (platformName(*f) == nameOrFile) return {f->text, f->path};
  if (fs::is_directory(nameOrFile, ec))
    throw InputError(fmt::format("--platform {}: a folder, not a platform file", nameOrFile));
  // A file, or what reads like one (a pipe, /dev/stdin).
  if (fs::exists(nameOrFile, ec)) {
    std::optional<std::string> text = readInputFile(nameOrFile, "platform file");
    if (!text) throw InputError(fmt::format("{}: cannot read platform file", nameOrFile));
    return {std::move(*text), nameOrFile};
  }
  throw InputError(
      fmt::format("--platform {}: no such file or built-in {}platform{} (built-in: {})", nameOrFile,
                  kind == PlatformKind::Gpu ? "" : "shader ", didYouMean(nameOrFile, names),
                  join(names, ", ")));
}

PlatformConfig loadPlatform(const std::string& nameOrFile, const std::vector<std::string>& sets) {
  const PlatformText t = findPlatform(nameOrFile, PlatformKind::Gpu);
  auto origins = std::make_shared<config::KeyOrigins>();
  PlatformConfig cfg = config::load<PlatformConfig>(t.text, t.path, sets, {}, origins.get());
  cfg.origins = std::move(origins);
  return cfg;
}

}  // namespace gpusc
