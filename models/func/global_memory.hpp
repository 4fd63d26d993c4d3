// Device global memory: a sparse store that addresses a multi-gigabyte device without
// allocating it. Pages are created on first touch; a page is valid only inside an allocation,
// so an access outside every allocation faults as it would on a GPU.
//
// Kernels reach it through translate(), which several host threads may call at once, each with
// its own Tlb (the timing model evaluating SMs in parallel): the slow path is serialised, and
// pages are never freed while a kernel runs. Everything else is for the host, between launches.
#pragma once

#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace gpusc::func {

class GlobalMemory {
 public:
  static constexpr unsigned kPageBits = 16;  // 64 KB pages; allocations start on a page
  static constexpr uint64_t kPageSize = 1ull << kPageBits;
  static constexpr uint64_t kHeapBase = 0x1'0000'0000ull;  // first device address
  // First address of the shared allocations (allocateShared): high in the device's address space,
  // where a host process has nothing mapped (the low addresses may be taken: AddressSanitizer's
  // shadow memory covers 2 GB to 16 TB).
  static constexpr uint64_t kSharedBase = 0x4000'0000'0000ull;

  explicit GlobalMemory(uint64_t capacityBytes);
  ~GlobalMemory();
  GlobalMemory(const GlobalMemory&) = delete;
  GlobalMemory& operator=(const GlobalMemory&) = delete;

  // Allocation (cudaMalloc / cudaFree). Throws InputError when the device is full or the
  // pointer was not allocated.
  uint64_t allocate(uint64_t bytes);
  // An allocation the host program shares at the same address (CUDA's managed memory and mapped
  // host memory): its bytes are host memory mapped at the returned device address, so the program
  // reads and writes them through that pointer and kernels through the device. Managed memory
  // (`deviceMemory`) counts against the device's capacity, as a GPU without concurrent managed
  // access places it in device memory; pinned host memory (cudaMallocHost, cudaHostAlloc) is the
  // host's and does not. Throws InputError when the device is full or the host cannot map memory
  // there.
  uint64_t allocateShared(uint64_t bytes, bool deviceMemory = true);
  // True when some allocation is shared with the host.
  bool hasShared() const { return !shared_.empty(); }
  // True when `addr` lies inside a shared allocation.
  bool isShared(uint64_t addr) const {
    auto it = shared_.upper_bound(addr);
    if (it == shared_.begin()) return false;
    --it;
    return addr < it->first + it->second.span;
  }
  // A shared allocation's memory file and its mapped bytes (another process maps the same pages
  // at the same address); -1 and 0 for an address that is not a shared allocation's base.
  int sharedFile(uint64_t addr) const {
    auto it = shared_.find(addr);
    return it == shared_.end() ? -1 : it->second.fd;
  }
  uint64_t sharedSpan(uint64_t addr) const {
    auto it = shared_.find(addr);
    return it == shared_.end() ? 0 : it->second.span;
  }
  void release(uint64_t addr);
  uint64_t bytesAllocated() const { return allocated_; }
  uint64_t capacity() const { return capacity_; }

  // Host copies; throw InputError if the range is not inside one allocation.
  void write(uint64_t addr, const void* src, uint64_t bytes);
  void read(uint64_t addr, void* dst, uint64_t bytes);
  void fill(uint64_t addr, uint8_t value, uint64_t bytes);

  // A small cache of page translations. Each thread that translates concurrently uses its own;
  // it notices a release() (pages freed) and starts afresh.
  struct Tlb {
    static constexpr unsigned kSize = 64;
    struct Entry {
      uint64_t page = ~0ull;
      uint8_t* data = nullptr;
      // Whether translateForWrite() may use the entry: the page has no undo log to save it to,
      // or has been saved.
      bool writable = false;
    };
    Entry entries[kSize];
    uint64_t epoch = 0;  // GlobalMemory::epoch_ when the entries were filled
  };

  // Pointer to `bytes` (<= 16, naturally aligned, so never crossing a page) at `addr`, to read,
  // or nullptr when the address is outside every allocation. The first touch of a page creates it
  // (reads too). Thread-safe when each thread passes its own `tlb` and nothing allocates or
  // releases meanwhile.
  uint8_t* translate(uint64_t addr, Tlb& tlb) {
    uint64_t page = addr >> kPageBits;
    Tlb::Entry& e = tlb.entries[page & (Tlb::kSize - 1)];
    if (e.page == page && tlb.epoch == epoch_) return e.data + (addr & (kPageSize - 1));
    return translateSlow(addr, tlb, false);
  }
  // The same to write (or read and write): with an undo log open, the page's first write saves it.
  uint8_t* translateForWrite(uint64_t addr, Tlb& tlb) {
    uint64_t page = addr >> kPageBits;
    Tlb::Entry& e = tlb.entries[page & (Tlb::kSize - 1)];
    if (e.page == page && e.writable && tlb.epoch == epoch_)
      return e.data + (addr & (kPageSize - 1));
    return translateSlow(addr, tlb, true);
  }
  // Both with the memory's own cache (one thread at a time).
  uint8_t* translate(uint64_t addr) { return translate(addr, tlb_); }
  uint8_t* translateForWrite(uint64_t addr) { return translateForWrite(addr, tlb_); }

  // True when [addr, addr+bytes) lies inside one allocation.
  bool isAllocated(uint64_t addr, uint64_t bytes) const;

  // The contents of every page.
  struct Snapshot {
    std::vector<std::pair<uint64_t, std::unique_ptr<uint8_t[]>>> pages;  // page -> its bytes
  };
  Snapshot snapshot() const;

  // An undo log (sampled simulation runs a launch in the functional engine to see what it does,
  // and undoes it when the launch is to run in detail): from beginUndoLog() on, the first write
  // to each page (a kernel's translateForWrite(), a host copy or memset) saves the bytes it had,
  // or that it did not exist, so undo() puts memory back as it was, at the cost of the pages
  // written rather than of all memory. (A page a read creates holds zeros, as one that does not
  // exist reads; undo() keeps it.) The saved pages' buffers are kept for the next log's, which
  // saves the host from faulting fresh memory in for each. Allocations must not change in between:
  // undo() puts back bytes, not the allocation map (kernels allocate only with the device runtime,
  // which sampling leaves alone). endUndoLog() keeps what changed; undo() ends the log too.
  // Thread-safe as translate() is: each kernel thread's first access to a page, and its first
  // write, go through translateSlow().
  void beginUndoLog();
  void undo();
  void endUndoLog();
  bool logging() const { return undoing_; }

  // A memory of its own for host threads that run CTAs beside the ones running on this memory
  // (a wave-sampled launch's last CTAs, docs/sampling.md): this memory as it is now, copied a
  // page at a time as the copy first touches it. This memory keeps an undo log meanwhile (its
  // pages' bytes from now, to give the copy), so it must have none open; the copy's owner ends
  // it with applyChanges() or endUndoLog(), after the copy's last access. Not of a memory with
  // shared allocations (InternalError).
  std::unique_ptr<GlobalMemory> copyOnAccess();
  // Writes to this memory every byte in which `copy` (copyOnAccess() of this memory) differs
  // from this memory as it was when the copy was made: what CTAs run on the copy wrote, where
  // they changed it. Each run's bytes are theirs alone when the CTAs here wrote others. Ends the
  // undo log.
  void applyChanges(const GlobalMemory& copy);

 private:
  uint8_t* translateSlow(uint64_t addr, Tlb& tlb, bool write);
  // The bytes `page` had when the undo log began (zeros: it did not exist), while the log is
  // open; the page's bytes now without one. For a copy, from the other threads at once.
  void originalPage(uint64_t page, uint8_t* to);
  const uint8_t* originalPageLocked(uint64_t page) const;  // null: zeros
  // The page's bytes, created if new (the caller checked validity); `write`: saved first to
  // the undo log if one is open.
  uint8_t* pageData(uint64_t page, bool write);
  std::unique_ptr<uint8_t[]> newPageBuffer();  // uninitialised: a spare one or a new one
  void checkRange(uint64_t addr, uint64_t bytes, const char* what) const;

  uint64_t capacity_;
  uint64_t allocated_ = 0;
  uint64_t next_ = kHeapBase;
  uint64_t nextShared_ = kSharedBase;
  std::map<uint64_t, uint64_t> allocs_;  // base -> size
  // A page's bytes: owned, or (a shared allocation's) the host mapping.
  struct Page {
    std::unique_ptr<uint8_t[]> owned;
    uint8_t* data = nullptr;
  };
  std::unordered_map<uint64_t, Page> pages_;
  struct Shared {
    uint64_t span;  // mapped bytes
    int fd;         // the memory file
    bool counted;   // against the capacity (managed memory)
  };
  std::map<uint64_t, Shared> shared_;  // shared allocations by base address
  uint64_t epoch_ = 0;                 // counts releases: a Tlb filled before one is stale
  std::mutex slowPath_;                // translateSlow: allocs_ lookups, pages_ creation
  Tlb tlb_;
  // The undo log: each page's bytes before its first access since beginUndoLog() (null: the page
  // did not exist), in the order they were saved.
  bool undoing_ = false;
  size_t undoAllocations_ = 0;
  std::vector<std::pair<uint64_t, std::unique_ptr<uint8_t[]>>> undoPages_;
  std::unordered_map<uint64_t, size_t> undoSaved_;        // page -> its place in undoPages_
  std::vector<std::unique_ptr<uint8_t[]>> spareBuffers_;  // of ended logs, for the next
  GlobalMemory* origin_ = nullptr;  // copyOnAccess(): the memory this copies from
};

}  // namespace gpusc::func
