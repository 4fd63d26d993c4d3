// WaveSampler: sampling within a launch (sampling.mode: wave, docs/sampling.md).
//
// A wave is as many CTAs as the GPU holds at once (CTAs per SM for the launch's footprint times
// the SMs). The launch's waves are windows of its cycles: window k ends when k waves' worth of
// CTAs have finished, and its rate is the warp instructions the SMs issued in it per cycle. The
// first window is the launch's warm-up (empty pipelines, cold caches) and is never compared.
//
// When the rate is stable. Two things can make a few waves' rate a poor guide to the rest:
//   - drift: CTAs that start in lockstep drift apart over several waves, and the rate with them
//     (transpose_padded's time per wave falls by a fifth from its second wave to its sixth,
//     the last three within 2 % of each other);
//   - noise: in steady state a wave's time varies from the next (sobel's waves of 60 CTAs on
//     gtx480 take 2,039 to 2,253 cycles; transpose_padded's waves of 10 CTAs on two SMs 2,566
//     to 3,425).
// So the rate is stable when, over the last 2h waves, (1) the last h waves' rate (their
// instructions over their cycles) is within `stablePct` of the h waves' before them, and (2)
// twice the standard error of the mean wave rate over the 2h waves (the waves' relative sample
// standard deviation over sqrt(2h)) is within `stablePct` too. h starts at `windows` and grows
// with the waves' spread to the h that meets (2) (h >= 2 x spread^2 / stablePct^2), so a noisy
// launch simply runs more waves in detail.
//
// The cut. Once the rate is stable and at least a wave of CTAs has not started, the CTAs still
// to start are cut to a whole number of waves: the cycle-level model starts the others (the
// remainder of the division), all started CTAs finish in it, and the functional engine runs
// the whole waves left. Cutting at whole waves keeps the estimate right whether the launch's
// CTAs finish staggered (the GPU then works through CTAs at a steady rate) or in lockstep waves
// (where a partial last wave takes as long as a whole one): the partial wave runs in detail.
//
// Until the launch has turned the L2 over. A launch whose lines outgrow the L2 changes its rate
// when they do: before, each new line evicts one an earlier launch left (LRU replacement takes
// the least recently used, and a line the launch touches becomes its own); after, it evicts the
// launch's own, and the dirty ones among them are written back to DRAM. transpose_padded on
// stream-4x4 (8 slices of 256 KB) takes 21,300 to 23,300 cycles per 100 CTAs for its first 200
// CTAs, then 25,100 to 26,700 for the other 2,761; with an L2 four times as large the change
// comes near CTA 1,100, with one a quarter as large not at all. backprop's last launch on
// stream-11x11 (small size) takes 1,300 to 1,400 cycles per wave of 110 CTAs for 11 waves and
// then 3,846 and 5,271, once its stores' lines start to leave. So the sampler asks the L2 for a
// census at each window end: per set, the lines the launch has touched so far, and whether that
// is fewer than the set's ways but would not be at its CTAs' count over those started so far
// times as many (the set is still to turn over). While the sets still to turn over hold more
// than `stablePct` of the launch's lines, its windows are warm-up, and so is the window at
// whose end they first no longer do: the compared waves come after. (The census follows LRU's
// order; under FIFO or random replacement a set turns over gradually and the census approximates
// it. Measured over the catalog, the errors and the bound's coverage are those of LRU:
// docs/sampling.md, "Under FIFO and random replacement".)
//
// Estimate. The launch's cycles are the detailed cycles (its start to its last started CTA's
// end, which holds the launch's ramp-down) plus the functionally run CTAs' warp instructions at
// the last h waves' rate. The error bound on the extrapolated cycles is the statistical error
// of that rate (a 95 % interval: Student's t with h - 1 degrees of freedom times its standard
// error, the waves' spread over sqrt(h)) plus the drift still seen (the last h waves' rate
// against the h before, relative). To that the bound adds half a wave's cycles at the rate, for
// the drain: a launch ends with its last CTAs finishing while none start, and the cut moves
// that drain from the launch's end to the cut. A drain takes between nothing more than its
// CTAs' share of steady progress (CTAs in lockstep waves) and a wave's time more (staggered
// CTAs: the last started finishes a wave's time later while the SMs empty), so the sampled
// run's drain and the full run's differ by up to a wave's time, by half of one or less in three
// cases of four when the two lie anywhere in that range alike. (The catalog at small size on six
// platforms, docs/sampling.md: sobel on stream-8x8 ran all but its last wave in detail and
// missed by +0.40 % against a bound of 0.08 % from the rate alone, its drain at the cut taking
// 2,160 cycles after the last whole wave where the full run's took 1,669.)
//
// Pure logic: the CTA scheduler reports finished CTAs and asks whether to go on starting them.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

namespace gpusc::gpu {

class WaveSampler {
 public:
  WaveSampler(double stablePct, uint32_t windows);

  // The L2's lines the launch has touched, and those of them in sets it has yet to fill with
  // lines of its own but would at `growth` times its touches so far (cache::L2Slice::census).
  struct L2Census {
    uint64_t touched = 0, pending = 0;
  };
  // The L2 the launches run with (none: the launch's rate does not wait for it), asked at window
  // ends with growth = the launch's CTAs / the CTAs started.
  void watchL2(std::function<L2Census(double growth)> census);

  // A launch of `totalCtas` starts at cycle `start`, `ctasPerWave` at once.
  void begin(uint64_t totalCtas, uint64_t ctasPerWave, uint64_t start);
  // The launch may run `cycles` cycles at most (what the run's cycle limit leaves it): no cut is
  // made whose launch would end, at the compared waves' mean length, that many cycles after its
  // start or later. The CTAs then all run in detail, and the limit stops the launch at its cycle.
  void limitCycles(uint64_t cycles) { maxCycles_ = cycles; }
  // A CTA finished at cycle `now`: `finished` have, `started` have started; `insts()` gives the
  // warp instructions the launch has issued so far (called at window ends only). Returns how
  // many CTAs start in all once the rate is stable (at most once per launch; the caller starts
  // no CTA beyond that), else nothing.
  std::optional<uint64_t> ctaFinished(uint64_t now, uint64_t finished, uint64_t started,
                                      const std::function<uint64_t()>& insts);

  struct Window {
    uint64_t start = 0, end = 0;  // cycles
    uint64_t insts = 0;           // warp instructions issued in it
    double ipc() const { return end > start ? double(insts) / double(end - start) : 0.0; }
  };
  // Whether it stopped the CTAs from starting, and how many start in all.
  bool stopped() const { return stoppedAt_.has_value(); }
  uint64_t ctasDetailed() const { return stoppedAt_.value_or(total_); }
  uint64_t ctasPerWave() const { return perWave_; }
  const std::vector<Window>& windows() const { return windows_; }
  // The windows that could not be compared: the first and, for a launch that turned the L2
  // over, every one up to that in which it did.
  uint64_t warmupWindows() const { return firstCompared_; }

  struct Estimate {
    double cycles = 0;          // the launch's: detailed plus extrapolated
    double extrapolated = 0;    // the functionally run CTAs' cycles
    double ipc = 0;             // the rate they were extrapolated at
    double boundPct = 0;        // error bound, in % of `cycles`
    std::vector<double> rates;  // the compared windows' warp instructions per cycle
    uint32_t half = 0;          // h: the rate is the last h windows'
    double driftPct = 0;        // the last h windows' rate against the h before, in %
  };
  // After a stopped launch: its `detailedCycles` and the functionally run CTAs' `restInsts`.
  Estimate estimate(uint64_t detailedCycles, uint64_t restInsts) const;

  // Relative spread of `v`: sample standard deviation over the mean (0 for fewer than two).
  static double relativeSpread(const std::vector<double>& v);

 private:
  // The last 2 x `half` windows (half_ at the stop); none unless they all follow the warm-up.
  std::vector<Window> compared(size_t half) const;
  // Whether the windows from now on may be compared as far as the L2 goes: false (and the
  // windows so far are warm-up) while the launch, `started` CTAs in, has yet to turn over sets
  // of the L2 holding more than stablePct of its lines, or did so in the window just closed.
  bool l2Settled(uint64_t started);
  // Warp instructions per cycle over windows [from, to).
  static double rate(std::vector<Window>::const_iterator from,
                     std::vector<Window>::const_iterator to);

  const double stablePct_;
  const uint32_t compare_;  // the least h
  size_t half_ = 0;         // h at the stop
  uint64_t total_ = 0, perWave_ = 1;
  uint64_t maxCycles_ = ~uint64_t(0);     // limitCycles
  uint64_t lastEnd_ = 0, lastInsts_ = 0;  // where the current window starts
  std::vector<Window> windows_;
  size_t firstCompared_ = 1;  // windows before it are warm-up
  std::function<L2Census(double)> l2Census_;
  bool l2Waiting_ = false;  // the last census found sets still to turn over
  std::optional<uint64_t> stoppedAt_;
};

}  // namespace gpusc::gpu
