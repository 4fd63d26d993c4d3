#include "shader/shader_config.hpp"

#include "common/platform_config.hpp"
#include "common/policies.hpp"

namespace gpusc::shader {

ShaderPlatformConfig loadShaderPlatform(const std::string& nameOrFile,
                                        const std::vector<std::string>& sets) {
  return loadShaderPlatform(nameOrFile, sets, nullptr);
}

ShaderPlatformConfig loadShaderPlatform(const std::string& nameOrFile,
                                        const std::vector<std::string>& sets,
                                        std::shared_ptr<const Policies> policies) {
  const PlatformText t = findPlatform(nameOrFile, PlatformKind::ShaderCluster);
  ShaderPlatformConfig cfg = config::load<ShaderPlatformConfig>(
      t.text, t.path, sets, policies ? policies->namesByKey() : config::RegisteredNames{});
  cfg.policies = std::move(policies);
  return cfg;
}

}  // namespace gpusc::shader
