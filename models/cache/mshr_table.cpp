#include "cache/mshr_table.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "common/error.hpp"

namespace gpusc::cache {

namespace {
size_t indexSlots(uint32_t entries) {
  size_t n = 8;
  while (n < size_t(entries) * 2) n *= 2;  // at most half full: short probe sequences
  return n;
}
}  // namespace

MshrTable::MshrTable(uint32_t entries, uint32_t maxMerge)
    : maxMerge_(maxMerge),
      entries_(entries),
      waiters_(size_t(entries) * maxMerge, kNone),
      slots_(indexSlots(entries), kNone),
      slotMask_(slots_.size() - 1) {
  if (entries == 0 || maxMerge == 0)
    throw InternalError("MshrTable: entries and maxMerge must be positive");
  free_.reserve(entries);
  clear();
}

uint32_t MshrTable::find(uint64_t line) const {
  for (size_t i = home(line);; i = (i + 1) & slotMask_) {
    const uint32_t e = slots_[i];
    if (e == kNone) return kNone;
    if (entries_[e].line == line) return e;
  }
}

uint32_t MshrTable::allocate(uint64_t line) {
  if (free_.empty()) throw InternalError("MshrTable: allocate on a full table");
  const uint32_t e = free_.back();
  free_.pop_back();
  Entry& en = entries_[e];
  en = Entry{};
  en.line = line;
  en.used = true;
  size_t i = home(line);
  while (slots_[i] != kNone) i = (i + 1) & slotMask_;
  slots_[i] = e;
  return e;
}

void MshrTable::addWaiter(uint32_t e, uint32_t waiter) {
  Entry& en = entries_[e];
  if (!en.used || en.waiters >= maxMerge_)
    throw InternalError(fmt::format("MshrTable: no room for a waiter in entry {}", e));
  waiters_[size_t(e) * maxMerge_ + en.waiters++] = waiter;
}

size_t MshrTable::slotOf(uint32_t e) const {
  for (size_t i = home(entries_[e].line);; i = (i + 1) & slotMask_)
    if (slots_[i] == e) return i;
}

void MshrTable::release(uint32_t e) {
  if (!entries_[e].used) throw InternalError(fmt::format("MshrTable: entry {} is free", e));
  // Remove from the index with backward-shift deletion (keeps every probe sequence unbroken).
  size_t hole = slotOf(e);
  slots_[hole] = kNone;
  for (size_t j = (hole + 1) & slotMask_; slots_[j] != kNone; j = (j + 1) & slotMask_) {
    const size_t k = home(entries_[slots_[j]].line);
    // The entry at j may move into the hole unless its home lies cyclically in (hole, j].
    const bool stays = hole < j ? (k > hole && k <= j) : (k > hole || k <= j);
    if (!stays) {
      slots_[hole] = slots_[j];
      slots_[j] = kNone;
      hole = j;
    }
  }
  entries_[e] = Entry{};
  free_.push_back(e);
}

void MshrTable::clear() {
  for (auto& en : entries_) en = Entry{};
  std::fill(slots_.begin(), slots_.end(), kNone);
  free_.clear();
  // Lowest entry first: allocate() pops from the back.
  for (uint32_t e = capacity(); e-- > 0;) free_.push_back(e);
}

}  // namespace gpusc::cache
