#include "pdn/global_droop_detector.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "common/error.hpp"

namespace gpusc::pdn {

GlobalDroopDetector::GlobalDroopDetector(const GlobalSmoothingConfig& cfg, uint32_t numSms)
    : reportInterval_(cfg.report_interval),
      minSms_(cfg.min_sms),
      window_(cfg.window_cycles),
      stagger_(cfg.stagger_cycles),
      holdoff_(cfg.holdoff_cycles),
      prev_(numSms, 0),
      lastRise_(numSms, kNever) {
  if (cfg.min_sms < 1 || cfg.min_sms > numSms)
    throw InputError(
        fmt::format("smoothing.global.min_sms: {} is out of range [1, {}] (the GPU has {} SMs)",
                    cfg.min_sms, numSms, numSms));
  if (cfg.report_interval < 1 || cfg.window_cycles < 1)
    throw InputError("smoothing.global: report_interval and window_cycles must be at least 1");
}

void GlobalDroopDetector::reset() {
  std::fill(prev_.begin(), prev_.end(), 0u);
  std::fill(lastRise_.begin(), lastRise_.end(), kNever);
  reported_ = false;
  holdoffEnd_ = 0;
  detections_ = delayCycles_ = delayedSms_ = 0;  // the counters are per kernel
}

std::vector<uint32_t> GlobalDroopDetector::report(uint64_t cycle,
                                                  const std::vector<uint32_t>& activeWarps) {
  if (activeWarps.size() != prev_.size())
    throw InternalError(fmt::format("GlobalDroopDetector: a report of {} SMs, expected {}",
                                    activeWarps.size(), prev_.size()));
  if (reported_ && cycle <= lastReport_)
    throw InternalError(
        fmt::format("GlobalDroopDetector: report at cycle {} not after the previous one ({})",
                    cycle, lastReport_));
  reported_ = true;
  lastReport_ = cycle;

  const bool holdoff = cycle < holdoffEnd_;
  for (size_t i = 0; i < prev_.size(); ++i) {
    if (!holdoff && prev_[i] == 0 && activeWarps[i] > 0) lastRise_[i] = cycle;
    prev_[i] = activeWarps[i];
  }
  if (holdoff) return {};

  // Transitions observed at reports in (cycle - window, cycle].
  std::vector<uint32_t> set;
  for (uint32_t i = 0; i < lastRise_.size(); ++i)
    if (lastRise_[i] != kNever && cycle - lastRise_[i] < window_) set.push_back(i);
  if (set.size() < minSms_) return {};

  std::vector<uint32_t> delays(prev_.size(), 0);
  uint32_t longest = 0;
  for (uint32_t j = 0; j < set.size(); ++j) {
    const uint32_t d = j * stagger_;
    delays[set[j]] = d;
    longest = std::max(longest, d);
    lastRise_[set[j]] = kNever;  // consumed: these transitions cannot trigger again
  }
  account(delays);
  holdoffEnd_ = cycle + (holdoff_ > 0 ? holdoff_ : longest);
  return delays;
}

void GlobalDroopDetector::account(const std::vector<uint32_t>& delays) {
  ++detections_;
  for (uint32_t d : delays) {
    delayCycles_ += d;
    if (d > 0) ++delayedSms_;
  }
}

}  // namespace gpusc::pdn
