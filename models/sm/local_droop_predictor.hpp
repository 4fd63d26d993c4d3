// Local first-order droop predictor and throttle of one SM (seed 001 section 5.2, Fig. 18a;
// the semantics are in common/smoothing_config.hpp).
//
// The Sm, each evaluated cycle c:
//   if (p.push(p.estimate(activity))) p.trigger(c + 1);   // throttle cycles c+1 .. c+N
// and, before issuing in cycle c, limits issue (or RF reads) when p.throttled(c). A stretch of
// `n` skipped idle cycles is one p.skipIdle(n, p.estimate(SmActivity{})).
#pragma once

#include <array>
#include <cstdint>

#include "common/smoothing_config.hpp"
#include "sm/activity.hpp"

namespace gpusc::power {
struct EnergyTable;
}

namespace gpusc::sm {

// Energies (J) of the events the predictor counts. A dispatched warp instruction of each kind
// costs one of per*; the predictor's power of a cycle is its energy / cycleSeconds.
struct PredictorWeights {
  double perInt = 0, perFp = 0, perDp = 0, perSfu = 0, perLdst = 0;  // per warp instruction
  double perRfRead = 0, perRfWrite = 0;                              // per RF access
  double cycleSeconds = 1;                                           // core clock period
};

// The weights of the energy model: an instruction of kind k that entered a unit costs an
// operand collector pass and `warpSize` lanes of kind k (LD/ST: a collector pass and the LD/ST
// energy); RF accesses cost their energies. For an activity of full-warp dispatches and RF
// accesses only, the estimate is then exactly EnergyTable::activityJ / cycleSeconds.
PredictorWeights predictorWeights(const power::EnergyTable& t, uint32_t warpSize);

// Dispatch: at most issue_limit dispatches per cycle; Rf: at most rf_read_limit register reads
// per cycle; Ramp: a cycle's dispatches exceed the previous cycle's by at most issue_limit (the
// rise of the current is limited, not its level).
enum class ThrottleKind : uint8_t { Dispatch, Rf, Ramp };

class LocalDroopPredictor {
 public:
  static constexpr int kDepth = 4;  // FIFO entries: the last four cycles
  static constexpr int kRises = 3;  // rises over 2, 3 and 4 cycles

  LocalDroopPredictor(const LocalSmoothingConfig& cfg, const PredictorWeights& w);

  // Estimated power (W) of one cycle of activity `a`: its dispatched instructions and RF
  // accesses. dispatched[Ldst] are LD/ST instructions; the instructions that entered the SP,
  // SFU and DP units are split into integer, FP32, FP64 and SFU instructions in proportion to
  // the cycle's lane operations of each kind (laneOpsByKind; all integer when it has none).
  double estimate(const SmActivity& a) const;

  // Enqueues the power of the next cycle (the oldest of four drops out) and returns whether a
  // large droop is predicted: rises()[k-2] > thresholds_w[k-2] for some k with k entries held.
  bool push(double watts);
  // p0 - min(p1 .. p(k-1)) for k = 2, 3, 4 (p0 the newest entry); 0 where fewer than k
  // entries are held (see size()).
  std::array<double, kRises> rises() const;
  size_t size() const { return size_; }
  // `cycles` idle cycles of power `idleWatts` each (at most kDepth pushes), without predicting.
  void skipIdle(uint64_t cycles, double idleWatts);
  // Forgets the history (a new launch); the throttle window and counters stay.
  void clearHistory() { size_ = 0; }

  // Throttles cycles [from, from + throttle_cycles); a window that overlaps or touches the
  // current one extends it. `from` never decreases from one call to the next.
  void trigger(uint64_t from);
  bool throttled(uint64_t cycle) const { return cycle >= windowStart_ && cycle < windowEnd_; }

  ThrottleKind throttleKind() const { return kind_; }
  uint32_t issueLimit() const { return issueLimit_; }
  uint32_t rfReadLimit() const { return rfReadLimit_; }

  uint64_t predictions() const { return predictions_; }  // pushes that predicted a droop
  uint64_t triggers() const { return triggers_; }        // calls of trigger()
  // Cycles before `end` that were throttled (the union of the windows), for `end` not before
  // the start of the latest window (e.g. the cycle a launch ends).
  uint64_t throttledCycles(uint64_t end) const;

 private:
  const std::array<double, kRises> thresholds_;
  const uint32_t throttleCycles_;
  const ThrottleKind kind_;
  const uint32_t issueLimit_, rfReadLimit_;
  const PredictorWeights w_;

  std::array<double, kDepth> fifo_{};  // ring buffer, head_ the newest
  size_t head_ = 0, size_ = 0;

  uint64_t windowStart_ = 0, windowEnd_ = 0;  // the latest throttle window
  uint64_t closedCycles_ = 0;                 // cycles of the earlier, disjoint windows
  uint64_t predictions_ = 0, triggers_ = 0;

  double entry(size_t back) const { return fifo_[(head_ + kDepth - back) % kDepth]; }
};

}  // namespace gpusc::sm
