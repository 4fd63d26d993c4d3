// The tag array of a set-associative cache: lookup, fill and replacement (LRU, FIFO, random).
// Used now by the instruction and constant caches; the memory-system issue builds the data
// caches (MSHRs, banks, write policies, line power states) around it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/platform_config.hpp"

namespace gpusc::cache {

class TagArray {
 public:
  explicit TagArray(const CacheConfig& cfg, uint64_t seed = 1);

  uint64_t lineAddress(uint64_t addr) const { return addr & ~uint64_t(lineBytes_ - 1); }
  uint32_t lineBytes() const { return lineBytes_; }

  // True on a hit (and updates the replacement state).
  bool access(uint64_t addr);
  // True if present, without touching the replacement state.
  bool probe(uint64_t addr) const;
  // Inserts the line of `addr` (after a miss); returns true and the evicted line address when a
  // valid line was replaced.
  bool fill(uint64_t addr, uint64_t* evicted = nullptr);
  void invalidateAll();

 private:
  struct Way {
    uint64_t tag = 0;
    uint64_t stamp = 0;  // LRU: last use; FIFO: fill time
    bool valid = false;
  };
  enum class Policy { Lru, Fifo, Random };

  uint32_t setOf(uint64_t addr) const {
    return static_cast<uint32_t>((addr / lineBytes_) & (sets_ - 1));
  }
  uint64_t tagOf(uint64_t addr) const { return addr / lineBytes_ / sets_; }

  uint32_t sets_, ways_, lineBytes_;
  Policy policy_;
  std::vector<Way> ways_v_;
  uint64_t clock_ = 0;
  uint64_t rng_;
};

}  // namespace gpusc::cache
