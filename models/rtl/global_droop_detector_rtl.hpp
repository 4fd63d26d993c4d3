// The transactor of the verilated global droop detector
// (models/rtl/verilog/global_droop_detector.sv) and the `verilated` and `lockstep`
// implementations of pdn::GlobalDroopDetector built on it (rtl.droop_detector).
//
// The block runs on the core clock. The transactor clocks it up to each report: the cycles
// since the previous report as plain clocks, except those after the block went quiet (no
// recent rise, no holdoff: no register can change), then one clock with `report` and each SM's
// active bit. A launch's start is one reset clock.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/lockstep.hpp"
#include "common/smoothing_config.hpp"
#include "pdn/global_droop_detector.hpp"
#include "rtl/global_droop_detector_pins.hpp"

namespace gpusc::rtl {

class GlobalDroopDetectorTransactor {
 public:
  // Programs the block from smoothing.global; InputError for more SMs than it has inputs for.
  GlobalDroopDetectorTransactor(const GlobalSmoothingConfig& cfg, uint32_t numSms);
  // One reset clock (a new launch).
  void reset();
  // The report at `cycle` (after the previous one): each SM's delay on a detection (the
  // `delay` outputs), else empty.
  std::vector<uint32_t> report(uint64_t cycle, const std::vector<uint32_t>& activeWarps);
  uint64_t clocks() const { return clocks_; }
  GlobalDroopDetectorPins& pins() { return *pins_; }
  void trace(RtlWaves& w, const std::string& scope, uint64_t periodFs) {
    pins_->trace(w, scope, periodFs);
  }

 private:
  void clock(bool report);

  std::unique_ptr<GlobalDroopDetectorPins> pins_;
  const uint32_t numSms_;
  bool started_ = false;
  uint64_t cycle_ = 0;  // the cycle the next clock applies
  uint64_t clocks_ = 0;
};

// rtl.droop_detector verilated (the RTL's delays drive the SMs and are counted) or lockstep
// (the model's do, and every report compares `detect` and each SM's delay).
class RtlGlobalDroopDetector : public pdn::GlobalDroopDetector {
 public:
  RtlGlobalDroopDetector(const GlobalSmoothingConfig& cfg, uint32_t numSms, bool lockstep);
  std::vector<uint32_t> report(uint64_t cycle, const std::vector<uint32_t>& activeWarps) override;
  void reset() override;
  std::string divergence() const override { return lockstep_.divergence(); }
  GlobalDroopDetectorTransactor& transactor() { return rtl_; }
  void traceWaves(RtlWaves& w, const std::string& scope, uint64_t periodFs) override {
    rtl_.trace(w, scope, periodFs);
  }

 private:
  GlobalDroopDetectorTransactor rtl_;
  const bool lockstepOn_;
  LockstepMonitor lockstep_;
};

}  // namespace gpusc::rtl
