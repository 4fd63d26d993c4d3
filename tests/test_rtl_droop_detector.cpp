// RTL of the global droop detector (models/rtl/verilog/global_droop_detector.sv) driven through
// its transactor: reset, staggered delays in SM order, min_sms equality, the window's edge in
// cycles, re-rises, holdoffs (default and explicit) ignoring rises, consumed rises, idle
// stretches costing few clocks, and the same delays as the C++ model on random reports; the
// lockstep detector catching a one-cycle window slip at its report; the key's validation.
#include <initializer_list>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "common/error.hpp"
#include "common/platform_config.hpp"
#include "pdn/global_droop_detector.hpp"
#include "rtl/global_droop_detector_rtl.hpp"

using namespace gpusc;
using rtl::GlobalDroopDetectorTransactor;

namespace {

constexpr uint32_t kSms = 15;

std::vector<uint32_t> warpsOn(std::initializer_list<uint32_t> active) {
  std::vector<uint32_t> v(kSms, 0);
  for (uint32_t s : active) v[s] = 3;
  return v;
}

GlobalSmoothingConfig cfg(uint32_t minSms = 3, uint32_t window = 30, uint32_t stagger = 50,
                          uint32_t holdoff = 0) {
  GlobalSmoothingConfig c;
  c.min_sms = minSms;
  c.window_cycles = window;
  c.stagger_cycles = stagger;
  c.holdoff_cycles = holdoff;
  return c;
}

TEST(RtlDroopDetector, StaggersTheRecentSetInSmOrderAtMinSms) {
  GlobalDroopDetectorTransactor r(cfg(3), kSms);
  EXPECT_TRUE(r.report(10, warpsOn({2, 9})).empty());  // two rises: one short of min_sms
  const std::vector<uint32_t> d = r.report(20, warpsOn({2, 9, 4}));
  ASSERT_EQ(d.size(), kSms);
  for (uint32_t s = 0; s < kSms; ++s) {
    const uint32_t expected = s == 4 ? 50 : s == 9 ? 100 : 0;  // 2, 4, 9 in SM order
    EXPECT_EQ(d[s], expected) << "SM " << s;
  }
}

TEST(RtlDroopDetector, ARiseCountsForExactlyWindowCycles) {
  const uint32_t window = 30;
  GlobalDroopDetectorTransactor in(cfg(2, window), kSms);
  in.report(100, warpsOn({0}));
  EXPECT_FALSE(in.report(100 + window - 1, warpsOn({0, 1})).empty());  // 0 is 29 cycles old
  GlobalDroopDetectorTransactor out(cfg(2, window), kSms);
  out.report(100, warpsOn({0}));
  EXPECT_TRUE(out.report(100 + window, warpsOn({0, 1})).empty());  // 30 cycles: out
}

TEST(RtlDroopDetector, ARiseAgainRestartsItsWindow) {
  GlobalDroopDetectorTransactor r(cfg(2, 30), kSms);
  r.report(100, warpsOn({0}));
  r.report(110, warpsOn({}));
  r.report(125, warpsOn({0}));                           // rises again at 125
  EXPECT_FALSE(r.report(150, warpsOn({0, 1})).empty());  // 125 is 25 cycles old
}

TEST(RtlDroopDetector, HoldoffIgnoresRisesAndConsumedRisesDoNotFireAgain) {
  // Default holdoff: the longest delay, (3 - 1) x 50 = 100 cycles from the detection at 10.
  GlobalDroopDetectorTransactor r(cfg(3, 1000), kSms);
  ASSERT_FALSE(r.report(10, warpsOn({0, 1, 2})).empty());
  EXPECT_EQ(r.pins().holdLeft, 99u);  // in cycle 11
  EXPECT_TRUE(r.report(20, warpsOn({})).empty());
  EXPECT_TRUE(r.report(109, warpsOn({3, 4, 5})).empty());  // in the holdoff: not rises
  EXPECT_TRUE(r.report(110, warpsOn({})).empty());         // holdoff over; 0 .. 5 consumed/none
  EXPECT_TRUE(r.report(120, warpsOn({0, 1})).empty());     // two rises
  EXPECT_FALSE(r.report(130, warpsOn({0, 1, 7})).empty());
  // An explicit holdoff.
  GlobalDroopDetectorTransactor h(cfg(1, 1000, 0, 7), kSms);
  ASSERT_FALSE(h.report(10, warpsOn({0})).empty());
  EXPECT_TRUE(h.report(16, warpsOn({1})).empty());      // 1 rises in the holdoff: ignored
  EXPECT_TRUE(h.report(17, warpsOn({1})).empty());      // 10 + 7: over; 1 is no rise now
  EXPECT_FALSE(h.report(18, warpsOn({1, 2})).empty());  // 2 rises
}

TEST(RtlDroopDetector, ResetForgetsRisesAndIdleGapsCostFewClocks) {
  GlobalDroopDetectorTransactor r(cfg(2, 30), kSms);
  r.report(10, warpsOn({0}));
  r.reset();
  EXPECT_TRUE(r.report(20, warpsOn({1})).empty());  // 0's rise is forgotten
  const uint64_t before = r.clocks();
  r.report(1000000, warpsOn({}));
  EXPECT_LT(r.clocks() - before, 40u);  // the window's 30 cycles, then the block is quiet
}

TEST(RtlDroopDetectorVsModel, SameDelaysOnRandomReports) {
  std::mt19937_64 rng(3);
  for (int trial = 0; trial < 30; ++trial) {
    std::uniform_int_distribution<uint32_t> minSms(1, 6), window(1, 40), stagger(0, 20),
        holdoff(0, 60), gap(1, 25), coin(0, 3);
    GlobalSmoothingConfig c =
        cfg(minSms(rng), window(rng), stagger(rng), holdoff(rng) % 3 == 0 ? 0 : holdoff(rng));
    pdn::GlobalDroopDetector m(c, kSms);
    GlobalDroopDetectorTransactor r(c, kSms);
    uint64_t cycle = 0;
    for (int i = 0; i < 300; ++i) {
      cycle += gap(rng);
      std::vector<uint32_t> w(kSms);
      for (uint32_t& x : w) x = coin(rng) == 0 ? 0 : coin(rng);
      ASSERT_EQ(m.report(cycle, w), r.report(cycle, w)) << "trial " << trial << " cycle " << cycle;
      if (i == 150) {
        m.reset();
        r.reset();
      }
    }
  }
}

TEST(RtlDroopDetectorLockstep, AOneCycleWindowSlipIsCaughtAtItsReport) {
  rtl::RtlGlobalDroopDetector d(cfg(2, 30), kSms, true);
  // The RTL's window one cycle shorter: its transactor programmed differently.
  d.transactor().pins().window = 29;
  d.report(100, warpsOn({0}));
  try {
    d.report(129, warpsOn({0, 1}));
    FAIL() << "the slip was not caught";
  } catch (const LockstepDivergence& e) {
    EXPECT_EQ(std::string(e.what()),
              "rtl lockstep: block global_droop_detector of cta_scheduler diverged at cycle 129: "
              "detect is 1 in the model, 0 in the RTL");
  }
}

TEST(RtlDroopDetectorVerilated, TheRtlsDelaysDriveAndAreCounted) {
  rtl::RtlGlobalDroopDetector d(cfg(2, 30, 50), kSms, false);
  d.transactor().pins().stagger = 20;  // an RTL with another stagger decides
  const std::vector<uint32_t> delays = d.report(10, warpsOn({3, 5}));
  ASSERT_EQ(delays.size(), kSms);
  EXPECT_EQ(delays[5], 20u);
  EXPECT_EQ(d.detections(), 1u);
  EXPECT_EQ(d.delayCycles(), 20u);
  EXPECT_EQ(d.delayedSms(), 1u);
}

TEST(RtlDroopDetectorConfig, ModesNeedTheGlobalDetectorAndAtMost128Sms) {
  EXPECT_EQ(loadPlatform("gtx480").rtl.droop_detector, "model");
  for (const char* mode : {"verilated", "lockstep"})
    EXPECT_NO_THROW(loadPlatform(
        "gtx480", {"smoothing.mode=global", std::string("rtl.droop_detector=") + mode}));
  const auto message = [](const std::vector<std::string>& sets) -> std::string {
    try {
      loadPlatform("gtx480", sets);
    } catch (const InputError& e) {
      return e.what();
    }
    return "accepted";
  };
  EXPECT_NE(message({"rtl.droop_detector=lockstep"})
                .find("rtl.droop_detector lockstep needs smoothing.mode global or hierarchical"),
            std::string::npos);
  EXPECT_NE(
      message({"smoothing.mode=hierarchical", "rtl.droop_detector=verilated", "gpu.num_sms=129"})
          .find("has inputs for 128 SMs, gpu.num_sms is 129"),
      std::string::npos);
}

}  // namespace
