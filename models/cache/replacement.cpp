#include "cache/replacement.hpp"

#include <algorithm>

namespace gpusc::cache {

LruReplacement::LruReplacement(uint32_t sets, uint32_t ways)
    : ways_(ways), stamps_(size_t(sets) * ways, 0) {}

uint32_t LruReplacement::victim(uint32_t set, uint32_t ways) {
  const uint64_t* s = &stamps_[size_t(set) * ways_];
  uint32_t v = 0;
  for (uint32_t w = 1; w < ways; ++w)
    if (s[w] < s[v]) v = w;
  return v;
}

void LruReplacement::reset() {
  std::fill(stamps_.begin(), stamps_.end(), 0);
  clock_ = 0;
}

const ReplacementRegistry& replacementPolicies() {
  static const ReplacementRegistry registry(
      "replacement policy",
      {
          {"lru", "evicts the least recently used line",
           [](uint32_t sets, uint32_t ways, uint64_t) {
             return std::unique_ptr<ReplacementPolicy>(new LruReplacement(sets, ways));
           }},
          {"fifo", "evicts the line filled longest ago",
           [](uint32_t sets, uint32_t ways, uint64_t) {
             return std::unique_ptr<ReplacementPolicy>(new FifoReplacement(sets, ways));
           }},
          {"random", "evicts a random line (fixed seed: reproducible)",
           [](uint32_t, uint32_t, uint64_t seed) {
             return std::unique_ptr<ReplacementPolicy>(new RandomReplacement(seed));
           }},
      });
  return registry;
}

}  // namespace gpusc::cache
