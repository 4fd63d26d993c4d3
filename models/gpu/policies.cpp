#include "gpu/policies.hpp"

#include "cache/replacement.hpp"
#include "dram/dram_scheduler.hpp"
#include "gpu/cta_scheduler.hpp"
#include "sm/simd_issue_control.hpp"
#include "sm/warp_scheduler.hpp"

namespace gpusc {

Policies::Policies()
    : warpSchedulers(sm::warpSchedulingPolicies()),
      ctaPlacement(gpu::ctaPlacementPolicies()),
      simdIssue(sm::simdIssuePolicies()),
      dramSchedulers(dram::dramSchedulingPolicies()),
      replacement(cache::replacementPolicies()) {}

config::RegisteredNames Policies::namesByKey() const {
  return {{"sm.scheduler", warpSchedulers.names()},
          {"gpu.cta_placement", ctaPlacement.names()},
          {"power.simd_issue.policy", simdIssue.names()},
          {"memory.controller.scheduler", dramSchedulers.names()},
          {"sm.icache.replacement", replacement.names()},
          {"sm.const_cache.replacement", replacement.names()},
          {"sm.l1d.replacement", replacement.names()},
          {"l2.slice.replacement", replacement.names()}};
}

const Policies& Policies::builtin() {
  static const Policies p;
  return p;
}

PlatformConfig loadPlatform(const std::string& nameOrFile, const std::vector<std::string>& sets,
                            std::shared_ptr<const Policies> policies) {
  const PlatformText t = findPlatform(nameOrFile, PlatformKind::Gpu);
  auto origins = std::make_shared<config::KeyOrigins>();
  PlatformConfig cfg = config::load<PlatformConfig>(
      t.text, t.path, sets, policies ? policies->namesByKey() : config::RegisteredNames{},
      origins.get());
  cfg.policies = std::move(policies);
  cfg.origins = std::move(origins);
  return cfg;
}

}  // namespace gpusc
