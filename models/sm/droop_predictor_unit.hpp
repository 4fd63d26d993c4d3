// The local droop predictor as the Sm drives it, cycle by cycle, behind the platform key
// rtl.droop_predictor: this class is the C++ model (`model`); models/rtl derives the verilated
// RTL (`verilated`) and both in lockstep (`lockstep`) from it. The LocalDroopPredictor inside
// always estimates the power of a cycle's activity (the transactor's input) and holds the
// throttle settings.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "common/lockstep.hpp"
#include "sm/local_droop_predictor.hpp"

namespace gpusc {
struct PlatformConfig;
}

namespace gpusc::rtl {
class RtlWaves;  // rtl/rtl_waves.hpp
}

namespace gpusc::sm {

class DroopPredictorUnit {
 public:
  explicit DroopPredictorUnit(LocalDroopPredictor model) : model_(std::move(model)) {}
  virtual ~DroopPredictorUnit() = default;
  DroopPredictorUnit(const DroopPredictorUnit&) = delete;
  DroopPredictorUnit& operator=(const DroopPredictorUnit&) = delete;

  const LocalDroopPredictor& model() const { return model_; }

  // Is cycle `c` throttled? Asked before issue in each evaluated cycle, cycles increasing.
  virtual bool throttled(uint64_t c) { return model_.throttled(c); }
  // The end of evaluated cycle `c`, whose estimated power was `watts`: a predicted droop
  // throttles cycles c+1 .. c+throttle_cycles.
  virtual void endCycle(uint64_t c, double watts) {
    if (model_.push(watts)) model_.trigger(c + 1);
  }
  // `n` idle cycles from `first` on that the Sm skipped, each of power `idleWatts`.
  virtual void skipIdle(uint64_t first, uint64_t n, double idleWatts) {
    (void)first;
    model_.skipIdle(n, idleWatts);
  }

  virtual uint64_t predictions() const { return model_.predictions(); }
  virtual uint64_t triggers() const { return model_.triggers(); }
  // Cycles before `end` that were throttled (`end` not before the latest window's start).
  virtual uint64_t throttledCycles(uint64_t end) const { return model_.throttledCycles(end); }

  // Lockstep: the first divergence between the model and the RTL (empty: none; see
  // LockstepMonitor).
  const std::string& divergence() const { return lockstep_.divergence(); }
  // gpusc run --vcd: the RTL's signals into `waves` under `scope` (rtl/rtl_waves.hpp), clocks
  // of platform cycle c at c x `periodFs`. The model has none.
  virtual void traceWaves(rtl::RtlWaves& waves, const std::string& scope, uint64_t periodFs) {
    (void)waves;
    (void)scope;
    (void)periodFs;
  }

 protected:
  LocalDroopPredictor model_;
  LockstepMonitor lockstep_;
};

// The implementation rtl.droop_predictor names, for SM `smId` (models/rtl/droop_predictor_rtl.cpp).
std::unique_ptr<DroopPredictorUnit> makeDroopPredictorUnit(const PlatformConfig& cfg,
                                                           const PredictorWeights& w,
                                                           uint32_t smId);

}  // namespace gpusc::sm
