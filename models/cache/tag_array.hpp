// The tag array of a small read-only cache (the instruction and constant caches of an SM):
// lookup, fill and replacement, with the replacement policy chosen by name from the registry the
// data caches use (replacement.hpp). It has no MSHRs, banks, dirty bits or observers: the data
// caches build those around CacheCore (cache_core.hpp).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "cache/replacement.hpp"
#include "common/platform_config.hpp"

namespace gpusc::cache {

class TagArray {
 public:
  // `unit` (the SM number) offsets cfg.replacement_seed, so each SM draws its own sequence.
  // `replacement`: where cfg.replacement is looked up (a testbench's Policies, or the built-ins).
  explicit TagArray(const CacheConfig& cfg, uint64_t unit = 0,
                    const ReplacementRegistry& replacement = replacementPolicies());

  uint64_t lineAddress(uint64_t addr) const { return addr & ~uint64_t(lineBytes_ - 1); }
  uint32_t lineBytes() const { return lineBytes_; }

  // True on a hit (and updates the replacement state).
  bool access(uint64_t addr);
  // True if present, without touching the replacement state.
  bool probe(uint64_t addr) const;
  // Inserts the line of `addr` (after a miss); returns true and the evicted line address when a
  // valid line was replaced.
  bool fill(uint64_t addr, uint64_t* evicted = nullptr);
  // Power-on state: no valid line, the replacement history forgotten.
  void invalidateAll();

 private:
  struct Way {
    uint64_t tag = 0;
    bool valid = false;
  };

  uint32_t setOf(uint64_t addr) const {
    return static_cast<uint32_t>((addr / lineBytes_) & (sets_ - 1));
  }
  uint64_t tagOf(uint64_t addr) const { return addr / lineBytes_ / sets_; }
  // The way of `set` holding `tag`, or ways_.
  uint32_t find(uint32_t set, uint64_t tag) const;

  uint32_t sets_, ways_, lineBytes_;
  std::vector<Way> ways_v_;
  std::unique_ptr<ReplacementPolicy> policy_;
};

}  // namespace gpusc::cache
