// RTL co-simulation (docs/rtl-cosim.md): the verilated droop predictor driven directly (reset,
// threshold equality, FIFO fill and wrap, window extension) and against the C++ model on random
// power traces; the lockstep comparator catching a one-LSB parameter slip and a variant block
// at the exact cycle; every catalog kernel in lockstep with zero divergences and identical
// statistics with the RTL in place of the model (every block, the drowsy-line controllers with
// the timeout policy; and the controllers alone with drowsy-after-access).
#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "catalog.hpp"
#include "common/error.hpp"
#include "common/platform_config.hpp"
#include "gpu/device.hpp"
#include "gpu/report.hpp"
#include "rtl/droop_predictor_rtl.hpp"

using namespace gpusc;
using rtl::DroopPredictorTransactor;
using sm::LocalDroopPredictor;

namespace {

constexpr double kLsb = 1.0 / (1 << rtl::kPowerFracBits);  // one LSB of the RTL's power

LocalSmoothingConfig localCfg(double t2, double t3, double t4, uint32_t throttleCycles = 4) {
  LocalSmoothingConfig c;
  c.thresholds_w = {t2, t3, t4};
  c.throttle_cycles = throttleCycles;
  return c;
}

LocalDroopPredictor model(const LocalSmoothingConfig& c) {
  sm::PredictorWeights w;
  w.cycleSeconds = 1.0;
  return LocalDroopPredictor(c, w);
}

DroopPredictorTransactor transactor(const LocalSmoothingConfig& c,
                                    const std::string& block = "droop_predictor") {
  return DroopPredictorTransactor(rtl::droopPredictorBlocks().create(block), c, "sm0");
}

TEST(RtlDroopPredictor, ThresholdEqualityDoesNotPredictOneLsbAboveDoes) {
  const double t = 3.0;
  auto r = transactor(localCfg(t, 100, 100));
  EXPECT_FALSE(r.push(10, 1.0));
  EXPECT_FALSE(r.push(11, 1.0 + t));  // rise over 2 cycles == threshold: not above it
  EXPECT_FALSE(r.push(12, 1.0));
  EXPECT_TRUE(r.push(13, 1.0 + t + kLsb));
  EXPECT_EQ(r.predictions(), 1u);
}

TEST(RtlDroopPredictor, FewerThanKEntriesNeverPredictForK) {
  // Only the 4-cycle rise can fire (the others' thresholds are out of reach).
  auto r = transactor(localCfg(100, 100, 1.0));
  EXPECT_FALSE(r.push(0, 0.0));
  EXPECT_FALSE(r.push(1, 5.0));  // a rise of 5 over 2 entries: k = 4 is not defined yet
  EXPECT_FALSE(r.push(2, 5.0));
  EXPECT_TRUE(r.push(3, 5.0));  // four entries: 5 - min(0, 5, 5) > 1
  // The FIFO wraps: the 0 drops out, the next push sees only fives.
  EXPECT_FALSE(r.push(4, 5.0));
}

TEST(RtlDroopPredictor, ResetStartsEmptyWithNoWindow) {
  auto r = transactor(localCfg(1.0, 100, 100));
  EXPECT_FALSE(r.throttled(0));
  EXPECT_FALSE(r.push(0, 50.0));  // the first entry has nothing to rise from
  EXPECT_FALSE(r.throttled(1));
}

TEST(RtlDroopPredictor, WindowLastsThrottleCyclesAndExtends) {
  const uint32_t n = 5;
  auto r = transactor(localCfg(1.0, 100, 100, n));
  EXPECT_FALSE(r.push(100, 0.0));
  EXPECT_TRUE(r.push(101, 2.0));  // throttles 102 .. 106
  for (uint64_t c = 102; c < 102 + n; ++c) EXPECT_TRUE(r.throttled(c)) << c;
  EXPECT_FALSE(r.throttled(102 + n));
  EXPECT_EQ(r.throttledCycles(200), n);
  // A prediction inside a window extends it: predictions at 110 and 112 throttle 111 .. 117.
  r.push(109, 0.0);
  EXPECT_TRUE(r.push(110, 2.0));
  r.push(111, 0.0);
  EXPECT_TRUE(r.push(112, 2.0));
  for (uint64_t c = 113; c < 113 + n; ++c) EXPECT_TRUE(r.throttled(c)) << c;
  EXPECT_FALSE(r.throttled(113 + n));
  EXPECT_EQ(r.throttledCycles(1000), n + (113 + n - 111));
}

TEST(RtlDroopPredictor, SkippedIdleCyclesCostAtMostTheWindowAndTheFifoInClocks) {
  const uint32_t n = 6;
  auto r = transactor(localCfg(1.0, 100, 100, n));
  r.push(0, 0.0);
  ASSERT_TRUE(r.push(1, 3.0));
  const uint64_t before = r.clocks();
  r.skipIdle(2, 1000000, 0.0);
  EXPECT_EQ(r.clocks() - before, n);  // 4 idle pushes, then the window's last 2 cycles
  EXPECT_EQ(r.throttledCycles(2000000), n);
  EXPECT_FALSE(r.throttled(1000002));
}

// The RTL and the model on random traces with powers and thresholds on the RTL's grid, so
// rises equal to a threshold happen: every output agrees in every cycle.
TEST(RtlDroopPredictor, MatchesTheModelOnRandomTraces) {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 40; ++trial) {
    std::uniform_int_distribution<int> level(0, 12), skip(0, 9), window(1, 9);
    const auto grid = [&] { return level(rng) * 0.5; };
    const LocalSmoothingConfig c = localCfg(grid() + 0.5, grid() + 0.5, grid() + 0.5, window(rng));
    LocalDroopPredictor m = model(c);
    auto r = transactor(c);
    uint64_t cycle = 0;
    for (int i = 0; i < 300; ++i) {
      if (skip(rng) == 0) {
        const uint64_t n = 1 + skip(rng);
        m.skipIdle(n, 0.0);
        r.skipIdle(cycle, n, 0.0);
        cycle += n;
      }
      ASSERT_EQ(m.throttled(cycle), r.throttled(cycle)) << "trial " << trial << " cycle " << cycle;
      const double w = grid();
      const bool predicted = m.push(w);
      if (predicted) m.trigger(cycle + 1);
      ASSERT_EQ(predicted, r.push(cycle, w)) << "trial " << trial << " cycle " << cycle;
      ++cycle;
    }
    EXPECT_EQ(m.predictions(), r.predictions());
    EXPECT_EQ(m.throttledCycles(cycle + 20), r.throttledCycles(cycle + 20));
  }
}

// Lockstep: the model and the RTL on the same inputs. A one-LSB slip of the RTL's threshold
// over 2 cycles is reported at the first cycle where a rise falls between the two thresholds.
TEST(RtlLockstep, OneLsbThresholdSlipIsCaughtAtItsCycle) {
  const double t = 2.0;
  const LocalSmoothingConfig c = localCfg(t, 100, 100);
  auto t2 = transactor(c);
  t2.pins().thr2 += 1;  // the injected fault
  rtl::LockstepDroopPredictor p(model(c), std::move(t2), "sm3");
  p.endCycle(500, 1.0);
  p.endCycle(501, 1.0 + t);  // at the model's threshold: neither predicts
  p.endCycle(502, 0.5);
  p.skipIdle(503, 10, 0.0);
  EXPECT_FALSE(p.throttled(513));
  p.endCycle(513, 0.0);
  try {
    p.endCycle(514, t + kLsb);  // above the model's threshold, at the RTL's
    FAIL() << "no divergence reported";
  } catch (const LockstepDivergence& e) {
    EXPECT_STREQ(e.what(),
                 "rtl lockstep: block droop_predictor of sm3 diverged at cycle 514: predict is 1 "
                 "in the model, 0 in the RTL");
  }
}

TEST(RtlLockstep, VariantBlockWithoutTheFourCycleRiseIsCaughtAtItsCycle) {
  const LocalSmoothingConfig c = localCfg(100, 100, 1.0);
  rtl::LockstepDroopPredictor p(model(c), transactor(c, "droop_predictor_3deep"), "sm1");
  // Rises over 2 and 3 cycles stay below 1 W; over 4 cycles the rise is 1.5 W at cycle 23.
  const double trace[] = {0.0, 0.5, 1.0, 1.5};
  for (int i = 0; i < 3; ++i) p.endCycle(20 + i, trace[i]);
  EXPECT_THROW(
      {
        try {
          p.endCycle(23, trace[3]);
        } catch (const LockstepDivergence& e) {
          EXPECT_NE(std::string(e.what()).find("of sm1 diverged at cycle 23: predict is 1 in the "
                                               "model, 0 in the RTL"),
                    std::string::npos)
              << e.what();
          throw;
        }
      },
      LockstepDivergence);
}

TEST(RtlConfig, BlockNamesAreTheRegistrysAndBadModesNameTheKey) {
  PlatformConfig c = loadPlatform("gtx480");
  EXPECT_EQ(c.rtl.droop_predictor, "model");
  for (const std::string& b : rtl::droopPredictorBlocks().names())
    EXPECT_NO_THROW(loadPlatform("gtx480", {"smoothing.mode=local", "rtl.droop_predictor=lockstep",
                                            "rtl.droop_predictor_block=" + b}));
  try {
    loadPlatform("gtx480", {"rtl.droop_predictor=lockstep"});
    FAIL() << "lockstep without a predictor was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("rtl.droop_predictor lockstep needs smoothing.mode"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(loadPlatform("gtx480", {"smoothing.mode=local", "rtl.droop_predictor=rtl"}),
               InputError);
}

// A catalog kernel's statistics (stats.json of every launch) with the given settings; throws
// what the run throws.
struct CatalogRun {
  std::vector<nlohmann::json> launches;
  uint64_t predictions = 0;
  uint64_t wakeups = 0;            // of every switch: SMs, SIMD units, lanes
  uint64_t lowerStateCycles = 0;   // cycles the issue control spent in states 2 .. 4
  uint64_t detections = 0;         // of the global droop detector
  uint64_t lineWakeups = 0;        // drowsy cache lines woken (L1s and L2 slices)
  uint64_t hiddenLineWakeups = 0;  // of which by the L1's look-ahead
  bool pass = false;
};

// The statistics without the host's run time, which differs from run to run.
void dropHostSeconds(nlohmann::json& j) {
  if (j.is_object()) {
    j.erase("host_seconds");
    for (auto& [k, v] : j.items()) dropHostSeconds(v);
  } else if (j.is_array()) {
    for (auto& v : j) dropHostSeconds(v);
  }
}

CatalogRun runCatalog(const std::string& name, const std::vector<std::string>& sets) {
  Device dev(loadPlatform("gtx480", sets), ExecMode::Timing);
  auto wl = catalog::find(name).make(catalog::Size::Tiny);
  wl->setup(dev);
  wl->run(dev);
  CatalogRun r;
  r.pass = wl->check(dev).pass;
  for (const auto& l : dev.launches()) {
    r.launches.push_back(toJson(*l.timing));
    dropHostSeconds(r.launches.back());
    if (l.timing->smoothing.contains("local"))
      r.predictions += l.timing->smoothing["local"]["predictions"].get<uint64_t>();
    if (l.timing->smoothing.contains("global"))
      r.detections += l.timing->smoothing["global"]["detections"].get<uint64_t>();
    const nlohmann::json& g = r.launches.back()["power_gating"];
    for (const char* level : {"lanes", "simd_units", "sm_switches"})
      r.wakeups += g[level]["wakeups"].get<uint64_t>();
    for (int st = 1; st < 4; ++st) r.lowerStateCycles += g["state_cycles"][st].get<uint64_t>();
    const nlohmann::json& mem = r.launches.back()["memory"];
    for (const char* cache : {"l1d", "l2"}) {
      const nlohmann::json& ps = mem[cache]["totals"]["power_states"];
      r.lineWakeups += ps["wakeups"].get<uint64_t>();
      r.hiddenLineWakeups += ps["hidden_wakeups"].get<uint64_t>();
    }
  }
  return r;
}

class CatalogRtl : public ::testing::TestWithParam<std::string> {};

// Every co-simulated block's feature on: hierarchical smoothing (the SMs' droop predictors and
// the CTA scheduler's global droop detector), timeout power gating (the switches of SMs, SIMD
// units and lanes) and the utilisation issue control (its state machine, with slices short
// enough for tiny kernels to change state, and a global detector that fires on the few SMs
// tiny kernels wake), and drowsy L1 and L2 lines with the timeout policy (timeouts short
// enough for tiny kernels' lines to turn drowsy between touches, and the L1's look-ahead).
const std::vector<std::string> kEveryBlock = {
    "smoothing.mode=hierarchical",        "smoothing.global.min_sms=2",
    "power.gating.idle_detect=timeout",   "power.simd_issue.policy=utilisation",
    "power.simd_issue.slice_cycles=100",  "power.l1d.drowsy.policy=timeout",
    "power.l1d.drowsy.timeout_cycles=64", "power.l1d.drowsy.wake_latency=2",
    "power.l1d.drowsy.lookahead=true",    "power.l2.drowsy.policy=timeout",
    "power.l2.drowsy.timeout_cycles=100", "power.l2.drowsy.wake_latency=3"};

std::vector<std::string> everyBlock(const std::string& mode) {
  std::vector<std::string> s = kEveryBlock;
  for (const char* key : {"rtl.droop_predictor=", "rtl.power_switch=", "rtl.simd_issue=",
                          "rtl.droop_detector=", "rtl.drowsy_controller="})
    s.push_back(key + mode);
  return s;
}

// The drowsy-line controllers alone with the other policy, drowsy-after-access, in both caches.
std::vector<std::string> drowsyAfterAccess(const std::string& mode) {
  return {"power.l1d.drowsy.policy=drowsy-after-access", "power.l1d.drowsy.wake_latency=2",
          "power.l2.drowsy.policy=drowsy-after-access", "power.l2.drowsy.wake_latency=3",
          "rtl.drowsy_controller=" + mode};
}

// Every catalog kernel with every block's feature on: in lockstep no block diverges, and with
// every block's RTL in place of its model every statistic is the same.
TEST_P(CatalogRtl, EveryBlockLockstepAndVerilatedMatchTheModel) {
  const std::string& name = GetParam();
  const CatalogRun m = runCatalog(name, everyBlock("model"));
  CatalogRun l, v;
  ASSERT_NO_THROW(l = runCatalog(name, everyBlock("lockstep")));
  ASSERT_NO_THROW(v = runCatalog(name, everyBlock("verilated")));
  EXPECT_TRUE(m.pass && l.pass && v.pass);
  ASSERT_EQ(m.launches.size(), v.launches.size());
  for (size_t i = 0; i < m.launches.size(); ++i) {
    EXPECT_EQ(m.launches[i], l.launches[i]) << "launch " << i;
    EXPECT_EQ(m.launches[i], v.launches[i]) << "launch " << i;
  }
}

INSTANTIATE_TEST_SUITE_P(Tiny, CatalogRtl, ::testing::ValuesIn(catalog::names()));

class CatalogRtlDrowsyAfterAccess : public ::testing::TestWithParam<std::string> {};

// Every catalog kernel with drowsy-after-access lines: the controllers in lockstep do not
// diverge, and in their place the statistics are the model's.
TEST_P(CatalogRtlDrowsyAfterAccess, LockstepAndVerilatedMatchTheModel) {
  const std::string& name = GetParam();
  const CatalogRun m = runCatalog(name, drowsyAfterAccess("model"));
  CatalogRun l, v;
  ASSERT_NO_THROW(l = runCatalog(name, drowsyAfterAccess("lockstep")));
  ASSERT_NO_THROW(v = runCatalog(name, drowsyAfterAccess("verilated")));
  EXPECT_TRUE(m.pass && l.pass && v.pass);
  ASSERT_EQ(m.launches.size(), v.launches.size());
  for (size_t i = 0; i < m.launches.size(); ++i) {
    EXPECT_EQ(m.launches[i], l.launches[i]) << "launch " << i;
    EXPECT_EQ(m.launches[i], v.launches[i]) << "launch " << i;
  }
}

INSTANTIATE_TEST_SUITE_P(Tiny, CatalogRtlDrowsyAfterAccess, ::testing::ValuesIn(catalog::names()));

// The catalog run exercises every block: the predictor predicts droops, switches gate and
// requests wait for wake-ups, the issue control leaves state 1, the global detector fires.
TEST(CatalogRtlCoverage, EveryBlockActs) {
  CatalogRun all;
  for (const char* k : {"sgemm", "vecadd", "bfs"}) {
    const CatalogRun r = runCatalog(k, everyBlock("verilated"));
    all.predictions += r.predictions;
    all.wakeups += r.wakeups;
    all.lowerStateCycles += r.lowerStateCycles;
    all.detections += r.detections;
    all.lineWakeups += r.lineWakeups;
    all.hiddenLineWakeups += r.hiddenLineWakeups;
  }
  EXPECT_GT(all.predictions, 0u);
  EXPECT_GT(all.wakeups, 0u);
  EXPECT_GT(all.lowerStateCycles, 0u);
  EXPECT_GT(all.detections, 0u);
  EXPECT_GT(all.lineWakeups, all.hiddenLineWakeups);  // woken lines, not all by the look-ahead
  EXPECT_GT(all.hiddenLineWakeups, 0u);
  // Lines are woken again after their timeout, not only at their first touch: with timeouts
  // longer than the run the same kernel wakes fewer.
  std::vector<std::string> longTimeouts = everyBlock("verilated");
  longTimeouts.push_back("power.l1d.drowsy.timeout_cycles=1000000");
  longTimeouts.push_back("power.l2.drowsy.timeout_cycles=1000000");
  EXPECT_LT(runCatalog("sgemm", longTimeouts).lineWakeups,
            runCatalog("sgemm", everyBlock("verilated")).lineWakeups);
}

// End to end: the variant block in lockstep on a real kernel is reported; with the model's
// 4-cycle threshold out of reach (so the model never uses the comparator the variant lacks)
// the same run has no divergence.
TEST(CatalogRtlVariant, LockstepReportsTheVariantOnlyWhenItsMissingComparatorMatters) {
  const std::vector<std::string> sets = {"smoothing.mode=local", "rtl.droop_predictor=lockstep",
                                         "rtl.droop_predictor_block=droop_predictor_3deep"};
  try {
    runCatalog("sgemm", sets);
    FAIL() << "the variant was not reported";
  } catch (const LockstepDivergence& e) {
    EXPECT_NE(std::string(e.what()).find("rtl lockstep: block droop_predictor of sm"),
              std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find(": predict is 1 in the model, 0 in the RTL"),
              std::string::npos)
        << e.what();
  }
  std::vector<std::string> off = sets;
  off.push_back("smoothing.local.thresholds_w=[4.27,4.27,1e5]");
  EXPECT_NO_THROW(runCatalog("sgemm", off));
}

}  // namespace
