// Shared-memory bank conflicts. Shared memory has sm.shared_memory_banks banks of 4-byte
// words; the lanes of a warp access it in one pass unless several of them need different
// words of the same bank, in which case the access is serialised: it takes as many passes as
// the largest number of distinct words any one bank must deliver (the conflict degree). Lanes
// reading the same word are served by one broadcast; atomics to the same word are serialised.
#pragma once

#include <cstdint>

#include <systemc>

#include "func/state.hpp"

namespace gpusc::sm {

// Passes needed for the lanes in rec.mask accessing rec.bytes each at rec.addr[lane] in `banks`
// banks (a power of two, 1..128): the largest number of distinct words one bank must deliver
// (for atomics: of accesses, since atomics to one word are serialised).
uint32_t sharedConflictDegree(const func::MemRecord& rec, uint32_t banks, bool atomic);

class SharedMemory : public sc_core::sc_module {
 public:
  SharedMemory(const sc_core::sc_module_name& name, uint32_t banks)
      : sc_core::sc_module(name), banks_(banks) {}

  // Passes needed for the lanes in `mask` accessing `bytes` each at rec.addr[lane].
  uint32_t conflictDegree(const func::MemRecord& rec, bool atomic) const {
    return sharedConflictDegree(rec, banks_, atomic);
  }
  uint32_t banks() const { return banks_; }

 private:
  uint32_t banks_;
};

}  // namespace gpusc::sm
