// RTL of the power-gating switch controller (models/rtl/verilog/power_gating_switch.sv) with
// timeout idle detection, driven through its transactor: the timeout boundary, wake-up
// sequencing (a request during a wake-up does not restart it) and, on random use patterns
// like the SM's (acquire, then use from the ready cycle), the same answers as the C++ model
// power::PowerGatingSwitch in every call.
#include <memory>
#include <random>
#include <string>

#include <gtest/gtest.h>

#include "power/power_gating_switch.hpp"
#include "rtl/power_gating_switch_rtl.hpp"

using namespace gpusc;
using power::IdleDetect;
using power::PowerGatingSwitch;
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

}  // namespace
