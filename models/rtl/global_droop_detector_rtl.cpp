#include "rtl/global_droop_detector_rtl.hpp"

#include <fmt/format.h>

#include "common/error.hpp"
#include "common/platform_config.hpp"
#include "common/rtl_mode.hpp"

namespace gpusc::rtl {

GlobalDroopDetectorTransactor::GlobalDroopDetectorTransactor(const GlobalSmoothingConfig& cfg,
                                                             uint32_t numSms)
    : pins_(makeGlobalDroopDetectorBlock()), numSms_(numSms) {
  if (numSms > GlobalDroopDetectorPins::kMaxSms)
    throw InputError(
        fmt::format("rtl.droop_detector: the RTL detector has inputs for {} SMs, the "
                    "GPU has {}",
                    GlobalDroopDetectorPins::kMaxSms, numSms));
  GlobalDroopDetectorPins& p = *pins_;
  p.minSms = cfg.min_sms;
  p.window = cfg.window_cycles;
  p.stagger = cfg.stagger_cycles;
  p.holdoff = cfg.holdoff_cycles;
  reset();
}

void GlobalDroopDetectorTransactor::clock(bool report) {
  pins_->report = report;
  pins_->cycle = cycle_;
  pins_->clock();
  ++cycle_;
  ++clocks_;
}

void GlobalDroopDetectorTransactor::reset() {
  pins_->rst = true;
  pins_->report = false;
  pins_->clock();
  pins_->rst = false;
  ++clocks_;
  started_ = false;
}

std::vector<uint32_t> GlobalDroopDetectorTransactor::report(
    uint64_t cycle, const std::vector<uint32_t>& activeWarps) {
  if (activeWarps.size() != numSms_)
    throw InternalError(fmt::format("global droop detector RTL: a report of {} SMs, expected {}",
                                    activeWarps.size(), numSms_));
  if (started_ && cycle < cycle_)
    throw InternalError(fmt::format(
        "global droop detector RTL: report at cycle {} not after the previous one", cycle));
  if (!started_) cycle_ = cycle;  // after a reset the block is quiet
  started_ = true;
  while (cycle_ < cycle && !pins_->quiet) clock(false);
  cycle_ = cycle;
  for (uint32_t& w : pins_->active) w = 0;
  for (uint32_t i = 0; i < numSms_; ++i)
    if (activeWarps[i] > 0) pins_->active[i / 32] |= 1u << (i % 32);
  clock(true);
  if (!pins_->detect) return {};
  return std::vector<uint32_t>(pins_->delay, pins_->delay + numSms_);
}

RtlGlobalDroopDetector::RtlGlobalDroopDetector(const GlobalSmoothingConfig& cfg, uint32_t numSms,
                                               bool lockstep)
    : GlobalDroopDetector(cfg, numSms), rtl_(cfg, numSms), lockstepOn_(lockstep) {}

void RtlGlobalDroopDetector::reset() {
  GlobalDroopDetector::reset();
  rtl_.reset();
}

std::vector<uint32_t> RtlGlobalDroopDetector::report(uint64_t cycle,
                                                     const std::vector<uint32_t>& activeWarps) {
  const std::vector<uint32_t> r = rtl_.report(cycle, activeWarps);
  if (!lockstepOn_) {
    if (!r.empty()) account(r);
    return r;
  }
  const std::vector<uint32_t> m = GlobalDroopDetector::report(cycle, activeWarps);
  const char* block = "global_droop_detector";
  if (lockstep_.check(block, "cta_scheduler", cycle, "detect", !m.empty(), !r.empty()))
    for (size_t i = 0; i < m.size(); ++i) {
      const std::string signal = fmt::format("delay of sm{}", i);
      if (!lockstep_.check(block, "cta_scheduler", cycle, signal.c_str(), m[i], r[i])) break;
    }
  return m;
}

}  // namespace gpusc::rtl

namespace gpusc::pdn {

std::unique_ptr<GlobalDroopDetector> makeGlobalDroopDetector(const PlatformConfig& cfg,
                                                             uint32_t numSms) {
  const RtlMode mode = parseRtlMode("rtl.droop_detector", cfg.rtl.droop_detector);
  if (mode == RtlMode::Model)
    return std::make_unique<GlobalDroopDetector>(cfg.smoothing.global, numSms);
  return std::make_unique<rtl::RtlGlobalDroopDetector>(cfg.smoothing.global, numSms,
                                                       mode == RtlMode::Lockstep);
}

}  // namespace gpusc::pdn
