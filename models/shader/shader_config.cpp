#include "shader/shader_config.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/embedded.hpp"
#include "common/strings.hpp"

namespace gpusc::shader {

ShaderPlatformConfig loadShaderPlatform(const std::string& nameOrFile,
                                        const std::vector<std::string>& sets) {
  std::error_code ec;
  if (std::filesystem::is_regular_file(nameOrFile, ec)) {
    std::ifstream in(nameOrFile);
    std::stringstream ss;
    ss << in.rdbuf();
    return config::load<ShaderPlatformConfig>(ss.str(), nameOrFile, sets);
  }
  std::vector<std::string> names;
  for (const EmbeddedFile* f : listEmbedded(kEmbeddedPlatforms)) {
    std::string p = f->path;
    p = p.substr(p.rfind('/') + 1);
    p = p.substr(0, p.rfind('.'));
    if (!startsWith(p, "shader-")) continue;
    if (p == nameOrFile) return config::load<ShaderPlatformConfig>(f->text, f->path, sets);
    names.push_back(p);
  }
  throw InputError(
      fmt::format("--platform {}: no such file or built-in shader platform{} (built-in: {})",
                  nameOrFile, didYouMean(nameOrFile, names), join(names, ", ")));
}

}  // namespace gpusc::shader
