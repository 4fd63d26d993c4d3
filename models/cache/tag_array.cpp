#include "cache/tag_array.hpp"

namespace gpusc::cache {

TagArray::TagArray(const CacheConfig& cfg, uint64_t unit, const ReplacementRegistry& replacement)
    : sets_(cfg.sets),
      ways_(cfg.ways),
      lineBytes_(cfg.line_bytes),
      ways_v_(size_t(cfg.sets) * cfg.ways),
      policy_(
          replacement.create(cfg.replacement, cfg.sets, cfg.ways, cfg.replacement_seed + unit)) {}

uint32_t TagArray::find(uint32_t set, uint64_t tag) const {
  const Way* s = &ways_v_[size_t(set) * ways_];
  for (uint32_t w = 0; w < ways_; ++w)
    if (s[w].valid && s[w].tag == tag) return w;
  return ways_;
}

bool TagArray::access(uint64_t addr) {
  const uint32_t set = setOf(addr);
  const uint32_t way = find(set, tagOf(addr));
  if (way == ways_) return false;
  policy_->touched(set, way);
  return true;
}

bool TagArray::probe(uint64_t addr) const { return find(setOf(addr), tagOf(addr)) != ways_; }

bool TagArray::fill(uint64_t addr, uint64_t* evicted) {
  const uint64_t tag = tagOf(addr);
  const uint32_t set = setOf(addr);
  if (find(set, tag) != ways_) return false;  // already present
  Way* s = &ways_v_[size_t(set) * ways_];
  uint32_t victim = 0;
  while (victim < ways_ && s[victim].valid) ++victim;  // invalid ways first, lowest first
  const bool replaced = victim == ways_;
  if (replaced) {
    victim = policy_->victim(set, ways_);
    if (evicted) *evicted = (s[victim].tag * sets_ + set) * lineBytes_;
  }
  s[victim] = Way{tag, true};
  policy_->filled(set, victim);
  return replaced;
}

void TagArray::invalidateAll() {
  for (auto& w : ways_v_) w = Way{};
  policy_->reset();
}

}  // namespace gpusc::cache
