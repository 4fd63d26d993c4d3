// Warp schedulers: each SM has sm.schedulers of them, each owning the warps whose slot number
// modulo the scheduler count is its index. Every cycle a scheduler tries its warps in the order
// its policy gives and issues the first one that can go.
//
// Policies (sm.scheduler):
//   lrr        loose round-robin: start after the warp that issued last
//   gto        greedy-then-oldest: keep issuing the same warp until it stalls, then the oldest
//   two-level  an active group of sm.two_level_active warps scheduled round-robin; a warp that
//              stalls on a memory load (or waits at a barrier) moves to the pending group, and a
//              ready pending warp takes its place (seed 000)
//   dfifo      round-robin, but a warp waiting for a memory load (or at a barrier) leaves the
//              order until the wait ends, then rejoins at the back (seed 003)
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include <systemc>

#include "common/platform_config.hpp"
#include "common/registry.hpp"
#include "sm/activity.hpp"

namespace gpusc::sm {

class WarpSchedulingPolicy {
 public:
  virtual ~WarpSchedulingPolicy() = default;
  virtual void add(uint32_t warp, uint64_t age) = 0;  // a warp starts (age: start order)
  virtual void remove(uint32_t warp) = 0;             // a warp finished
  static constexpr uint32_t kNoWarp = 0xffffffffu;
  // The warps to try this cycle, best first.
  virtual const std::vector<uint32_t>& order() = 0;
  // A warp to try before order()'s, which the scheduler then passes over in order() (kNoWarp:
  // none). For a policy whose order changes in its first warp alone (GTO: the greedy warp), so
  // that order() need not be rebuilt whenever that warp changes.
  virtual uint32_t preferred() const { return kNoWarp; }
  // A number that changes whenever order()'s contents may have changed since it last returned
  // (read after order()), so the scheduler need not compare the order warp by warp every cycle;
  // kUnversioned (the default, for a policy that does not keep one): it compares.
  static constexpr uint64_t kUnversioned = ~0ull;
  virtual uint64_t orderVersion() const { return kUnversioned; }
  virtual void issued(uint32_t warp) = 0;
  // The warp waits for a long-latency event (a memory load, a barrier) / the wait is over.
  virtual void waitsLong(uint32_t) {}
  virtual void longWaitOver(uint32_t) {}
  // Back to the state of a new policy (the SM is reset for another Device: the timing engine,
  // and so the policy, outlives a Device). The default suits a policy whose state is its warps,
  // all of which are removed when a kernel ends.
  virtual void reset() {}
};

using WarpSchedulerRegistry = Registry<WarpSchedulingPolicy, const SmConfig&>;
const WarpSchedulerRegistry& warpSchedulingPolicies();

class WarpScheduler : public sc_core::sc_module {
 public:
  // `policies`: where cfg.scheduler is looked up (a testbench's registry, or the built-ins).
  WarpScheduler(const sc_core::sc_module_name& name, const SmConfig& cfg,
                const WarpSchedulerRegistry& policies = warpSchedulingPolicies());
  WarpSchedulingPolicy& policy() { return *policy_; }

  Stall lastOutcome = Stall::NoWarp;  // this cycle's outcome, also for skipped cycles
  uint64_t outcomes[kNumStalls] = {};

 private:
  std::unique_ptr<WarpSchedulingPolicy> policy_;
};

}  // namespace gpusc::sm
