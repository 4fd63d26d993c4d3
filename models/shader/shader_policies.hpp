// The policies a shader-cluster platform picks by name: the I/O buffer clock gating of
// gating.input and gating.output (seed 004). As gpu/policies.hpp for a GPU platform: an object a
// testbench owns, holding the built-ins when it is made; it add()s its own and hands it to the
// platform it loads (loadShaderPlatform(name, sets, policies)), whose cores create theirs from it.
//
//   auto policies = std::make_shared<gpusc::shader::ShaderPolicies>();
//   policies->gating.add("my-gating", "...", [](const ShaderGatingConfig& g) { ... });
//   auto cfg = gpusc::shader::loadShaderPlatform("shader-cluster", {"gating.input=my-gating"},
//                                                 policies);
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "common/config.hpp"
#include "common/registry.hpp"
#include "shader/shader_config.hpp"
#include "shader/shader_core.hpp"

namespace gpusc::shader {

class ShaderPolicies {
 public:
  ShaderPolicies();

  Registry<GatingPolicy, const ShaderGatingConfig&> gating;  // gating.input, gating.output

  // Key path -> every name the key accepts (built-in and registered), for the platform reader.
  config::RegisteredNames namesByKey() const;
  // The built-in policies alone (immutable).
  static const ShaderPolicies& builtin();
};

// The policies a cluster built from `cfg` creates its cores' gating from.
inline const ShaderPolicies& policiesOf(const ShaderPlatformConfig& cfg) {
  return cfg.policies ? *cfg.policies : ShaderPolicies::builtin();
}

}  // namespace gpusc::shader
