#include "shader/shader_policies.hpp"

#include "common/platform_config.hpp"

namespace gpusc::shader {

ShaderPolicies::ShaderPolicies() : gating(gatingPolicies()) {}

config::RegisteredNames ShaderPolicies::namesByKey() const {
  return {{"gating.input", gating.names()}, {"gating.output", gating.names()}};
}

const ShaderPolicies& ShaderPolicies::builtin() {
  static const ShaderPolicies p;
  return p;
}

ShaderPlatformConfig loadShaderPlatform(const std::string& nameOrFile,
                                        const std::vector<std::string>& sets,
                                        std::shared_ptr<const ShaderPolicies> policies) {
  const PlatformText t = findPlatform(nameOrFile, PlatformKind::ShaderCluster);
  ShaderPlatformConfig cfg = config::load<ShaderPlatformConfig>(
      t.text, t.path, sets, policies ? policies->namesByKey() : config::RegisteredNames{});
  cfg.policies = std::move(policies);
  return cfg;
}

}  // namespace gpusc::shader
