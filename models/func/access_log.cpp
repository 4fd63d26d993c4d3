#include "func/access_log.hpp"

#include <algorithm>

#include "common/error.hpp"

namespace gpusc::func {

AccessLog::AccessLog(size_t capacity) : capacity_(std::max<size_t>(capacity, 1)) {}

void AccessLog::record(const MemRecord& r) {
  if (r.mask == 0 || r.space != MemSpace::Global) return;
  const bool write = r.write || r.atomic;
  const uint64_t bytes = std::max<uint64_t>(r.bytes, 1);
  uint64_t firstByte, lastByte;
  if (denseSpan(r, firstByte, lastByte)) {
    // Every sector from the first byte's to the last byte's: the loop below would log each of
    // their lines once, in ascending order, with those sectors.
    constexpr uint64_t kPerLine = 1u << (kLineBits - kSectorBits);
    const uint64_t first = firstByte >> kSectorBits, last = lastByte >> kSectorBits;
    for (uint64_t l = first / kPerLine; l <= last / kPerLine; ++l) {
      const uint64_t lo = std::max(first, l * kPerLine) - l * kPerLine,
                     hi = std::min(last, l * kPerLine + kPerLine - 1) - l * kPerLine;
      push(l, uint8_t(((2u << hi) - 1) & ~((1u << lo) - 1)), write);
    }
    return;
  }
  uint64_t line = ~0ull;
  uint8_t sectors = 0;
  for (uint32_t m = r.mask; m != 0; m &= m - 1) {
    const uint64_t a = r.addr[__builtin_ctz(m)];
    for (uint64_t s = a >> kSectorBits, last = (a + bytes - 1) >> kSectorBits; s <= last; ++s) {
      const uint64_t l = s >> (kLineBits - kSectorBits);
      if (l != line) {
        if (sectors != 0) push(line, sectors, write);
        line = l;
        sectors = 0;
      }
      sectors |= uint8_t(1u << (s & ((1u << (kLineBits - kSectorBits)) - 1)));
    }
  }
  if (sectors != 0) push(line, sectors, write);
}

void AccessLog::mergeByCta(const std::vector<const AccessLog*>& parts) {
  std::vector<Entry> all;
  for (const AccessLog* p : parts) {
    if (p->capacity_ < capacity_)
      throw InternalError("AccessLog::mergeByCta: a part keeps fewer entries than the log");
    p->forEach([&](const Entry& e) { all.push_back(e); });
  }
  // Stable: a CTA's entries come from one part, in the order it logged them.
  std::stable_sort(all.begin(), all.end(),
                   [](const Entry& a, const Entry& b) { return a.cta < b.cta; });
  const size_t keep = std::min(all.size(), capacity_);
  for (size_t i = all.size() - keep; i < all.size(); ++i) {
    cta_ = all[i].cta;
    push(all[i].line, all[i].sectors, all[i].write);
  }
}

void AccessLog::append(const AccessLog& other) {
  other.forEach([&](const Entry& e) {
    cta_ = e.cta;
    push(e.line, e.sectors, e.write);
  });
}

}  // namespace gpusc::func
