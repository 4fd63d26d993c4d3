#include "gpu/wave_sampler.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

#include "common/statistics.hpp"

namespace gpusc::gpu {

WaveSampler::WaveSampler(double stablePct, uint32_t windows)
    : stablePct_(stablePct), compare_(std::max(2u, windows)) {}

void WaveSampler::watchL2(std::function<L2Census(double growth)> census) {
  l2Census_ = std::move(census);
}

void WaveSampler::begin(uint64_t totalCtas, uint64_t ctasPerWave, uint64_t start) {
  total_ = totalCtas;
  perWave_ = std::max<uint64_t>(1, ctasPerWave);
  lastEnd_ = start;
  lastInsts_ = 0;
  windows_.clear();
  stoppedAt_.reset();
  half_ = 0;
  firstCompared_ = 1;
  l2Waiting_ = false;
}

bool WaveSampler::l2Settled(uint64_t started) {
  if (!l2Census_ || started == 0) return true;
  const L2Census c = l2Census_(double(total_) / double(started));
  const bool waiting = double(c.pending) > stablePct_ / 100.0 * double(c.touched);
  const bool settled = !waiting && !l2Waiting_;  // the window it settled in is warm-up too
  l2Waiting_ = waiting;
  if (!settled) firstCompared_ = windows_.size();
  return settled;
}

std::vector<WaveSampler::Window> WaveSampler::compared(size_t half) const {
  if (half == 0 || windows_.size() < firstCompared_ + 2 * half) return {};
  return {windows_.end() - ptrdiff_t(2 * half), windows_.end()};
}

double WaveSampler::rate(std::vector<Window>::const_iterator from,
                         std::vector<Window>::const_iterator to) {
  uint64_t insts = 0, cycles = 0;
  for (auto it = from; it != to; ++it) {
    insts += it->insts;
    cycles += it->end - it->start;
  }
  return cycles ? double(insts) / double(cycles) : 0.0;
}

double WaveSampler::relativeSpread(const std::vector<double>& v) {
  if (v.size() < 2) return 0.0;
  double mean = 0;
  for (double x : v) mean += x;
  mean /= double(v.size());
  if (mean <= 0) return 0.0;
  double ss = 0;
  for (double x : v) ss += (x - mean) * (x - mean);
  return std::sqrt(ss / double(v.size() - 1)) / mean;
}

std::optional<uint64_t> WaveSampler::ctaFinished(uint64_t now, uint64_t finished, uint64_t started,
                                                 const std::function<uint64_t()>& insts) {
  if (stoppedAt_ || finished % perWave_ != 0) return std::nullopt;
  const uint64_t n = insts();
  windows_.push_back(Window{lastEnd_, now, n - lastInsts_});
  lastEnd_ = now;
  lastInsts_ = n;
  // Stopping gains nothing unless a wave of CTAs is still to start.
  if (total_ - started < perWave_) return std::nullopt;
  if (!l2Settled(started)) return std::nullopt;
  const double tol = stablePct_ / 100.0;
  if (tol <= 0) return std::nullopt;
  for (size_t h = compare_;;) {
    const std::vector<Window> w = compared(h);
    if (w.empty()) return std::nullopt;  // not enough waves yet
    std::vector<double> r;
    for (const Window& x : w) r.push_back(x.ipc());
    const double spread = relativeSpread(r);
    // (2): 2 x spread / sqrt(2h) <= tol, i.e. h >= 2 x spread^2 / tol^2.
    const auto needed = size_t(std::ceil(2.0 * spread * spread / (tol * tol)));
    if (needed > h) {
      h = needed;  // a noisier launch: compare more waves (if it has run them)
      continue;
    }
    // (1): no drift between the halves.
    const double before = rate(w.begin(), w.begin() + ptrdiff_t(h));
    const double last = rate(w.begin() + ptrdiff_t(h), w.end());
    if (last <= 0 || std::abs(last - before) > tol * last) return std::nullopt;
    // The launch's end at the compared waves' mean length: a wave's worth of CTAs finishes per
    // window.
    double windowCycles = 0;
    for (const Window& x : w) windowCycles += double(x.end - x.start);
    windowCycles /= double(w.size());
    const double end = double(now - windows_.front().start) +
                       windowCycles * double(total_ - finished) / double(perWave_);
    if (end >= double(maxCycles_)) return std::nullopt;
    half_ = h;
    break;
  }
  stoppedAt_ = started + (total_ - started) % perWave_;  // whole waves left to extrapolate
  return stoppedAt_;
}

WaveSampler::Estimate WaveSampler::estimate(uint64_t detailedCycles, uint64_t restInsts) const {
  Estimate e;
  const std::vector<Window> w = compared(half_);
  e.half = uint32_t(half_);
  e.cycles = double(detailedCycles);
  if (w.empty()) return e;  // not stopped: nothing extrapolated
  for (const Window& x : w) e.rates.push_back(x.ipc());
  const auto mid = w.begin() + ptrdiff_t(half_);
  e.ipc = rate(mid, w.end());
  const double before = rate(w.begin(), mid);
  e.driftPct = e.ipc > 0 ? 100.0 * std::abs(e.ipc - before) / e.ipc : 0.0;
  e.extrapolated = e.ipc > 0 ? double(restInsts) / e.ipc : 0.0;
  e.cycles += e.extrapolated;
  // The last h waves' rate: its statistical error (a 95 % interval of the mean of h rates, whose
  // spread is estimated from the same h: Student's t with h - 1 degrees of freedom times the
  // standard error) plus the drift seen.
  const double rel =
      studentT95(half_ - 1) *
          relativeSpread(std::vector<double>(e.rates.begin() + ptrdiff_t(half_), e.rates.end())) /
          std::sqrt(double(half_)) +
      e.driftPct / 100.0;
  // The launch's drain (its last CTAs finishing while none start) comes at the cut instead of
  // at its end: half a wave's cycles at that rate (the cut leaves whole waves, at least one).
  const double drain = 0.5 * e.extrapolated * double(perWave_) / double(total_ - *stoppedAt_);
  e.boundPct = e.cycles > 0 ? 100.0 * (rel * e.extrapolated + drain) / e.cycles : 0.0;
  return e;
}

}  // namespace gpusc::gpu
