// Sampling within a launch (sampling.mode wave, docs/sampling.md): the wave sampler's stop rule,
// cut, estimate and bound on synthetic CTA completions (wave-sampled runs of the catalog are in
// test_sampling.cpp).
#include <gtest/gtest.h>

#include <cmath>

#include "gpu/wave_sampler.hpp"

using namespace gpusc;
using gpu::WaveSampler;

namespace {

// Drives `w` through a launch of `total` CTAs, `perWave` at once, in lockstep waves: wave k
// (from 1) takes cycles[k-1] and issues `instsPerWave` warp instructions; every CTA of a wave
// finishes at its end and the next wave's start at once. Returns the CTAs started in all.
// With `l2Lines`, the launch has an L2 of one set of that many ways, full of an earlier
// launch's lines, and each CTA touches `linesPerCta` new ones as it starts (the census
// cache::L2Slice::census takes of such a set).
uint64_t drive(WaveSampler& w, uint64_t total, uint64_t perWave,
               const std::vector<uint64_t>& cycles, uint64_t instsPerWave, uint64_t l2Lines = 0,
               uint64_t linesPerCta = 0) {
  uint64_t now = 0, insts = 0, started = std::min(total, perWave), finished = 0, limit = total;
  if (l2Lines)
    w.watchL2([&](double growth) {
      WaveSampler::L2Census c;
      c.touched = std::min(l2Lines, linesPerCta * started);
      if (c.touched < l2Lines && double(c.touched) * growth >= double(l2Lines))
        c.pending = c.touched;
      return c;
    });
  w.begin(total, perWave, 0);
  for (size_t k = 0; finished < started; ++k) {
    const uint64_t inWave = started - finished;
    now += cycles.at(std::min(k, cycles.size() - 1));
    insts += instsPerWave * inWave / perWave;
    for (uint64_t c = 0; c < inWave; ++c) {
      ++finished;
      if (const auto cut = w.ctaFinished(now, finished, started, [&] { return insts; })) {
        EXPECT_EQ(limit, total) << "cut twice";
        limit = *cut;
      }
    }
    started = std::min(limit, started + perWave);
  }
  return started;
}

}  // namespace

TEST(WaveSampler, StopsWhenTheLastWavesRateMatchesTheWavesBefore) {
  // 100 waves of 10 CTAs; a warm-up wave of 300 cycles, then 100 cycles each (10 insts/cycle).
  WaveSampler w(2.0, 2);
  const uint64_t started = drive(w, 1000, 10, {300, 100}, 1000);
  ASSERT_TRUE(w.stopped());
  // Windows 2-3 against 4-5 agree at the end of wave 5: 50 CTAs started, 950 left (whole waves).
  EXPECT_EQ(started, 50u);
  EXPECT_EQ(w.ctasDetailed(), 50u);
  ASSERT_EQ(w.windows().size(), 5u);
  EXPECT_DOUBLE_EQ(w.windows()[0].ipc(), 1000.0 / 300.0);
  const WaveSampler::Estimate e = w.estimate(700, 95000);
  EXPECT_DOUBLE_EQ(e.ipc, 10.0);
  EXPECT_DOUBLE_EQ(e.extrapolated, 9500.0);
  EXPECT_DOUBLE_EQ(e.cycles, 10200.0);
  // The compared waves are identical: the bound is the drain's, half a wave (10 CTAs of the
  // 950 extrapolated in 9,500 cycles).
  EXPECT_DOUBLE_EQ(e.boundPct, 100.0 * 0.5 * 9500.0 * 10 / 950 / 10200.0);
}

TEST(WaveSampler, WaitsWhileTheRateStillDrifts) {
  // Each wave 3 % faster than the one before until wave 8, then steady: consecutive waves are
  // within 3 %, but two pairs of waves differ by more than 2 % until the drift has stopped.
  std::vector<uint64_t> cycles = {300};
  double c = 100;
  for (int k = 0; k < 7; ++k) cycles.push_back(uint64_t(std::llround(c *= 0.97)));
  WaveSampler w(2.0, 2);
  drive(w, 1000, 10, cycles, 1000);
  ASSERT_TRUE(w.stopped());
  // The last two waves before the stop ran at the steady rate.
  const auto& win = w.windows();
  ASSERT_GE(win.size(), 5u);
  EXPECT_EQ(win[win.size() - 1].end - win[win.size() - 1].start, cycles.back());
  EXPECT_EQ(win[win.size() - 2].end - win[win.size() - 2].start, cycles.back());
  EXPECT_GT(win.size(), 8u);
}

TEST(WaveSampler, CutsTheLaunchAtWholeWavesAndNeverWithLessThanAWaveLeft) {
  // 57 CTAs in waves of 10: stable after wave 5 (50 started), 7 left: less than a wave, so no
  // stop; the whole launch runs in detail.
  WaveSampler a(2.0, 2);
  EXPECT_EQ(drive(a, 57, 10, {300, 100}, 1000), 57u);
  EXPECT_FALSE(a.stopped());
  EXPECT_EQ(a.ctasDetailed(), 57u);
  // 1003 CTAs: at the stop 50 have started; 953 left = 95 waves and 3 CTAs: the 3 start too.
  WaveSampler b(2.0, 2);
  EXPECT_EQ(drive(b, 1003, 10, {300, 100}, 1000), 53u);
  EXPECT_EQ(b.ctasDetailed(), 53u);
  EXPECT_EQ((1003 - b.ctasDetailed()) % 10, 0u);
}

TEST(WaveSampler, BoundIsTheRatesStandardErrorAndDriftOnTheExtrapolatedPart) {
  // Waves of 100 and 101 cycles alternate: a spread of 0.7 %, drift 0 between pairs.
  WaveSampler w(2.0, 2);
  drive(w, 1000, 10, {300, 100, 101, 100, 101, 100, 101}, 1000);
  ASSERT_TRUE(w.stopped());
  const WaveSampler::Estimate e = w.estimate(1000, 90000);
  ASSERT_EQ(e.half, 2u);
  ASSERT_EQ(e.rates.size(), 4u);
  EXPECT_DOUBLE_EQ(e.driftPct, 0.0);
  const double spread = WaveSampler::relativeSpread({e.rates[2], e.rates[3]});
  EXPECT_GT(spread, 0.0);
  // A 95 % interval of the mean of two rates: t(1) = 12.706 standard errors.
  const uint64_t rest = 1000 - w.ctasDetailed();
  EXPECT_NEAR(e.boundPct,
              100.0 *
                  (12.7062047 * spread / std::sqrt(2.0) * e.extrapolated +
                   0.5 * e.extrapolated * 10 / double(rest)) /
                  e.cycles,
              1e-5);
  EXPECT_DOUBLE_EQ(e.cycles, 1000.0 + e.extrapolated);
  EXPECT_NEAR(e.extrapolated, 90000.0 / e.ipc, 1e-6);
}

TEST(WaveSampler, ComparesMoreWavesWhenTheyAreNoisy) {
  // Waves alternate 90 and 110 cycles (a 10 % spread of their rates, no drift): h must reach
  // about 2 x 0.1^2 / 0.02^2 = 50 before twice the mean's standard error is within 2 %.
  std::vector<uint64_t> cycles = {300};
  for (int k = 0; k < 400; ++k) cycles.push_back(k % 2 ? 110 : 90);
  WaveSampler w(2.0, 2);
  drive(w, 4000, 10, cycles, 1000);
  ASSERT_TRUE(w.stopped());
  const WaveSampler::Estimate e = w.estimate(0, 0);
  EXPECT_GE(e.half, 45u);
  EXPECT_LE(2.0 * WaveSampler::relativeSpread(e.rates) / std::sqrt(2.0 * e.half), 0.02);
  EXPECT_EQ(w.windows().size(), 2 * size_t(e.half) + 1);
  // A quiet launch stops at the least h.
  WaveSampler q(2.0, 2);
  drive(q, 4000, 10, {300, 100}, 1000);
  EXPECT_EQ(q.windows().size(), 5u);
}

TEST(WaveSampler, ComparesOnlyWavesAfterTheLaunchHasTurnedTheL2Over) {
  // 100 waves of 10 CTAs, an L2 of 1,000 lines, 10 new lines touched per CTA: the launch turns
  // the L2 over in wave 10 (100 CTAs started); its waves take 100 cycles until then and 120
  // after (write-backs of its own dirty lines).
  std::vector<uint64_t> cycles = {300};
  for (int k = 2; k <= 10; ++k) cycles.push_back(100);
  cycles.push_back(120);
  WaveSampler w(2.0, 2);
  const uint64_t started = drive(w, 1000, 10, cycles, 1000, 1000, 10);
  ASSERT_TRUE(w.stopped());
  // Waves 1 to 10 are warm-up; 11-12 against 13-14 agree at the end of wave 14.
  EXPECT_EQ(w.warmupWindows(), 10u);
  EXPECT_EQ(started, 140u);
  const WaveSampler::Estimate e = w.estimate(0, 0);
  EXPECT_DOUBLE_EQ(e.ipc, 1000.0 / 120.0);
  // Without the L2 the sampler stops in the fast waves and extrapolates at their rate.
  WaveSampler blind(2.0, 2);
  EXPECT_EQ(drive(blind, 1000, 10, cycles, 1000), 50u);
  EXPECT_DOUBLE_EQ(blind.estimate(0, 0).ipc, 10.0);
  // A launch whose lines fit (1 per CTA: 1,000 in all, in an L2 of 1,001) stops as early.
  WaveSampler fits(2.0, 2);
  EXPECT_EQ(drive(fits, 1000, 10, cycles, 1000, 1001, 1), 50u);
  EXPECT_EQ(fits.warmupWindows(), 1u);
  // One that would, but slowly (2 per CTA: the L2 turns over in wave 50), waits for it too.
  WaveSampler slow(2.0, 2);
  EXPECT_EQ(drive(slow, 1000, 10, cycles, 1000, 1000, 2), 540u);
  EXPECT_EQ(slow.warmupWindows(), 50u);
}

// With a cycle limit (the run's limits.max_cycles), no cut is made whose launch would end at the
// limit or later at the compared waves' mean length: the launch then runs every CTA in detail.
// One cycle more and the cut is the one made without a limit.
TEST(WaveSampler, MakesNoCutWhoseLaunchWouldEndAtTheCycleLimit) {
  // As above: 100 waves of 10 CTAs, a warm-up wave of 300 cycles, then 100 cycles each. At the
  // end of any wave k the launch would end at 300 + (k - 1) x 100 + (100 - k) x 100 = 10,200.
  WaveSampler free(2.0, 2), atEnd(2.0, 2), pastEnd(2.0, 2);
  atEnd.limitCycles(10200);
  pastEnd.limitCycles(10201);
  EXPECT_EQ(drive(free, 1000, 10, {300, 100}, 1000), 50u);
  EXPECT_EQ(drive(atEnd, 1000, 10, {300, 100}, 1000), 1000u);
  EXPECT_FALSE(atEnd.stopped());
  EXPECT_EQ(drive(pastEnd, 1000, 10, {300, 100}, 1000), 50u);
  EXPECT_EQ(pastEnd.ctasDetailed(), free.ctasDetailed());
}
