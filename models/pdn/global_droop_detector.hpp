// Global second-order droop detector of the CTA scheduler (seed 001 section 5.3; the semantics
// are in common/smoothing_config.hpp): the SMs report their active warps every
// report_interval cycles; when at least min_sms of them went from 0 to at least 1 active warp
// within window_cycles, the detector staggers them by stagger_cycles each.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/smoothing_config.hpp"

namespace gpusc {
struct PlatformConfig;
}

namespace gpusc::rtl {
class RtlWaves;  // rtl/rtl_waves.hpp
}

namespace gpusc::pdn {

// The C++ model; models/rtl derives the verilated RTL and both in lockstep from it
// (rtl.droop_detector).
class GlobalDroopDetector {
 public:
  // Throws InputError when min_sms exceeds `numSms` (no detection could ever happen).
  GlobalDroopDetector(const GlobalSmoothingConfig& cfg, uint32_t numSms);
  virtual ~GlobalDroopDetector() = default;
  GlobalDroopDetector(const GlobalDroopDetector&) = delete;
  GlobalDroopDetector& operator=(const GlobalDroopDetector&) = delete;

  // The report at `cycle` (strictly after the previous one) of every SM's active warps
  // (activeWarps.size() == the SMs). Returns, on a detection, each SM's delay in cycles: the
  // j-th SM (j from 0, in SM-id order) of the detected set waits j x stagger_cycles, the others
  // 0; returns an empty vector when there is no detection (or during a holdoff).
  virtual std::vector<uint32_t> report(uint64_t cycle, const std::vector<uint32_t>& activeWarps);

  // A new launch: every SM counts as idle before the next report; the recorded transitions and
  // the holdoff are forgotten (the counters stay).
  virtual void reset();

  // Lockstep: the first divergence between the model and the RTL (empty: none).
  virtual std::string divergence() const { return {}; }
  // gpusc run --vcd: the RTL's signals into `waves` under `scope` (rtl/rtl_waves.hpp), clocks
  // of platform cycle c at c x `periodFs`. The model has none.
  virtual void traceWaves(rtl::RtlWaves& waves, const std::string& scope, uint64_t periodFs) {
    (void)waves;
    (void)scope;
    (void)periodFs;
  }

  uint32_t reportInterval() const { return reportInterval_; }
  uint32_t numSms() const { return uint32_t(prev_.size()); }
  // Reports at cycles before this ignore transitions (the holdoff of the latest detection).
  uint64_t holdoffEnd() const { return holdoffEnd_; }

  uint64_t detections() const { return detections_; }
  uint64_t delayCycles() const { return delayCycles_; }  // sum of the delays imposed
  uint64_t delayedSms() const { return delayedSms_; }    // SMs given a delay > 0

 protected:
  // Counts a detection that gave these delays.
  void account(const std::vector<uint32_t>& delays);

 private:
  static constexpr uint64_t kNever = ~uint64_t(0);

  const uint32_t reportInterval_, minSms_, window_, stagger_, holdoff_;
  std::vector<uint32_t> prev_;      // active warps at the previous report (0 at first)
  std::vector<uint64_t> lastRise_;  // report cycle of the latest 0 -> >= 1 transition
  uint64_t lastReport_ = 0;
  bool reported_ = false;
  uint64_t holdoffEnd_ = 0;
  uint64_t detections_ = 0, delayCycles_ = 0, delayedSms_ = 0;
};

// The implementation rtl.droop_detector names (models/rtl/global_droop_detector_rtl.cpp).
std::unique_ptr<GlobalDroopDetector> makeGlobalDroopDetector(const PlatformConfig& cfg,
                                                             uint32_t numSms);

}  // namespace gpusc::pdn
