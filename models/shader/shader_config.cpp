#include "shader/shader_config.hpp"

#include "common/platform_config.hpp"

namespace gpusc::shader {

ShaderPlatformConfig loadShaderPlatform(const std::string& nameOrFile,
                                        const std::vector<std::string>& sets) {
  const PlatformText t = findPlatform(nameOrFile, PlatformKind::ShaderCluster);
  return config::load<ShaderPlatformConfig>(t.text, t.path, sets);
}

}  // namespace gpusc::shader
