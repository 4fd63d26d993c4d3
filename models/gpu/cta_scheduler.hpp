// The CTA (thread-block) scheduler: starts the CTAs of a kernel on SMs that have room for
// them (threads, warps, registers, shared memory, CTA slots), at most
// gpu.ctas_per_sm_per_cycle per SM per cycle, in CTA order, and notes the cycles the kernel
// starts and ends. Which SM takes the next CTA is a policy chosen by name (gpu.cta_placement):
//
//   round-robin       the next SM with room, in turn.
//   packed            (seed 002 3.1.1) when the kernel has fewer CTAs than the GPU holds at once,
//                     only the first k = ceil(CTAs / CTAs per SM) SMs, in turn; the others get
//                     no CTA and can be gated.
//   congestion-aware  (seed 002 3.1.2) round-robin on every SM for gpu.core_count.observe_cycles,
//                     then only the first k SMs, k from the measured congestion metric
//                     (chooseCoreCount below).
//
// With wave sampling (sampling.mode wave, gpu/wave_sampler.hpp) the scheduler tells the launch's
// WaveSampler of every finished CTA; once the sampler answers with a CTA count, no CTA beyond it
// starts and the kernel ends when the started ones have.
//
// The scheduler also drives each SM's power-gating switch (Sm::powerSwitch()): its window
// starts at startKernel() and ends the cycle after the kernel's last CTA finishes; the SM is
// busy while it holds CTAs. With idle_detect timeout an SM that was gated must wake before it
// takes a CTA: the scheduler starts the wake-up, places the CTA elsewhere if it can, and runs
// again when the SM is awake.
//
// With smoothing.mode global or hierarchical the scheduler also hosts seed 001's
// GlobalDroopDetector: every smoothing.global.report_interval cycles each SM reports its active
// warps; when the detector sees many SMs start at once it holds their issue for staggered
// delays (Sm::holdIssue). The reports stop while no SM evaluates a cycle, so a quiet GPU costs
// nothing; the first SM that evaluates one again restarts them.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <systemc>

#include "common/edge_scheduler.hpp"
#include "common/platform_config.hpp"
#include "common/registry.hpp"
#include "gpu/wave_sampler.hpp"
#include "pdn/global_droop_detector.hpp"
#include "sm/sm.hpp"

namespace gpusc::gpu {

// What the congestion-aware policy measures in the memory system.
class CongestionProbe {
 public:
  virtual ~CongestionProbe() = default;
  // Cycles the interconnect's injection queues (all nodes) stalled so far, in core cycles.
  virtual double injectionStallCycles() const = 0;
};

// Told of each CTA before it starts (FunctionalTail: the CTAs another host thread may run).
class CtaStartObserver {
 public:
  virtual ~CtaStartObserver() = default;
  // CTA `linear` (in the grid's linear order) starts now.
  virtual void ctaStarting(uint64_t linear) = 0;
};

// A kernel as a placement policy sees it when it starts.
struct PlacementKernel {
  uint64_t totalCtas = 0;
  sm::CtaFootprint footprint;
  uint32_t ctasPerSm = 0;  // CTAs of the kernel an empty SM holds
  sm::Cycle startCycle = 0;
  const CongestionProbe* probe = nullptr;  // null: no interconnect (stall cycles are 0)
};

// What a policy decided for the kernel: the SMs it places CTAs on.
struct PlacementDecision {
  std::string policy;
  uint32_t sms = 0;               // k: CTAs go to SMs 0 .. k-1 (every SM: the GPU's count)
  bool measured = false;          // congestion-aware: the observation ended and k was chosen
  sm::Cycle decidedAt = 0;        // congestion-aware: the cycle k was chosen
  double injectionStallRate = 0;  // congestion-aware: stall cycles per SM-cycle observed
  double laneUtilisation = 0;     // congestion-aware: SIMD lane utilisation observed
  double metric = 0;              // alpha x stall rate + beta / utilisation
  double predictedSlowdown = 0;   // of running on k SMs
};
// Keys: policy, sms, measured, decided_at, injection_stall_rate, lane_utilisation, metric,
// predicted_slowdown (metric: null when the utilisation was 0).
nlohmann::json toJson(const PlacementDecision& d);

// Seed 002's congestion-aware core count (gpu.core_count): the metric alpha x stallRate +
// beta / laneUtilisation (infinite at zero utilisation), the slowdown predicted for k of n SMs,
// (n / k - 1) x min(1, metric_reference / metric), and the smallest k >= min_sms (at most n)
// whose predicted slowdown is within slowdown_budget.
double congestionMetric(const CoreCountConfig& c, double stallRate, double laneUtilisation);
double predictedSlowdown(const CoreCountConfig& c, double metric, uint32_t n, uint32_t k);
uint32_t chooseCoreCount(const CoreCountConfig& c, double metric, uint32_t n);

class CtaPlacementPolicy {
 public:
  virtual ~CtaPlacementPolicy() = default;
  // A kernel starts on `sms` (the policy forgets the previous kernel).
  virtual void beginKernel(const PlacementKernel& k, const std::vector<sm::Sm*>& sms) = 0;
  // Called at the start of each scheduling pass, at cycle `now`. Returns the next cycle at
  // which the policy needs a pass even when no CTA finishes (sm::kNever: none).
  virtual sm::Cycle update(sm::Cycle now) {
    (void)now;
    return sm::kNever;
  }
  // A CTA of the kernel finished at cycle `now` (before the pass that follows it).
  virtual void ctaFinished(sm::Cycle now) { (void)now; }
  // The SM to start the next CTA on, or -1 when none can take it this cycle.
  // `startedNow[i]`: CTAs already started on SM i this cycle (the scheduler sets it to `limit`
  // for an SM that cannot take one this cycle); `limit`: the per-cycle maximum.
  virtual int pick(const std::vector<sm::Sm*>& sms, const sm::CtaFootprint& f,
                   const std::vector<uint32_t>& startedNow, uint32_t limit) = 0;
  virtual PlacementDecision decision() const = 0;
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

  // The memory system's congestion, for congestion-aware placement (none: no stalls).
  void setCongestionProbe(const CongestionProbe* p) { probe_ = p; }

  // Sampling within the next kernels (sampling.mode wave; null: none): the sampler sees every
  // finished CTA and may stop further CTAs from starting; the kernel is then done when the
  // started ones have finished (ctasStarted() of ctasTotal()).
  void setWaveSampler(WaveSampler* w) { waves_ = w; }
  // Told of every CTA of the next kernels before it starts (null: none).
  void setStartObserver(CtaStartObserver* o) { startObserver_ = o; }
  // Queues a kernel's CTAs; they start when the simulation runs.
  void startKernel(const KernelGrid& k);
  // A new device on this engine: its first launch finds every SM's switch on again.
  void powerOnSwitches() { switchWindowsBegun_ = false; }
  bool kernelDone() const { return done_; }
  // A run limit stopped the kernel after cycle `lastCycle`: no more CTAs start, and the SMs'
  // power-switch windows close as at a kernel's end (endCycle() is then `lastCycle`).
  void stopKernel(sm::Cycle lastCycle);
  sm::Cycle startCycle() const { return startCycle_; }
  sm::Cycle endCycle() const { return endCycle_; }
  uint64_t ctasStarted() const { return next_; }
  uint64_t ctasFinished() const { return finished_; }
  uint64_t ctasTotal() const { return total_; }
  // Warp instructions the SMs have issued in the current (or last) kernel.
  uint64_t warpInstsIssued() const;
  // The placement policy's decision for the current (or last) kernel.
  PlacementDecision placementDecision() const { return policy_->decision(); }

  void ctaFinished(uint32_t sm, uint32_t resident) override;
  void smEvaluated(uint32_t sm) override;
  // The global droop detector (nullptr unless smoothing.mode is global or hierarchical).
  const pdn::GlobalDroopDetector* droopDetector() const { return detector_.get(); }
  pdn::GlobalDroopDetector* droopDetector() { return detector_.get(); }
  bool reportsEvaluations() const { return detector_ != nullptr; }

  // Notified when a kernel's first CTAs may start and when its last CTA has finished.
  sc_core::sc_event kernel_started, kernel_finished;

  // In a platform: runs from `s` (its own processes stay idle).
  void attach(EdgeScheduler& s) {
    pass_.attach(s, s.add(EdgeScheduler::kCtaScheduler, [this] { assign(); }));
    if (detector_)
      detectorTick_.attach(s, s.add(EdgeScheduler::kCtaScheduler, [this] { detectorStep(); }));
  }

 private:
  SC_HAS_PROCESS(CtaScheduler);
  void assign();
  void detectorStep();
  void armDetector();
  void stopDetector();
  sm::Cycle cycleNow() const { return sc_core::sc_time_stamp().value() / period_.value(); }

  const PlatformConfig& cfg_;
  std::vector<sm::Sm*> sms_;
  std::unique_ptr<CtaPlacementPolicy> policy_;
  const uint32_t perCycle_;
  const sc_core::sc_time period_;
  // Passes of assign(): one as soon as possible (soonAt_), one at a given cycle (timerAt_: a
  // policy's wish, an SM awake); time values, kNever when none. pass_ is due at the earlier.
  void requestPass(uint64_t& at, const sc_core::sc_time& delay);
  void dropPass(uint64_t& at);
  void armPass();                // pass_ due at the earlier pending pass, if any
  sc_core::sc_event passEvent_;  // its own process's, while not attached to a scheduler
  Wakeup pass_{passEvent_};
  uint64_t soonAt_ = EdgeScheduler::kNever, timerAt_ = EdgeScheduler::kNever;
  const CongestionProbe* probe_ = nullptr;
  KernelGrid kernel_;
  uint64_t total_ = 0, next_ = 0, finished_ = 0;
  uint64_t limit_ = 0;  // CTAs that start: total_, or fewer once the wave sampler stops them
  WaveSampler* waves_ = nullptr;
  CtaStartObserver* startObserver_ = nullptr;
  bool active_ = false, done_ = true;
  sm::Cycle startCycle_ = 0, endCycle_ = 0;
  // A launch has begun the SMs' switch windows: the next one continues them (the switches keep
  // their state between launches).
  bool switchWindowsBegun_ = false;
  std::vector<uint32_t> startedNow_;
  // global droop smoothing
  std::unique_ptr<pdn::GlobalDroopDetector> detector_;
  sc_core::sc_event detectorEvent_;  // its own process's, while not attached to a scheduler
  Wakeup detectorTick_{detectorEvent_};
  bool detectorArmed_ = false;  // a report is scheduled
  bool smTicked_ = false;       // an SM evaluated a cycle since the last report
  std::vector<uint32_t> activeWarps_;
};

}  // namespace gpusc::gpu
