// Miss status holding registers: one entry per line being fetched from the next level (per
// fetch of a line's sectors in a sectored cache), holding the requests waiting for it. A miss to a
// line that already has an entry merges into it (no second fetch) while the entry has fewer than
// `maxMerge` waiters; a miss that finds the table full, or its line's entry at the merge limit,
// must wait (the cache back-pressures its requester).
//
// Everything is preallocated: entries, their waiter lists (maxMerge slots each) and an
// open-addressing index from line address to entry, so a miss costs no heap allocation and a
// lookup is O(1).
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include <tlm>

namespace gpusc::cache {

class MshrTable {
 public:
  static constexpr uint32_t kNone = ~0u;

  struct Entry {
    // What the entry is found by: the address of the line being fetched or, in a sectored cache
    // (where one line may have several fetches in flight), of the first sector it fetches.
    uint64_t line = 0;
    std::array<uint64_t, 4> bytes{};            // the bytes of the line the fetch brings
    tlm::tlm_generic_payload* fetch = nullptr;  // the read sent to the next level
    uint32_t waiters = 0;                       // requests merged (the first one included)
    bool dirtyOnFill = false;                   // a write waits: the filled line is dirty
    bool used = false;
  };

  MshrTable(uint32_t entries, uint32_t maxMerge);

  uint32_t capacity() const { return static_cast<uint32_t>(entries_.size()); }
  uint32_t maxMerge() const { return maxMerge_; }
  uint32_t used() const { return capacity() - static_cast<uint32_t>(free_.size()); }
  uint32_t available() const { return static_cast<uint32_t>(free_.size()); }
  bool full() const { return free_.empty(); }

  // The entry fetching `line`, or kNone.
  uint32_t find(uint64_t line) const;
  // A new entry for `line` (which has none); the table must not be full.
  uint32_t allocate(uint64_t line);
  bool canMerge(uint32_t e) const { return entries_[e].waiters < maxMerge_; }
  // Adds a waiter (an id chosen by the cache) to entry `e`, which must have room.
  void addWaiter(uint32_t e, uint32_t waiter);
  const uint32_t* waiters(uint32_t e) const { return &waiters_[size_t(e) * maxMerge_]; }
  Entry& entry(uint32_t e) { return entries_[e]; }
  const Entry& entry(uint32_t e) const { return entries_[e]; }
  // Frees entry `e` (its line was filled).
  void release(uint32_t e);
  // Frees every entry.
  void clear();

 private:
  size_t home(uint64_t line) const {
    return static_cast<size_t>((line * 0x9e3779b97f4a7c15ull) >> 32) & slotMask_;
  }
  size_t slotOf(uint32_t e) const;

  uint32_t maxMerge_;
  std::vector<Entry> entries_;
  std::vector<uint32_t> waiters_;  // maxMerge_ per entry
  std::vector<uint32_t> free_;     // free entries, a stack
  std::vector<uint32_t> slots_;    // the index: entry number or kNone, linear probing
  size_t slotMask_;
};

}  // namespace gpusc::cache
