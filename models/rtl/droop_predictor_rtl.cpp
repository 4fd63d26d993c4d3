#include "rtl/droop_predictor_rtl.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "common/error.hpp"
#include "common/platform_config.hpp"
#include "common/rtl_mode.hpp"

namespace gpusc::rtl {

DroopPredictorTransactor::DroopPredictorTransactor(std::unique_ptr<DroopPredictorPins> pins,
                                                   const LocalSmoothingConfig& cfg,
                                                   std::string instance)
    : pins_(std::move(pins)), instance_(std::move(instance)) {
  if (cfg.thresholds_w.size() != 3)
    throw InputError(fmt::format("smoothing.local.thresholds_w needs 3 values, got {}",
                                 cfg.thresholds_w.size()));
  if (cfg.throttle_cycles >= (1u << 21))
    throw InputError(fmt::format(
        "smoothing.local.throttle_cycles {} does not fit the RTL's 21-bit window counter",
        cfg.throttle_cycles));
  DroopPredictorPins& p = *pins_;
  p.thr2 = toFixedWatts(cfg.thresholds_w[0]);
  p.thr3 = toFixedWatts(cfg.thresholds_w[1]);
  p.thr4 = toFixedWatts(cfg.thresholds_w[2]);
  p.throttleCycles = cfg.throttle_cycles;
  p.rst = true;  // one reset clock
  p.cycle = 0;
  p.clock();
  p.rst = false;
}

void DroopPredictorTransactor::clock(bool push, bool predictEn, uint32_t power) {
  DroopPredictorPins& p = *pins_;
  if (p.throttle) ++throttled_;  // the cycle this clock ends was throttled
  p.push = push;
  p.predictEn = predictEn;
  p.power = power;
  p.cycle = cycle_;
  p.clock();
  ++cycle_;
  ++clocks_;
}

void DroopPredictorTransactor::idleTo(uint64_t c) {
  if (!started_) {
    started_ = true;
    cycle_ = c;
    return;
  }
  if (c < cycle_)
    throw InternalError(fmt::format("{}: droop predictor RTL asked about cycle {} after cycle {}",
                                    instance_, c, cycle_));
  // Plain clocks only change the window counter: clock while it runs, then jump.
  while (cycle_ < c && pins_->throttle) clock(false, false, 0);
  cycle_ = c;
}

bool DroopPredictorTransactor::throttled(uint64_t c) {
  idleTo(c);
  return pins_->throttle;
}

bool DroopPredictorTransactor::push(uint64_t c, double watts) {
  idleTo(c);
  clock(true, true, toFixedWatts(watts));
  if (pins_->predict) ++predictions_;
  return pins_->predict;
}

void DroopPredictorTransactor::skipIdle(uint64_t first, uint64_t n, double idleWatts) {
  if (n == 0) return;
  idleTo(first);
  const uint32_t q = toFixedWatts(idleWatts);
  const uint64_t pushes = std::min<uint64_t>(n, 4);
  for (uint64_t i = 0; i < pushes; ++i) clock(true, false, q);
  idleTo(first + n);
}

uint64_t DroopPredictorTransactor::throttledCycles(uint64_t end) const {
  const uint64_t left = end > cycle_ ? std::min<uint64_t>(pins_->remaining, end - cycle_) : 0;
  return throttled_ + left;
}

bool LockstepDroopPredictor::throttled(uint64_t c) {
  const bool m = model_.throttled(c), r = rtl_.throttled(c);
  lockstep_.check("droop_predictor", instance_, c, "throttle", m, r);
  return m;
}

void LockstepDroopPredictor::endCycle(uint64_t c, double watts) {
  const bool m = model_.push(watts);
  if (m) model_.trigger(c + 1);
  const bool r = rtl_.push(c, watts);
  lockstep_.check("droop_predictor", instance_, c, "predict", m, r);
}

void LockstepDroopPredictor::skipIdle(uint64_t first, uint64_t n, double idleWatts) {
  model_.skipIdle(n, idleWatts);
  rtl_.skipIdle(first, n, idleWatts);
}

}  // namespace gpusc::rtl

namespace gpusc::sm {

std::unique_ptr<DroopPredictorUnit> makeDroopPredictorUnit(const PlatformConfig& cfg,
                                                           const PredictorWeights& w,
                                                           uint32_t smId) {
  const LocalSmoothingConfig& local = cfg.smoothing.local;
  const RtlMode mode = parseRtlMode("rtl.droop_predictor", cfg.rtl.droop_predictor);
  LocalDroopPredictor model(local, w);
  if (mode == RtlMode::Model) return std::make_unique<DroopPredictorUnit>(std::move(model));
  const std::string instance = fmt::format("sm{}", smId);
  rtl::DroopPredictorTransactor t(rtl::droopPredictorBlocks().create(cfg.rtl.droop_predictor_block),
                                  local, instance);
  if (mode == RtlMode::Verilated)
    return std::make_unique<rtl::VerilatedDroopPredictor>(std::move(model), std::move(t));
  return std::make_unique<rtl::LockstepDroopPredictor>(std::move(model), std::move(t), instance);
}

}  // namespace gpusc::sm
