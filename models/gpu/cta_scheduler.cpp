#include "gpu/cta_scheduler.hpp"

namespace gpusc::gpu {

namespace {

// Round-robin: the SM after the one that took the previous CTA, skipping full ones.
class RoundRobinPlacement : public CtaPlacementPolicy {
 public:
  int pick(const std::vector<sm::Sm*>& sms, const sm::CtaFootprint& f,
           const std::vector<uint32_t>& startedNow, uint32_t limit) override {
    const size_t n = sms.size();
    for (size_t k = 0; k < n; ++k) {
      const size_t i = (next_ + k) % n;
      if (startedNow[i] < limit && sms[i]->fits(f)) {
        next_ = (i + 1) % n;
        return static_cast<int>(i);
      }
    }
    return -1;
  }
  void reset() override { next_ = 0; }

 private:
  size_t next_ = 0;
};

}  // namespace

const Registry<CtaPlacementPolicy, const PlatformConfig&>& ctaPlacementPolicies() {
  static const Registry<CtaPlacementPolicy, const PlatformConfig&> registry(
      "CTA placement policy",
      {{"round-robin", "the next SM with room, in turn",
        [](const PlatformConfig&) { return std::make_unique<RoundRobinPlacement>(); }}});
  return registry;
}

CtaScheduler::CtaScheduler(const sc_core::sc_module_name& name, const PlatformConfig& cfg,
                           std::vector<sm::Sm*> sms, sc_core::sc_time period)
    : sc_core::sc_module(name),
      sms_(std::move(sms)),
      policy_(ctaPlacementPolicies().create(cfg.gpu.cta_placement, cfg)),
      perCycle_(cfg.gpu.ctas_per_sm_per_cycle),
      period_(period),
      startedNow_(sms_.size(), 0) {
  SC_METHOD(assign);
  sensitive << wake_;
  dont_initialize();
}

void CtaScheduler::startKernel(const KernelGrid& k) {
  kernel_ = k;
  total_ = k.grid.count();
  next_ = finished_ = 0;
  active_ = true;
  done_ = false;
  policy_->reset();
  startCycle_ = cycleNow();
  endCycle_ = startCycle_;
  wake_.notify(sc_core::SC_ZERO_TIME);
  kernel_started.notify(sc_core::SC_ZERO_TIME);
}

void CtaScheduler::assign() {
  if (!active_) return;
  std::fill(startedNow_.begin(), startedNow_.end(), 0);
  bool started = false;
  while (next_ < total_) {
    int i = policy_->pick(sms_, kernel_.footprint, startedNow_, perCycle_);
    if (i < 0) break;
    const func::Dim3& g = kernel_.grid;
    func::Dim3 ctaid{static_cast<uint32_t>(next_ % g.x), static_cast<uint32_t>((next_ / g.x) % g.y),
                     static_cast<uint32_t>(next_ / (uint64_t(g.x) * g.y))};
    sms_[i]->startCta(kernel_.footprint, ctaid, next_);
    ++startedNow_[i];
    ++next_;
    started = true;
  }
  // SMs that just took their per-cycle maximum may take more next cycle.
  if (next_ < total_ && started) wake_.notify(period_);
}

void CtaScheduler::ctaFinished(uint32_t) {
  ++finished_;
  if (finished_ == total_) {
    active_ = false;
    done_ = true;
    endCycle_ = cycleNow();
    kernel_finished.notify(sc_core::SC_ZERO_TIME);
    sc_core::sc_pause();  // the launch is over: return control to the host
  } else if (next_ < total_) {
    wake_.notify(sc_core::SC_ZERO_TIME);
  }
}

}  // namespace gpusc::gpu
