// Power gating (seed 002): the PowerGatingSwitch's accounting on crafted use traces, the SIMD
// issue-control policies, the congestion-aware core count, and the SM and CTA scheduler
// running kernels with gating, issue control, thread compaction and the gating-aware CTA
// placements. Expected values follow from the configuration.
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "catalog.hpp"
#include "common/error.hpp"
#include "gpu/cta_scheduler.hpp"
#include "gpu/device.hpp"
#include "power/gating_params.hpp"
#include "power/power_gating_switch.hpp"
#include "sm/simd_issue_control.hpp"
#include "support/ptx_harness.hpp"
#include "support/tlm_harness.hpp"

using namespace gpusc;
using power::IdleDetect;
using power::PowerGatingSwitch;

namespace {

// Switches are sc_modules: each switch test builds them in a fresh SystemC context and gives
// the previous one back afterwards (the timing engine of other tests lives there).
class SwitchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    saved_ = sc_core::sc_curr_simcontext;
    test::newSimulation();
  }
  void TearDown() override {
    sc_core::sc_curr_simcontext = saved_;
    sc_core::sc_default_global_context = saved_;
  }
  // A lane switch of the GTX480 platform with idle detection `d`.
  PowerGatingSwitch& lane(IdleDetect d, const PlatformConfig& cfg = test::platform()) {
    const power::SwitchParams p = power::laneSwitchParams(cfg);
    switches_.push_back(
        std::make_unique<PowerGatingSwitch>(("lane" + std::to_string(switches_.size())).c_str(), d,
                                            p.timeout, p.wakeLatency, p.breakEven));
    return *switches_.back();
  }

 private:
  sc_core::sc_simcontext* saved_ = nullptr;
  std::vector<std::unique_ptr<PowerGatingSwitch>> switches_;
};

void expectWindow(const PowerGatingSwitch& s, uint64_t window) {
  const power::SwitchCounters& n = s.counters();
  EXPECT_EQ(n.busyCycles + n.idleCycles + n.gatedCycles + n.wakingCycles, window);
  EXPECT_EQ(n.windowCycles(), window);
}

TEST_F(SwitchTest, BreakEvenTimeFollowsSwitchEnergyAndLeakage) {
  const PlatformConfig cfg = test::platform();
  const double cycleS = 1e-6 / cfg.gpu.clocks.core_mhz;
  const double bet =
      cfg.power.gating.lane.switch_pj / (cfg.power.sm.lane_leakage_w * cycleS * 1e12);
  EXPECT_EQ(power::laneSwitchParams(cfg).breakEven, uint64_t(std::ceil(bet - 1e-9)));
  EXPECT_EQ(power::laneSwitchParams(cfg).breakEven, 100u);  // seed 002's lane BET
  // Leakage left while gated lengthens it; gating that saves nothing never pays.
  EXPECT_EQ(power::breakEvenCycles(4000, 0.028, 0.5, 1 / 700e6), 200u);
  EXPECT_GT(power::breakEvenCycles(4000, 0.028, 1.0, 1 / 700e6), uint64_t(1) << 40);
  EXPECT_EQ(power::parseIdleDetect("timeout"), IdleDetect::Timeout);
  EXPECT_THROW(power::parseIdleDetect("oracle"), InputError);
}

// Idle periods of BET - 1, BET, BET + 1 and 3 x BET between uses of 5 cycles, then a trailing
// idle period of 2 x BET up to the window's end.
struct Trace {
  std::vector<uint64_t> idles;
  uint64_t useLength = 5, tail;
  uint64_t run(PowerGatingSwitch& s) const {
    uint64_t c = 0;
    s.begin(0);
    for (uint64_t idle : idles) {
      c += idle;
      c = std::max(c, s.acquire(c));
      s.use(c, c + useLength);
      c += useLength;
    }
    s.finish(c + tail);
    return c + tail;
  }
};

Trace betTrace(uint64_t bet) { return Trace{{bet - 1, bet, bet + 1, 3 * bet}, 5, 2 * bet}; }

TEST_F(SwitchTest, NoneNeverGatesButCountsIdlePeriods) {
  PowerGatingSwitch& s = lane(IdleDetect::None);
  const uint64_t bet = s.breakEven();
  const Trace t = betTrace(bet);
  const uint64_t window = t.run(s);
  expectWindow(s, window);
  const power::SwitchCounters& n = s.counters();
  EXPECT_EQ(n.busyCycles, 4 * t.useLength);
  EXPECT_EQ(n.gatedCycles, 0u);
  EXPECT_EQ(n.gatings, 0u);
  EXPECT_EQ(n.idlePeriods, 5u);
  EXPECT_EQ(n.idlePeriodsAtLeastBet, 4u);
  EXPECT_EQ(n.idleCyclesAtLeastBet, bet + (bet + 1) + 3 * bet + 2 * bet);
  EXPECT_EQ(s.netGatedCycles(), 0.0);
}

TEST_F(SwitchTest, IdealGatesExactlyThePeriodsOfAtLeastBet) {
  PowerGatingSwitch& s = lane(IdleDetect::Ideal);
  const uint64_t bet = s.breakEven();
  const Trace t = betTrace(bet);
  const uint64_t window = t.run(s);
  expectWindow(s, window);
  const power::SwitchCounters& n = s.counters();
  EXPECT_EQ(n.gatedCycles, n.idleCyclesAtLeastBet);
  EXPECT_EQ(n.gatings, n.idlePeriodsAtLeastBet);
  EXPECT_EQ(n.gatings, 4u);
  EXPECT_EQ(n.idleCycles, bet - 1);  // the only period shorter than BET
  EXPECT_EQ(n.wakingCycles, 0u);     // the oracle wakes the lane in time
  EXPECT_EQ(n.wakeups, 0u);
  EXPECT_EQ(n.shortGatings, 0u);
  EXPECT_EQ(s.netGatedCycles(), double(n.gatedCycles) - double(n.gatings * bet));
  EXPECT_GT(s.netGatedCycles(), 0.0);
}

TEST_F(SwitchTest, TimeoutGatesAfterTheTimeoutAndWakingCostsTheWakeLatency) {
  PowerGatingSwitch& s = lane(IdleDetect::Timeout);
  const uint64_t to = test::platform().power.gating.lane.timeout_cycles;
  const uint64_t wake = s.wakeLatency();
  s.begin(0);
  s.use(0, 1);
  // Idle for exactly the timeout: still ON, usable at once.
  EXPECT_FALSE(s.gatedAt(1 + to));
  EXPECT_EQ(s.acquire(1 + to), 1 + to);
  s.use(1 + to, 2 + to);
  // One cycle more: gated; acquire starts the wake-up and says when the lane is usable.
  const uint64_t idle = to + 1, at = 2 + to + idle;
  EXPECT_TRUE(s.gatedAt(at));
  EXPECT_EQ(s.acquire(at), at + wake);
  EXPECT_FALSE(s.gatedAt(at + 1));
  EXPECT_EQ(s.acquire(at + 1), at + wake);  // a wake-up under way is not started again
  s.use(at + wake, at + wake + 2);
  s.finish(at + wake + 2);
  expectWindow(s, at + wake + 2);
  const power::SwitchCounters& n = s.counters();
  EXPECT_EQ(n.busyCycles, 4u);
  EXPECT_EQ(n.gatedCycles, 1u);
  EXPECT_EQ(n.idleCycles, 2 * to);
  EXPECT_EQ(n.wakingCycles, wake);
  EXPECT_EQ(n.wakeups, 1u);
  EXPECT_EQ(n.gatings, 1u);
  EXPECT_EQ(n.shortGatings, 1u);
}

TEST_F(SwitchTest, AGatingShorterThanBetIsANetLoss) {
  PowerGatingSwitch& s = lane(IdleDetect::Timeout);
  const uint64_t to = test::platform().power.gating.lane.timeout_cycles;
  const uint64_t bet = s.breakEven();
  // An idle period longer than the timeout but shorter than BET + timeout: gated for less
  // than BET.
  const uint64_t idle = to + bet / 2;
  ASSERT_GT(idle, to);
  ASSERT_LT(idle, bet + to);
  s.begin(0);
  s.use(0, 1);
  const uint64_t ready = s.acquire(1 + idle);
  s.use(ready, ready + 1);
  s.finish(ready + 1);
  expectWindow(s, ready + 1);
  EXPECT_EQ(s.counters().gatedCycles, idle - to);
  EXPECT_EQ(s.counters().shortGatings, 1u);
  EXPECT_EQ(s.netGatedCycles(), double(idle - to) - double(bet));
  EXPECT_LT(s.netGatedCycles(), 0.0);
  // The same idle period with ideal detection is not gated at all (shorter than BET).
  PowerGatingSwitch& ideal = lane(IdleDetect::Ideal);
  ideal.begin(0);
  ideal.use(0, 1);
  ideal.use(1 + idle, 2 + idle);
  ideal.finish(2 + idle);
  EXPECT_EQ(ideal.counters().gatings, 0u);
  EXPECT_EQ(ideal.netGatedCycles(), 0.0);
}

TEST_F(SwitchTest, OpenEndedBusyAndSuspendedStretches) {
  PowerGatingSwitch& s = lane(IdleDetect::Timeout);
  const uint64_t to = test::platform().power.gating.lane.timeout_cycles;
  s.begin(10);
  s.beginBusy(10);
  EXPECT_TRUE(s.busy());
  EXPECT_FALSE(s.gatedAt(10 + 10 * to));  // busy: never gated
  EXPECT_EQ(s.acquire(10 + 10 * to), 10 + 10 * to);
  s.endBusy(100);
  // Suspended from 150 to 1000: not accounted, and uses are ignored meanwhile.
  s.suspend(150);
  EXPECT_TRUE(s.suspended());
  EXPECT_EQ(s.acquire(500), 500u);
  s.use(500, 510);
  s.resume(1000);
  EXPECT_FALSE(s.gatedAt(1000 + to));
  s.use(1000 + to, 1001 + to);
  s.finish(1100 + to);
  expectWindow(s, (150 - 10) + (1100 + to - 1000));
  EXPECT_EQ(s.counters().busyCycles, 90u + 1u);
  // Gated: the idle stretch 100 .. 150 before the suspension and the trailing one after the
  // last use (both longer than the timeout); the idle `to` cycles after resume() are not.
  ASSERT_LT(to, 50u);
  EXPECT_EQ(s.counters().gatings, 2u);
  EXPECT_EQ(s.counters().gatedCycles, (50 - to) + (99 - to));
}

TEST_F(SwitchTest, AWakeUpRunningPastTheWindowIsCutAtItsEnd) {
  PowerGatingSwitch& s = lane(IdleDetect::Timeout);
  const uint64_t to = test::platform().power.gating.lane.timeout_cycles;
  s.begin(0);
  const uint64_t at = to + 1;
  ASSERT_GT(s.acquire(at), at + 1);  // wake latency of at least two cycles
  s.finish(at + 1);
  expectWindow(s, at + 1);
  EXPECT_EQ(s.counters().wakingCycles, 1u);
}

// The next window continues the block's state: an idle period under way goes on (gated if it
// has outlasted the timeout), and a gating is counted in the window where it starts.
TEST_F(SwitchTest, AnIdlePeriodGoesOnIntoTheNextWindow) {
  PowerGatingSwitch& s = lane(IdleDetect::Timeout);
  const uint64_t to = test::platform().power.gating.lane.timeout_cycles;
  const uint64_t wake = s.wakeLatency();
  ASSERT_GT(wake, 0u);
  // Gated for the last 5 cycles of the first window.
  s.begin(0);
  s.use(0, 1);
  const uint64_t end1 = 1 + to + 5;
  s.finish(end1);
  EXPECT_EQ(s.counters().gatings, 1u);
  EXPECT_EQ(s.counters().gatedCycles, 5u);
  s.continueWindow(end1);
  EXPECT_TRUE(s.gatedAt(end1));
  EXPECT_EQ(s.usableFrom(end1), PowerGatingSwitch::kGated);
  // Woken 10 cycles into the second window: gated until then, no second gating.
  const uint64_t at = end1 + 10;
  EXPECT_EQ(s.acquire(at), at + wake);
  s.use(at + wake, at + wake + 1);
  s.finish(at + wake + 1);
  expectWindow(s, at + wake + 1 - end1);
  EXPECT_EQ(s.counters().gatedCycles, 10u);
  EXPECT_EQ(s.counters().gatings, 0u);
  EXPECT_EQ(s.counters().wakeups, 1u);
  EXPECT_EQ(s.counters().wakingCycles, wake);
  EXPECT_EQ(s.counters().busyCycles, 1u);
  EXPECT_EQ(s.counters().idleCycles, 0u);
  // begin() instead starts a window with the block on.
  s.begin(at + wake + 1);
  EXPECT_FALSE(s.gatedAt(at + wake + 2));

  // Idle for 3 cycles less than the timeout when the first window ends: the timeout runs on,
  // and the gating is the second window's.
  PowerGatingSwitch& t = lane(IdleDetect::Timeout);
  t.begin(0);
  t.use(0, 1);
  const uint64_t end2 = 1 + to - 3;
  t.finish(end2);
  EXPECT_EQ(t.counters().gatings, 0u);
  t.continueWindow(end2);
  EXPECT_FALSE(t.gatedAt(end2 + 3));
  EXPECT_TRUE(t.gatedAt(end2 + 4));
  const uint64_t at2 = end2 + 10;
  EXPECT_EQ(t.acquire(at2), at2 + wake);
  t.finish(at2 + wake);
  expectWindow(t, at2 + wake - end2);
  EXPECT_EQ(t.counters().idleCycles, 3u);
  EXPECT_EQ(t.counters().gatedCycles, 7u);
  EXPECT_EQ(t.counters().gatings, 1u);
  EXPECT_EQ(t.counters().shortGatings, 1u);  // 7 cycles, less than BET

  // Ideal detection gates the whole period once it reaches BET, counting the gating once.
  PowerGatingSwitch& u = lane(IdleDetect::Ideal);
  const uint64_t bet = u.breakEven();
  u.begin(0);
  u.use(0, 1);
  u.finish(1 + bet / 2);  // too short on its own: idle
  EXPECT_EQ(u.counters().gatings, 0u);
  u.continueWindow(1 + bet / 2);
  const uint64_t used = 1 + bet / 2 + bet;
  u.use(used, used + 1);
  u.finish(used + 1 + bet + 5);  // idle for BET + 5 after the use: gated in this window too
  EXPECT_EQ(u.counters().gatings, 2u);
  EXPECT_EQ(u.counters().gatedCycles, bet + bet + 5);
  EXPECT_EQ(u.counters().idleCycles, 0u);
  u.continueWindow(used + 1 + bet + 5);
  u.use(used + 1 + bet + 15, used + bet + 17);
  u.finish(used + bet + 17);
  EXPECT_EQ(u.counters().gatings, 0u);  // counted by the window before, whose part reached BET
  EXPECT_EQ(u.counters().gatedCycles, 10u);
  EXPECT_EQ(u.counters().busyCycles, 1u);
}

// ---- SIMD issue control ----------------------------------------------------------------------

TEST(SimdIssueControl, RegistryNamesAndNone) {
  EXPECT_EQ(sm::simdIssuePolicies().names(), (std::vector<std::string>{"none", "utilisation"}));
  const SimdIssueConfig c;
  EXPECT_THROW(sm::simdIssuePolicies().create("greedy", c), InputError);
  auto none = sm::simdIssuePolicies().create("none", c);
  EXPECT_FALSE(none->adaptive());
  for (double u : {0.0, 0.5, 1.0}) EXPECT_EQ(none->next(1, u), 1u);
}

TEST(SimdIssueControl, UtilisationStepsOneStateAtATimeWithHysteresis) {
  const SimdIssueConfig c = test::platform().power.simd_issue;
  const std::vector<double>& down = c.down_thresholds;
  const std::vector<double>& up = c.up_thresholds;
  auto p = sm::simdIssuePolicies().create("utilisation", c);
  ASSERT_TRUE(p->adaptive());
  // Replays `trace` from state 1; returns the states after each slice.
  auto follow = [&](const std::vector<double>& trace) {
    std::vector<uint32_t> states;
    uint32_t s = 1;
    for (double u : trace) states.push_back(s = p->next(s, u));
    return states;
  };
  // Idle slices: one step down per slice, then state 4 stays.
  EXPECT_EQ(follow({0, 0, 0, 0, 0}), (std::vector<uint32_t>{2, 3, 4, 4, 4}));
  // Full slices bring it back one step per slice.
  EXPECT_EQ(follow({0, 0, 0, 1, 1, 1, 1}), (std::vector<uint32_t>{2, 3, 4, 3, 2, 1, 1}));
  // Hysteresis: between a boundary's down and up thresholds the state stays where it is.
  for (uint32_t b = 0; b < 3; ++b) {
    ASSERT_LT(down[b], up[b]);
    const double mid = (down[b] + up[b]) / 2;
    EXPECT_EQ(p->next(b + 1, mid), b + 1) << "state " << b + 1;  // not below down[b]
    EXPECT_EQ(p->next(b + 2, mid), b + 2) << "state " << b + 2;  // not up to up[b]
    // Just below down[b] steps down, exactly up[b] steps up.
    EXPECT_EQ(p->next(b + 1, std::nextafter(down[b], 0.0)), b + 2);
    EXPECT_EQ(p->next(b + 2, up[b]), b + 1);
  }
  // A trace in the band of boundary 1|2 after stepping down stays in state 2.
  const double band = (down[0] + up[0]) / 2;
  EXPECT_EQ(follow({std::nextafter(down[0], 0.0), band, band, up[0]}),
            (std::vector<uint32_t>{2, 2, 2, 1}));
}

TEST(SimdIssueControl, UnitModesAndLaneMasks) {
  // States: 1 both units; 2 unit 1 split; 3 unit 0 only; 4 unit 0 only, split.
  EXPECT_TRUE(sm::simdUnitMode(1, 1).enabled);
  EXPECT_FALSE(sm::simdUnitMode(1, 1).split);
  EXPECT_FALSE(sm::simdUnitMode(2, 0).split);
  EXPECT_TRUE(sm::simdUnitMode(2, 1).split);
  EXPECT_TRUE(sm::simdUnitMode(3, 0).enabled);
  EXPECT_FALSE(sm::simdUnitMode(3, 1).enabled);
  EXPECT_TRUE(sm::simdUnitMode(4, 0).split);
  EXPECT_FALSE(sm::simdUnitMode(4, 1).enabled);
  // 32 threads on 16 lanes: lane l serves threads l and l + 16.
  EXPECT_EQ(sm::simdLaneMask(0xffffffffu, 16, 32, false), 0xffffu);
  EXPECT_EQ(sm::simdLaneMask(0x00010001u, 16, 32, false), 0x1u);
  EXPECT_EQ(sm::simdLaneMask(0x80000000u, 16, 32, false), 0x8000u);
  // Split: 8 lanes, 4 passes.
  EXPECT_EQ(sm::simdLaneMask(0xffffffffu, 8, 32, false), 0xffu);
  EXPECT_EQ(sm::simdLaneMask(0x01000000u, 8, 32, false), 0x1u);
  // Compaction: k active threads over p passes use lanes 0 .. ceil(k / p) - 1.
  EXPECT_EQ(sm::simdLaneMask(0xaaaaaaaau, 16, 32, true), 0xffu);  // 16 threads, 2 passes
  EXPECT_EQ(sm::simdLaneMask(0x80000001u, 16, 32, true), 0x1u);   // 2 threads
  EXPECT_EQ(sm::simdLaneMask(0x00000007u, 16, 32, true), 0x3u);   // 3 threads
  EXPECT_EQ(sm::simdLaneMask(0x00000007u, 8, 32, true), 0x1u);    // 3 threads, 4 passes
  EXPECT_EQ(sm::simdLaneMask(0xffffffffu, 16, 32, true), 0xffffu);
  EXPECT_EQ(sm::simdLaneMask(0, 16, 32, true), 0u);
}

// ---- congestion-aware core count -------------------------------------------------------------

TEST(CoreCount, MetricAndSlowdownFollowTheFormula) {
  CoreCountConfig c;
  c.alpha = 0.5;
  c.beta = 2.0;
  EXPECT_DOUBLE_EQ(gpu::congestionMetric(c, 0.4, 0.25), c.alpha * 0.4 + c.beta / 0.25);
  EXPECT_TRUE(std::isinf(gpu::congestionMetric(c, 0.4, 0.0)));
  EXPECT_DOUBLE_EQ(gpu::predictedSlowdown(c, c.metric_reference, 15, 12), 15.0 / 12 - 1);
  EXPECT_DOUBLE_EQ(gpu::predictedSlowdown(c, 4 * c.metric_reference, 15, 12), (15.0 / 12 - 1) / 4);
  EXPECT_DOUBLE_EQ(gpu::predictedSlowdown(c, c.metric_reference / 4, 15, 12), 15.0 / 12 - 1);
  EXPECT_EQ(gpu::predictedSlowdown(c, c.metric_reference, 15, 15), 0.0);
}

TEST(CoreCount, PicksTheFewestSmsWithinTheBudget) {
  const CoreCountConfig c = test::platform().gpu.core_count;
  const uint32_t n = 15;
  // Closed form: (n / k - 1) x s <= budget  <=>  k >= n / (1 + budget / s), s = min(1, ref / m).
  auto expected = [&](double metric) {
    const double s = std::isinf(metric) ? 0.0 : std::min(1.0, c.metric_reference / metric);
    const uint32_t k =
        s == 0 ? 1u : static_cast<uint32_t>(std::ceil(n / (1 + c.slowdown_budget / s) - 1e-9));
    return std::min(n, std::max(k, c.min_sms));
  };
  for (double f : {0.5, 1.0, 1.5, 2.0, 4.0, 10.0, 30.0, 1000.0}) {
    const double m = f * c.metric_reference;
    const uint32_t k = gpu::chooseCoreCount(c, m, n);
    EXPECT_EQ(k, expected(m)) << "metric " << m;
    EXPECT_LE(gpu::predictedSlowdown(c, m, n, k), c.slowdown_budget + 1e-12);
    if (k > c.min_sms) {
      EXPECT_GT(gpu::predictedSlowdown(c, m, n, k - 1), c.slowdown_budget);
    }
  }
  // Compute-bound (metric at the reference): every SM is needed within a 5 % budget.
  EXPECT_EQ(gpu::chooseCoreCount(c, c.metric_reference, n), n);
  // Nothing computes: as few SMs as allowed.
  EXPECT_EQ(gpu::chooseCoreCount(c, std::numeric_limits<double>::infinity(), n), c.min_sms);
  // Fewer SMs than min_sms: all of them.
  EXPECT_EQ(gpu::chooseCoreCount(c, 1e9, c.min_sms - 1), c.min_sms - 1);
}

// ---- the SM: lanes, units, issue control, compaction -----------------------------------------

PlatformConfig platformWith(const std::vector<std::string>& sets) {
  std::vector<std::string> all{"memory.model=fixed-latency"};
  all.insert(all.end(), sets.begin(), sets.end());
  return loadPlatform("gtx480", all);
}

struct KernelRun {
  gpu::TimingResult timing;
  std::vector<sm::SmGatingStats> gating;
  std::vector<power::SwitchCounters> smSwitches;
  gpu::PlacementDecision decision;
};

// Launches kernel `k(.param .u64 out)` of `ptx` `launches` times (the first ones warm the
// instruction and constant caches) and returns the last launch.
KernelRun launch(const PlatformConfig& cfg, const std::string& ptx, Dim3 grid, Dim3 block,
                 int launches = 2) {
  Device dev(cfg, ExecMode::Timing);
  Module& m = dev.loadModule(ptx, "gating.ptx");
  DevPtr out = dev.malloc(grid.count() * block.count() * 4 + 64);
  for (int i = 0; i < launches; ++i)
    dev.launch(m.kernel("k"), grid, block, 0, KernelArgs().ptr(out));
  KernelRun r;
  r.timing = *dev.launches().back().timing;
  gpu::Gpu& g = dev.timingEngine()->gpu();
  for (sm::Sm* s : g.sms()) {
    s->finishPowerWindow(r.timing.endCycle + 1);  // idempotent: the engine may have done it
    r.gating.push_back(s->gatingStats());
    r.smSwitches.push_back(s->powerSwitch().counters());
  }
  r.decision = g.ctaScheduler().placementDecision();
  return r;
}

// One load whose value the next instruction, the only SIMD instruction after it, needs: the
// SIMD units idle for the memory latency.
const std::string kWaitKernel = test::module(R"(
.visible .entry k(.param .u64 out)
{
  .reg .b32 %r<8>;
  .reg .b64 %rd<4>;
  mov.u32 %r0, %tid.x;
  ld.param.u64 %rd1, [out];
  mul.wide.u32 %rd2, %r0, 4;
  add.s64 %rd3, %rd1, %rd2;
  ld.global.u32 %r1, [%rd1];
  add.u32 %r2, %r1, %r0;
  st.global.u32 [%rd3+64], %r2;
  ret;
}
)");

// Checks the accounting of every SM's lanes and units over a run: windows, BET, net.
void expectConsistentAccounting(const PlatformConfig& cfg, const KernelRun& r) {
  const uint64_t bet = power::laneSwitchParams(cfg).breakEven;
  const uint64_t lanes = uint64_t(cfg.sm.simd_units) * cfg.sm.simd_lanes;
  for (size_t i = 0; i < r.gating.size(); ++i) {
    const sm::SmGatingStats& g = r.gating[i];
    // The lanes account while the SM holds CTAs.
    uint64_t held = 0;
    std::vector<std::pair<uint64_t, int>> edges;
    for (const auto& c : r.timing.timeline)
      if (c.sm == i) {
        edges.push_back({c.start, +1});
        edges.push_back({c.end, -1});
      }
    std::sort(edges.begin(), edges.end());
    int live = 0;
    uint64_t since = 0;
    for (const auto& [t, d] : edges) {
      // The window starts after the kernel's first cycle (CTAs started in it issue from the
      // next one).
      if (live == 0 && d > 0) since = std::max<uint64_t>(t, r.timing.startCycle + 1);
      live += d;
      if (live == 0) held += t - since;
    }
    EXPECT_EQ(g.laneCycles, lanes * held) << "SM " << i;
    EXPECT_EQ(g.lanes.windowCycles(), g.laneCycles) << "SM " << i;
    EXPECT_EQ(g.simdUnits.windowCycles(), cfg.sm.simd_units * held) << "SM " << i;
    EXPECT_DOUBLE_EQ(g.laneNetGatedCycles,
                     double(g.lanes.gatedCycles) - double(g.lanes.gatings) * double(bet));
    uint64_t states = 0;
    for (uint64_t s : g.stateCycles) states += s;
    EXPECT_EQ(states, r.timing.cycles) << "SM " << i;  // startCycle + 1 .. endCycle
    // The SM's own switch covers the whole kernel.
    EXPECT_EQ(r.smSwitches[i].windowCycles(), r.timing.cycles) << "SM " << i;
  }
}

// Gating at once and waking at once: every idle cycle gates, every use wakes without waiting,
// so the kernel runs exactly as without gating (it once re-woke forever: a hang).
TEST(SmGating, ZeroTimeoutAndZeroWakeLatencyCostNothing) {
  const std::vector<std::string> common{
      "memory.fixed_latency=1000", "power.gating.lane.timeout_cycles=0",
      "power.gating.simd_unit.timeout_cycles=0", "power.gating.lane.wake_latency=0",
      "power.gating.simd_unit.wake_latency=0"};
  std::vector<std::string> none = common, timeout = common;
  none.push_back("power.gating.idle_detect=none");
  timeout.push_back("power.gating.idle_detect=timeout");
  const KernelRun base = launch(platformWith(none), kWaitKernel, {1}, {32});
  const KernelRun gated = launch(platformWith(timeout), kWaitKernel, {1}, {32});
  EXPECT_EQ(gated.timing.cycles, base.timing.cycles);
  EXPECT_EQ(gated.gating[0].wakeStallCycles, 0u);
  EXPECT_GT(gated.gating[0].lanes.gatings, 0u);
  EXPECT_EQ(gated.gating[0].lanes.wakingCycles, 0u);
}

// Lanes that gate at once (timeout 0 or 1) or wake slowly, under divergent warps whose halves
// need complementary lanes of one unit: each half's wake-up once held the shared unit switch
// and so postponed the other's, whose lanes gated again before it could use them, for ever (a
// deadlock report). Now a held block stays usable: every kernel finishes right, and lanes gate.
TEST(SmGating, FastGatingLanesAndSlowWakeUpsNeverStarveAnInstruction) {
  for (const std::vector<std::string>& sets :
       {std::vector<std::string>{"power.gating.lane.timeout_cycles=0"},
        std::vector<std::string>{"power.gating.lane.timeout_cycles=1"},
        std::vector<std::string>{"power.gating.lane.wake_latency=1000"},
        std::vector<std::string>{"power.gating.lane.timeout_cycles=0",
                                 "power.gating.simd_unit.timeout_cycles=0"}}) {
    for (const char* kernel : {"sgemm", "bfs"}) {
      std::vector<std::string> all{"power.gating.idle_detect=timeout"};
      all.insert(all.end(), sets.begin(), sets.end());
      Device dev(loadPlatform("gtx480", all), ExecMode::Timing);
      auto wl = catalog::find(kernel).make(catalog::Size::Tiny);
      wl->setup(dev);
      ASSERT_NO_THROW(wl->run(dev)) << kernel << " " << sets.front();
      EXPECT_TRUE(wl->check(dev).pass) << kernel << " " << sets.front();
      uint64_t gatings = 0;
      for (const auto& l : dev.launches())
        for (const auto& sm : l.timing->sms) gatings += sm.gating.lanes.gatings;
      EXPECT_GT(gatings, 0u) << kernel << " " << sets.front();
    }
  }
}

TEST(SmGating, TimeoutGatingCostsTheWakeLatencyAfterALongIdleGap) {
  for (uint32_t units : {1u, 2u}) {
    std::vector<std::string> common{"memory.fixed_latency=1000",
                                    "power.gating.lane.timeout_cycles=100",
                                    "power.gating.simd_unit.timeout_cycles=100",
                                    "power.gating.lane.wake_latency=7",
                                    "power.gating.simd_unit.wake_latency=4",
                                    "sm.simd_units=" + std::to_string(units)};
    auto with = [&](const std::string& detect) {
      std::vector<std::string> s = common;
      s.push_back("power.gating.idle_detect=" + detect);
      return platformWith(s);
    };
    const PlatformConfig cfg = with("timeout");
    const KernelRun base = launch(with("none"), kWaitKernel, {1}, {32});
    const KernelRun ideal = launch(with("ideal"), kWaitKernel, {1}, {32});
    const KernelRun gated = launch(cfg, kWaitKernel, {1}, {32});
    const power::SwitchParams lane = power::laneSwitchParams(cfg),
                              unit = power::simdUnitSwitchParams(cfg);
    const uint64_t wake = std::max(lane.wakeLatency, unit.wakeLatency);
    // Every SIMD instruction after the wait starts `wake` cycles later.
    EXPECT_EQ(ideal.timing.cycles, base.timing.cycles) << units << " units";  // woken in time
    EXPECT_EQ(gated.timing.cycles, base.timing.cycles + wake) << units << " units";
    const sm::SmGatingStats& g = gated.gating[0];
    // The add after the wait wakes its unit and every lane (a full warp); the dispatch waits
    // `wake` cycles.
    EXPECT_EQ(g.wakeStallCycles, wake);
    EXPECT_EQ(g.simdUnits.wakeups, 1u);
    EXPECT_EQ(g.lanes.wakeups, cfg.sm.simd_lanes);
    // The unit and its lanes wake together: each is held ON until the slowest is awake.
    EXPECT_EQ(g.lanes.wakingCycles, g.lanes.wakeups * wake);
    EXPECT_EQ(g.simdUnits.wakingCycles, g.simdUnits.wakeups * wake);
    EXPECT_EQ(base.gating[0].wakeStallCycles, 0u);
    EXPECT_EQ(base.gating[0].lanes.gatings, 0u);
    expectConsistentAccounting(cfg, gated);
  }
}

TEST(SmGating, IdealGatingOfLanesGatesTheIdlePeriodsOfAtLeastBet) {
  const PlatformConfig cfg =
      platformWith({"memory.fixed_latency=1000", "power.gating.idle_detect=ideal"});
  const KernelRun r = launch(cfg, kWaitKernel, {4}, {64});
  expectConsistentAccounting(cfg, r);
  const sm::SmGatingStats& g = r.gating[0];
  EXPECT_EQ(g.lanes.gatedCycles, g.lanes.idleCyclesAtLeastBet);
  EXPECT_EQ(g.lanes.gatings, g.lanes.idlePeriodsAtLeastBet);
  EXPECT_GT(g.lanes.gatings, 0u);  // the memory wait
  EXPECT_GT(g.laneNetGatedCycles, 0.0);
  // SMs without a CTA: their lanes never accounted, the SM switch gated the whole kernel. In
  // the second launch (r) it stays gated by the gating the first launch counted.
  const uint64_t bet = power::smSwitchParams(cfg).breakEven;
  ASSERT_GT(r.timing.cycles, bet);
  const KernelRun first = launch(cfg, kWaitKernel, {4}, {64}, 1);
  for (size_t i = 4; i < r.gating.size(); ++i) {
    EXPECT_EQ(r.gating[i].laneCycles, 0u);
    EXPECT_EQ(r.smSwitches[i].gatedCycles, r.timing.cycles);
    EXPECT_EQ(r.smSwitches[i].gatings, 0u);
    EXPECT_EQ(r.smSwitches[i].busyCycles, 0u);
    EXPECT_EQ(first.smSwitches[i].gatedCycles, first.timing.cycles);
    EXPECT_EQ(first.smSwitches[i].gatings, 1u);
  }
  EXPECT_GT(r.smSwitches[0].busyCycles, 0u);
}

// An SM the last launch left idle for longer than its switch's timeout is still gated when the
// next launch starts: its first CTA waits the wake-up latency. The SM that ran the last launch's
// CTA up to its end is on, and an oracle (ideal) wakes every SM in time.
TEST(SmGating, AnSmLeftIdleByALaunchIsStillGatedWhenTheNextStarts) {
  for (const char* detect : {"timeout", "ideal"}) {
    const PlatformConfig cfg = platformWith(
        {"memory.fixed_latency=1000", std::string("power.gating.idle_detect=") + detect});
    Device dev(cfg, ExecMode::Timing);
    const Kernel& k = dev.loadModule(kWaitKernel, "w.ptx").kernel("k");
    const uint32_t sms = cfg.gpu.num_sms;
    const DevPtr out = dev.malloc(uint64_t(sms) * 32 * 4 + 64);
    dev.launch(k, {1}, {32}, 0, KernelArgs().ptr(out));
    dev.launch(k, {sms}, {32}, 0, KernelArgs().ptr(out));
    const gpu::TimingResult& one = *dev.launches()[0].timing;
    const gpu::TimingResult& all = *dev.launches()[1].timing;
    const power::SwitchParams sw = power::smSwitchParams(cfg);
    ASSERT_EQ(one.timeline.size(), 1u);
    ASSERT_GT(one.cycles, sw.timeout + 1);  // long enough for the idle SMs to gate
    ASSERT_GT(one.cycles, sw.breakEven);
    const uint32_t busy = one.timeline[0].sm;
    ASSERT_EQ(all.timeline.size(), sms);
    const bool timeout = std::string(detect) == "timeout";
    // Each SM's first CTA; while the others wake, the SM that is on takes CTAs meant for them.
    std::map<uint32_t, uint64_t> first;
    for (const auto& c : all.timeline)
      first[c.sm] = first.count(c.sm) ? std::min(first[c.sm], c.start) : c.start;
    if (!timeout) {
      EXPECT_EQ(first.size(), sms);
    }
    EXPECT_GT(first.size(), 1u) << detect;
    for (const auto& [sm, start] : first) {
      const uint64_t wait = timeout && sm != busy ? sw.wakeLatency : 0;
      EXPECT_EQ(start, all.startCycle + wait) << detect << " sm " << sm;
    }
    for (const gpu::SmTiming& t : all.sms) {
      EXPECT_EQ(t.smSwitch.windowCycles(), all.cycles) << detect << " sm " << t.id;
      if (t.id == busy) continue;
      // The scheduler wakes every gated SM in the launch's first cycle (the window starts in
      // the next one).
      EXPECT_EQ(t.smSwitch.wakeups, timeout ? 1u : 0u) << detect << " sm " << t.id;
      EXPECT_EQ(t.smSwitch.wakingCycles, timeout ? sw.wakeLatency - 1 : 0u)
          << detect << " sm " << t.id;
    }
    // The kernel's cycles follow: every CTA of the second launch runs the same code.
    const uint64_t late = timeout ? sw.wakeLatency : 0;
    EXPECT_GE(all.cycles, one.cycles + late - 1) << detect;
  }
}

// Threads below `active` loop over dependent adds; the others skip the loop.
std::string divergentKernel(uint32_t active) {
  return test::module(R"(
.visible .entry k(.param .u64 out)
{
  .reg .b32 %r<8>;
  .reg .b64 %rd<4>;
  .reg .pred %p<3>;
  mov.u32 %r0, %tid.x;
  mov.u32 %r2, 0;
  setp.ge.u32 %p1, %r0, )" +
                      std::to_string(active) + R"(;
  @%p1 bra DONE;
  mov.u32 %r3, 0;
L:
  add.u32 %r2, %r2, %r0;
  xor.b32 %r2, %r2, 7;
  add.u32 %r3, %r3, 1;
  setp.lt.u32 %p2, %r3, 40;
  @%p2 bra L;
DONE:
  ld.param.u64 %rd1, [out];
  mul.wide.u32 %rd2, %r0, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r2;
  ret;
}
)");
}

TEST(SmGating, ThreadCompactionChangesTheLanesUsedButNotTheCycles) {
  const std::vector<std::string> base{"power.gating.idle_detect=ideal"};
  std::vector<std::string> compact = base;
  compact.push_back("power.thread_compaction=true");
  const PlatformConfig cfgOff = platformWith(base), cfgOn = platformWith(compact);
  const uint32_t active = 8;  // threads 0..7: natural lanes 0..7, compacted lanes 0..3
  const KernelRun off = launch(cfgOff, divergentKernel(active), {1}, {32});
  const KernelRun on = launch(cfgOn, divergentKernel(active), {1}, {32});
  const KernelRun none = launch(platformWith({}), divergentKernel(active), {1}, {32});
  EXPECT_EQ(on.timing.cycles, off.timing.cycles);
  EXPECT_EQ(off.timing.cycles, none.timing.cycles);  // gating bookkeeping changes nothing
  EXPECT_EQ(off.gating[0].compactedInstructions, 0u);
  const uint64_t compacted = on.gating[0].compactedInstructions;
  EXPECT_GT(compacted, 0u);
  // Each compacted instruction keeps ceil(active / passes) lanes busy instead of `active`
  // lanes, for its passes (the branch around the loop, taken by the other 32 - active threads,
  // saves as many: 16 lanes become ceil((32 - active) / 2)); a lane's busy time is the warp's
  // core cycles on the unit (its passes at the lane clock).
  const uint32_t lanes = cfgOn.sm.simd_lanes, passes = cfgOn.sm.warp_size / lanes;
  const uint64_t saved =
      compacted * (active - (active + passes - 1) / passes) * cfgOn.sm.warpCycles(lanes);
  EXPECT_EQ(off.gating[0].lanes.busyCycles - on.gating[0].lanes.busyCycles, saved);
  EXPECT_GE(on.gating[0].lanes.gatedCycles, off.gating[0].lanes.gatedCycles);
  expectConsistentAccounting(cfgOn, on);
}

TEST(SmGating, IssueControlStepsDownWhileIdleAndSplitsWarps) {
  const PlatformConfig cfg =
      platformWith({"memory.fixed_latency=3000", "power.simd_issue.policy=utilisation",
                    "power.simd_issue.slice_cycles=200"});
  const KernelRun r = launch(cfg, kWaitKernel, {1}, {32});
  const KernelRun none =
      launch(platformWith({"memory.fixed_latency=3000"}), kWaitKernel, {1}, {32});
  expectConsistentAccounting(cfg, r);
  const sm::SmGatingStats& g = r.gating[0];
  // The memory wait is many idle slices: the control reaches state 4 (unit 0 split) and the
  // instructions after the wait run split, each taking twice the passes.
  EXPECT_GT(g.stateCycles[3], 0u);
  EXPECT_GT(g.splitInstructions, 0u);
  EXPECT_GT(r.timing.cycles, none.timing.cycles);
  // An SM without CTAs sleeps through the kernel yet its states are accounted.
  EXPECT_EQ(r.gating[1].stateCycles[0], cfg.power.simd_issue.slice_cycles);
  EXPECT_EQ(r.gating[1].splitInstructions, 0u);
}

// ---- CTA placement ----------------------------------------------------------------------------

// A kernel of a few dependent adds per thread.
const std::string kShortKernel = test::module(R"(
.visible .entry k(.param .u64 out)
{
  .reg .b32 %r<8>;
  .reg .b64 %rd<4>;
  mov.u32 %r0, %tid.x;
  add.u32 %r1, %r0, 1;
  add.u32 %r1, %r1, %r0;
  ld.param.u64 %rd1, [out];
  mul.wide.u32 %rd2, %r0, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r1;
  ret;
}
)");

TEST(CtaPlacement, RegistryHasTheGatingAwarePolicies) {
  EXPECT_EQ(gpu::ctaPlacementPolicies().names(),
            (std::vector<std::string>{"round-robin", "packed", "congestion-aware"}));
}

TEST(CtaPlacement, PackedUsesAsFewSmsAsHoldTheKernel) {
  const PlatformConfig cfg =
      platformWith({"gpu.cta_placement=packed", "power.gating.idle_detect=ideal"});
  // 64-thread CTAs of a kernel with few registers: sm.max_ctas of them fit on an SM.
  sm::CtaFootprint f;
  f.threads = 64;
  f.warps = 2;
  const uint32_t perSm = sm::ctasPerSm(cfg.sm, f);
  ASSERT_EQ(perSm, cfg.sm.max_ctas);
  const uint32_t ctas = 2 * perSm + 3;
  ASSERT_LT(ctas, cfg.gpu.num_sms * perSm);
  const uint32_t k = (ctas + perSm - 1) / perSm;
  const KernelRun r = launch(cfg, kShortKernel, {ctas}, {64}, 1);
  EXPECT_EQ(r.decision.policy, "packed");
  EXPECT_EQ(r.decision.sms, k);
  std::vector<uint32_t> perSmCount(cfg.gpu.num_sms, 0);
  for (const auto& c : r.timing.timeline) ++perSmCount[c.sm];
  ASSERT_EQ(r.timing.timeline.size(), ctas);
  for (uint32_t i = 0; i < cfg.gpu.num_sms; ++i) {
    if (i < k) {
      EXPECT_GT(perSmCount[i], 0u) << "SM " << i;
    } else {
      EXPECT_EQ(perSmCount[i], 0u) << "SM " << i;
      EXPECT_EQ(r.smSwitches[i].busyCycles, 0u);
      EXPECT_EQ(r.smSwitches[i].gatedCycles, r.timing.cycles);
    }
  }
  // A kernel that fills the GPU is spread over every SM.
  const KernelRun full = launch(cfg, kShortKernel, {cfg.gpu.num_sms * perSm}, {64}, 1);
  EXPECT_EQ(full.decision.sms, cfg.gpu.num_sms);
}

// Memory-bound: each thread waits for loads most of the time.
const std::string kMemoryKernel = test::module(R"(
.visible .entry k(.param .u64 out)
{
  .reg .b32 %r<8>;
  .reg .b64 %rd<4>;
  .reg .pred %p<2>;
  mov.u32 %r0, %tid.x;
  ld.param.u64 %rd1, [out];
  mul.wide.u32 %rd2, %r0, 4;
  add.s64 %rd3, %rd1, %rd2;
  mov.u32 %r3, 0;
L:
  ld.global.u32 %r1, [%rd3];
  add.u32 %r2, %r1, %r3;
  st.global.u32 [%rd3], %r2;
  add.u32 %r3, %r3, 1;
  setp.lt.u32 %p1, %r3, 4;
  @%p1 bra L;
  ret;
}
)");

TEST(CtaPlacement, CongestionAwareKeepsTheSmsTheMetricAsksFor) {
  const PlatformConfig cfg =
      platformWith({"gpu.cta_placement=congestion-aware", "gpu.core_count.observe_cycles=1500",
                    "memory.fixed_latency=400", "power.gating.idle_detect=timeout",
                    "power.gating.sm.timeout_cycles=10"});
  const uint32_t n = cfg.gpu.num_sms;
  const uint32_t ctas = 4 * n * cfg.sm.max_ctas;
  const KernelRun r = launch(cfg, kMemoryKernel, {ctas}, {64}, 1);
  const gpu::PlacementDecision& d = r.decision;
  ASSERT_TRUE(d.measured);
  EXPECT_EQ(d.decidedAt, r.timing.startCycle + cfg.gpu.core_count.observe_cycles);
  EXPECT_EQ(d.injectionStallRate, 0.0);  // the fixed-latency memory has no interconnect
  EXPECT_GT(d.laneUtilisation, 0.0);
  EXPECT_DOUBLE_EQ(d.metric, gpu::congestionMetric(cfg.gpu.core_count, 0.0, d.laneUtilisation));
  EXPECT_EQ(d.sms, gpu::chooseCoreCount(cfg.gpu.core_count, d.metric, n));
  EXPECT_DOUBLE_EQ(d.predictedSlowdown,
                   gpu::predictedSlowdown(cfg.gpu.core_count, d.metric, n, d.sms));
  ASSERT_LT(d.sms, n);  // memory-bound: fewer SMs
  // After the decision only SMs 0 .. k-1 take CTAs; the others finish theirs and are gated
  // for good (never woken).
  uint64_t late = 0;
  for (const auto& c : r.timing.timeline) {
    if (c.start > d.decidedAt) {
      EXPECT_LT(c.sm, d.sms) << "CTA " << c.linearId;
      ++late;
    }
  }
  EXPECT_GT(late, 0u);
  for (uint32_t i = d.sms; i < n; ++i) {
    EXPECT_GT(r.smSwitches[i].gatings, 0u) << "SM " << i;
    EXPECT_EQ(r.smSwitches[i].wakeups, 0u) << "SM " << i;
  }
  EXPECT_EQ(gpu::toJson(d)["sms"], d.sms);
}

// Seed 002 decides during the first CTA's execution: with a long observe_cycles the decision
// comes when the first CTA finishes.
TEST(CtaPlacement, CongestionAwareDecidesWhenTheFirstCtaFinishes) {
  const PlatformConfig cfg =
      platformWith({"gpu.cta_placement=congestion-aware", "gpu.core_count.observe_cycles=1000000",
                    "memory.fixed_latency=400"});
  const uint32_t ctas = 4 * cfg.gpu.num_sms * cfg.sm.max_ctas;
  const KernelRun r = launch(cfg, kMemoryKernel, {ctas}, {64}, 1);
  ASSERT_TRUE(r.decision.measured);
  uint64_t first = ~0ull;
  for (const auto& c : r.timing.timeline) first = std::min<uint64_t>(first, c.end);
  EXPECT_EQ(r.decision.decidedAt, first);
  EXPECT_LT(first, r.timing.startCycle + cfg.gpu.core_count.observe_cycles);
}

// A launch whose CTAs all start at once leaves nothing to place: no decision is taken (every
// SM kept, measured false), even when the observation window ends while they run.
TEST(CtaPlacement, CongestionAwareDecidesNothingWhenEveryCtaIsPlaced) {
  const PlatformConfig cfg =
      platformWith({"gpu.cta_placement=congestion-aware", "gpu.core_count.observe_cycles=100",
                    "memory.fixed_latency=400"});
  const KernelRun r = launch(cfg, kMemoryKernel, {cfg.gpu.num_sms}, {64}, 1);
  EXPECT_GT(r.timing.cycles, cfg.gpu.core_count.observe_cycles);
  EXPECT_FALSE(r.decision.measured);
  EXPECT_EQ(r.decision.sms, cfg.gpu.num_sms);
}

TEST(CtaPlacement, DefaultsLeaveTheCyclesUnchanged) {
  // Gating with ideal detection and the none policies cost no cycles; the SM switch accounts.
  const KernelRun base = launch(platformWith({}), kMemoryKernel, {40}, {128}, 1);
  const KernelRun ideal =
      launch(platformWith({"power.gating.idle_detect=ideal"}), kMemoryKernel, {40}, {128}, 1);
  EXPECT_EQ(ideal.timing.cycles, base.timing.cycles);
  EXPECT_EQ(base.decision.policy, "round-robin");
  EXPECT_EQ(base.decision.sms, test::platform().gpu.num_sms);
  EXPECT_EQ(base.gating[0].laneCycles, 0u);  // nothing on: the lanes do not account
  EXPECT_EQ(base.gating[0].stateCycles[0], base.timing.cycles);
  const nlohmann::json j = sm::toJson(ideal.gating[0]);
  EXPECT_EQ(j["lanes"]["busy_cycles"], ideal.gating[0].lanes.busyCycles);
  EXPECT_EQ(j["state_cycles"].size(), 4u);
}

// The SM switches' windows start after the kernel's first cycle, yet an SM with no gating is
// usable at once: the first CTA of every SM starts in the kernel's first cycle, with or without
// ideal gating (a switch once reported a wake-up until its window's start and delayed them).
TEST(CtaPlacement, FirstCtasStartInTheKernelsFirstCycle) {
  for (const char* detect : {"none", "ideal", "timeout"}) {
    Device dev(platformWith({std::string("power.gating.idle_detect=") + detect}), ExecMode::Timing);
    const Kernel& k = dev.loadModule(kMemoryKernel, "m.ptx").kernel("k");
    const uint32_t ctas = dev.config().gpu.num_sms;
    const DevPtr out = dev.malloc(uint64_t(ctas) * 128 * 4);
    dev.launch(k, {ctas}, {128}, 0, KernelArgs().ptr(out));
    const gpu::TimingResult& t = *dev.launches().back().timing;
    ASSERT_EQ(t.timeline.size(), ctas);
    for (const auto& c : t.timeline) EXPECT_EQ(c.start, t.startCycle) << detect << " sm " << c.sm;
  }
}

}  // namespace
