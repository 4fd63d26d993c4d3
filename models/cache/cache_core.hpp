// The storage and bookkeeping of one set-associative data cache (CacheCore knows nothing of
// TLM or timing of its own): the tag array with valid and dirty bits, a replacement policy chosen
// by name (replacement.hpp), the MSHR table (mshr_table.hpp) and the banks. The L1 data cache and
// the L2 slices build their request handling around it.
//
//   line  = addr - addr mod line_bytes
//   set   = (addr / line_bytes) mod sets,   tag = addr / (line_bytes x sets)
//   bank  = (addr / line_bytes) mod banks
//
// Banks: each bank serves one access (a lookup or a fill) per cycle; claimBank() hands out the
// first free cycle of a bank, so a second access to a busy bank waits a cycle.
//
// Observation (for the power model): a LineObserver, when set, sees every lookup with the
// byte mask of the access, every fill and every line that leaves (replaced or invalidated);
// it may read the per-line state (valid, dirty, tag, last access cycle) through line().
// Observing changes nothing in the cache's behaviour.
//
// The end of this file holds the plumbing the two data-cache modules (L1DataCache, L2Slice)
// share: their statistics, the queue of requests waiting for the next level, the queue of
// answers due to the requester and the records of requests waiting for lines. All of it is
// preallocated or grows only to a high-water mark, so steady-state accesses allocate nothing.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <queue>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <tlm>

#include "cache/mshr_table.hpp"
#include "cache/replacement.hpp"
#include "common/mem_access.hpp"
#include "common/platform_config.hpp"

namespace gpusc::cache {

// Bit i: byte i of a line (or of a transaction) is touched. 256 bits: the widest line the data
// caches support (the width of MemAccessExtension::byteMask).
using ByteMask = std::array<uint64_t, 4>;
inline constexpr uint32_t kMaxLineBytes = kMaxDataLineBytes;

// Bytes [0, n) set.
ByteMask firstBytes(uint32_t n);
// The mask of a transaction starting at `from`, seen from a line starting at `to`: bit i of the
// result is bit (to - from + i) of `mask`; bits outside `mask`'s 256 bytes are zero.
ByteMask rebase(const ByteMask& mask, uint64_t from, uint64_t to);
// The bytes of the line at `line` (lineBytes long) that a transaction of `len` bytes at `addr`
// touches, given the transaction's mask.
ByteMask lineMask(const ByteMask& mask, uint64_t addr, uint32_t len, uint64_t line,
                  uint32_t lineBytes);
inline bool anyByte(const ByteMask& mask) { return (mask[0] | mask[1] | mask[2] | mask[3]) != 0; }
inline bool coversAll(const ByteMask& mask, uint32_t n) {
  const ByteMask all = firstBytes(n);
  for (size_t i = 0; i < all.size(); ++i)
    if ((mask[i] & all[i]) != all[i]) return false;
  return true;
}

struct LineState {
  uint64_t tag = 0;
  uint64_t lastAccess = 0;  // cycle of the last access or fill
  bool valid = false;
  bool dirty = false;
};

class LineObserver {
 public:
  virtual ~LineObserver() = default;
  // A lookup of `set` at `cycle`: `way` is the line that hit, or CacheCore::kNoWay on a miss;
  // byteMask: the bytes of the line the access touches (bit i = byte i of the line).
  virtual void onAccess(uint32_t set, uint32_t way, uint64_t cycle, const ByteMask& byteMask,
                        bool isWrite, bool hit) = 0;
  // A line was placed in (set, way) (after a miss, or a write allocating a whole line).
  virtual void onFill(uint32_t set, uint32_t way, uint64_t cycle) = 0;
  // A valid line leaves (set, way): replaced by a fill, or invalidated (write-evict, a reset
  // does not report). dirty: its data had to be written back.
  virtual void onEvict(uint32_t set, uint32_t way, uint64_t cycle, bool dirty) = 0;
};

struct FillResult {
  uint32_t set = 0, way = 0;
  bool evicted = false;  // a valid line was replaced
  bool evictedDirty = false;
  uint64_t evictedLine = 0;  // its line address
  ByteMask evictedBytes{};   // the bytes it held (write-validate caches; else the whole line)
};

class CacheCore {
 public:
  static constexpr uint32_t kNoWay = ~0u;

  // `key` names the configuration section in error messages ("sm.l1d"); `seed` seeds the
  // random replacement policy; `replacement`: where cfg.replacement is looked up (a testbench's
  // Policies, or the built-ins).
  CacheCore(const CacheConfig& cfg, const std::string& key, uint64_t seed,
            const ReplacementRegistry& replacement = replacementPolicies());

  const CacheConfig& config() const { return cfg_; }
  uint32_t sets() const { return sets_; }
  uint32_t ways() const { return ways_; }
  uint32_t lineBytes() const { return lineBytes_; }
  uint32_t banks() const { return banks_; }
  // Ways lines may be placed in: all of them, or fewer while a unified L1 lends the others to
  // shared memory. Changing it removes the lines of the ways given up (reported as evictions);
  // their data are clean (only the L1, which never holds dirty data, lends ways).
  uint32_t usableWays() const { return usableWays_; }
  void setUsableWays(uint32_t ways, uint64_t cycle);

  // Sectors: the unit a miss fetches and a line keeps valid (the whole line when unsectored).
  uint32_t sectorBytes() const { return sectorBytes_; }
  bool sectored() const { return sectorBytes_ < lineBytes_; }
  // Every byte of each sector `mask` touches (within the line).
  ByteMask sectorsOf(const ByteMask& mask) const;
  // The number of sectors a sector mask (sectorsOf) holds.
  uint32_t sectorCount(const ByteMask& sectors) const {
    uint32_t bits = 0;
    for (uint64_t w : sectors) bits += popcount64(w);
    return bits / sectorBytes_;
  }

  uint64_t lineOf(uint64_t addr) const { return addr & ~uint64_t(lineBytes_ - 1); }
  uint32_t setOf(uint64_t addr) const {
    return static_cast<uint32_t>((addr / lineBytes_) & (sets_ - 1));
  }
  uint64_t tagOf(uint64_t addr) const { return addr / lineBytes_ / sets_; }
  uint32_t bankOf(uint64_t addr) const {
    return static_cast<uint32_t>((addr / lineBytes_) & (banks_ - 1));
  }
  uint64_t lineAddressOf(uint32_t set, uint32_t way) const {
    return (line(set, way).tag * sets_ + set) * lineBytes_;
  }

  // ---- tags ----
  // The way holding addr's line, or kNoWay; changes nothing.
  uint32_t find(uint64_t addr) const;
  // A lookup at `cycle`: on a hit updates the replacement state and the line's last access.
  // Reports to the observer. Returns the way hit, or kNoWay.
  uint32_t access(uint64_t addr, uint64_t cycle, const ByteMask& lineMask, bool isWrite);
  // Places addr's line (not present) in an invalid way, or evicts the replacement victim. The
  // line holds `bytes` (a write-validate allocation) or, by default, all of its bytes.
  FillResult fill(uint64_t addr, uint64_t cycle, bool dirty);
  FillResult fill(uint64_t addr, uint64_t cycle, bool dirty, const ByteMask& bytes);

  // ---- what an access lacks, and the fetches in flight that bring it ----
  static constexpr uint32_t kMaxFetchesPerLine = kMaxLineBytes / 4;  // one per 4-byte sector
  struct Lack {
    uint32_t way = kNoWay;  // the line's way, or kNoWay
    bool hit = false;       // the line is there and holds every byte needed
    ByteMask fetch{};       // sectors to fetch: needed, missing and not on their way
    uint32_t waits = 0;     // MSHR entries already fetching needed sectors
    std::array<uint32_t, kMaxFetchesPerLine> waitOn{};
    bool fetches() const { return anyByte(fetch); }
  };
  // For an access needing the bytes `needed` of the line at `line`: whether it hits, and else
  // the fetches in flight it must wait for and the sectors still to fetch. An unsectored cache
  // fetches whole lines: one MSHR entry per line, found by the line's address; a sectored one
  // finds its fetches by the address of their first sector.
  Lack lack(uint64_t line, const ByteMask& needed) const;
  // The MSHR key of a fetch of `bytes` of the line at `line` (Lack::fetch).
  uint64_t fetchKey(uint64_t line, const ByteMask& bytes) const;
  // A new MSHR entry for a fetch of `bytes` of the line at `line`, found by its key, holding what
  // it brings (the table must not be full).
  uint32_t openFetch(uint64_t line, const ByteMask& bytes);

  // ---- valid bytes (write-validate: a line allocated by a write holds only what was written;
  // sectored: a line holds the sectors fetched) ----
  bool tracksBytes() const { return !validBytes_.empty(); }
  // The line in (set, way) holds every byte of `mask`.
  bool holds(uint32_t set, uint32_t way, const ByteMask& mask) const;
  // The line in (set, way) now holds the bytes of `mask` too (a write, or the sectors fetched).
  void addBytes(uint32_t set, uint32_t way, const ByteMask& mask);
  // The bytes the line in (set, way) holds.
  ByteMask bytesOf(uint32_t set, uint32_t way) const;
  // Removes addr's line if present; true if it was.
  bool invalidate(uint64_t addr, uint64_t cycle);
  // Removes every line (the observer sees each leave as an eviction); the MSHRs must be empty.
  void invalidateAll(uint64_t cycle);
  void setDirty(uint32_t set, uint32_t way) { lines_[index(set, way)].dirty = true; }
  const LineState& line(uint32_t set, uint32_t way) const { return lines_[index(set, way)]; }
  uint32_t validLines() const;

  // ---- banks ----
  bool bankFree(uint32_t bank, uint64_t cycle) const { return bankFree_[bank] <= cycle; }
  uint64_t bankFreeAt(uint32_t bank) const { return bankFree_[bank]; }
  // The first cycle at or after `cycle` in which `bank` is free; the bank is busy in it and the
  // `cycles` - 1 cycles after it.
  uint64_t claimBank(uint32_t bank, uint64_t cycle, uint32_t cycles = 1);

  // ---- MSHRs ----
  MshrTable& mshrs() { return mshrs_; }
  const MshrTable& mshrs() const { return mshrs_; }

  void setObserver(LineObserver* o) { observer_ = o; }
  LineObserver* observer() const { return observer_; }

  // Power-on state: every line invalid, MSHRs free, banks idle, replacement history cleared.
  void reset();

 private:
  size_t index(uint32_t set, uint32_t way) const { return size_t(set) * ways_ + way; }
  // The line in (set, way) leaves (the observer sees an eviction) and is invalid.
  void drop(uint32_t set, uint32_t way, uint64_t cycle);

  CacheConfig cfg_;
  uint32_t sets_, ways_, lineBytes_, sectorBytes_, banks_;
  uint32_t usableWays_;
  std::vector<LineState> lines_;
  std::vector<ByteMask> validBytes_;  // per line, write-validate or sectored caches (else empty)
  std::unique_ptr<ReplacementPolicy> replacement_;
  MshrTable mshrs_;
  std::vector<uint64_t> bankFree_;  // first cycle each bank is free
  LineObserver* observer_ = nullptr;
};

// ---- shared by the data-cache modules ------------------------------------------------------

// Why a request could not be accepted (its END_REQ is held back).
enum class Stall : uint8_t { None, BankConflict, MshrFull, MergeLimit, MissQueueFull };
inline constexpr size_t kStallReasons = 5;
inline constexpr size_t kAccessKinds = 5;  // AccessKind values

struct DataCacheStats {
  struct Kind {
    uint64_t requests = 0;          // received from the requester
    uint64_t accesses = 0;          // line lookups (a request covering n lines makes n)
    uint64_t hits = 0, misses = 0;  // a miss merged into an outstanding one counts as a miss
  };
  std::array<Kind, kAccessKinds> kinds{};
  uint64_t mshrMerges = 0;       // misses that joined an outstanding fetch of their line
  uint64_t sectorMisses = 0;     // sectored: misses on a line present without the sectors needed
  uint64_t fetchedSectors = 0;   // sectored: sectors the fetches asked the next level for
  uint64_t fills = 0;            // lines placed in the cache
  uint64_t evictions = 0;        // valid lines replaced by a fill
  uint64_t invalidations = 0;    // lines removed by a store (write-evict)
  uint64_t dirtyWritebacks = 0;  // evicted dirty lines written to the next level
  uint64_t bypassed = 0;         // requests passed through without a lookup
  uint64_t splitRequests = 0;    // requests taken line by line (L2: lookupInParts)
  uint64_t sentReads = 0, sentWrites = 0;  // requests sent to the next level (reads: line
                                           // fetches and forwarded reads)
  std::array<uint64_t, kStallReasons> stallCycles{};  // cycles END_REQ was held, by Stall

  Kind& of(AccessKind k) { return kinds[static_cast<size_t>(k)]; }
  // `sectored`: with the sector counts.
  nlohmann::json json(bool enabled, bool sectored = false) const;
};

// The request of a fetch of `bytes` (Lack::fetch) from `core`: its byte mask, and in a sectored
// cache its sector size, so only those sectors move (the sectors counted in `stats`).
void describeFetch(const CacheCore& core, MemAccessExtension& request, const ByteMask& bytes,
                   DataCacheStats& stats);

// Requests waiting to leave through the initiator socket, in order; each may leave from its
// `notBefore` cycle on, at most `sendsPerCycle` per cycle, and none while the last one sent
// waits for its END_REQ. A ring of fixed capacity.
class SendQueue {
 public:
  static constexpr uint64_t kNever = ~0ull;

  SendQueue(size_t capacity, uint32_t sendsPerCycle)
      : items_(capacity), sendsPerCycle_(sendsPerCycle) {}
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  void push(tlm::tlm_generic_payload* gp, uint64_t notBefore);

  // Sends what may leave in `cycle` through `next` (BEGIN_REQ), counting it in `stats`; `owner`
  // names the module in errors.
  void send(uint64_t cycle, tlm::tlm_fw_transport_if<>& next, DataCacheStats& stats,
            const char* owner);
  // The request phase of `gp` ended (END_REQ, or a BEGIN_RESP that ends it).
  void requestEnded(const tlm::tlm_generic_payload& gp) {
    if (sending_ == &gp) sending_ = nullptr;
  }
  // The cycle the owner must run again to send more (kNever: nothing to send until an END_REQ
  // or a push).
  uint64_t wakeCycle(uint64_t cycle) const;
  // Nothing queued and no request phase open.
  bool idle() const { return size_ == 0 && sending_ == nullptr; }
  // Its requests not yet sent (waiting since the cycle each was queued for, of `periodValue`),
  // into `best` when older (the no-progress watchdog; `where` describes the queue).
  void oldestHeld(std::optional<HeldRequest>& best, uint64_t periodValue,
                  const std::string& where) const;
  // The per-cycle count starts again (power-on). Only while idle().
  void reset() {
    sendCycle_ = kNever;
    sentInCycle_ = 0;
  }

 private:
  struct Item {
    tlm::tlm_generic_payload* gp = nullptr;
    uint64_t notBefore = 0;
  };
  std::vector<Item> items_;
  size_t head_ = 0, size_ = 0;
  const uint32_t sendsPerCycle_;
  tlm::tlm_generic_payload* sending_ = nullptr;  // sent, END_REQ not yet received
  uint64_t sendCycle_ = kNever;                  // the cycle sentInCycle_ counts
  uint32_t sentInCycle_ = 0;
};

// Answers due to the requester, earliest cycle first (arrival order among equal cycles).
class AnswerQueue {
 public:
  AnswerQueue() {
    std::vector<Item> v;
    v.reserve(256);
    heap_ = Heap(std::greater<Item>(), std::move(v));
  }
  void push(uint64_t cycle, tlm::tlm_generic_payload* gp) { heap_.push(Item{cycle, seq_++, gp}); }
  bool empty() const { return heap_.empty(); }
  size_t size() const { return heap_.size(); }
  uint64_t nextCycle() const { return heap_.top().cycle; }
  tlm::tlm_generic_payload* pop() {
    tlm::tlm_generic_payload* gp = heap_.top().gp;
    heap_.pop();
    return gp;
  }
  // Sends every answer due by `cycle` up through `up` (BEGIN_RESP, taken at once by the
  // conventions) and releases the queue's reference to it.
  void deliver(uint64_t cycle, tlm::tlm_bw_transport_if<>& up);
  // The earliest answer due (waiting since its cycle, of `periodValue`), into `best` when older.
  void oldestHeld(std::optional<HeldRequest>& best, uint64_t periodValue,
                  const std::string& where) const {
    if (!heap_.empty())
      keepOlder(best, heap_.top().cycle * periodValue,
                describeRequest(*heap_.top().gp) + ", " + where);
  }

 private:
  struct Item {
    uint64_t cycle, seq;
    tlm::tlm_generic_payload* gp;
    bool operator>(const Item& o) const { return cycle != o.cycle ? cycle > o.cycle : seq > o.seq; }
  };
  using Heap = std::priority_queue<Item, std::vector<Item>, std::greater<Item>>;
  Heap heap_;
  uint64_t seq_ = 0;
};

// Requests waiting for lines being fetched: how many lines are still missing and the cycle
// from which the lines already there could be answered. The MSHR waiter ids are record ids.
class PendingRequests {
 public:
  struct Record {
    tlm::tlm_generic_payload* gp = nullptr;
    uint32_t linesLeft = 0;
    uint64_t ready = 0;
    uint32_t afterFill = 0;  // cycles its work takes once a line is there (serialised atomics)
  };
  explicit PendingRequests(size_t reserve) {
    records_.reserve(reserve);
    free_.reserve(reserve);
  }
  uint32_t open(tlm::tlm_generic_payload* gp);
  Record& at(uint32_t id) { return records_[id]; }
  void close(uint32_t id) {
    records_[id] = Record{};
    free_.push_back(id);
  }
  size_t openCount() const { return records_.size() - free_.size(); }

 private:
  std::vector<Record> records_;
  std::vector<uint32_t> free_;
};

// A data cache's oldest held request (HeldRequest): the one whose END_REQ it holds back (arrived
// at cycle `heldAt`), those in its miss queue, its answers not yet delivered.
std::optional<HeldRequest> oldestHeldOf(const tlm::tlm_generic_payload* held, uint64_t heldAt,
                                        const SendQueue& down, const AnswerQueue& answers,
                                        uint64_t periodValue);

}  // namespace gpusc::cache
