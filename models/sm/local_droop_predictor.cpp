#include "sm/local_droop_predictor.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "common/error.hpp"
#include "power/energy_model.hpp"

namespace gpusc::sm {

PredictorWeights predictorWeights(const power::EnergyTable& t, uint32_t warpSize) {
  const auto lane = [&](LaneKind k) { return t.collector + warpSize * t.lane[int(k)]; };
  PredictorWeights w;
  w.perInt = lane(LaneKind::Int);
  w.perFp = lane(LaneKind::Fp);
  w.perDp = lane(LaneKind::Dp);
  w.perSfu = lane(LaneKind::Sfu);
  w.perLdst = t.collector + t.ldst;
  w.perRfRead = t.rfRead;
  w.perRfWrite = t.rfWrite;
  w.cycleSeconds = t.cycleSeconds;
  return w;
}

namespace {

ThrottleKind throttleKindOf(const std::string& name) {
  if (name == "dispatch") return ThrottleKind::Dispatch;
  if (name == "rf") return ThrottleKind::Rf;
  if (name == "ramp") return ThrottleKind::Ramp;
  throw InputError(
      fmt::format("smoothing.local.throttle: '{}' is not one of: dispatch, rf, ramp", name));
}

std::array<double, LocalDroopPredictor::kRises> thresholdsOf(const LocalSmoothingConfig& cfg) {
  if (cfg.thresholds_w.size() != LocalDroopPredictor::kRises)
    throw InputError(fmt::format("smoothing.local.thresholds_w needs 3 values, got {}",
                                 cfg.thresholds_w.size()));
  return {cfg.thresholds_w[0], cfg.thresholds_w[1], cfg.thresholds_w[2]};
}

}  // namespace

LocalDroopPredictor::LocalDroopPredictor(const LocalSmoothingConfig& cfg, const PredictorWeights& w)
    : thresholds_(thresholdsOf(cfg)),
      throttleCycles_(cfg.throttle_cycles),
      kind_(throttleKindOf(cfg.throttle)),
      issueLimit_(cfg.issue_limit),
      rfReadLimit_(cfg.rf_read_limit),
      w_(w) {
  if (!(w.cycleSeconds > 0))
    throw InternalError("LocalDroopPredictor: the cycle time must be positive");
}

double LocalDroopPredictor::estimate(const SmActivity& a) const {
  const double units = double(a.dispatched[int(Unit::Sp)]) + a.dispatched[int(Unit::Sfu)] +
                       a.dispatched[int(Unit::Dp)];
  double joules = a.dispatched[int(Unit::Ldst)] * w_.perLdst + a.rfReads * w_.perRfRead +
                  a.rfWrites * w_.perRfWrite;
  if (units > 0) {
    const double perKind[kNumLaneKinds] = {w_.perInt, w_.perFp, w_.perDp, w_.perSfu};
    static_assert(int(LaneKind::Int) == 0 && int(LaneKind::Fp) == 1 && int(LaneKind::Dp) == 2 &&
                  int(LaneKind::Sfu) == 3);
    double lanes = 0, weighted = 0;
    for (int k = 0; k < kNumLaneKinds; ++k) {
      lanes += a.laneOpsByKind[k];
      weighted += a.laneOpsByKind[k] * perKind[k];
    }
    // The mean energy of an instruction, weighting the kinds by their lane operations.
    joules += units * (lanes > 0 ? weighted / lanes : w_.perInt);
  }
  return joules / w_.cycleSeconds;
}

bool LocalDroopPredictor::push(double watts) {
  head_ = (head_ + 1) % kDepth;
  fifo_[head_] = watts;
  size_ = std::min<size_t>(size_ + 1, kDepth);
  const auto r = rises();
  bool predicted = false;
  for (int i = 0; i < kRises; ++i)
    if (size_ >= size_t(i + 2) && r[i] > thresholds_[i]) predicted = true;
  if (predicted) ++predictions_;
  return predicted;
}

std::array<double, LocalDroopPredictor::kRises> LocalDroopPredictor::rises() const {
  std::array<double, kRises> r{};
  if (size_ < 2) return r;
  const double newest = entry(0);
  double lowest = entry(1);
  for (size_t k = 2; k <= size_; ++k) {
    lowest = std::min(lowest, entry(k - 1));
    r[k - 2] = newest - lowest;
  }
  return r;
}

void LocalDroopPredictor::skipIdle(uint64_t cycles, double idleWatts) {
  const uint64_t n = std::min<uint64_t>(cycles, kDepth);
  for (uint64_t i = 0; i < n; ++i) {
    head_ = (head_ + 1) % kDepth;
    fifo_[head_] = idleWatts;
  }
  size_ = std::min<size_t>(size_ + n, kDepth);
}

void LocalDroopPredictor::trigger(uint64_t from) {
  if (triggers_ > 0 && from < windowStart_)
    throw InternalError(fmt::format(
        "LocalDroopPredictor::trigger: cycle {} before the window at {}", from, windowStart_));
  ++triggers_;
  const uint64_t end = from + throttleCycles_;
  if (triggers_ > 1 && from <= windowEnd_) {
    windowEnd_ = std::max(windowEnd_, end);
    return;
  }
  closedCycles_ += windowEnd_ - windowStart_;
  windowStart_ = from;
  windowEnd_ = end;
}

uint64_t LocalDroopPredictor::throttledCycles(uint64_t end) const {
  const uint64_t current = end > windowStart_ ? std::min(end, windowEnd_) - windowStart_ : 0;
  return closedCycles_ + current;
}

}  // namespace gpusc::sm
