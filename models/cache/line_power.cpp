#include "cache/line_power.hpp"

#include <algorithm>
#include <array>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "common/bits.hpp"
#include "common/error.hpp"

namespace gpusc::cache {

double CachePowerCounters::blockUtilisation() const {
  const double lines = double(reads + writes) * double(subwordsPerLine);
  return lines > 0 ? double(readSubwords + writeSubwords) / lines : 0.0;
}

CachePowerCounters& CachePowerCounters::operator+=(const CachePowerCounters& o) {
  frames += o.frames;
  subwordsPerLine = std::max(subwordsPerLine, o.subwordsPerLine);
  lookups += o.lookups;
  reads += o.reads;
  writes += o.writes;
  fills += o.fills;
  readSubwords += o.readSubwords;
  writeSubwords += o.writeSubwords;
  fillSubwords += o.fillSubwords;
  wakeups += o.wakeups;
  hiddenWakeups += o.hiddenWakeups;
  warpRequests += o.warpRequests;
  activeThreads += o.activeThreads;
  wakeStallCycles += o.wakeStallCycles;
  windowCycles = std::max(windowCycles, o.windowCycles);
  lineCycles += o.lineCycles;
  drowsyLineCycles += o.drowsyLineCycles;
  lentLineCycles += o.lentLineCycles;
  for (size_t b = 0; b < kPowerHistogramBuckets; ++b) {
    accessCountHistogram[b] += o.accessCountHistogram[b];
    interAccessHistogram[b] += o.interAccessHistogram[b];
  }
  return *this;
}

nlohmann::json toJson(const CachePowerCounters& c) {
  // The bucket names, made once (every cache's statistics, every launch, use them).
  static const auto names = [] {
    std::array<std::array<std::string, kPowerHistogramBuckets>, 2> n;
    for (size_t b = 0; b < kPowerHistogramBuckets; ++b) {
      n[0][b] = accessCountBucketName(b);
      n[1][b] = interAccessBucketName(b);
    }
    return n;
  }();
  nlohmann::json accesses = nlohmann::json::object(), gaps = nlohmann::json::object();
  for (size_t b = 0; b < kPowerHistogramBuckets; ++b) {
    accesses[names[0][b]] = c.accessCountHistogram[b];
    gaps[names[1][b]] = c.interAccessHistogram[b];
  }
  const double readLines = double(c.reads) * double(c.subwordsPerLine);
  return nlohmann::json{
      {"frames", c.frames},
      {"subwords_per_line", c.subwordsPerLine},
      {"lookups", c.lookups},
      {"reads", c.reads},
      {"writes", c.writes},
      {"fills", c.fills},
      {"read_subwords", c.readSubwords},
      {"write_subwords", c.writeSubwords},
      {"fill_subwords", c.fillSubwords},
      {"wakeups", c.wakeups},
      {"hidden_wakeups", c.hiddenWakeups},
      {"wake_stall_cycles", c.wakeStallCycles},
      {"window_cycles", c.windowCycles},
      {"line_cycles", c.lineCycles},
      {"drowsy_line_cycles", c.drowsyLineCycles},
      {"lent_line_cycles", c.lentLineCycles},
      {"drowsy_fraction", c.lineCycles ? double(c.drowsyLineCycles) / double(c.lineCycles) : 0.0},
      {"block_utilisation", c.blockUtilisation()},
      {"warp_requests", c.warpRequests},
      {"active_threads", c.activeThreads},
      // Seed 000 Table 1: active threads of the warps whose requests reach the cache.
      {"thread_utilisation",
       c.warpRequests ? double(c.activeThreads) / (32.0 * double(c.warpRequests)) : 0.0},
      {"read_block_utilisation", readLines > 0 ? double(c.readSubwords) / readLines : 0.0},
      {"access_count_histogram", std::move(accesses)},
      {"inter_access_histogram", std::move(gaps)},
  };
}

size_t accessCountBucket(uint64_t accesses) {
  if (accesses == 0) return 0;
  const size_t k = size_t(64 - __builtin_clzll(accesses));  // 1 for 1, 2 for 2-3, ...
  return std::min(k, kPowerHistogramBuckets - 1);
}

size_t interAccessBucket(uint64_t cycles) {
  if (cycles < 2) return 0;
  const size_t k = size_t(63 - __builtin_clzll(cycles));  // 1 for 2-3, 2 for 4-7, ...
  return std::min(k, kPowerHistogramBuckets - 1);
}

std::string accessCountBucketName(size_t bucket) {
  return bucket == 0 ? "A0" : fmt::format("A{}", uint64_t(1) << (bucket - 1));
}

std::string interAccessBucketName(size_t bucket) {
  if (bucket == 0) return "0-1";
  if (bucket + 1 >= kPowerHistogramBuckets) return fmt::format("{}+", uint64_t(1) << bucket);
  return fmt::format("{}-{}", uint64_t(1) << bucket, (uint64_t(1) << (bucket + 1)) - 1);
}

uint32_t enabledSubwords(const ByteMask& mask, uint32_t subwordBytes) {
  uint32_t n = 0;
  if (subwordBytes >= 64) {  // whole words per sub-word
    const size_t words = subwordBytes / 64;
    for (size_t g = 0; g < mask.size(); g += words) {
      bool any = false;
      for (size_t k = g; k < g + words && k < mask.size(); ++k) any = any || mask[k] != 0;
      n += any ? 1 : 0;
    }
    return n;
  }
  const uint64_t firsts = ~0ull / ((1ull << subwordBytes) - 1);  // bit 0 of every sub-word
  for (uint64_t w : mask) {
    for (uint32_t s = 1; s < subwordBytes; s <<= 1) w |= w >> s;  // OR of a sub-word into its bit 0
    n += popcount64(w & firsts);
  }
  return n;
}

namespace {

DrowsyPolicy parsePolicy(const std::string& name, const std::string& key) {
  if (name == "none") return DrowsyPolicy::None;
  if (name == "drowsy-after-access") return DrowsyPolicy::AfterAccess;
  if (name == "timeout") return DrowsyPolicy::Timeout;
  throw InputError(fmt::format(
      "{}.drowsy.policy = '{}': expected none, drowsy-after-access or timeout", key, name));
}

}  // namespace

LinePower::LinePower(const CachePowerConfig& cfg, const CacheConfig& cache, const std::string& key,
                     bool lookaheadAllowed, const std::string& rtlMode, const std::string& instance,
                     const std::string& rtlBlock)
    : policy_(parsePolicy(cfg.drowsy.policy, key)),
      lookahead_(cfg.drowsy.lookahead),
      ways_(cache.ways),
      subwordBytes_(cfg.subword_bytes),
      windowAccesses_(size_t(cache.sets) * cache.ways, 0) {
  if (lookahead_ && !lookaheadAllowed)
    throw InputError(fmt::format(
        "{}.drowsy.lookahead: the warp scheduler's look-ahead wakes only L1 data cache lines "
        "(set it on power.l1d)",
        key));
  if (subwordBytes_ == 0 || (subwordBytes_ & (subwordBytes_ - 1)) != 0)
    throw InputError(
        fmt::format("{}.subword_bytes = {}: must be a power of two", key, subwordBytes_));
  if (cache.enabled && subwordBytes_ > cache.line_bytes)
    throw InputError(fmt::format("{}.subword_bytes = {}: larger than the cache's {}-byte lines",
                                 key, subwordBytes_, cache.line_bytes));
  if (cfg.drowsy.timeout_cycles == 0 && policy_ == DrowsyPolicy::Timeout)
    throw InputError(fmt::format("{}.drowsy.timeout_cycles must be at least 1", key));
  controller_ =
      makeDrowsyLineController(cfg.drowsy, policy_, lookahead_, cache, rtlMode, instance, rtlBlock);
  c_.frames = static_cast<uint32_t>(windowAccesses_.size());
  c_.subwordsPerLine = std::max(1u, cache.line_bytes / subwordBytes_);
}

uint32_t LinePower::touch(uint32_t set, uint32_t way, uint64_t t, bool byWarp, bool waits) {
  const size_t f = size_t(set) * ways_ + way;
  const uint64_t last = controller_->lastTouch(f);
  const bool hidden = lookahead_ && byWarp;
  const DrowsyLineController::Touch d = controller_->touch(set, way, t, hidden);
  const uint32_t wait = d.wake && waits ? d.waitCycles : 0;
  if (open_) {
    if (d.wake) {
      ++c_.wakeups;
      c_.hiddenWakeups += hidden ? 1 : 0;
      c_.wakeStallCycles += wait;
    }
    if (policy_ != DrowsyPolicy::None) {
      const uint64_t from = std::max(controller_->drowsyFrom(last), windowStart_);
      if (t > from) c_.drowsyLineCycles += t - from;
    }
    if (last != kNever) ++c_.interAccessHistogram[interAccessBucket(t > last ? t - last : 0)];
    ++windowAccesses_[f];
    latestTouch_ = touchedInWindow_ ? std::max(latestTouch_, t) : t;
    touchedInWindow_ = true;
  }
  return wait;
}

uint32_t LinePower::hit(uint32_t set, uint32_t way, uint64_t cycle, const ByteMask& mask, Data data,
                        bool byWarp, bool waits) {
  if (open_ && data != Data::None) {
    const uint32_t n = enabledSubwords(mask, subwordBytes_);
    if (data == Data::Read) {
      ++c_.reads;
      c_.readSubwords += n;
    } else {
      ++c_.writes;
      c_.writeSubwords += n;
    }
  }
  return touch(set, way, cycle, byWarp, waits);
}

uint32_t LinePower::fill(uint32_t set, uint32_t way, uint64_t cycle) {
  if (open_) {
    ++c_.fills;
    c_.fillSubwords += c_.subwordsPerLine;
  }
  return touch(set, way, cycle, false, true);
}

void LinePower::powerOn(uint64_t cycle) {
  controller_->powerOn(cycle);
  beginWindow(cycle);
}

void LinePower::beginWindow(uint64_t cycle) {
  const uint32_t frames = c_.frames, subwords = c_.subwordsPerLine;
  c_ = CachePowerCounters{};
  c_.frames = frames;
  c_.subwordsPerLine = subwords;
  std::fill(windowAccesses_.begin(), windowAccesses_.end(), 0);
  windowStart_ = cycle;
  latestTouch_ = 0;
  touchedInWindow_ = false;
  open_ = true;
}

void LinePower::close(CachePowerCounters& c, uint64_t cycle) const {
  uint64_t end = std::max(cycle, windowStart_);
  if (touchedInWindow_ && latestTouch_ >= end) end = latestTouch_ + 1;
  c.windowCycles = end - windowStart_;
  c.lineCycles = uint64_t(c.frames) * c.windowCycles;
  for (size_t f = 0; f < windowAccesses_.size(); ++f) {
    if (f % ways_ >= lentFrom_) c.lentLineCycles += c.windowCycles;
    if (policy_ != DrowsyPolicy::None && f % ways_ < lentFrom_) {
      const uint64_t from =
          std::max(controller_->drowsyFrom(controller_->lastTouch(f)), windowStart_);
      if (end > from) c.drowsyLineCycles += end - from;
    }
    ++c.accessCountHistogram[accessCountBucket(windowAccesses_[f])];
  }
}

void LinePower::closeWindow(uint64_t cycle) {
  if (!open_) return;
  close(c_, cycle);
  open_ = false;
}

CachePowerCounters LinePower::closedAt(uint64_t cycle) const {
  CachePowerCounters c = c_;
  if (open_) close(c, cycle);
  return c;
}

}  // namespace gpusc::cache
