// Replacement policies of the data caches, chosen by name (CacheConfig::replacement) through a
// Registry:
//
//   lru     evicts the way used least recently (a hit or a fill counts as a use)
//   fifo    evicts the way filled longest ago (hits do not change the order)
//   random  evicts a uniformly chosen way, from a generator with a fixed seed, so a run is
//           reproducible
//
// A policy is only asked for a victim when every way of the set holds a valid line; the cache
// fills invalid ways first (lowest way number first).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/registry.hpp"
#include "common/rng.hpp"

namespace gpusc::cache {

class ReplacementPolicy {
 public:
  virtual ~ReplacementPolicy() = default;
  // A hit on (set, way).
  virtual void touched(uint32_t set, uint32_t way) = 0;
  // A line was placed in (set, way).
  virtual void filled(uint32_t set, uint32_t way) = 0;
  // The way to evict from a full set, among its first `ways` ways (fewer than the cache has
  // while a unified L1 lends ways to shared memory).
  virtual uint32_t victim(uint32_t set, uint32_t ways) = 0;
  // Power-on state (a new Device): forgets all history, restarts the random sequence.
  virtual void reset() = 0;
};

// Factories take (sets, ways, seed); only "random" uses the seed.
using ReplacementRegistry = Registry<ReplacementPolicy, uint32_t, uint32_t, uint64_t>;
const ReplacementRegistry& replacementPolicies();

// Least recently used: a use stamp per line; the victim has the smallest stamp.
class LruReplacement : public ReplacementPolicy {
 public:
  LruReplacement(uint32_t sets, uint32_t ways);
  void touched(uint32_t set, uint32_t way) override { stamp(set, way); }
  void filled(uint32_t set, uint32_t way) override { stamp(set, way); }
  uint32_t victim(uint32_t set, uint32_t ways) override;
  void reset() override;

 protected:
  void stamp(uint32_t set, uint32_t way) { stamps_[size_t(set) * ways_ + way] = ++clock_; }
  uint32_t ways_;
  std::vector<uint64_t> stamps_;
  uint64_t clock_ = 0;
};

// First in, first out: the same stamps, but only fills set them.
class FifoReplacement : public LruReplacement {
 public:
  using LruReplacement::LruReplacement;
  void touched(uint32_t, uint32_t) override {}
};

class RandomReplacement : public ReplacementPolicy {
 public:
  explicit RandomReplacement(uint64_t seed) : seed_(seed), rng_(seed) {}
  void touched(uint32_t, uint32_t) override {}
  void filled(uint32_t, uint32_t) override {}
  uint32_t victim(uint32_t, uint32_t ways) override { return rng_.below(ways); }
  void reset() override { rng_ = Rng(seed_); }

 private:
  uint64_t seed_;
  Rng rng_;
};

}  // namespace gpusc::cache
