// The CTA (thread-block) scheduler: starts the CTAs of a kernel on SMs that have room for
// them (threads, warps, registers, shared memory, CTA slots), at most
// gpu.ctas_per_sm_per_cycle per SM per cycle, in CTA order, and notes the cycles the kernel
// starts and ends. Which SM takes the next CTA is a policy chosen by name
// (gpu.cta_placement); the power issue adds gating-aware policies to the registry.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include <systemc>

#include "common/platform_config.hpp"
#include "common/registry.hpp"
#include "sm/sm.hpp"

namespace gpusc::gpu {

class CtaPlacementPolicy {
 public:
  virtual ~CtaPlacementPolicy() = default;
  // The SM to start the next CTA on, or -1 when none can take it this cycle.
  // `startedNow[i]`: CTAs already started on SM i this cycle; `limit`: the per-cycle maximum.
  virtual int pick(const std::vector<sm::Sm*>& sms, const sm::CtaFootprint& f,
                   const std::vector<uint32_t>& startedNow, uint32_t limit) = 0;
  virtual void reset() {}
};

const Registry<CtaPlacementPolicy, const PlatformConfig&>& ctaPlacementPolicies();

struct KernelGrid {
  func::Dim3 grid;
  sm::CtaFootprint footprint;
};

class CtaScheduler : public sc_core::sc_module, public sm::CtaListener {
 public:
  CtaScheduler(const sc_core::sc_module_name& name, const PlatformConfig& cfg,
               std::vector<sm::Sm*> sms, sc_core::sc_time period);

  // Queues a kernel's CTAs; they start when the simulation runs.
  void startKernel(const KernelGrid& k);
  bool kernelDone() const { return done_; }
  sm::Cycle startCycle() const { return startCycle_; }
  sm::Cycle endCycle() const { return endCycle_; }
  uint64_t ctasStarted() const { return next_; }
  uint64_t ctasFinished() const { return finished_; }
  uint64_t ctasTotal() const { return total_; }

  void ctaFinished(uint32_t sm) override;

  // Notified when a kernel's first CTAs may start and when its last CTA has finished.
  sc_core::sc_event kernel_started, kernel_finished;

 private:
  SC_HAS_PROCESS(CtaScheduler);
  void assign();
  sm::Cycle cycleNow() const { return sc_core::sc_time_stamp().value() / period_.value(); }

  std::vector<sm::Sm*> sms_;
  std::unique_ptr<CtaPlacementPolicy> policy_;
  const uint32_t perCycle_;
  const sc_core::sc_time period_;
  sc_core::sc_event wake_;
  KernelGrid kernel_;
  uint64_t total_ = 0, next_ = 0, finished_ = 0;
  bool active_ = false, done_ = true;
  sm::Cycle startCycle_ = 0, endCycle_ = 0;
  std::vector<uint32_t> startedNow_;
};

}  // namespace gpusc::gpu
