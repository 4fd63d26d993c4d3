#include "sm/shared_memory.hpp"

#include <algorithm>
#include <vector>

namespace gpusc::sm {

uint32_t SharedMemory::conflictDegree(const func::MemRecord& rec, bool atomic) const {
  if (rec.mask == 0) return 1;
  // Words each lane touches (an 8- or 16-byte access covers several consecutive words).
  const unsigned wordsPerLane = std::max<unsigned>(1, (rec.bytes + 3) / 4);
  // Distinct words (or accesses, for atomics) per bank; each bank keeps a short list of its
  // words, so a conflict-free access costs one comparison per lane.
  uint32_t counts[128] = {};
  uint64_t words[32 * 4];
  uint8_t banksOf[32 * 4];
  unsigned n = 0;
  uint32_t degree = 1;
  for (int l = 0; l < func::kWarpSize; ++l) {
    if (!((rec.mask >> l) & 1u)) continue;
    for (unsigned k = 0; k < wordsPerLane && n < 32 * 4; ++k) {
      const uint64_t word = rec.addr[l] / 4 + k;
      const uint32_t bank = static_cast<uint32_t>(word % banks_);
      bool seen = false;
      if (!atomic && counts[bank])
        for (unsigned i = 0; i < n && !seen; ++i)
          seen = banksOf[i] == bank && words[i] == word;  // broadcast
      if (seen) continue;
      words[n] = word;
      banksOf[n++] = static_cast<uint8_t>(bank);
      degree = std::max(degree, ++counts[bank]);
    }
  }
  return degree;
}

}  // namespace gpusc::sm
