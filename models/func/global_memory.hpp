// Device global memory: a sparse store that addresses a multi-gigabyte device without
// allocating it. Pages are created on first touch; a page is valid only inside an allocation,
// so an access outside every allocation faults as it would on a GPU.
#pragma once

#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>

namespace gpusc::func {

class GlobalMemory {
 public:
  static constexpr unsigned kPageBits = 16;  // 64 KB pages; allocations start on a page
  static constexpr uint64_t kPageSize = 1ull << kPageBits;
  static constexpr uint64_t kHeapBase = 0x1'0000'0000ull;  // first device address

  explicit GlobalMemory(uint64_t capacityBytes);

  // Allocation (cudaMalloc / cudaFree). Throws InputError when the device is full or the
  // pointer was not allocated.
  uint64_t allocate(uint64_t bytes);
  void release(uint64_t addr);
  uint64_t bytesAllocated() const { return allocated_; }
  uint64_t capacity() const { return capacity_; }

  // Host copies; throw InputError if the range is not inside one allocation.
  void write(uint64_t addr, const void* src, uint64_t bytes);
  void read(uint64_t addr, void* dst, uint64_t bytes);
  void fill(uint64_t addr, uint8_t value, uint64_t bytes);

  // Pointer to `bytes` (<= 16, naturally aligned, so never crossing a page) at `addr`, or
  // nullptr when the address is outside every allocation.
  uint8_t* translate(uint64_t addr) {
    uint64_t page = addr >> kPageBits;
    TlbEntry& e = tlb_[page & (kTlbSize - 1)];
    if (e.page == page) return e.data + (addr & (kPageSize - 1));
    return translateSlow(addr);
  }

  // True when [addr, addr+bytes) lies inside one allocation.
  bool isAllocated(uint64_t addr, uint64_t bytes) const;

 private:
  static constexpr unsigned kTlbSize = 64;
  struct TlbEntry {
    uint64_t page = ~0ull;
    uint8_t* data = nullptr;
  };

  uint8_t* translateSlow(uint64_t addr);
  uint8_t* pageData(uint64_t page);  // creates the page; caller checked validity
  void checkRange(uint64_t addr, uint64_t bytes, const char* what) const;

  uint64_t capacity_;
  uint64_t allocated_ = 0;
  uint64_t next_ = kHeapBase;
  std::map<uint64_t, uint64_t> allocs_;  // base -> size
  std::unordered_map<uint64_t, std::unique_ptr<uint8_t[]>> pages_;
  TlbEntry tlb_[kTlbSize];
};

}  // namespace gpusc::func
