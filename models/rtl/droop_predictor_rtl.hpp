// The transactor of a verilated local droop predictor (models/rtl/verilog/droop_predictor.sv,
// or any block with the same ports: docs/rtl-cosim.md "Bring your own block") and the
// `verilated` and `lockstep` implementations of sm::DroopPredictorUnit built on it.
//
// The transactor is the block's clock domain: it ticks the RTL once per SM core cycle, from
// the Sm's calls. An evaluated cycle is one clock with `push` and the cycle's power in fixed
// point; a stretch of idle cycles the Sm skipped is up to four clocks pushing the idle power
// (without predicting, as the model's skipIdle) and then only as many plain clocks as the
// throttle window still needs: after that, further idle clocks cannot change the block.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/smoothing_config.hpp"
#include "rtl/droop_predictor_pins.hpp"
#include "sm/droop_predictor_unit.hpp"

namespace gpusc::rtl {

class DroopPredictorTransactor {
 public:
  // `cfg` programs the block's configuration inputs; `instance` names it in messages.
  DroopPredictorTransactor(std::unique_ptr<DroopPredictorPins> pins,
                           const LocalSmoothingConfig& cfg, std::string instance);

  // The `throttle` output during cycle `c` (clocks idle cycles up to `c` first).
  bool throttled(uint64_t c);
  // Clocks cycle `c` with `watts` pushed; returns the registered `predict` output.
  bool push(uint64_t c, double watts);
  // `n` skipped idle cycles from `first` on (see the file comment).
  void skipIdle(uint64_t first, uint64_t n, double idleWatts);

  uint64_t predictions() const { return predictions_; }
  // Cycles before `end` whose `throttle` output was high (counted while clocking, plus what
  // is left of the current window).
  uint64_t throttledCycles(uint64_t end) const;
  uint64_t clocks() const { return clocks_; }
  DroopPredictorPins& pins() { return *pins_; }
  void trace(RtlWaves& w, const std::string& scope, uint64_t periodFs) {
    pins_->trace(w, scope, periodFs);
  }

 private:
  void clock(bool push, bool predictEn, uint32_t power);
  void idleTo(uint64_t c);

  std::unique_ptr<DroopPredictorPins> pins_;
  const std::string instance_;
  bool started_ = false;
  uint64_t cycle_ = 0;  // the cycle the next clock ends
  uint64_t predictions_ = 0, throttled_ = 0, clocks_ = 0;
};

// rtl.droop_predictor: verilated. The RTL decides; the model only estimates the power.
class VerilatedDroopPredictor : public sm::DroopPredictorUnit {
 public:
  VerilatedDroopPredictor(sm::LocalDroopPredictor model, DroopPredictorTransactor rtl)
      : DroopPredictorUnit(std::move(model)), rtl_(std::move(rtl)) {}
  bool throttled(uint64_t c) override { return rtl_.throttled(c); }
  void endCycle(uint64_t c, double watts) override { rtl_.push(c, watts); }
  void skipIdle(uint64_t first, uint64_t n, double idleWatts) override {
    rtl_.skipIdle(first, n, idleWatts);
  }
  uint64_t predictions() const override { return rtl_.predictions(); }
  uint64_t triggers() const override { return rtl_.predictions(); }
  uint64_t throttledCycles(uint64_t end) const override { return rtl_.throttledCycles(end); }
  DroopPredictorTransactor& transactor() { return rtl_; }
  void traceWaves(RtlWaves& w, const std::string& scope, uint64_t periodFs) override {
    rtl_.trace(w, scope, periodFs);
  }

 private:
  DroopPredictorTransactor rtl_;
};

// rtl.droop_predictor: lockstep. The model decides; the RTL runs on the same inputs and every
// output is compared in the cycle it is produced (LockstepDivergence at the first difference).
class LockstepDroopPredictor : public sm::DroopPredictorUnit {
 public:
  LockstepDroopPredictor(sm::LocalDroopPredictor model, DroopPredictorTransactor rtl,
                         std::string instance)
      : DroopPredictorUnit(std::move(model)),
        rtl_(std::move(rtl)),
        instance_(std::move(instance)) {}
  bool throttled(uint64_t c) override;
  void endCycle(uint64_t c, double watts) override;
  void skipIdle(uint64_t first, uint64_t n, double idleWatts) override;
  DroopPredictorTransactor& transactor() { return rtl_; }
  void traceWaves(RtlWaves& w, const std::string& scope, uint64_t periodFs) override {
    rtl_.trace(w, scope, periodFs);
  }

 private:
  DroopPredictorTransactor rtl_;
  const std::string instance_;
};

}  // namespace gpusc::rtl
