// RTL of the SIMD issue-control state machine (models/rtl/verilog/simd_issue_control.sv) driven
// through its transactor: reset, threshold equality in both directions, one step per slice,
// the ends of the chain, hysteresis, and the same state as the C++ policy "utilisation" on
// random utilisations; the lockstep policy catching a one-LSB threshold slip at its slice end;
// the key's validation.
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "common/error.hpp"
#include "common/platform_config.hpp"
#include "rtl/simd_issue_pins.hpp"
#include "rtl/simd_issue_rtl.hpp"
#include "sm/simd_issue_control.hpp"

using namespace gpusc;
using rtl::SimdIssueTransactor;

namespace {

constexpr double kLsb = 1.0 / (1 << rtl::kUtilFracBits);

SimdIssueConfig issueCfg() {
  SimdIssueConfig c;
  c.policy = "utilisation";
  c.down_thresholds = {0.5, 0.3, 0.15};
  c.up_thresholds = {0.625, 0.375, 0.25};
  return c;
}

std::unique_ptr<sm::SimdIssuePolicy> model(const SimdIssueConfig& c) {
  return sm::simdIssuePolicies().create("utilisation", c);
}

TEST(RtlSimdIssue, ResetIsStateOneAndAgainAfterSteps) {
  SimdIssueTransactor r(issueCfg());
  EXPECT_EQ(r.state(), 1u);
  EXPECT_EQ(r.sliceEnd(0.0), 2u);
  EXPECT_EQ(r.sliceEnd(0.0), 3u);
  r.reset();
  EXPECT_EQ(r.state(), 1u);
}

TEST(RtlSimdIssue, ThresholdEqualityStaysDownAndStepsUp) {
  const SimdIssueConfig c = issueCfg();
  SimdIssueTransactor r(c);
  EXPECT_EQ(r.sliceEnd(c.down_thresholds[0]), 1u);  // not below: stays
  EXPECT_EQ(r.sliceEnd(c.down_thresholds[0] - kLsb), 2u);
  EXPECT_EQ(r.sliceEnd(c.up_thresholds[0] - kLsb), 2u);  // between the thresholds: stays
  EXPECT_EQ(r.sliceEnd(c.up_thresholds[0]), 1u);         // at the up threshold: steps up
}

TEST(RtlSimdIssue, OneStepPerSliceAndTheEndsOfTheChain) {
  SimdIssueTransactor r(issueCfg());
  EXPECT_EQ(r.sliceEnd(1.0), 1u);  // no state above 1
  for (uint32_t s = 2; s <= 4; ++s) EXPECT_EQ(r.sliceEnd(0.0), s);
  EXPECT_EQ(r.sliceEnd(0.0), 4u);  // no state below 4
  for (uint32_t s = 3; s >= 1; --s) EXPECT_EQ(r.sliceEnd(1.0), s);
  EXPECT_EQ(r.clocks(), 9u);  // reset + 8 slice ends: nothing between slices
}

// Hysteresis: from state 3 (down 0.15, up 0.375) every utilisation in between stays.
TEST(RtlSimdIssue, BetweenTheThresholdsTheStateHolds) {
  SimdIssueTransactor r(issueCfg());
  r.sliceEnd(0.0);
  ASSERT_EQ(r.sliceEnd(0.0), 3u);
  for (double u : {0.15, 0.2, 0.3, 0.375 - kLsb}) EXPECT_EQ(r.sliceEnd(u), 3u) << u;
}

TEST(RtlSimdIssueVsModel, SameStateOnRandomUtilisations) {
  std::mt19937_64 rng(5);
  for (int trial = 0; trial < 20; ++trial) {
    SimdIssueConfig c = issueCfg();
    // Thresholds and utilisations on a 1/64 grid, so equality cases occur.
    std::uniform_int_distribution<int> grid(0, 64);
    for (int i = 0; i < 3; ++i) {
      c.down_thresholds[size_t(i)] = grid(rng) / 64.0;
      c.up_thresholds[size_t(i)] = grid(rng) / 64.0;
    }
    auto m = model(c);
    SimdIssueTransactor r(c);
    uint32_t state = 1;
    for (int i = 0; i < 400; ++i) {
      const double u = grid(rng) / 64.0;
      const uint32_t next = m->next(state, u);
      ASSERT_EQ(r.sliceEnd(u), next) << "trial " << trial << " slice " << i << " u " << u;
      state = next;
    }
  }
}

TEST(RtlSimdIssueLockstep, OneLsbThresholdSlipIsCaughtAtItsSliceEnd) {
  const SimdIssueConfig c = issueCfg();
  SimdIssueConfig slipped = c;
  slipped.down_thresholds[0] += kLsb;  // the RTL steps down at the threshold itself
  rtl::RtlSimdIssuePolicy p(model(c), SimdIssueTransactor(slipped), true, "sm4");
  p.begin();
  EXPECT_EQ(p.nextAt(100, 1, 0.9), 1u);
  try {
    p.nextAt(200, 1, c.down_thresholds[0]);
    FAIL() << "the slip was not caught";
  } catch (const LockstepDivergence& e) {
    EXPECT_EQ(std::string(e.what()),
              "rtl lockstep: block simd_issue_control of sm4 diverged at cycle 200: state is 1 in "
              "the model, 2 in the RTL");
  }
}

TEST(RtlSimdIssueVerilated, TheRtlsStateDrives) {
  const SimdIssueConfig c = issueCfg();
  SimdIssueConfig other = c;
  other.down_thresholds[0] = 0.75;
  rtl::RtlSimdIssuePolicy p(model(c), SimdIssueTransactor(other), false, "sm0");
  p.begin();
  EXPECT_EQ(p.nextAt(100, 1, 0.6), 2u);  // the model would stay in state 1
  EXPECT_EQ(p.divergence(), "");
}

TEST(RtlSimdIssueConfig, ModesNeedTheUtilisationPolicy) {
  EXPECT_EQ(loadPlatform("gtx480").rtl.simd_issue, "model");
  for (const char* mode : {"verilated", "lockstep"})
    EXPECT_NO_THROW(loadPlatform(
        "gtx480", {"power.simd_issue.policy=utilisation", std::string("rtl.simd_issue=") + mode}));
  try {
    loadPlatform("gtx480", {"rtl.simd_issue=lockstep"});
    FAIL() << "lockstep without the state machine was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("rtl.simd_issue lockstep needs power.simd_issue.policy "
                                         "utilisation"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(loadPlatform("gtx480", {"power.simd_issue.policy=utilisation", "rtl.simd_issue=x"}),
               InputError);
}

}  // namespace
