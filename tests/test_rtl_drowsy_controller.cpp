// RTL of the drowsy-line controller of a cache bank (models/rtl/verilog/drowsy_line_controller.sv)
// driven through its pins and its transactor: reset, a touch of a line that is still waking,
// the timeout exactly at its threshold, both policies, the look-ahead's shorter wait, lazy
// clocking; on random touch traces over several banks the same answers as the C++ model
// (cache::DrowsyLineController) at every touch; lockstep catching a deliberately broken variant
// (a timeout one cycle late) at the cycle derived from its trace; in `verilated` the RTL's
// answers drive; the key's validation.
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cache/drowsy_line_controller.hpp"
#include "cache/line_power.hpp"
#include "common/error.hpp"
#include "common/platform_config.hpp"
#include "rtl/drowsy_line_controller_rtl.hpp"

using namespace gpusc;
using cache::DrowsyLineController;
using cache::DrowsyPolicy;
using rtl::DrowsyLineControllerPins;
using rtl::DrowsyLineControllerTransactor;
using rtl::DrowsyLineSettings;

namespace {

DrowsyLineSettings timeoutSettings(uint32_t timeout, uint32_t wake, uint32_t lookahead = 0) {
  DrowsyLineSettings s;
  s.timeoutPolicy = true;
  s.timeout = timeout;
  s.wakeLatency = wake;
  s.lookahead = lookahead;
  return s;
}

DrowsyLineSettings afterAccessSettings(uint32_t wake) {
  DrowsyLineSettings s;
  s.wakeLatency = wake;
  return s;
}

// One clock of the bare block: an access of `frame` if `frame` >= 0.
void clockBlock(DrowsyLineControllerPins& p, int frame = -1) {
  p.access = frame >= 0;
  p.frame = frame >= 0 ? uint32_t(frame) : 0;
  p.clock();
  p.access = false;
}

DrowsyLineControllerPins& programmed(std::unique_ptr<DrowsyLineControllerPins>& p,
                                     const DrowsyLineSettings& s) {
  p->timeoutPolicy = s.timeoutPolicy;
  p->timeout = s.timeout;
  p->wakeLatency = s.wakeLatency;
  p->lookahead = s.lookahead;
  p->rst = true;
  p->clock();
  p->rst = false;
  return *p;
}

TEST(RtlDrowsyController, ResetMakesEveryFrameDrowsyAndQuiet) {
  auto blk = rtl::makeDrowsyLineControllerBlock(128);
  DrowsyLineControllerPins& p = programmed(blk, timeoutSettings(8, 3));
  ASSERT_EQ(p.frames(), 128u);
  for (uint32_t f = 0; f < p.frames(); ++f) ASSERT_TRUE(p.drowsy(f)) << f;
  EXPECT_TRUE(p.quiet);
  clockBlock(p, 5);
  EXPECT_TRUE(p.wake);
  EXPECT_EQ(p.waitCycles, 3u);
  EXPECT_FALSE(p.drowsy(5));
  EXPECT_FALSE(p.quiet);
  p.rst = true;  // reset forgets the touch
  p.clock();
  p.rst = false;
  EXPECT_TRUE(p.drowsy(5));
  EXPECT_TRUE(p.quiet);
  clockBlock(p, 5);
  EXPECT_TRUE(p.wake);
}

TEST(RtlDrowsyController, TimeoutTurnsALineDrowsyExactlyAtTheThreshold) {
  const uint32_t timeout = 6;
  auto blk = rtl::makeDrowsyLineControllerBlock(128);
  DrowsyLineControllerPins& p = programmed(blk, timeoutSettings(timeout, 2));
  clockBlock(p, 9);  // touched in cycle c: ON in c .. c + timeout - 1
  for (uint32_t k = 1; k < timeout; ++k) {
    EXPECT_FALSE(p.drowsy(9)) << "cycle c+" << k;
    EXPECT_FALSE(p.quiet);
    clockBlock(p);
  }
  EXPECT_TRUE(p.drowsy(9)) << "cycle c+timeout";
  EXPECT_TRUE(p.quiet);

  // Through the transactor: a touch timeout - 1 cycles later finds the line ON, one exactly
  // timeout cycles after that wakes it.
  DrowsyLineControllerTransactor t(timeoutSettings(timeout, 2), 32, 4, 1);
  EXPECT_TRUE(t.touch(3, 1, 100, false).wake);
  EXPECT_FALSE(t.touch(3, 1, 100 + timeout - 1, false).wake);
  const auto again = t.touch(3, 1, 100 + timeout - 1 + timeout, false);
  EXPECT_TRUE(again.wake);
  EXPECT_EQ(again.waitCycles, 2u);
}

TEST(RtlDrowsyController, ATouchOfAWakingLineFindsItOnUnderTimeout) {
  // The wake-up (wake_latency cycles) is charged to the touch that started it: a touch of the
  // line before it has finished waking waits nothing more (the model's rule, docs/rtl-cosim.md).
  const uint32_t wake = 5;
  DrowsyLineControllerTransactor t(timeoutSettings(20, wake), 32, 4, 1);
  const auto first = t.touch(0, 0, 50, false);
  EXPECT_TRUE(first.wake);
  EXPECT_EQ(first.waitCycles, wake);
  const auto during = t.touch(0, 0, 50 + wake - 3, false);  // still waking
  EXPECT_FALSE(during.wake);
  EXPECT_EQ(during.waitCycles, 0u);
  // The model agrees.
  DrowsyLineController::Params mp;
  mp.policy = DrowsyPolicy::Timeout;
  mp.onCycles = 20;
  mp.wakeLatency = wake;
  mp.sets = 32;
  mp.ways = 4;
  DrowsyLineController m(mp);
  EXPECT_TRUE(m.touch(0, 0, 50, false).wake);
  EXPECT_FALSE(m.touch(0, 0, 50 + wake - 3, false).wake);
}

TEST(RtlDrowsyController, DrowsyAfterAccessWakesAgainInTheNextCycle) {
  const uint32_t wake = 4;
  auto blk = rtl::makeDrowsyLineControllerBlock(128);
  DrowsyLineControllerPins& p = programmed(blk, afterAccessSettings(wake));
  clockBlock(p, 7);
  EXPECT_TRUE(p.wake);
  EXPECT_TRUE(p.drowsy(7));  // DROWSY again from the next cycle
  EXPECT_TRUE(p.quiet);      // nothing left to count
  clockBlock(p, 7);          // the next cycle, while still waking: a new wake-up
  EXPECT_TRUE(p.wake);
  EXPECT_EQ(p.waitCycles, wake);

  DrowsyLineControllerTransactor t(afterAccessSettings(wake), 32, 4, 1);
  for (uint64_t c = 10; c < 15; ++c) EXPECT_TRUE(t.touch(1, 2, c, false).wake) << c;
  EXPECT_EQ(t.clocks(), 5u);  // one clock per touch: no idle clocks
}

TEST(RtlDrowsyController, LookAheadShortensTheWaitOfEarlyTouches) {
  DrowsyLineControllerTransactor t(timeoutSettings(10, 5, 2), 32, 4, 1);
  const auto early = t.touch(0, 0, 0, true);
  EXPECT_TRUE(early.wake);
  EXPECT_EQ(early.waitCycles, 3u);
  EXPECT_EQ(t.touch(0, 1, 1, false).waitCycles, 5u);
  DrowsyLineControllerTransactor all(timeoutSettings(10, 5, 7), 32, 4, 1);
  const auto hidden = all.touch(0, 0, 0, true);
  EXPECT_TRUE(hidden.wake);
  EXPECT_EQ(hidden.waitCycles, 0u);
}

TEST(RtlDrowsyController, IdleStretchesCostAtMostTheTimeoutInClocks) {
  const uint32_t timeout = 40;
  DrowsyLineControllerTransactor t(timeoutSettings(timeout, 1), 32, 4, 1);
  t.touch(0, 0, 0, false);
  t.touch(1, 0, 10, false);  // the latest touch: ON until 10 + timeout - 1
  const uint64_t before = t.clocks();
  EXPECT_TRUE(t.touch(0, 0, 1000000, false).wake);
  // Clocks 11 .. 10 + timeout - 1 while frame (1, 0) is ON, then one for the touch.
  EXPECT_EQ(t.clocks() - before, uint64_t(timeout - 1) + 1);
}

TEST(RtlDrowsyController, BanksAreIndependentAndTouchesOfABankComeInOrder) {
  // 4 banks of 8 sets each: set s is in bank s mod 4.
  DrowsyLineControllerTransactor t(timeoutSettings(10, 1), 32, 4, 4);
  EXPECT_EQ(t.banks(), 4u);
  EXPECT_TRUE(t.touch(4, 0, 100, false).wake);   // bank 0
  EXPECT_TRUE(t.touch(5, 0, 50, false).wake);    // bank 1: its own cycle
  EXPECT_TRUE(t.touch(8, 0, 101, false).wake);   // bank 0, another frame: drowsy
  EXPECT_FALSE(t.touch(4, 0, 105, false).wake);  // bank 0, the first frame: still ON
  EXPECT_FALSE(t.drowsy(4, 0));
  EXPECT_TRUE(t.drowsy(12, 0));                            // never touched
  EXPECT_THROW(t.touch(0, 0, 104, false), InternalError);  // bank 0 is at cycle 106
  EXPECT_THROW(DrowsyLineControllerTransactor(timeoutSettings(10, 1), 2, 4, 4), InputError);
  EXPECT_THROW(DrowsyLineControllerTransactor(timeoutSettings(10, 1), 512, 4, 1), InputError);
}

// Random touch traces over a cache of several banks (each bank's touches in increasing cycle
// order, at most one per cycle, with gaps around the timeout): the RTL's answers are the
// model's at every touch, for both policies, with and without look-ahead.
TEST(RtlDrowsyControllerVsModel, SameAnswersOnRandomTouches) {
  std::mt19937_64 rng(2026);
  for (int trial = 0; trial < 40; ++trial) {
    std::uniform_int_distribution<uint32_t> small(1, 12), wakeD(0, 6), look(0, 8);
    const bool timeoutPolicy = trial % 2 == 0;
    const uint32_t sets = 16, ways = 2, banks = 1u << (trial % 3);
    DrowsyLineSettings s = timeoutPolicy ? timeoutSettings(small(rng), wakeD(rng), look(rng))
                                         : afterAccessSettings(wakeD(rng));
    if (!timeoutPolicy) s.lookahead = look(rng);
    DrowsyLineController::Params mp;
    mp.policy = timeoutPolicy ? DrowsyPolicy::Timeout : DrowsyPolicy::AfterAccess;
    mp.onCycles = timeoutPolicy ? s.timeout : 1;
    mp.wakeLatency = s.wakeLatency;
    mp.hiddenLatency = s.wakeLatency > s.lookahead ? s.wakeLatency - s.lookahead : 0;
    mp.lookahead = s.lookahead;
    mp.sets = sets;
    mp.ways = ways;
    DrowsyLineController m(mp);
    DrowsyLineControllerTransactor r(s, sets, ways, banks);
    std::vector<uint64_t> next(banks, 1000);
    std::uniform_int_distribution<uint32_t> setD(0, sets - 1), wayD(0, ways - 1),
        gap(1, 2 * s.timeout + 4), coin(0, 1);
    for (int i = 0; i < 400; ++i) {
      const uint32_t set = setD(rng), way = wayD(rng), bank = set & (banks - 1);
      const uint64_t c = next[bank];
      next[bank] = c + gap(rng);
      const bool early = coin(rng) != 0;
      const auto mt = m.touch(set, way, c, early);
      const auto rt = r.touch(set, way, c, early);
      const std::string at = "trial " + std::to_string(trial) + " touch " + std::to_string(i) +
                             " of (" + std::to_string(set) + ", " + std::to_string(way) +
                             ") at cycle " + std::to_string(c);
      ASSERT_EQ(mt.wake, rt.wake) << at;
      ASSERT_EQ(mt.waitCycles, rt.waitCycles) << at;
    }
    if (trial == 20) {  // power-on again halfway: both forget every touch
      m.powerOn(0);
      r.powerOn(0);
      EXPECT_TRUE(r.touch(0, 0, 0, false).wake);
      EXPECT_TRUE(m.touch(0, 0, 0, false).wake);
    }
  }
}

DrowsyLineController::Params lateParams(uint32_t timeout) {
  DrowsyLineController::Params mp;
  mp.policy = DrowsyPolicy::Timeout;
  mp.onCycles = timeout;
  mp.wakeLatency = 3;
  mp.hiddenLatency = 3;
  mp.sets = 32;
  mp.ways = 4;
  return mp;
}

DrowsyLineControllerTransactor lateTransactor(uint32_t timeout) {
  return DrowsyLineControllerTransactor(timeoutSettings(timeout, 3), 32, 4, 1, [](uint32_t) {
    return rtl::makeLateDrowsyLineControllerBlock();
  });
}

// The broken variant keeps a line ON one cycle too long. On a trace whose touches of a frame
// come timeout - 1 cycles apart (both find it ON) and then exactly timeout cycles apart (the
// model wakes it, the variant does not), lockstep stops at that touch's cycle.
TEST(RtlDrowsyControllerLockstep, ALateTimeoutIsCaughtAtTheTouchOnTheThreshold) {
  const uint32_t timeout = 50;
  rtl::LockstepDrowsyLineController l(lateParams(timeout), lateTransactor(timeout), "L1 of sm2");
  const uint64_t first = 1000, second = first + timeout - 1, third = second + timeout;
  EXPECT_TRUE(l.touch(7, 1, first, false).wake);
  EXPECT_TRUE(l.touch(2, 0, first + 3, false).wake);  // another frame, far from its threshold
  EXPECT_FALSE(l.touch(7, 1, second, false).wake);
  try {
    l.touch(7, 1, third, false);
    FAIL() << "the late variant was not reported";
  } catch (const LockstepDivergence& e) {
    EXPECT_EQ(std::string(e.what()),
              "rtl lockstep: block drowsy_line_controller of L1 of sm2, bank 0 diverged at "
              "cycle " +
                  std::to_string(third) + ": wake is 1 in the model, 0 in the RTL");
  }
  // The correct block on the same trace agrees.
  rtl::LockstepDrowsyLineController ok(
      lateParams(timeout), DrowsyLineControllerTransactor(timeoutSettings(timeout, 3), 32, 4, 1),
      "L1 of sm2");
  for (uint64_t c : {first, second, third}) EXPECT_NO_THROW(ok.touch(7, 1, c, false));
  EXPECT_TRUE(ok.divergence().empty());
}

// In `verilated` the RTL decides: the late variant's answer, not the model's, is returned.
TEST(RtlDrowsyControllerVerilated, TheRtlsAnswersDrive) {
  const uint32_t timeout = 20;
  rtl::VerilatedDrowsyLineController v(lateParams(timeout), lateTransactor(timeout));
  EXPECT_TRUE(v.touch(0, 0, 0, false).wake);
  EXPECT_FALSE(v.touch(0, 0, timeout, false).wake);  // the model would wake it
  EXPECT_TRUE(v.touch(0, 0, 2 * timeout + 1, false).wake);
  // The model's last touches (the accounting's) follow the touches.
  EXPECT_EQ(v.lastTouch(0), 2u * timeout + 1);
}

// LinePower with the RTL attached counts exactly like the model on random hits and fills.
TEST(RtlDrowsyControllerInLinePower, LockstepAndVerilatedCountLikeTheModel) {
  for (const char* policy : {"timeout", "drowsy-after-access"}) {
    std::vector<std::string> sets{std::string("power.l1d.drowsy.policy=") + policy,
                                  "power.l1d.drowsy.wake_latency=3",
                                  "power.l1d.drowsy.lookahead=true"};
    if (std::string(policy) == "timeout") sets.push_back("power.l1d.drowsy.timeout_cycles=30");
    PlatformConfig cfg = loadPlatform("gtx480", sets);
    std::vector<std::unique_ptr<cache::LinePower>> lp;
    for (const char* mode : {"model", "lockstep", "verilated"})
      lp.push_back(std::make_unique<cache::LinePower>(cfg.power.l1d, cfg.sm.l1d, "power.l1d", true,
                                                      mode, "L1 of sm0"));
    std::mt19937_64 rng(5);
    std::uniform_int_distribution<uint32_t> setD(0, cfg.sm.l1d.sets - 1),
        wayD(0, cfg.sm.l1d.ways - 1), gap(1, 70), coin(0, 2);
    cache::ByteMask mask{};
    mask[0] = ~0ull;
    uint64_t c = 10;
    for (int i = 0; i < 2000; ++i) {
      c += gap(rng);
      const uint32_t set = setD(rng), way = wayD(rng), k = coin(rng);
      std::vector<uint32_t> waits;
      for (auto& p : lp)
        waits.push_back(k == 0 ? p->fill(set, way, c)
                               : p->hit(set, way, c, mask, cache::LinePower::Data::Read, k == 1));
      ASSERT_EQ(waits[0], waits[1]) << policy << " touch " << i;
      ASSERT_EQ(waits[0], waits[2]) << policy << " touch " << i;
    }
    const auto m = lp[0]->closedAt(c + 100), l = lp[1]->closedAt(c + 100),
               v = lp[2]->closedAt(c + 100);
    EXPECT_GT(m.wakeups, 0u);
    EXPECT_GT(m.hiddenWakeups, 0u);
    EXPECT_EQ(cache::toJson(m), cache::toJson(l)) << policy;
    EXPECT_EQ(cache::toJson(m), cache::toJson(v)) << policy;
  }
}

TEST(RtlDrowsyControllerConfig, ModesNeedDrowsyLinesAndFittingCaches) {
  EXPECT_EQ(loadPlatform("gtx480").rtl.drowsy_controller, "model");
  for (const char* mode : {"verilated", "lockstep"})
    for (const char* policy : {"timeout", "drowsy-after-access"})
      EXPECT_NO_THROW(loadPlatform("gtx480", {std::string("power.l2.drowsy.policy=") + policy,
                                              std::string("rtl.drowsy_controller=") + mode}));
  const auto message = [](const std::vector<std::string>& sets) -> std::string {
    try {
      loadPlatform("gtx480", sets);
    } catch (const InputError& e) {
      return e.what();
    }
    return "accepted";
  };
  EXPECT_NE(message({"rtl.drowsy_controller=lockstep"})
                .find("rtl.drowsy_controller lockstep needs drowsy lines"),
            std::string::npos);
  EXPECT_NE(message({"power.l1d.drowsy.policy=timeout", "rtl.drowsy_controller=verilated",
                     "power.l1d.drowsy.timeout_cycles=1048576"})
                .find("power.l1d.drowsy.timeout_cycles 1048576 does not fit"),
            std::string::npos);
  EXPECT_EQ(message({"power.l1d.drowsy.policy=timeout", "rtl.drowsy_controller=verilated",
                     "power.l1d.drowsy.timeout_cycles=1048575"}),
            "accepted");
  EXPECT_NE(message({"power.l2.drowsy.policy=timeout", "rtl.drowsy_controller=lockstep",
                     "l2.slice.sets=1024"})
                .find("l2.slice has 16384 line frames per bank"),
            std::string::npos);
  EXPECT_NE(message({"power.l2.drowsy.policy=timeout", "rtl.drowsy_controller=lockstep",
                     "l2.slice.sets=1024", "l2.slice.banks=8"})
                .find("l2.slice has 2048 line frames per bank"),
            std::string::npos);
  EXPECT_EQ(message({"power.l2.drowsy.policy=timeout", "rtl.drowsy_controller=lockstep",
                     "l2.slice.sets=1024", "l2.slice.banks=16"}),
            "accepted");
  EXPECT_NE(message({"power.l1d.drowsy.policy=timeout", "rtl.drowsy_controller=lockstep",
                     "sm.l1d.sets=2", "sm.l1d.banks=4"})
                .find("sm.l1d.banks 4 exceeds its 2 sets"),
            std::string::npos);
  // A stream platform's L2 slice has 4096 frames: in four banks it fits the largest block.
  EXPECT_THROW(loadPlatform("stream-4x4",
                            {"power.l2.drowsy.policy=timeout", "rtl.drowsy_controller=lockstep"}),
               InputError);
  EXPECT_NO_THROW(loadPlatform(
      "stream-4x4",
      {"power.l2.drowsy.policy=timeout", "rtl.drowsy_controller=lockstep", "l2.slice.banks=4"}));
  // The broken variant holds 128 frames: an L1's bank, not an L2 slice's 512.
  EXPECT_EQ(message({"power.l1d.drowsy.policy=timeout", "rtl.drowsy_controller=lockstep",
                     "rtl.drowsy_controller_block=drowsy_line_controller_late"}),
            "accepted");
  EXPECT_NE(message({"power.l2.drowsy.policy=timeout", "rtl.drowsy_controller=lockstep",
                     "rtl.drowsy_controller_block=drowsy_line_controller_late"})
                .find("l2.slice has 512 line frames per bank: rtl.drowsy_controller_block "
                      "drowsy_line_controller_late holds at most 128"),
            std::string::npos);
  EXPECT_NE(message({"power.l1d.drowsy.policy=timeout", "rtl.drowsy_controller=lockstep",
                     "rtl.drowsy_controller_block=drowsy_line_controller_3deep"})
                .find("rtl.drowsy_controller_block"),
            std::string::npos);
  EXPECT_NE(message({"power.l1d.drowsy.policy=timeout", "rtl.drowsy_controller=rtl"})
                .find("rtl.drowsy_controller"),
            std::string::npos);
}

}  // namespace
