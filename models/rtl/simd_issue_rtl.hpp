// The transactor of the verilated SIMD issue-control state machine
// (models/rtl/verilog/simd_issue_control.sv) and the `verilated` and `lockstep` implementations
// of sm::SimdIssuePolicy built on it (rtl.simd_issue).
//
// The block is clocked only at slice ends (one clock with `slice_end` and the slice's
// utilisation in fixed point): between them no register can change. A kernel's start is one
// reset clock.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "common/lockstep.hpp"
#include "common/power_config.hpp"
#include "rtl/simd_issue_pins.hpp"
#include "sm/simd_issue_control.hpp"

namespace gpusc::rtl {

class SimdIssueTransactor {
 public:
  // Programs the thresholds (power.simd_issue) and resets the block.
  explicit SimdIssueTransactor(const SimdIssueConfig& cfg);
  // One reset clock: state 1.
  void reset();
  // One clock with `slice_end` and `utilisation` in platform cycle `cycle` (the waveform's
  // time): the state of the next slice.
  uint32_t sliceEnd(double utilisation, uint64_t cycle = 0);
  void trace(RtlWaves& w, const std::string& scope, uint64_t periodFs) {
    pins_->trace(w, scope, periodFs);
  }
  uint32_t state() const { return pins_->state; }
  uint64_t clocks() const { return clocks_; }

 private:
  std::unique_ptr<SimdIssuePins> pins_;
  uint64_t clocks_ = 0;
};

// rtl.simd_issue verilated (the RTL's state drives the SM) or lockstep (the model's does, and
// every slice end compares the two).
class RtlSimdIssuePolicy : public sm::SimdIssuePolicy {
 public:
  RtlSimdIssuePolicy(std::unique_ptr<sm::SimdIssuePolicy> model, SimdIssueTransactor rtl,
                     bool lockstep, std::string instance);
  bool adaptive() const override { return true; }
  uint32_t next(uint32_t state, double utilisation) const override {
    return model_->next(state, utilisation);
  }
  uint32_t nextAt(uint64_t end, uint32_t state, double utilisation) override;
  void begin() override { rtl_.reset(); }
  std::string divergence() const override { return lockstep_.divergence(); }
  SimdIssueTransactor& transactor() { return rtl_; }
  void traceWaves(RtlWaves& w, const std::string& scope, uint64_t periodFs) override {
    rtl_.trace(w, scope, periodFs);
  }

 private:
  std::unique_ptr<sm::SimdIssuePolicy> model_;
  SimdIssueTransactor rtl_;
  const bool lockstep_on_;
  const std::string instance_;
  LockstepMonitor lockstep_;
};

}  // namespace gpusc::rtl
