#include "cache/tag_array.hpp"

namespace gpusc::cache {

TagArray::TagArray(const CacheConfig& cfg, uint64_t seed)
    : sets_(cfg.sets),
      ways_(cfg.ways),
      lineBytes_(cfg.line_bytes),
      ways_v_(size_t(cfg.sets) * cfg.ways),
      rng_(seed) {
  policy_ = cfg.replacement == "fifo"     ? Policy::Fifo
            : cfg.replacement == "random" ? Policy::Random
                                          : Policy::Lru;
}

bool TagArray::access(uint64_t addr) {
  const uint64_t tag = tagOf(addr);
  Way* set = &ways_v_[size_t(setOf(addr)) * ways_];
  ++clock_;
  for (uint32_t w = 0; w < ways_; ++w) {
    if (set[w].valid && set[w].tag == tag) {
      if (policy_ == Policy::Lru) set[w].stamp = clock_;
      return true;
    }
  }
  return false;
}

bool TagArray::probe(uint64_t addr) const {
  const uint64_t tag = tagOf(addr);
  const Way* set = &ways_v_[size_t(setOf(addr)) * ways_];
  for (uint32_t w = 0; w < ways_; ++w)
    if (set[w].valid && set[w].tag == tag) return true;
  return false;
}

bool TagArray::fill(uint64_t addr, uint64_t* evicted) {
  const uint64_t tag = tagOf(addr);
  const uint32_t s = setOf(addr);
  Way* set = &ways_v_[size_t(s) * ways_];
  ++clock_;
  uint32_t victim = ways_;
  for (uint32_t w = 0; w < ways_; ++w) {
    if (set[w].valid && set[w].tag == tag) return false;  // already present
    if (!set[w].valid && victim == ways_) victim = w;
  }
  bool replaced = false;
  if (victim == ways_) {
    replaced = true;
    if (policy_ == Policy::Random) {
      rng_ = rng_ * 6364136223846793005ull + 1442695040888963407ull;
      victim = static_cast<uint32_t>((rng_ >> 33) % ways_);
    } else {  // LRU and FIFO both evict the smallest stamp (last use / fill time)
      victim = 0;
      for (uint32_t w = 1; w < ways_; ++w)
        if (set[w].stamp < set[victim].stamp) victim = w;
    }
    if (evicted) *evicted = (set[victim].tag * sets_ + s) * lineBytes_;
  }
  set[victim] = Way{tag, clock_, true};
  return replaced;
}

void TagArray::invalidateAll() {
  for (auto& w : ways_v_) w = Way{};
}

}  // namespace gpusc::cache
