#include "sm/shared_memory.hpp"

#include <algorithm>
#include <vector>

namespace gpusc::sm {

namespace {

// The general count, for any access size and for atomics.
uint32_t countConflicts(const func::MemRecord& rec, uint32_t banks, bool atomic) {
  // Words each lane touches (an 8- or 16-byte access covers several consecutive words).
  const unsigned wordsPerLane = std::max<unsigned>(1, (rec.bytes + 3) / 4);
  const uint64_t bankMask = banks - 1;
  // Distinct words (or accesses, for atomics) per bank. Each bank remembers its first word, so
  // a conflict-free or broadcast access costs one comparison per lane; only a bank holding two
  // or more distinct words searches the list of every word seen so far.
  uint8_t counts[128];
  uint64_t first[128];
  std::fill(counts, counts + banks, uint8_t(0));
  uint64_t words[32 * 4];
  uint8_t banksOf[32 * 4];
  unsigned n = 0;
  uint32_t degree = 1;
  for (uint32_t m = rec.mask; m != 0; m &= m - 1) {
    const int l = __builtin_ctz(m);
    for (unsigned k = 0; k < wordsPerLane && n < 32 * 4; ++k) {
      const uint64_t word = rec.addr[l] / 4 + k;
      const uint32_t bank = static_cast<uint32_t>(word & bankMask);
      const uint8_t c = counts[bank];
      if (c == 0) {
        first[bank] = word;
      } else if (!atomic) {
        bool seen = first[bank] == word;  // broadcast
        for (unsigned i = 0; i < n && !seen && c > 1; ++i)
          seen = banksOf[i] == bank && words[i] == word;
        if (seen) continue;
      }
      words[n] = word;
      banksOf[n++] = static_cast<uint8_t>(bank);
      counts[bank] = uint8_t(c + 1);
      degree = std::max<uint32_t>(degree, c + 1u);
    }
  }
  return degree;
}

}  // namespace

uint32_t sharedConflictDegree(const func::MemRecord& rec, uint32_t banks, bool atomic) {
  if (rec.mask == 0) return 1;
  // Most accesses read or write one word per lane and either spread over distinct banks or share
  // words (a broadcast): one pass with a bit per bank shows it, and the first bank asked for a
  // second distinct word hands the access to the general count.
  if (!atomic && rec.bytes <= 4 && banks <= 64) {
    const uint64_t bankMask = banks - 1;
    uint64_t used = 0;
    uint64_t first[64];
    for (uint32_t m = rec.mask; m != 0; m &= m - 1) {
      const uint64_t word = rec.addr[__builtin_ctz(m)] / 4;
      const uint32_t bank = static_cast<uint32_t>(word & bankMask);
      const uint64_t bit = 1ull << bank;
      if (!(used & bit)) {
        used |= bit;
        first[bank] = word;
      } else if (first[bank] != word) {
        return countConflicts(rec, banks, atomic);
      }
    }
    return 1;
  }
  return countConflicts(rec, banks, atomic);
}

}  // namespace gpusc::sm
