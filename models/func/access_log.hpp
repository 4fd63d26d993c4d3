// AccessLog: the global-memory lines a functional run touched last, for warming the L2 after
// sampled simulation ran part of a launch (or a whole launch) in the functional engine
// (docs/sampling.md, "What the caches hold").
//
// A ring of the latest entries, oldest first: each names a 128-byte line, the 32-byte sectors
// of it one warp instruction touched and whether it wrote them (stores and atomics: the L2
// performs atomics). A warp instruction logs one entry per line it touches, in lane order.
#pragma once

#include <cstdint>
#include <vector>

#include "func/state.hpp"

namespace gpusc::func {

class AccessLog {
 public:
  static constexpr uint32_t kLineBits = 7;    // 128-byte lines
  static constexpr uint32_t kSectorBits = 5;  // 32-byte sectors: 4 per line
  struct Entry {
    uint64_t line;    // address >> kLineBits
    uint8_t sectors;  // bit s: sector s of the line
    bool write;
    uint32_t cta;  // the tag set when it was logged (setCta): which CTA made the access
  };

  // Keeps the latest `capacity` entries (at least 1). The ring grows as entries come, up to
  // that: a log that takes few costs little.
  explicit AccessLog(size_t capacity);

  // Logs the global accesses of `r` (a warp instruction's MemRecord); others are ignored.
  void record(const MemRecord& r);
  // Entries logged in all (of a merge: those it took), and those kept (the latest
  // min(logged, capacity)).
  uint64_t logged() const { return logged_; }
  size_t capacity() const { return capacity_; }
  size_t size() const { return ring_.size(); }  // min(logged, capacity)
  // Calls f(entry) for every kept entry, oldest first.
  template <class F>
  void forEach(F&& f) const {
    const size_t n = ring_.size();
    size_t i = logged_ < capacity_ ? 0 : size_t(logged_ % capacity_);
    for (size_t k = 0; k < n; ++k) {
      f(ring_[i]);
      if (++i == n) i = 0;
    }
  }
  void clear() {
    logged_ = 0;
    ring_.clear();  // keeps its allocation
  }

  // The tag of the entries logged from now on: the CTA (relative to the first of its run) whose
  // warp instructions they come from, when several logs share a launch (mergeByCta).
  void setCta(uint32_t cta) { cta_ = cta; }
  // Logs, after what this log holds, the entries of `parts` ordered by their tags, as one
  // log would have kept them had the CTAs run one after another in tag order. Each part must
  // have logged its CTAs in ascending tag order, each CTA in one part only, with this log's
  // capacity at least (a part then holds every entry of its own that is among the latest of
  // all).
  void mergeByCta(const std::vector<const AccessLog*>& parts);
  // Logs, after what this log holds, the entries `other` keeps, in its order, with their tags.
  void append(const AccessLog& other);

 private:
  void push(uint64_t line, uint8_t sectors, bool write) {
    if (ring_.size() < capacity_)
      ring_.push_back(Entry{line, sectors, write, cta_});
    else
      ring_[size_t(logged_ % capacity_)] = Entry{line, sectors, write, cta_};
    ++logged_;
  }
  size_t capacity_;
  std::vector<Entry> ring_;  // size min(logged_, capacity_)
  uint64_t logged_ = 0;
  uint32_t cta_ = 0;
};

}  // namespace gpusc::func
