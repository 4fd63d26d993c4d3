// The heap of device-side malloc/free (and new/delete, which nvcc compiles to them): a region of
// device memory taken at the first malloc, with first-fit allocation of 16-byte aligned blocks.
// Like CUDA's heap it lives as long as the device (blocks survive the launch that made them) and
// has a fixed size (memory.device_heap_bytes); malloc returns null when no gap is large enough.
#pragma once

#include <cstdint>
#include <map>

#include "func/global_memory.hpp"

namespace gpusc::func {

class DeviceHeap {
 public:
  static constexpr uint64_t kAlign = 16;  // CUDA's malloc alignment

  DeviceHeap(GlobalMemory& gmem, uint64_t bytes) : gmem_(gmem), size_(bytes) {}

  // A block of `bytes`, or 0 (null) when the heap has no gap that large (or `bytes` is 0).
  uint64_t allocate(uint64_t bytes);
  // Frees the block at `addr` (0 is ignored). Returns false when `addr` is not a block's start.
  bool release(uint64_t addr);

  uint64_t size() const { return size_; }
  // Sets the size the region will have; false once a kernel called malloc or free, whether or
  // not it got memory (as CUDA's cudaLimitMallocHeapSize, which cannot change after a kernel used
  // the heap).
  bool resize(uint64_t bytes) {
    if (used_) return false;
    size_ = bytes;
    return true;
  }
  uint64_t bytesInUse() const { return inUse_; }

 private:
  GlobalMemory& gmem_;
  uint64_t size_;
  uint64_t base_ = 0;  // device address of the region (0: not taken yet)
  uint64_t inUse_ = 0;
  bool used_ = false;                    // malloc or free was called
  std::map<uint64_t, uint64_t> blocks_;  // offset -> size (rounded up to kAlign)
};

}  // namespace gpusc::func
