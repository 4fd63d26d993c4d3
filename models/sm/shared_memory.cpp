#include "sm/shared_memory.hpp"

#include <algorithm>
#include <vector>

namespace gpusc::sm {

namespace {

// The general count, for any access size and for atomics: the most distinct words (for atomics,
// the most accesses) any one bank delivers. The distinct words are found with a small hash set
// (each lane's words cost a probe or two, where comparing with every word seen so far cost up to
// 32 x 31 / 2 comparisons for a warp whose words all fall in one bank).
uint32_t countConflicts(const func::MemRecord& rec, uint32_t banks, bool atomic) {
  // Words each lane touches (an 8- or 16-byte access covers several consecutive words).
  const unsigned wordsPerLane = std::max<unsigned>(1, (rec.bytes + 3) / 4);
  const uint64_t bankMask = banks - 1;
  uint8_t counts[128];
  std::fill(counts, counts + banks, uint8_t(0));
  // At most 32 x 4 words: a set of 256 slots stays at most half full.
  constexpr unsigned kSlots = 256;
  uint64_t slotWord[kSlots];
  uint64_t used[kSlots / 64] = {};
  unsigned n = 0;
  uint32_t degree = 1;
  for (uint32_t m = rec.mask; m != 0; m &= m - 1) {
    const int l = __builtin_ctz(m);
    for (unsigned k = 0; k < wordsPerLane && n < 32 * 4; ++k) {
      const uint64_t word = rec.addr[l] / 4 + k;
      if (!atomic) {
        unsigned h = static_cast<unsigned>((word * 0x9e3779b97f4a7c15ull) >> 56);
        bool seen = false;
        while ((used[h / 64] >> (h % 64)) & 1u) {
          if (slotWord[h] == word) {
            seen = true;
            break;
          }
          h = (h + 1) % kSlots;
        }
        if (seen) continue;  // a broadcast of a word already delivered
        used[h / 64] |= 1ull << (h % 64);
        slotWord[h] = word;
      }
      ++n;
      const uint32_t bank = static_cast<uint32_t>(word & bankMask);
      counts[bank] = uint8_t(counts[bank] + 1);
      degree = std::max<uint32_t>(degree, counts[bank]);
    }
  }
  return degree;
}

}  // namespace

uint32_t sharedConflictDegree(const func::MemRecord& rec, uint32_t banks, bool atomic) {
  if (rec.mask == 0) return 1;
  // Most accesses spread over distinct banks, share words (a broadcast) or put two words in a
  // bank (an 8-byte access by a warp, or a stride of two words): one pass that remembers up to
  // two distinct units per bank class shows it, and the first class asked for a third distinct
  // unit hands the access to the general count. A unit is a word (accesses of up to 4 bytes;
  // a class is a bank) or an aligned 8-byte pair of words, whose words sit in banks 2p and
  // 2p + 1 with the same distinct pairs (a class is such a bank pair: banks / 2 classes).
  if (!atomic && (rec.bytes <= 4 || (rec.bytes == 8 && banks >= 2))) {
    const unsigned shift = rec.bytes <= 4 ? 2 : 3;
    const uint32_t classes = rec.bytes <= 4 ? banks : banks / 2;
    // First the commonest case, without the pass's branches: when every unit lies within
    // `classes` consecutive units, distinct units sit in distinct classes and the access is
    // conflict-free (consecutive words, or a broadcast, or rows of a tile shorter than a bank
    // row). One pass of min and max tells.
    uint64_t lo = ~0ull, hi = 0, offsets = 0;
    const auto span = [&](uint64_t a) {
      offsets |= a;
      const uint64_t unit = a >> shift;
      lo = std::min(lo, unit);
      hi = std::max(hi, unit);
    };
    if (rec.mask == ~0u) {
      for (uint32_t l = 0; l < 32; ++l) span(rec.addr[l]);
    } else {
      for (uint32_t m = rec.mask; m != 0; m &= m - 1) span(rec.addr[__builtin_ctz(m)]);
    }
    if (shift == 3 && (offsets & 7) != 0) return countConflicts(rec, banks, atomic);
    if (hi - lo < classes) return 1;
    if (classes <= 64) {
      const uint64_t classMask = classes - 1;
      uint64_t one = 0, two = 0;  // classes holding at least one (two) distinct units
      uint64_t first[64], second[64];
      uint32_t degree = 1;
      for (uint32_t m = rec.mask; m != 0; m &= m - 1) {
        const uint64_t a = rec.addr[__builtin_ctz(m)];
        if (shift == 3 && (a & 7) != 0) return countConflicts(rec, banks, atomic);
        const uint64_t unit = a >> shift;
        const uint32_t c = static_cast<uint32_t>(unit & classMask);
        const uint64_t bit = 1ull << c;
        if (!(one & bit)) {
          one |= bit;
          first[c] = unit;
        } else if (first[c] == unit) {
          continue;
        } else if (!(two & bit)) {
          two |= bit;
          second[c] = unit;
          degree = 2;
        } else if (second[c] != unit) {
          return countConflicts(rec, banks, atomic);
        }
      }
      return degree;
    }
  }
  return countConflicts(rec, banks, atomic);
}

}  // namespace gpusc::sm
