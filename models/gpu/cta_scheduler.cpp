#include "gpu/cta_scheduler.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "gpu/policies.hpp"

namespace gpusc::gpu {

nlohmann::json toJson(const PlacementDecision& d) {
  nlohmann::json j;
  j["policy"] = d.policy;
  j["sms"] = d.sms;
  j["measured"] = d.measured;
  j["decided_at"] = d.decidedAt;
  j["injection_stall_rate"] = d.injectionStallRate;
  j["lane_utilisation"] = d.laneUtilisation;
  j["metric"] = std::isfinite(d.metric) ? nlohmann::json(d.metric) : nlohmann::json(nullptr);
  j["predicted_slowdown"] = d.predictedSlowdown;
  return j;
}

double congestionMetric(const CoreCountConfig& c, double stallRate, double laneUtilisation) {
  if (laneUtilisation <= 0) return std::numeric_limits<double>::infinity();
  return c.alpha * stallRate + c.beta / laneUtilisation;
}

double predictedSlowdown(const CoreCountConfig& c, double metric, uint32_t n, uint32_t k) {
  if (k == 0 || k >= n) return 0.0;
  const double scaling = metric > 0 ? std::min(1.0, c.metric_reference / metric) : 1.0;
  return (double(n) / double(k) - 1.0) * scaling;
}

uint32_t chooseCoreCount(const CoreCountConfig& c, double metric, uint32_t n) {
  const uint32_t lowest = std::min(std::max<uint32_t>(c.min_sms, 1), n);
  for (uint32_t k = lowest; k < n; ++k)
    if (predictedSlowdown(c, metric, n, k) <= c.slowdown_budget * (1 + 1e-12)) return k;
  return n;
}

namespace {

// Round-robin over SMs 0 .. k-1: the SM after the one that took the previous CTA, skipping
// full ones and ones at the per-cycle limit.
int roundRobin(const std::vector<sm::Sm*>& sms, size_t k, size_t& next, const sm::CtaFootprint& f,
               const std::vector<uint32_t>& startedNow, uint32_t limit) {
  for (size_t j = 0; j < k; ++j) {
    const size_t i = (next + j) % k;
    if (startedNow[i] < limit && sms[i]->fits(f)) {
      next = (i + 1) % k;
      return static_cast<int>(i);
    }
  }
  return -1;
}

class RoundRobinPlacement : public CtaPlacementPolicy {
 public:
  void beginKernel(const PlacementKernel&, const std::vector<sm::Sm*>& sms) override {
    next_ = 0;
    n_ = sms.size();
  }
  int pick(const std::vector<sm::Sm*>& sms, const sm::CtaFootprint& f,
           const std::vector<uint32_t>& startedNow, uint32_t limit) override {
    return roundRobin(sms, sms.size(), next_, f, startedNow, limit);
  }
  PlacementDecision decision() const override {
    PlacementDecision d;
    d.policy = "round-robin";
    d.sms = static_cast<uint32_t>(n_);
    return d;
  }

 private:
  size_t next_ = 0, n_ = 0;
};

// Seed 002 3.1.1: a kernel with fewer CTAs than the GPU holds at once goes to as few SMs as
// can hold it.
class PackedPlacement : public CtaPlacementPolicy {
 public:
  void beginKernel(const PlacementKernel& k, const std::vector<sm::Sm*>& sms) override {
    next_ = 0;
    const uint64_t n = sms.size(), per = k.ctasPerSm;
    k_ =
        per > 0 && k.totalCtas < n * per ? std::max<uint64_t>(1, (k.totalCtas + per - 1) / per) : n;
  }
  int pick(const std::vector<sm::Sm*>& sms, const sm::CtaFootprint& f,
           const std::vector<uint32_t>& startedNow, uint32_t limit) override {
    return roundRobin(sms, k_, next_, f, startedNow, limit);
  }
  PlacementDecision decision() const override {
    PlacementDecision d;
    d.policy = "packed";
    d.sms = static_cast<uint32_t>(k_);
    return d;
  }

 private:
  size_t next_ = 0, k_ = 0;
};

// Seed 002 3.1.2: observe the first CTAs on every SM, then keep the SMs the congestion metric
// says the kernel needs.
class CongestionAwarePlacement : public CtaPlacementPolicy {
 public:
  explicit CongestionAwarePlacement(const PlatformConfig& cfg)
      : c_(cfg.gpu.core_count),
        lanesPerSm_(double(cfg.sm.simd_units) * double(cfg.sm.laneOpsPerCycle(cfg.sm.simd_lanes))) {
  }

  void beginKernel(const PlacementKernel& k, const std::vector<sm::Sm*>& sms) override {
    sms_ = &sms;
    probe_ = k.probe;
    start_ = k.startCycle;
    next_ = 0;
    k_ = sms.size();
    d_ = PlacementDecision{};
    firstFinished_ = false;
    d_.policy = "congestion-aware";
    d_.sms = static_cast<uint32_t>(k_);
    stall0_ = probe_ ? probe_->injectionStallCycles() : 0.0;
    laneOps0_ = laneOps();
  }

  // Seed 002 decides "during the first CTA's execution": when the first CTA finishes, or after
  // observe_cycles if none has by then.
  void ctaFinished(sm::Cycle) override { firstFinished_ = true; }
  sm::Cycle update(sm::Cycle now) override {
    if (d_.measured) return sm::kNever;
    const sm::Cycle at = start_ + c_.observe_cycles;
    if (now < at && !firstFinished_) return at;
    const double n = double(sms_->size()), cycles = double(now - start_);
    const double stalls = (probe_ ? probe_->injectionStallCycles() : 0.0) - stall0_;
    d_.measured = true;
    d_.decidedAt = now;
    d_.injectionStallRate = stalls / (n * cycles);
    d_.laneUtilisation = double(laneOps() - laneOps0_) / (n * lanesPerSm_ * cycles);
    d_.metric = congestionMetric(c_, d_.injectionStallRate, d_.laneUtilisation);
    const uint32_t k = chooseCoreCount(c_, d_.metric, static_cast<uint32_t>(sms_->size()));
    d_.sms = k;
    d_.predictedSlowdown = predictedSlowdown(c_, d_.metric, static_cast<uint32_t>(n), k);
    k_ = k;
    return sm::kNever;
  }

  int pick(const std::vector<sm::Sm*>& sms, const sm::CtaFootprint& f,
           const std::vector<uint32_t>& startedNow, uint32_t limit) override {
    return roundRobin(sms, k_, next_, f, startedNow, limit);
  }
  PlacementDecision decision() const override { return d_; }

 private:
  uint64_t laneOps() const {
    uint64_t s = 0;
    for (const sm::Sm* m : *sms_) s += m->simdLaneOps();
    return s;
  }

  const CoreCountConfig c_;
  const double lanesPerSm_;
  const std::vector<sm::Sm*>* sms_ = nullptr;
  const CongestionProbe* probe_ = nullptr;
  sm::Cycle start_ = 0;
  size_t next_ = 0, k_ = 0;
  double stall0_ = 0;
  bool firstFinished_ = false;
  uint64_t laneOps0_ = 0;
  PlacementDecision d_;
};

}  // namespace

const Registry<CtaPlacementPolicy, const PlatformConfig&>& ctaPlacementPolicies() {
  static const Registry<CtaPlacementPolicy, const PlatformConfig&> registry(
      "CTA placement policy",
      {{"round-robin", "the next SM with room, in turn",
        [](const PlatformConfig&) { return std::make_unique<RoundRobinPlacement>(); }},
       {"packed",
        "a kernel with fewer CTAs than the GPU holds goes to as few SMs as hold it (seed 002)",
        [](const PlatformConfig&) { return std::make_unique<PackedPlacement>(); }},
       {"congestion-aware",
        "every SM while gpu.core_count.observe_cycles pass, then the SMs the congestion metric "
        "asks for (seed 002)",
        [](const PlatformConfig& c) { return std::make_unique<CongestionAwarePlacement>(c); }}});
  return registry;
}

CtaScheduler::CtaScheduler(const sc_core::sc_module_name& name, const PlatformConfig& cfg,
                           std::vector<sm::Sm*> sms, sc_core::sc_time period)
    : sc_core::sc_module(name),
      cfg_(cfg),
      sms_(std::move(sms)),
      policy_(policiesOf(cfg).ctaPlacement.create(cfg.gpu.cta_placement, cfg)),
      perCycle_(cfg.gpu.ctas_per_sm_per_cycle),
      period_(period),
      startedNow_(sms_.size(), 0) {
  SC_METHOD(assign);
  sensitive << passEvent_;
  dont_initialize();
  if (cfg.smoothing.globalEnabled()) {
    detector_ = pdn::makeGlobalDroopDetector(cfg, static_cast<uint32_t>(sms_.size()));
    activeWarps_.assign(sms_.size(), 0);
    SC_METHOD(detectorStep);
    sensitive << detectorEvent_;
    dont_initialize();
  }
}

void CtaScheduler::smEvaluated(uint32_t) {
  smTicked_ = true;
  if (!detectorArmed_ && active_) armDetector();
}

void CtaScheduler::armDetector() {
  // Reports come at startCycle + k x report_interval.
  const uint64_t every = cfg_.smoothing.global.report_interval;
  const sm::Cycle now = cycleNow();
  const uint64_t k = (now - startCycle_) / every + 1;
  detectorArmed_ = true;
  detectorTick_.after(
      sc_core::sc_time::from_value((startCycle_ + k * every - now) * period_.value()));
}

void CtaScheduler::detectorStep() {
  detectorArmed_ = false;
  if (!active_) return;
  const sm::Cycle now = cycleNow();
  for (size_t i = 0; i < sms_.size(); ++i) activeWarps_[i] = sms_[i]->activeWarps();
  const std::vector<uint32_t> delays = detector_->report(now, activeWarps_);
  for (size_t i = 0; i < delays.size() && i < sms_.size(); ++i)
    if (delays[i] > 0) sms_[i]->holdIssue(now + delays[i]);
  // Keep reporting while SMs evaluate cycles; otherwise sleep until one does.
  if (smTicked_) {
    smTicked_ = false;
    detectorArmed_ = true;
    detectorTick_.after(
        sc_core::sc_time::from_value(cfg_.smoothing.global.report_interval * period_.value()));
  }
}

void CtaScheduler::startKernel(const KernelGrid& k) {
  kernel_ = k;
  total_ = k.grid.count();
  next_ = finished_ = 0;
  limit_ = total_;
  active_ = true;
  done_ = false;
  startCycle_ = cycleNow();
  endCycle_ = startCycle_;
  if (detector_) detector_->reset();
  policy_->beginKernel(PlacementKernel{total_, k.footprint, sm::ctasPerSm(cfg_.sm, k.footprint),
                                       startCycle_, probe_},
                       sms_);
  // The SMs' windows cover the kernel's cycles: startCycle + 1 .. endCycle (as SM accounting).
  // The first launch finds every SM on; later ones find each as the launch before left it: an
  // SM's sleep transistor and idle detection know nothing of kernels, so an SM left idle by
  // the last launch stays gated (timeout detection) and wakes when its first CTA comes.
  for (sm::Sm* s : sms_) {
    if (switchWindowsBegun_)
      s->powerSwitch().continueWindow(startCycle_ + 1);
    else
      s->powerSwitch().begin(startCycle_ + 1);
  }
  switchWindowsBegun_ = true;
  if (waves_)
    waves_->begin(total_, uint64_t(sm::ctasPerSm(cfg_.sm, k.footprint)) * sms_.size(), startCycle_);
  requestPass(soonAt_, sc_core::SC_ZERO_TIME);
  kernel_started.notify(sc_core::SC_ZERO_TIME);
}

void CtaScheduler::requestPass(uint64_t& at, const sc_core::sc_time& delay) {
  at = std::min<uint64_t>(at, sc_core::sc_time_stamp().value() + delay.value());
  pass_.after(delay);
}

void CtaScheduler::armPass() {
  const uint64_t rest = std::min(soonAt_, timerAt_);
  if (rest != EdgeScheduler::kNever) pass_.at(rest);
}

void CtaScheduler::dropPass(uint64_t& at) {
  at = EdgeScheduler::kNever;
  pass_.cancel();
  armPass();
}

void CtaScheduler::assign() {
  // The passes due now are spent; the other one stays due.
  const uint64_t t = sc_core::sc_time_stamp().value();
  if (soonAt_ <= t) soonAt_ = EdgeScheduler::kNever;
  if (timerAt_ <= t) timerAt_ = EdgeScheduler::kNever;
  armPass();
  if (!active_) return;
  const sm::Cycle now = cycleNow();
  // A placement decision is taken only while CTAs still wait for an SM (docs/power-gating.md: a
  // kernel whose CTAs are all placed keeps every SM, measured false); a timer armed before the
  // last CTA started must not decide for nothing.
  sm::Cycle again = next_ < limit_ ? policy_->update(now) : sm::kNever;
  std::fill(startedNow_.begin(), startedNow_.end(), 0);
  bool started = false;
  while (next_ < limit_) {
    int i = policy_->pick(sms_, kernel_.footprint, startedNow_, perCycle_);
    if (i < 0) break;
    sm::Sm& s = *sms_[i];
    if (s.residentCtas() == 0) {
      // The SM's first CTA: a gated SM wakes first and takes no CTA until it is awake.
      power::PowerGatingSwitch& sw = s.powerSwitch();
      const sm::Cycle ready = sw.acquire(now);
      if (ready > now) {
        startedNow_[i] = perCycle_;
        again = std::min(again, ready);
        continue;
      }
      sw.beginBusy(now);
    }
    if (startObserver_) startObserver_->ctaStarting(next_);
    s.startCta(kernel_.footprint, kernel_.grid.ctaOf(next_), next_);
    ++startedNow_[i];
    ++next_;
    started = true;
  }
  if (next_ < limit_) {
    // SMs that just took their per-cycle maximum may take more next cycle.
    if (started) requestPass(soonAt_, period_);
    if (again != sm::kNever && again > now)
      requestPass(timerAt_, sc_core::sc_time::from_value((again - now) * period_.value()));
  }
}

uint64_t CtaScheduler::warpInstsIssued() const {
  uint64_t n = 0;
  for (const sm::Sm* s : sms_) n += s->execStats().warpInsts;
  return n;
}

void CtaScheduler::stopDetector() {
  // A report after the kernel's end does nothing (detectorStep); its pending tick would keep the
  // simulation busy up to report_interval cycles past it.
  if (!detector_) return;
  detectorTick_.cancel();
  detectorArmed_ = false;
}

void CtaScheduler::stopKernel(sm::Cycle lastCycle) {
  active_ = false;
  endCycle_ = lastCycle;
  dropPass(timerAt_);
  dropPass(soonAt_);
  stopDetector();
  // As at a kernel's end: the SMs' windows cover startCycle .. lastCycle.
  for (sm::Sm* s : sms_) s->powerSwitch().finish(endCycle_ + 1);
}

void CtaScheduler::ctaFinished(uint32_t sm, uint32_t resident) {
  ++finished_;
  const sm::Cycle now = cycleNow();
  policy_->ctaFinished(now);
  if (resident == 0) sms_[sm]->powerSwitch().endBusy(now);
  if (waves_ && limit_ == total_)
    if (const std::optional<uint64_t> cut =
            waves_->ctaFinished(now, finished_, next_, [this] { return warpInstsIssued(); }))
      limit_ = *cut;  // no CTA beyond starts: the functional engine runs the rest
  if (finished_ == limit_) {
    active_ = false;
    done_ = true;
    endCycle_ = now;
    dropPass(timerAt_);
    stopDetector();
    // The SMs' windows cover the kernel's cycles startCycle .. endCycle.
    for (sm::Sm* s : sms_) s->powerSwitch().finish(endCycle_ + 1);
    kernel_finished.notify(sc_core::SC_ZERO_TIME);
    sc_core::sc_pause();  // the launch is over: return control to the host
  } else if (next_ < limit_) {
    requestPass(soonAt_, sc_core::SC_ZERO_TIME);
  }
}

}  // namespace gpusc::gpu
