#include "sm/shared_memory.hpp"

#include <algorithm>
#include <vector>

namespace gpusc::sm {

uint32_t SharedMemory::conflictDegree(const func::MemRecord& rec, bool atomic) const {
  if (rec.mask == 0) return 1;
  // Words each lane touches (an 8- or 16-byte access covers several consecutive words).
  const unsigned wordsPerLane = std::max<unsigned>(1, (rec.bytes + 3) / 4);
  uint32_t counts[128] = {};  // distinct words (or accesses, for atomics) per bank
  uint64_t seen[32 * 4];
  unsigned nseen = 0;
  for (int l = 0; l < func::kWarpSize; ++l) {
    if (!((rec.mask >> l) & 1u)) continue;
    for (unsigned k = 0; k < wordsPerLane; ++k) {
      uint64_t word = rec.addr[l] / 4 + k;
      if (!atomic) {
        if (std::find(seen, seen + nseen, word) != seen + nseen) continue;  // broadcast
        seen[nseen++] = word;
      }
      ++counts[word % banks_];
    }
  }
  uint32_t degree = 1;
  for (uint32_t b = 0; b < banks_ && b < 128; ++b) degree = std::max(degree, counts[b]);
  return degree;
}

}  // namespace gpusc::sm
