// The policies a GPU platform picks by name, one registry per kind, as an object a testbench
// owns: the built-ins are registered when it is made, a testbench add()s its own, and the
// platform built with it (loadPlatform(name, sets, policies)) accepts and creates them. It lives
// where the platform is composed (the Gpu hands each unit the registry it creates its policies
// from); each registry's built-in entries live with their units (sm/, cache/, dram/, gpu/). The
// shader cluster's buffer gating has its own, shader::ShaderPolicies (shader/shader_policies.hpp).
//
//   auto policies = std::make_shared<gpusc::Policies>();   // lrr, gto, two-level, dfifo, ...
//   policies->warpSchedulers.add("youngest-first", "the newest warp first",
//                                [](const gpusc::SmConfig&) { return std::make_unique<Mine>(); });
//   gpusc::PlatformConfig cfg =
//       gpusc::loadPlatform("gtx480", {"sm.scheduler=youngest-first"}, policies);
//   gpusc::Device dev(cfg, gpusc::ExecMode::Timing);
//
// There is no global registry: two testbenches (or two runs of a run pool) with different
// Policies objects do not see each other's policies. A platform holds its Policies as
// shared_ptr<const Policies>, so once handed over it is read-only and may be shared by runs on
// several threads; a factory given to add() must then itself be safe to call from several
// threads at once (each call makes a fresh policy object for one unit of one model).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/config.hpp"
#include "common/platform_config.hpp"
#include "common/registry.hpp"

namespace gpusc {

namespace sm {
class WarpSchedulingPolicy;  // sm/warp_scheduler.hpp
class SimdIssuePolicy;       // sm/simd_issue_control.hpp
}  // namespace sm
namespace gpu {
class CtaPlacementPolicy;  // gpu/cta_scheduler.hpp
}
namespace cache {
class ReplacementPolicy;  // cache/replacement.hpp
}
namespace dram {
class DramSchedulingPolicy;  // dram/dram_scheduler.hpp
}

class Policies {
 public:
  // A registry per policy key, each holding the built-in policies to start with.
  Policies();

  Registry<sm::WarpSchedulingPolicy, const SmConfig&> warpSchedulers;     // sm.scheduler
  Registry<gpu::CtaPlacementPolicy, const PlatformConfig&> ctaPlacement;  // gpu.cta_placement
  Registry<sm::SimdIssuePolicy, const SimdIssueConfig&> simdIssue;        // power.simd_issue.policy
  Registry<dram::DramSchedulingPolicy, const DramConfig&>
      dramSchedulers;  // memory.controller.scheduler
  // The caches' replacement: sm.icache, sm.const_cache, sm.l1d and l2.slice .replacement. A
  // factory gets (sets, ways, seed).
  Registry<cache::ReplacementPolicy, uint32_t, uint32_t, uint64_t> replacement;

  // Key path -> every name the key accepts (built-in and registered), for the platform reader.
  config::RegisteredNames namesByKey() const;

  // The built-in policies alone (immutable; what a platform without its own Policies uses).
  static const Policies& builtin();
};

// The policies a model built from `cfg` creates its units' policies from.
inline const Policies& policiesOf(const PlatformConfig& cfg) {
  return cfg.policies ? *cfg.policies : Policies::builtin();
}

// Platform lookup as loadPlatform(nameOrFile, sets), with a testbench's policies: the platform's
// policy keys may name the policies registered in `policies`, and the model built from it creates
// them there.
PlatformConfig loadPlatform(const std::string& nameOrFile, const std::vector<std::string>& sets,
                            std::shared_ptr<const Policies> policies);

}  // namespace gpusc
