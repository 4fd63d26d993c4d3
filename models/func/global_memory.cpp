#include "func/global_memory.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "common/error.hpp"
#include "func/program.hpp"

namespace gpusc::func {

GlobalMemory::GlobalMemory(uint64_t capacityBytes) : capacity_(capacityBytes) {}

GlobalMemory::~GlobalMemory() {
  for (const auto& [base, sh] : shared_) {
    ::munmap(reinterpret_cast<void*>(base), sh.span);
    ::close(sh.fd);
  }
}

uint64_t GlobalMemory::allocateShared(uint64_t bytes, bool deviceMemory) {
  if (bytes == 0) bytes = 1;
  if (deviceMemory && allocated_ + bytes > capacity_)
    throw InputError(fmt::format(
        "memory.device_memory_bytes: out of device memory: {} bytes requested, {} of {} in use",
        bytes, allocated_, capacity_));
  const uint64_t span = (bytes + kPageSize - 1) & ~(kPageSize - 1);
  // A memory file, so that another process (the program whose memory this is) can map the same
  // pages at the same address.
  const int fd = ::memfd_create("gpusc-shared-memory", MFD_CLOEXEC);
  if (fd < 0 || ::ftruncate(fd, off_t(span)) != 0) {
    const std::string why = std::strerror(errno);
    if (fd >= 0) ::close(fd);
    throw InputError(fmt::format("cannot make {} bytes of shared memory: {}", span, why));
  }
  // The host maps the pages at the device address; where the process already has a mapping
  // there, the next free range of the device's address space is tried.
  for (int attempt = 0; attempt < 64; ++attempt) {
    const uint64_t base = nextShared_;
    nextShared_ += span + kPageSize;
    if (nextShared_ >= kWindowBase) break;
    void* want = reinterpret_cast<void*>(base);
    void* got = ::mmap(want, span, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED_NOREPLACE, fd, 0);
    if (got == MAP_FAILED) {
      if (errno == EEXIST) continue;
      const std::string why = std::strerror(errno);
      ::close(fd);
      throw InputError(
          fmt::format("cannot map {} bytes of host memory for the device: {}", span, why));
    }
    if (got != want) {  // a kernel without MAP_FIXED_NOREPLACE treats the address as a hint
      ::munmap(got, span);
      continue;
    }
    for (uint64_t p = base >> kPageBits; p < (base + span) >> kPageBits; ++p)
      pages_[p] = Page{nullptr, static_cast<uint8_t*>(want) + ((p << kPageBits) - base)};
    allocs_[base] = bytes;
    shared_[base] = Shared{span, fd, deviceMemory};
    if (deviceMemory) allocated_ += bytes;
    return base;
  }
  ::close(fd);
  throw InputError(
      fmt::format("cannot map {} bytes of host memory at a free device address", bytes));
}

uint64_t GlobalMemory::allocate(uint64_t bytes) {
  if (bytes == 0) bytes = 1;
  if (allocated_ + bytes > capacity_)
    throw InputError(fmt::format(
        "memory.device_memory_bytes: out of device memory: {} bytes requested, {} of {} in use",
        bytes, allocated_, capacity_));
  uint64_t base = next_;
  // Allocations start on a fresh page with one unmapped page between them, so running off the
  // end of a buffer faults instead of silently reading its neighbour.
  uint64_t span = (bytes + kPageSize - 1) & ~(kPageSize - 1);
  next_ += span + kPageSize;
  if (next_ >= kWindowBase) throw InputError("device address space exhausted");
  allocs_[base] = bytes;
  allocated_ += bytes;
  return base;
}

void GlobalMemory::release(uint64_t addr) {
  auto it = allocs_.find(addr);
  if (it == allocs_.end())
    throw InputError(fmt::format("free of 0x{:x}, which is not an allocated device pointer", addr));
  uint64_t first = addr >> kPageBits;
  uint64_t last = (addr + it->second - 1) >> kPageBits;
  for (uint64_t p = first; p <= last; ++p) pages_.erase(p);
  epoch_ += 1;  // every Tlb may point into the freed pages
  bool counted = true;
  if (auto sh = shared_.find(addr); sh != shared_.end()) {
    ::munmap(reinterpret_cast<void*>(addr), sh->second.span);
    ::close(sh->second.fd);
    counted = sh->second.counted;
    shared_.erase(sh);
  }
  if (counted) allocated_ -= it->second;
  allocs_.erase(it);
}

bool GlobalMemory::isAllocated(uint64_t addr, uint64_t bytes) const {
  auto it = allocs_.upper_bound(addr);
  if (it == allocs_.begin()) return false;
  --it;
  // Without computing addr + bytes, which may wrap around.
  return addr >= it->first && bytes <= it->second && addr - it->first <= it->second - bytes;
}

void GlobalMemory::checkRange(uint64_t addr, uint64_t bytes, const char* what) const {
  if (bytes == 0) return;
  if (!isAllocated(addr, bytes))
    throw InputError(fmt::format("{} of {} bytes at 0x{:x} is outside every device allocation",
                                 what, bytes, addr));
}

GlobalMemory::Snapshot GlobalMemory::snapshot() const {
  Snapshot s;
  s.pages.reserve(pages_.size());
  for (const auto& [page, slot] : pages_) {
    std::unique_ptr<uint8_t[]> bytes(new uint8_t[kPageSize]);
    std::memcpy(bytes.get(), slot.data, kPageSize);
    s.pages.emplace_back(page, std::move(bytes));
  }
  return s;
}

void GlobalMemory::beginUndoLog() {
  if (undoing_) throw InternalError("GlobalMemory::beginUndoLog: a log is open");
  undoing_ = true;
  undoAllocations_ = allocs_.size();
  // Every Tlb starts afresh, so each page's first write since reaches pageData() and is saved.
  epoch_ += 1;
}

void GlobalMemory::undo() {
  if (!undoing_) throw InternalError("GlobalMemory::undo: no log is open");
  if (undoAllocations_ != allocs_.size())
    throw InternalError("GlobalMemory::undo: the allocations changed since the log began");
  for (auto& [page, bytes] : undoPages_) {
    if (bytes) {
      std::memcpy(pages_.at(page).data, bytes.get(), kPageSize);
    } else if (auto it = pages_.find(page); it != pages_.end()) {
      // Created since: gone again, zeros when next touched.
      if (it->second.owned) spareBuffers_.push_back(std::move(it->second.owned));
      pages_.erase(it);
    }
  }
  epoch_ += 1;  // a Tlb may point into an erased page
  endUndoLog();
}

void GlobalMemory::endUndoLog() {
  undoing_ = false;
  for (auto& saved : undoPages_)
    if (saved.second) spareBuffers_.push_back(std::move(saved.second));
  undoPages_.clear();
  undoSaved_.clear();
}

std::unique_ptr<GlobalMemory> GlobalMemory::copyOnAccess() {
  if (!shared_.empty())
    throw InternalError("GlobalMemory::copyOnAccess: a memory with shared allocations");
  auto copy = std::make_unique<GlobalMemory>(capacity_);
  copy->allocated_ = allocated_;
  copy->next_ = next_;
  copy->nextShared_ = nextShared_;
  copy->allocs_ = allocs_;
  copy->origin_ = this;
  beginUndoLog();
  return copy;
}

const uint8_t* GlobalMemory::originalPageLocked(uint64_t page) const {
  if (auto it = undoSaved_.find(page); it != undoSaved_.end())
    return undoPages_[it->second].second.get();
  // Not accessed since the log began (every access since saves the page first), so as it was.
  auto it = pages_.find(page);
  return it != pages_.end() ? it->second.data : nullptr;
}

void GlobalMemory::originalPage(uint64_t page, uint8_t* to) {
  std::lock_guard<std::mutex> lock(slowPath_);
  const uint8_t* from = originalPageLocked(page);
  if (from != nullptr)
    std::memcpy(to, from, kPageSize);
  else
    std::memset(to, 0, kPageSize);
}

void GlobalMemory::applyChanges(const GlobalMemory& copy) {
  if (copy.origin_ != this || !undoing_)
    throw InternalError("GlobalMemory::applyChanges: not a copy of this memory");
  undoing_ = false;  // the log's pages are read, no more saved
  static const uint8_t kZeros[256] = {};
  for (const auto& [page, slot] : copy.pages_) {
    const uint8_t* from = originalPageLocked(page);  // the copy's threads have ended
    const uint8_t* now = slot.data;
    uint8_t* to = nullptr;
    // Blocks of 256 bytes compared at once (most are unchanged), then their bytes.
    for (uint64_t b = 0; b < kPageSize; b += sizeof kZeros) {
      const uint8_t* old = from != nullptr ? from + b : kZeros;
      if (std::memcmp(now + b, old, sizeof kZeros) == 0) continue;
      // (`to` may be the page `old` points into: each byte is compared before it is written.)
      if (to == nullptr) to = pageData(page, true);
      for (uint64_t i = 0; i < sizeof kZeros; ++i)
        if (now[b + i] != old[i]) to[b + i] = now[b + i];
    }
  }
  endUndoLog();
}

std::unique_ptr<uint8_t[]> GlobalMemory::newPageBuffer() {
  if (spareBuffers_.empty()) return std::unique_ptr<uint8_t[]>(new uint8_t[kPageSize]);
  std::unique_ptr<uint8_t[]> bytes = std::move(spareBuffers_.back());
  spareBuffers_.pop_back();
  return bytes;
}

uint8_t* GlobalMemory::pageData(uint64_t page, bool write) {
  Page& slot = pages_[page];
  if (write && undoing_ && undoSaved_.emplace(page, undoPages_.size()).second) {
    std::unique_ptr<uint8_t[]> bytes;
    if (slot.data) {
      bytes = newPageBuffer();
      std::memcpy(bytes.get(), slot.data, kPageSize);
    }
    undoPages_.emplace_back(page, std::move(bytes));
  }
  if (!slot.data) {
    slot.owned = newPageBuffer();
    if (origin_ != nullptr)
      origin_->originalPage(page, slot.owned.get());
    else
      std::memset(slot.owned.get(), 0, kPageSize);
    slot.data = slot.owned.get();
  }
  return slot.data;
}

uint8_t* GlobalMemory::translateSlow(uint64_t addr, Tlb& tlb, bool write) {
  if (tlb.epoch != epoch_) {
    tlb = Tlb{};
    tlb.epoch = epoch_;
  }
  uint64_t page = addr >> kPageBits;
  std::lock_guard<std::mutex> lock(slowPath_);
  // Valid when some allocation overlaps the page (page-granular, like a GPU's MMU).
  uint64_t pageBase = page << kPageBits;
  auto it = allocs_.upper_bound(pageBase + kPageSize - 1);
  if (it == allocs_.begin()) return nullptr;
  --it;
  if (it->first + it->second <= pageBase) return nullptr;
  uint8_t* data = pageData(page, write);
  // Without a log, writes need nothing first. (A log begins only with a new epoch_, which
  // empties every Tlb.)
  tlb.entries[page & (Tlb::kSize - 1)] = Tlb::Entry{page, data, write || !undoing_};
  return data + (addr & (kPageSize - 1));
}

void GlobalMemory::write(uint64_t addr, const void* src, uint64_t bytes) {
  checkRange(addr, bytes, "copy to device");
  const uint8_t* s = static_cast<const uint8_t*>(src);
  while (bytes) {
    uint64_t n = std::min(bytes, kPageSize - (addr & (kPageSize - 1)));
    std::memcpy(pageData(addr >> kPageBits, true) + (addr & (kPageSize - 1)), s, n);
    addr += n;
    s += n;
    bytes -= n;
  }
}

void GlobalMemory::read(uint64_t addr, void* dst, uint64_t bytes) {
  checkRange(addr, bytes, "copy from device");
  uint8_t* d = static_cast<uint8_t*>(dst);
  while (bytes) {
    uint64_t n = std::min(bytes, kPageSize - (addr & (kPageSize - 1)));
    auto it = pages_.find(addr >> kPageBits);
    if (it == pages_.end()) {
      std::memset(d, 0, n);
    } else {
      std::memcpy(d, it->second.data + (addr & (kPageSize - 1)), n);
    }
    addr += n;
    d += n;
    bytes -= n;
  }
}

void GlobalMemory::fill(uint64_t addr, uint8_t value, uint64_t bytes) {
  checkRange(addr, bytes, "memset");
  while (bytes) {
    uint64_t n = std::min(bytes, kPageSize - (addr & (kPageSize - 1)));
    std::memset(pageData(addr >> kPageBits, true) + (addr & (kPageSize - 1)), value, n);
    addr += n;
    bytes -= n;
  }
}

}  // namespace gpusc::func
