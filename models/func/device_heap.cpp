#include "func/device_heap.hpp"

namespace gpusc::func {

uint64_t DeviceHeap::allocate(uint64_t bytes) {
  used_ = true;
  if (bytes == 0 || bytes > size_) return 0;
  const uint64_t need = (bytes + kAlign - 1) / kAlign * kAlign;
  if (need > size_ - inUse_) return 0;
  uint64_t at = 0;  // first fit: the first gap between blocks that holds `need`
  for (const auto& [off, len] : blocks_) {
    if (off - at >= need) break;
    at = off + len;
  }
  if (size_ - at < need) return 0;
  if (base_ == 0) base_ = gmem_.allocate(size_);  // throws InputError when the device is full
  blocks_.emplace(at, need);
  inUse_ += need;
  return base_ + at;
}

bool DeviceHeap::release(uint64_t addr) {
  used_ = true;
  if (addr == 0) return true;
  if (base_ == 0 || addr < base_) return false;
  auto it = blocks_.find(addr - base_);
  if (it == blocks_.end()) return false;
  inUse_ -= it->second;
  blocks_.erase(it);
  return true;
}

}  // namespace gpusc::func
