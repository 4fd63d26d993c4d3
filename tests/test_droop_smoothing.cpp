// Hierarchical voltage smoothing (seed 001 section 5): the local first-order droop predictor's
// power estimate, FIFO and throttle window; the global second-order droop detector's window,
// staggered delays and holdoff; and the smoothing configuration's validation.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "common/error.hpp"
#include "common/platform_config.hpp"
#include "common/smoothing_config.hpp"
#include "pdn/global_droop_detector.hpp"
#include "power/energy_model.hpp"
#include "sm/local_droop_predictor.hpp"

using namespace gpusc;
using pdn::GlobalDroopDetector;
using sm::LaneKind;
using sm::LocalDroopPredictor;
using sm::PredictorWeights;
using sm::SmActivity;
using sm::Unit;

namespace {

LocalSmoothingConfig localCfg(double t2, double t3, double t4, uint32_t throttleCycles = 4) {
  LocalSmoothingConfig c;
  c.thresholds_w = {t2, t3, t4};
  c.throttle_cycles = throttleCycles;
  return c;
}

PredictorWeights unitWeights() {
  PredictorWeights w;
  w.cycleSeconds = 1.0;  // joules per cycle are watts
  return w;
}

LocalDroopPredictor predictor(double t2, double t3, double t4, uint32_t throttleCycles = 4) {
  return LocalDroopPredictor(localCfg(t2, t3, t4, throttleCycles), unitWeights());
}

// ---- local predictor: FIFO and rises ------------------------------------------------------------

TEST(LocalDroopPredictor, FewerThanKEntriesNeverPredictForK) {
  // k = 2 needs two entries.
  auto p2 = predictor(1, 1e3, 1e3);
  EXPECT_FALSE(p2.push(100));  // one entry: nothing to compare
  EXPECT_TRUE(p2.push(105));   // 5 W over 2 cycles > 1 W
  // k = 3: after two entries the rise (5 W) exceeds the 3-cycle threshold, but there are only two.
  auto p3 = predictor(1e3, 1, 1e3);
  EXPECT_FALSE(p3.push(0));
  EXPECT_FALSE(p3.push(5));
  EXPECT_TRUE(p3.push(5));  // three entries: 5 - min(5, 0) = 5 > 1
  // k = 4 likewise needs four.
  auto p4 = predictor(1e3, 1e3, 1);
  EXPECT_FALSE(p4.push(0));
  EXPECT_FALSE(p4.push(5));
  EXPECT_FALSE(p4.push(5));
  EXPECT_TRUE(p4.push(5));
  EXPECT_EQ(p4.predictions(), 1u);
}

TEST(LocalDroopPredictor, RisesSpanExactlyTwoThreeAndFourCycles) {
  // Oldest to newest: 0, 10, 4, 6. Over 2 cycles 6 - 4; over 3 the lower of 4 and 10; only the
  // 4-cycle window reaches back to the 0.
  auto p = predictor(1e3, 1e3, 1e3);
  for (double w : {0.0, 10.0, 4.0, 6.0}) p.push(w);
  auto r = p.rises();
  EXPECT_DOUBLE_EQ(r[0], 2.0);
  EXPECT_DOUBLE_EQ(r[1], 2.0);
  EXPECT_DOUBLE_EQ(r[2], 6.0);
  // 10, 0, 4, 6: the 3-cycle window reaches the 0, the 2-cycle one does not.
  auto q = predictor(1e3, 1e3, 1e3);
  for (double w : {10.0, 0.0, 4.0, 6.0}) q.push(w);
  r = q.rises();
  EXPECT_DOUBLE_EQ(r[0], 2.0);
  EXPECT_DOUBLE_EQ(r[1], 6.0);
  EXPECT_DOUBLE_EQ(r[2], 6.0);
  // A falling power is a negative rise.
  auto f = predictor(1e3, 1e3, 1e3);
  for (double w : {9.0, 8.0}) f.push(w);
  EXPECT_DOUBLE_EQ(f.rises()[0], -1.0);
  EXPECT_DOUBLE_EQ(f.rises()[1], 0.0);  // not held yet
}

TEST(LocalDroopPredictor, RisesMatchABruteForceHistory) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> watts(3.0, 9.0);
  auto p = predictor(2.0, 2.5, 3.0);
  std::vector<double> h;
  for (int i = 0; i < 500; ++i) {
    const double w = watts(rng);
    const bool predicted = p.push(w);
    h.push_back(w);
    bool expected = false;
    const double thresholds[3] = {2.0, 2.5, 3.0};
    for (size_t k = 2; k <= 4; ++k) {
      if (h.size() < k) continue;
      // the largest increase to the newest from the k - 1 cycles before it
      double lowest = h[h.size() - 2];
      for (size_t back = 1; back < k; ++back) lowest = std::min(lowest, h[h.size() - 1 - back]);
      EXPECT_DOUBLE_EQ(p.rises()[k - 2], w - lowest) << "cycle " << i << " k " << k;
      expected = expected || w - lowest > thresholds[k - 2];
    }
    EXPECT_EQ(predicted, expected) << "cycle " << i;
  }
  EXPECT_EQ(p.size(), 4u);
}

TEST(LocalDroopPredictor, EachSpanHasItsOwnThresholdAndMustBeExceeded) {
  // Oldest to newest: 20, 0, 6, 10: rise over 2 cycles 4, over 3 and 4 cycles 10.
  const std::vector<double> h{20.0, 0.0, 6.0, 10.0};
  auto run = [&](double t2, double t3, double t4) {
    auto p = predictor(t2, t3, t4);
    bool last = false;
    for (double w : h) last = p.push(w);
    return last;
  };
  EXPECT_FALSE(run(5, 1e3, 1e3));   // the 2-cycle rise (4) is below its threshold
  EXPECT_TRUE(run(3.9, 1e3, 1e3));  // ... and above this one
  EXPECT_FALSE(run(4, 1e3, 1e3));   // equal is not a prediction
  EXPECT_TRUE(run(1e3, 9.9, 1e3));  // the 3-cycle rise (10)
  EXPECT_FALSE(run(1e3, 10, 1e3));
  EXPECT_TRUE(run(1e3, 1e3, 9.9));  // the 4-cycle rise (10)
  EXPECT_FALSE(run(1e3, 1e3, 10));
}

TEST(LocalDroopPredictor, TheOldestEntryDropsOut) {
  auto p = predictor(1e3, 1e3, 1);
  EXPECT_FALSE(p.push(0));
  EXPECT_FALSE(p.push(10));
  EXPECT_FALSE(p.push(10));
  EXPECT_TRUE(p.push(10));   // 10 - 0 over 4 cycles
  EXPECT_FALSE(p.push(10));  // the 0 is five cycles old: gone
  EXPECT_EQ(p.size(), 4u);
  for (double r : p.rises()) EXPECT_DOUBLE_EQ(r, 0.0);
}

TEST(LocalDroopPredictor, ClearHistoryStartsOver) {
  auto p = predictor(1, 1, 1);
  p.push(0);
  p.clearHistory();
  EXPECT_EQ(p.size(), 0u);
  EXPECT_FALSE(p.push(50));  // the 0 before the clear does not count
}

// ---- local predictor: power estimate ------------------------------------------------------------

TEST(LocalDroopPredictor, EstimateIsTheHandSumOfTheWeights) {
  PredictorWeights w;
  w.perInt = 1.0;
  w.perFp = 2.0;
  w.perDp = 4.0;
  w.perSfu = 8.0;
  w.perLdst = 16.0;
  w.perRfRead = 32.0;
  w.perRfWrite = 64.0;
  w.cycleSeconds = 0.5;
  LocalDroopPredictor p(localCfg(1, 1, 1), w);
  SmActivity a;
  // one full-warp integer and one full-warp FP32 instruction on the SIMD units, one SFU and one
  // FP64 instruction on the SFU path, two LD/ST instructions, 7 RF reads, 3 RF writes
  a.dispatched[int(Unit::Sp)] = 2;
  a.dispatched[int(Unit::Sfu)] = 2;
  a.dispatched[int(Unit::Ldst)] = 2;
  a.laneOpsByKind[int(LaneKind::Int)] = 32;
  a.laneOpsByKind[int(LaneKind::Fp)] = 32;
  a.laneOpsByKind[int(LaneKind::Sfu)] = 32;
  a.laneOpsByKind[int(LaneKind::Dp)] = 32;
  a.rfReads = 7;
  a.rfWrites = 3;
  // events the predictor does not count
  a.issued = 5;
  a.sharedAccesses = 9;
  a.icacheAccesses = 2;
  const double joules = 1 + 2 + 8 + 4 + 2 * 16 + 7 * 32 + 3 * 64;
  EXPECT_DOUBLE_EQ(p.estimate(a), joules / 0.5);

  // The same kind in every instruction: per instruction, whatever the active lanes.
  SmActivity fp;
  fp.dispatched[int(Unit::Sp)] = 3;
  fp.laneOpsByKind[int(LaneKind::Fp)] = 40;
  EXPECT_DOUBLE_EQ(p.estimate(fp), 3 * 2.0 / 0.5);
  // Instructions with no active lane count as integer ones.
  SmActivity none;
  none.dispatched[int(Unit::Sp)] = 1;
  EXPECT_DOUBLE_EQ(p.estimate(none), 1.0 / 0.5);
  EXPECT_DOUBLE_EQ(p.estimate(SmActivity{}), 0.0);
}

TEST(LocalDroopPredictor, EnergyModelWeightsAgreeWithTheEnergyModel) {
  const PlatformConfig cfg = loadPlatform("gtx480");
  const power::EnergyTable t(cfg);
  const PredictorWeights w = sm::predictorWeights(t, cfg.sm.warp_size);
  LocalDroopPredictor p(LocalSmoothingConfig{}, w);
  // Full-warp dispatches and RF accesses only: the energy model's energy of the cycle.
  SmActivity a;
  a.dispatched[int(Unit::Sp)] = 2;
  a.dispatched[int(Unit::Sfu)] = 1;
  a.dispatched[int(Unit::Ldst)] = 1;
  a.laneOpsByKind[int(LaneKind::Int)] = cfg.sm.warp_size;
  a.laneOpsByKind[int(LaneKind::Fp)] = cfg.sm.warp_size;
  a.laneOpsByKind[int(LaneKind::Sfu)] = cfg.sm.warp_size;
  a.rfReads = 5;
  a.rfWrites = 3;
  EXPECT_NEAR(p.estimate(a) * t.cycleSeconds, t.activityJ(a), 1e-9 * t.activityJ(a));
  // A busy cycle of a GTX480 SM is watts, not milli- or kilowatts.
  EXPECT_GT(p.estimate(a), 1.0);
  EXPECT_LT(p.estimate(a), 20.0);
}

// ---- local predictor: throttle and idle stretches -----------------------------------------------

TEST(LocalDroopPredictor, ThrottleWindowLastsThrottleCycles) {
  auto p = predictor(1, 1, 1, 4);
  EXPECT_FALSE(p.throttled(0));
  EXPECT_EQ(p.throttledCycles(1000), 0u);
  p.trigger(100);
  EXPECT_FALSE(p.throttled(99));
  for (uint64_t c = 100; c < 104; ++c) EXPECT_TRUE(p.throttled(c)) << c;
  EXPECT_FALSE(p.throttled(104));
  EXPECT_EQ(p.throttledCycles(102), 2u);
  EXPECT_EQ(p.throttledCycles(1000), 4u);
  // An overlapping trigger extends the window; an adjacent one too.
  p.trigger(102);
  EXPECT_TRUE(p.throttled(105));
  EXPECT_FALSE(p.throttled(106));
  EXPECT_EQ(p.throttledCycles(1000), 6u);
  p.trigger(106);
  EXPECT_TRUE(p.throttled(109));
  EXPECT_FALSE(p.throttled(110));
  EXPECT_EQ(p.throttledCycles(1000), 10u);
  // A disjoint window adds its own cycles.
  p.trigger(200);
  EXPECT_FALSE(p.throttled(150));
  EXPECT_TRUE(p.throttled(203));
  EXPECT_EQ(p.throttledCycles(202), 12u);
  EXPECT_EQ(p.throttledCycles(1000), 14u);
  EXPECT_EQ(p.triggers(), 4u);
  EXPECT_THROW(p.trigger(150), InternalError);
}

TEST(LocalDroopPredictor, ThrottleSettingsComeFromTheConfig) {
  LocalSmoothingConfig c = localCfg(1, 1, 1);
  c.throttle = "rf";
  c.rf_read_limit = 3;
  c.issue_limit = 2;
  LocalDroopPredictor p(c, unitWeights());
  EXPECT_EQ(p.throttleKind(), sm::ThrottleKind::Rf);
  EXPECT_EQ(p.rfReadLimit(), 3u);
  EXPECT_EQ(p.issueLimit(), 2u);
  EXPECT_EQ(predictor(1, 1, 1).throttleKind(), sm::ThrottleKind::Ramp);  // the default
  c.throttle = "dispatch";
  EXPECT_EQ(LocalDroopPredictor(c, unitWeights()).throttleKind(), sm::ThrottleKind::Dispatch);
}

TEST(LocalDroopPredictor, SkipIdlePushesAtMostFourIdleCycles) {
  // Two entries, then one idle cycle at 5 W: the history is 1, 2, 5 and the next push sees it.
  auto p = predictor(1e3, 1e3, 1e3);
  p.push(1);
  p.push(2);
  p.skipIdle(1, 5.0);
  EXPECT_EQ(p.size(), 3u);
  p.push(6);
  auto r = p.rises();
  EXPECT_DOUBLE_EQ(r[0], 1.0);  // 6 - 5
  EXPECT_DOUBLE_EQ(r[1], 4.0);  // 6 - 2
  EXPECT_DOUBLE_EQ(r[2], 5.0);  // 6 - 1
  // A long stretch replaces the whole history, without predicting.
  auto q = predictor(1, 1, 1);
  q.push(0);
  q.skipIdle(1000000, 50.0);  // a 50 W rise, but skipped cycles do not predict
  EXPECT_EQ(q.predictions(), 0u);
  EXPECT_EQ(q.size(), 4u);
  for (double x : q.rises()) EXPECT_DOUBLE_EQ(x, 0.0);
  EXPECT_FALSE(q.push(50.5));  // every entry is 50 W: a 0.5 W rise
  EXPECT_TRUE(q.push(52));
  q.skipIdle(0, 0.0);  // nothing
  EXPECT_DOUBLE_EQ(q.rises()[0], 1.5);
}

// ---- global detector ----------------------------------------------------------------------------

constexpr uint32_t kSms = 15;

// Active warps: `warps` on the SMs in `active`, 0 elsewhere.
std::vector<uint32_t> warpsOn(std::initializer_list<uint32_t> active, uint32_t warps = 4) {
  std::vector<uint32_t> v(kSms, 0);
  for (uint32_t s : active) v[s] = warps;
  return v;
}

GlobalSmoothingConfig globalCfg() { return GlobalSmoothingConfig{}; }  // 10, 9, 30, 50, 0

TEST(GlobalDroopDetector, NineSmsWakingTogetherAreStaggeredInSmOrder) {
  GlobalDroopDetector d(globalCfg(), kSms);
  EXPECT_TRUE(d.report(10, warpsOn({})).empty());
  const std::vector<uint32_t> set{1, 3, 4, 5, 7, 9, 10, 12, 14};
  auto delays = d.report(20, warpsOn({1, 3, 4, 5, 7, 9, 10, 12, 14}));
  ASSERT_EQ(delays.size(), kSms);
  for (uint32_t s = 0; s < kSms; ++s) {
    const auto it = std::find(set.begin(), set.end(), s);
    const uint32_t expected = it == set.end() ? 0 : uint32_t(it - set.begin()) * 50;
    EXPECT_EQ(delays[s], expected) << "SM " << s;
  }
  EXPECT_EQ(d.detections(), 1u);
  EXPECT_EQ(d.delayCycles(), 50u * (0 + 1 + 2 + 3 + 4 + 5 + 6 + 7 + 8));
  EXPECT_EQ(d.delayedSms(), 8u);
  EXPECT_EQ(d.holdoffEnd(), 20u + 8 * 50);  // default holdoff: the longest delay
}

TEST(GlobalDroopDetector, EightSmsDoNotTrigger) {
  GlobalDroopDetector d(globalCfg(), kSms);
  EXPECT_TRUE(d.report(10, warpsOn({0, 1, 2, 3, 4, 5, 6, 7})).empty());
  EXPECT_TRUE(d.report(20, warpsOn({0, 1, 2, 3, 4, 5, 6, 7})).empty());
  EXPECT_EQ(d.detections(), 0u);
}

TEST(GlobalDroopDetector, TheWindowHoldsTheReportsOfTheLastThirtyCycles) {
  // Three at each of three consecutive reports: 100, 110, 120 are within (90, 120].
  GlobalDroopDetector in(globalCfg(), kSms);
  EXPECT_TRUE(in.report(100, warpsOn({0, 1, 2})).empty());
  EXPECT_TRUE(in.report(110, warpsOn({0, 1, 2, 3, 4, 5})).empty());
  auto delays = in.report(120, warpsOn({0, 1, 2, 3, 4, 5, 6, 7, 8}));
  ASSERT_EQ(delays.size(), kSms);
  EXPECT_EQ(delays[8], 400u);
  // Spread over 90 .. 120: the transitions at 90 are 30 cycles old, outside (90, 120].
  GlobalDroopDetector out(globalCfg(), kSms);
  EXPECT_TRUE(out.report(90, warpsOn({0, 1, 2})).empty());
  EXPECT_TRUE(out.report(100, warpsOn({0, 1, 2, 3, 4, 5})).empty());
  EXPECT_TRUE(out.report(110, warpsOn({0, 1, 2, 3, 4, 5})).empty());
  EXPECT_TRUE(out.report(120, warpsOn({0, 1, 2, 3, 4, 5, 6, 7, 8})).empty());
  EXPECT_EQ(out.detections(), 0u);
  // With irregular reports the window is still in cycles: 91 is within (91 - 30, 120].
  GlobalDroopDetector odd(globalCfg(), kSms);
  EXPECT_TRUE(odd.report(91, warpsOn({0, 1, 2})).empty());
  EXPECT_FALSE(odd.report(120, warpsOn({0, 1, 2, 3, 4, 5, 6, 7, 8})).empty());
}

TEST(GlobalDroopDetector, SmsThatStayActiveDoNotCount) {
  GlobalDroopDetector d(globalCfg(), kSms);
  // Six SMs wake early (too few to trigger) and stay active with changing counts.
  EXPECT_TRUE(d.report(10, warpsOn({0, 1, 2, 3, 4, 5}, 2)).empty());
  EXPECT_TRUE(d.report(100, warpsOn({0, 1, 2, 3, 4, 5}, 8)).empty());
  // Three more wake: nine SMs are active but only three transitioned.
  EXPECT_TRUE(d.report(110, warpsOn({0, 1, 2, 3, 4, 5, 6, 7, 8}, 8)).empty());
  EXPECT_EQ(d.detections(), 0u);
  // An SM that goes idle and wakes again transitions again: SMs 0 .. 5 sleep at 120 and wake
  // at 130, within 30 cycles of the three at 110.
  EXPECT_TRUE(d.report(120, warpsOn({6, 7, 8}, 8)).empty());
  auto delays = d.report(130, warpsOn({0, 1, 2, 3, 4, 5, 6, 7, 8}, 8));
  ASSERT_EQ(delays.size(), kSms);
  EXPECT_EQ(delays[0], 0u);
  EXPECT_EQ(delays[8], 400u);
}

TEST(GlobalDroopDetector, HoldoffSuppressesASecondTrigger) {
  // Default holdoff: the longest delay, 400 cycles after a detection at 20.
  GlobalDroopDetector d(globalCfg(), kSms);
  const auto nine = warpsOn({0, 1, 2, 3, 4, 5, 6, 7, 8});
  ASSERT_FALSE(d.report(20, nine).empty());
  EXPECT_TRUE(d.report(30, warpsOn({})).empty());
  EXPECT_TRUE(d.report(40, nine).empty());  // nine wake again, in the holdoff
  EXPECT_TRUE(d.report(410, warpsOn({})).empty());
  EXPECT_TRUE(d.report(415, nine).empty());  // still before 420: ignored
  EXPECT_TRUE(d.report(418, warpsOn({})).empty());
  EXPECT_FALSE(d.report(420, nine).empty());  // the holdoff is over
  EXPECT_EQ(d.detections(), 2u);

  // An explicit holdoff of 100 cycles.
  GlobalSmoothingConfig c = globalCfg();
  c.holdoff_cycles = 100;
  GlobalDroopDetector e(c, kSms);
  ASSERT_FALSE(e.report(20, nine).empty());
  EXPECT_EQ(e.holdoffEnd(), 120u);
  EXPECT_TRUE(e.report(100, warpsOn({})).empty());
  EXPECT_TRUE(e.report(110, nine).empty());
  EXPECT_TRUE(e.report(120, warpsOn({})).empty());
  EXPECT_FALSE(e.report(130, nine).empty());
}

TEST(GlobalDroopDetector, ATransitionTriggersAtMostOnce) {
  // No stagger: no delay and no holdoff, yet the same transitions do not trigger twice.
  GlobalSmoothingConfig c = globalCfg();
  c.stagger_cycles = 0;
  GlobalDroopDetector d(c, kSms);
  const auto nine = warpsOn({0, 1, 2, 3, 4, 5, 6, 7, 8});
  auto delays = d.report(20, nine);
  ASSERT_EQ(delays.size(), kSms);
  for (uint32_t x : delays) EXPECT_EQ(x, 0u);
  EXPECT_EQ(d.holdoffEnd(), 20u);
  EXPECT_TRUE(d.report(30, nine).empty());
  EXPECT_TRUE(d.report(40, nine).empty());
  EXPECT_EQ(d.detections(), 1u);
  EXPECT_EQ(d.delayCycles(), 0u);
}

TEST(GlobalDroopDetector, ResetForgetsTheActiveSms) {
  GlobalDroopDetector d(globalCfg(), kSms);
  const auto nine = warpsOn({0, 1, 2, 3, 4, 5, 6, 7, 8});
  EXPECT_TRUE(d.report(10, warpsOn({0, 1, 2, 3})).empty());
  EXPECT_TRUE(d.report(1000, warpsOn({0, 1, 2, 3})).empty());
  EXPECT_TRUE(d.report(1010, nine).empty());  // SMs 4 .. 8 start: only five transitions
  d.reset();
  EXPECT_FALSE(d.report(5, nine).empty());
  EXPECT_EQ(d.detections(), 1u);
  d.reset();
  EXPECT_EQ(d.detections(), 0u);  // counters are per kernel
  EXPECT_EQ(d.delayCycles(), 0u);
  EXPECT_EQ(d.delayedSms(), 0u);
  // After a reset every SM counts as idle before the next report: nine transitions.
  EXPECT_FALSE(d.report(5, nine).empty());
  EXPECT_EQ(d.detections(), 1u);
}

TEST(GlobalDroopDetector, BadUseIsReported) {
  GlobalSmoothingConfig c = globalCfg();
  c.min_sms = 16;
  try {
    GlobalDroopDetector d(c, kSms);
    ADD_FAILURE() << "no error for min_sms above the SMs";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("smoothing.global.min_sms"), std::string::npos);
  }
  GlobalDroopDetector d(globalCfg(), kSms);
  EXPECT_THROW(d.report(10, std::vector<uint32_t>(kSms - 1, 0)), InternalError);
  d.report(10, warpsOn({}));
  EXPECT_THROW(d.report(10, warpsOn({})), InternalError);
}

// ---- configuration ------------------------------------------------------------------------------

std::string errorOf(const std::string& yaml) {
  try {
    config::load<SmoothingConfig>(yaml, "s.yaml", {});
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(SmoothingConfig, DefaultsAndModes) {
  const SmoothingConfig c = config::load<SmoothingConfig>("# nothing\n", "s.yaml", {});
  EXPECT_EQ(c.mode, "none");
  EXPECT_FALSE(c.localEnabled());
  EXPECT_FALSE(c.globalEnabled());
  ASSERT_EQ(c.local.thresholds_w.size(), 3u);
  EXPECT_EQ(c.global.min_sms, 9u);
  EXPECT_EQ(c.global.window_cycles, 30u);
  EXPECT_EQ(c.global.report_interval, 10u);
  EXPECT_EQ(c.global.stagger_cycles, 50u);
  auto mode = [](const char* m) {
    return config::load<SmoothingConfig>(std::string("mode: ") + m + "\n", "s.yaml", {});
  };
  EXPECT_TRUE(mode("local").localEnabled());
  EXPECT_FALSE(mode("local").globalEnabled());
  EXPECT_FALSE(mode("global").localEnabled());
  EXPECT_TRUE(mode("global").globalEnabled());
  EXPECT_TRUE(mode("hierarchical").localEnabled());
  EXPECT_TRUE(mode("hierarchical").globalEnabled());
}

TEST(SmoothingConfig, BadValuesNameTheKey) {
  EXPECT_EQ(
      errorOf("mode: hierarchy\n")
          .rfind("s.yaml:1:7: mode: 'hierarchy' is not one of: none, local, global, hierarchical",
                 0),
      0u)
      << errorOf("mode: hierarchy\n");
  EXPECT_EQ(errorOf("local:\n  thresholds_w: [1, 2]\n"),
            "s.yaml:2:17: local.thresholds_w: thresholds_w needs 3 values (2, 3 and 4 cycles), "
            "got 2");
  EXPECT_EQ(errorOf("local:\n  thresholds_w: [1, 0, 2]\n"),
            "s.yaml:2:17: local.thresholds_w: 0 is not above 0");
  EXPECT_EQ(errorOf("local:\n  thresholds_w: [1, -1, 2]\n"),
            "s.yaml:2:17: local.thresholds_w: -1 is out of range [0, 1000000]");
  EXPECT_EQ(errorOf("local:\n  throttle: issue\n")
                .rfind("s.yaml:2:13: local.throttle: 'issue' is not one of: dispatch, rf", 0),
            0u);
  EXPECT_EQ(errorOf("local:\n  issue_limit: 0\n"),
            "s.yaml:2:16: local.issue_limit: 0 is out of range [1, 64]");
  EXPECT_EQ(errorOf("global:\n  min_sms: 0\n"),
            "s.yaml:2:12: global.min_sms: 0 is out of range [1, 1024]");
  EXPECT_EQ(errorOf("global:\n  report_interval: 0\n")
                .rfind("s.yaml:2:20: global.report_interval: 0 is out of range", 0),
            0u);
  EXPECT_EQ(errorOf("global:\n  window: 30\n").rfind("s.yaml:2:3: unknown key 'global.window'", 0),
            0u);
}

TEST(SmoothingConfig, ResolvedConfigurationLoadsBack) {
  const SmoothingConfig c = config::load<SmoothingConfig>(
      "mode: hierarchical\nlocal:\n  thresholds_w: [1.5, 2.25, 4]\n  throttle: rf\n"
      "global:\n  min_sms: 5\n  holdoff_cycles: 77\n",
      "s.yaml", {});
  const SmoothingConfig d = config::load<SmoothingConfig>(config::toYaml(c), "r.yaml", {});
  EXPECT_EQ(d.mode, "hierarchical");
  EXPECT_EQ(d.local.thresholds_w, (std::vector<double>{1.5, 2.25, 4}));
  EXPECT_EQ(d.local.throttle, "rf");
  EXPECT_EQ(d.global.min_sms, 5u);
  EXPECT_EQ(d.global.holdoff_cycles, 77u);
}

}  // namespace
