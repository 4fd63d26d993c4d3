// RTL of the power-gating switch controller (models/rtl/verilog/power_gating_switch.sv) with
// timeout idle detection, driven through its transactor: the timeout boundary, wake-up
// sequencing (a request during a wake-up does not restart it) and, on random use patterns
// like the SM's (acquire, then use from the ready cycle), the same answers as the C++ model
// power::PowerGatingSwitch in every call; the switch with the RTL attached (rtl.power_switch
// lockstep and verilated): the same counters as the model, a one-cycle slip of the RTL's
// timeout or wake latency caught at its cycle, and the RTL's answers driving `verilated`.
#include <memory>
#include <random>
#include <string>

#include <gtest/gtest.h>

#include "common/error.hpp"
#include "common/platform_config.hpp"
#include "power/power_gating_switch.hpp"
#include "rtl/power_gating_switch_rtl.hpp"

using namespace gpusc;
using power::Cycle;
using power::IdleDetect;
using power::PowerGatingSwitch;
using power::SwitchParams;
using power::SwitchRtlMode;
using rtl::PowerGatingSwitchTransactor;

namespace {

TEST(RtlPowerSwitch, GatedOnlyAfterMoreThanTimeoutIdleCycles) {
  const uint32_t timeout = 5, wake = 3;
  PowerGatingSwitchTransactor r(timeout, wake);
  r.begin(100);
  r.use(100, 110);                         // busy 100 .. 109; idle from 110
  EXPECT_FALSE(r.gatedAt(110 + timeout));  // exactly `timeout` idle cycles: still on
  EXPECT_TRUE(r.gatedAt(110 + timeout + 1));
  EXPECT_EQ(r.acquire(200), 200u + wake);  // gated: usable after the wake latency
}

TEST(RtlPowerSwitch, RequestDuringWakeUpDoesNotRestartIt) {
  PowerGatingSwitchTransactor r(2, 6);
  r.begin(0);
  ASSERT_TRUE(r.gatedAt(10));
  EXPECT_EQ(r.acquire(10), 16u);
  EXPECT_FALSE(r.gatedAt(12));
  EXPECT_EQ(r.acquire(12), 16u);  // the wake-up under way, not a new one
  r.use(16, 17);
  EXPECT_EQ(r.acquire(17), 17u);
  EXPECT_FALSE(r.gatedAt(17 + 2));
  EXPECT_TRUE(r.gatedAt(17 + 3));
}

TEST(RtlPowerSwitch, ZeroWakeLatencyIsUsableAtOnce) {
  PowerGatingSwitchTransactor r(0, 0);
  r.begin(0);
  EXPECT_TRUE(r.gatedAt(1));
  EXPECT_EQ(r.acquire(1), 1u);
}

TEST(RtlPowerSwitch, HoldKeepsTheBlockOnAndUsable) {
  const uint32_t timeout = 3;
  PowerGatingSwitchTransactor r(timeout, 4);
  r.begin(0);
  r.use(0, 2);
  r.hold(5, 9);  // kept on 5 .. 8 while other blocks wake
  EXPECT_FALSE(r.gatedAt(5));
  EXPECT_EQ(r.usableFrom(6), 6u);  // on: usable at once
  EXPECT_EQ(r.acquire(7), 7u);     // not gated: no wake-up
  EXPECT_FALSE(r.gatedAt(9 + timeout));
  EXPECT_TRUE(r.gatedAt(9 + timeout + 1));
  EXPECT_EQ(r.usableFrom(9 + timeout + 1), 9u + timeout + 1 + 4);
}

TEST(RtlPowerSwitch, UsableFromCountsDownAWakeUp) {
  PowerGatingSwitchTransactor r(2, 5);
  r.begin(0);
  ASSERT_TRUE(r.gatedAt(3));
  EXPECT_EQ(r.acquire(3), 8u);
  EXPECT_EQ(r.usableFrom(3), 8u);  // the request of this cycle, not yet clocked
  for (uint64_t c = 4; c <= 8; ++c) EXPECT_EQ(r.usableFrom(c), 8u) << "cycle " << c;
  EXPECT_EQ(r.usableFrom(9), 9u);
}

TEST(RtlPowerSwitch, LongIdleAndBusyStretchesCostFewClocks) {
  PowerGatingSwitchTransactor r(4, 2);
  r.begin(0);
  r.use(0, 1000000);
  EXPECT_FALSE(r.gatedAt(999999));
  EXPECT_TRUE(r.gatedAt(5000000));
  EXPECT_LT(r.clocks(), 20u);
}

// The model and the RTL on random SM-like use: every gatedAt and acquire agrees. (The model's
// switches are sc_modules, built in this executable's default SystemC context, which no other
// test uses.)
TEST(RtlPowerSwitchVsModel, SameAnswersOnRandomUse) {
  std::mt19937_64 rng(11);
  std::vector<std::unique_ptr<PowerGatingSwitch>> keep;
  for (int trial = 0; trial < 60; ++trial) {
    std::uniform_int_distribution<uint32_t> small(0, 8), gap(0, 24), occ(1, 4), pick(0, 9);
    const uint32_t timeout = small(rng), wake = small(rng) % 5;
    keep.push_back(std::make_unique<PowerGatingSwitch>(("sw" + std::to_string(trial)).c_str(),
                                                       IdleDetect::Timeout, timeout, wake, 1));
    PowerGatingSwitch& m = *keep.back();
    PowerGatingSwitchTransactor r(timeout, wake);
    uint64_t c = 1000;
    m.begin(c);
    r.begin(c);
    for (int i = 0; i < 200; ++i) {
      c += gap(rng);
      const std::string at = "trial " + std::to_string(trial) + " (timeout " +
                             std::to_string(timeout) + ", wake " + std::to_string(wake) +
                             ") cycle " + std::to_string(c);
      ASSERT_EQ(m.gatedAt(c), r.gatedAt(c)) << at;
      if (pick(rng) == 0) {  // an open-ended busy stretch (an SM holding CTAs)
        const uint64_t ready = m.acquire(c);
        ASSERT_EQ(ready, r.acquire(c)) << at;
        m.beginBusy(ready);
        r.beginBusy(ready);
        // At least one busy cycle: a zero-length stretch restarts the model's idle timer
        // without a busy cycle, which the RTL does not see (docs/rtl-cosim.md).
        c = ready + 1 + gap(rng);
        m.endBusy(c);
        r.endBusy(c);
        continue;
      }
      const uint64_t ready = m.acquire(c);
      ASSERT_EQ(ready, r.acquire(c)) << at;
      const uint64_t until = ready + occ(rng);
      m.use(ready, until);
      r.use(ready, until);
    }
  }
}

// A switch as the platform builds it: `mode` attaches the verilated controller.
std::unique_ptr<PowerGatingSwitch> platformSwitch(const std::string& name, uint32_t timeout,
                                                  uint32_t wake, SwitchRtlMode mode) {
  SwitchParams p;
  p.detect = IdleDetect::Timeout;
  p.timeout = timeout;
  p.wakeLatency = wake;
  p.breakEven = 4;
  p.rtl = mode;
  return std::make_unique<PowerGatingSwitch>(name.c_str(), p);
}

// The SM's pattern on one switch: probe with usableFrom, wake with acquire, hold while others
// wake, use; open-ended busy stretches; suspended stretches (no CTA). Returns the counters.
power::SwitchCounters drive(PowerGatingSwitch& s, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<uint32_t> gap(0, 30), occ(1, 4), pick(0, 19), extra(0, 3);
  uint64_t c = 500;
  s.begin(c);
  for (int i = 0; i < 300; ++i) {
    c += gap(rng);
    const uint32_t what = pick(rng);
    if (what == 0) {  // the SM holds no CTA for a while
      s.suspend(c);
      if (extra(rng) == 0) {
        s.resume(c - 1);  // a CTA in the cycle before (see the test below)
      } else {
        c += 1 + gap(rng);
        s.resume(c);
      }
      continue;
    }
    Cycle ready = s.usableFrom(c);
    if (ready == PowerGatingSwitch::kGated) {
      ready = s.acquire(c);
      const uint64_t others = ready + extra(rng);  // another block wakes for longer
      s.hold(c, others);
      ready = others;
    }
    if (what == 1) {
      s.beginBusy(ready);
      c = ready + 1 + gap(rng);
      s.endBusy(c);
    } else {
      s.use(ready, ready + occ(rng));
    }
  }
  s.finish(c + 100);
  return s.counters();
}

// The switch with the RTL attached: lockstep finds no divergence, and in every mode the
// counters are the model's.
TEST(RtlPowerSwitchInSwitch, LockstepAndVerilatedCountLikeTheModel) {
  std::vector<std::unique_ptr<PowerGatingSwitch>> keep;
  for (uint32_t trial = 0; trial < 24; ++trial) {
    const uint32_t timeout = trial % 7, wake = trial % 4;
    const std::string n = "pg" + std::to_string(trial);
    keep.push_back(platformSwitch(n + "m", timeout, wake, SwitchRtlMode::Model));
    const nlohmann::json m = power::toJson(drive(*keep.back(), trial));
    keep.push_back(platformSwitch(n + "l", timeout, wake, SwitchRtlMode::Lockstep));
    nlohmann::json l;
    ASSERT_NO_THROW(l = power::toJson(drive(*keep.back(), trial)));
    EXPECT_EQ(keep.back()->divergence(), "");
    keep.push_back(platformSwitch(n + "v", timeout, wake, SwitchRtlMode::Verilated));
    const nlohmann::json v = power::toJson(drive(*keep.back(), trial));
    EXPECT_EQ(m, l) << "trial " << trial;
    EXPECT_EQ(m, v) << "trial " << trial;
    EXPECT_GT(m["wakeups"].get<uint64_t>(), 0u) << "trial " << trial;
  }
}

// Lockstep catches an RTL whose timeout is one cycle longer at the first cycle the model
// gates, and one whose wake-up is a cycle shorter at the request.
TEST(RtlPowerSwitchInSwitch, LockstepCatchesAOneCycleSlipAtItsCycle) {
  const uint32_t timeout = 6, wake = 3;
  auto a = platformSwitch("slip_timeout", timeout, wake, SwitchRtlMode::Model);
  a->attachRtl(power::makeSwitchRtl(timeout + 1, wake), SwitchRtlMode::Lockstep);
  a->begin(0);
  a->use(0, 10);
  EXPECT_FALSE(a->gatedAt(10 + timeout));
  try {
    a->gatedAt(10 + timeout + 1);
    FAIL() << "the slip was not caught";
  } catch (const LockstepDivergence& e) {
    EXPECT_EQ(std::string(e.what()),
              "rtl lockstep: block power_switch of slip_timeout diverged at cycle 17: gated is 1 "
              "in the model, 0 in the RTL");
  }
  auto b = platformSwitch("slip_wake", timeout, wake, SwitchRtlMode::Model);
  b->attachRtl(power::makeSwitchRtl(timeout, wake - 1), SwitchRtlMode::Lockstep);
  b->begin(0);
  EXPECT_EQ(b->usableFrom(timeout), Cycle(timeout));
  ASSERT_EQ(b->usableFrom(40), PowerGatingSwitch::kGated);
  try {
    b->acquire(40);
    FAIL() << "the slip was not caught";
  } catch (const LockstepDivergence& e) {
    EXPECT_EQ(std::string(e.what()),
              "rtl lockstep: block power_switch of slip_wake diverged at cycle 40: wait_cycles is "
              "3 in the model, 2 in the RTL");
  }
}

// A kernel's first CTA can reach an SM in the cycle before the SIMD switches' window starts
// (resume before begin): the block is idle from the window's start in both.
TEST(RtlPowerSwitchInSwitch, ResumeBeforeTheWindowStartsIdlesFromItsStart) {
  const uint32_t timeout = 5;
  auto s = platformSwitch("early_resume", timeout, 2, SwitchRtlMode::Lockstep);
  s->begin(100);
  s->suspend(100);
  s->resume(99);
  EXPECT_FALSE(s->gatedAt(100 + timeout));
  EXPECT_TRUE(s->gatedAt(100 + timeout + 1));
  EXPECT_EQ(s->divergence(), "");
}

// `verilated`: the RTL's answers drive the platform (here an RTL with a longer timeout and a
// shorter wake-up), and the counters account what they make happen.
TEST(RtlPowerSwitchInSwitch, VerilatedAnswersAreTheRtls) {
  const uint32_t timeout = 6, wake = 3;
  auto s = platformSwitch("other_rtl", timeout, wake, SwitchRtlMode::Model);
  s->attachRtl(power::makeSwitchRtl(timeout + 2, wake - 2), SwitchRtlMode::Verilated);
  s->begin(0);
  s->use(0, 10);
  EXPECT_FALSE(s->gatedAt(10 + timeout + 2));
  EXPECT_TRUE(s->gatedAt(10 + timeout + 3));
  EXPECT_EQ(s->acquire(30), 31u);
  s->use(31, 32);
  s->finish(32);
  EXPECT_EQ(s->counters().wakeups, 1u);
  EXPECT_EQ(s->counters().wakingCycles, 1u);
  EXPECT_EQ(s->counters().busyCycles, 11u);
}

TEST(RtlPowerSwitchConfig, ModesNeedTimeoutDetectionAndFittingSettings) {
  EXPECT_EQ(loadPlatform("gtx480").rtl.power_switch, "model");
  for (const char* mode : {"verilated", "lockstep"})
    EXPECT_NO_THROW(loadPlatform(
        "gtx480", {"power.gating.idle_detect=timeout", std::string("rtl.power_switch=") + mode}));
  const auto message = [](const std::vector<std::string>& sets) -> std::string {
    try {
      loadPlatform("gtx480", sets);
    } catch (const InputError& e) {
      return e.what();
    }
    return "accepted";
  };
  EXPECT_NE(message({"power.gating.idle_detect=ideal", "rtl.power_switch=lockstep"})
                .find("rtl.power_switch lockstep needs power.gating.idle_detect timeout"),
            std::string::npos);
  EXPECT_NE(message({"power.gating.idle_detect=timeout", "rtl.power_switch=verilated",
                     "power.gating.lane.timeout_cycles=1048576"})
                .find("power.gating.lane.timeout_cycles 1048576 does not fit"),
            std::string::npos);
  EXPECT_EQ(message({"power.gating.idle_detect=timeout", "rtl.power_switch=verilated",
                     "power.gating.lane.timeout_cycles=1048575"}),
            "accepted");
  EXPECT_NE(message({"power.gating.idle_detect=timeout", "rtl.power_switch=lockstep",
                     "power.gating.sm.wake_latency=65536"})
                .find("power.gating.sm.wake_latency 65536 does not fit"),
            std::string::npos);
  EXPECT_NE(message({"power.gating.idle_detect=timeout", "rtl.power_switch=rtl"})
                .find("rtl.power_switch"),
            std::string::npos);
}

}  // namespace
