// Power states and data-array activity of one data cache's line frames (seed 000): drowsy lines
// and divided word lines (DWL). The L1 data cache of each SM (power.l1d) and every L2 slice
// (power.l2) own one LinePower and tell it about every lookup, hit and fill; it answers how many
// extra cycles a hit or fill waits for its line to wake, and keeps the counters the energy model
// reads (CachePowerCounters). docs/cache-power.md describes the model.
//
// Frames. A frame is one (set, way) of the cache, whatever line it holds. Each is ON or DROWSY:
//   none                 always ON.
//   drowsy-after-access  ON in the cycle of a touch, DROWSY in every cycle after it.
//   timeout              ON from a touch for timeout_cycles cycles, DROWSY from
//                        touch + timeout_cycles on.
// A touch is a hit (read or write) or a fill into the frame; a miss reads only tags and touches
// nothing. Frames never touched since power-on are DROWSY (unless the policy is none).
//
// Wake-ups. A touch of a DROWSY frame wakes it: one wake-up, and the access waits wake_latency
// cycles (the caller adds them to the access's timing). With drowsy.lookahead (the L1D only:
// the warp scheduler looks ahead, seed 000 section 4.1) a hit by a warp's access waits only
// max(0, wake_latency - lookahead_cycles); its wake-up still counts (and costs wake_pj) and
// counts as hidden.
//
// Accounting window [begin, close). Nothing is done per cycle: each frame keeps the cycle of its
// last touch; a touch adds the DROWSY cycles of the gap since the previous one, and closing
// adds every frame's DROWSY cycles since its last touch; the window's start clips older
// history. Line states outlive windows (a new window sees the lines as the last one left them);
// only powerOn() (a new Device: the cache is emptied) forgets them. Events are counted only
// while a window is open.
//
// DWL. Every hit counts the sub-word-lines (subword_bytes each) its byte mask enables: a
// sub-word is enabled if the access touches any of its bytes. Fills enable the whole line.
// Counted whether or not power.*.dwl is on (the energy model applies it).
//
// RTL co-simulation (rtl.drowsy_controller, docs/rtl-cosim.md): the decisions (is a touched
// frame DROWSY, how long does its access wait) are a DrowsyLineController's: the model, the
// verilated controller of each bank, or both in lockstep. The accounting stays here.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cache/cache_core.hpp"
#include "cache/drowsy_line_controller.hpp"
#include "common/platform_config.hpp"
#include "common/power_config.hpp"

namespace gpusc::cache {

inline constexpr size_t kPowerHistogramBuckets = 16;

struct CachePowerCounters {
  uint32_t frames = 0, subwordsPerLine = 0;
  uint64_t lookups = 0;                       // tag lookups (every access, hit or miss)
  uint64_t reads = 0, writes = 0, fills = 0;  // data-array line operations
  uint64_t readSubwords = 0, writeSubwords = 0, fillSubwords = 0;  // enabled sub-word-lines
  uint64_t wakeups = 0, hiddenWakeups = 0;        // drowsy lines woken (hidden: by look-ahead)
  uint64_t warpRequests = 0, activeThreads = 0;   // warp loads/stores/atomics; their threads
  uint64_t wakeStallCycles = 0;                   // extra cycles accesses waited for wake-ups
  uint64_t windowCycles = 0;                      // cycles of the accounting window
  uint64_t lineCycles = 0, drowsyLineCycles = 0;  // frames x window cycles; of which drowsy
  uint64_t lentLineCycles = 0;  // of which lent to shared memory (a unified L1's carve-out)
  std::array<uint64_t, kPowerHistogramBuckets> accessCountHistogram{};  // frames by accesses
                                                                        // (A0 .. A16384)
  std::array<uint64_t, kPowerHistogramBuckets> interAccessHistogram{};  // touches by cycles
                                                                        // since the frame's
                                                                        // previous touch
  // enabled sub-word-lines / ((reads + writes) x subwordsPerLine); 0 without reads or writes.
  double blockUtilisation() const;
  // Adds another cache's counters (the totals over units): counts and histograms add up, the
  // per-unit geometry (subwordsPerLine) and window length stay those of one unit.
  CachePowerCounters& operator+=(const CachePowerCounters& o);
};

// The counters as JSON (the "power_states" object of a cache's statistics): every counter, the
// drowsy fraction, the block utilisation over reads and writes and over reads alone, and the
// histograms as objects keyed by their bucket names.
nlohmann::json toJson(const CachePowerCounters& c);

// Histogram buckets. Access counts: bucket 0 holds frames never touched in the window (A0),
// bucket k in 1..14 counts in [2^(k-1), 2^k), bucket 15 counts of 16384 or more; named A0, A1,
// A2, A4, ..., A16384 by their lower bounds. Inter-access cycles: bucket 0 holds gaps of 0 or 1
// cycle, bucket k in 1..14 gaps in [2^k, 2^(k+1)), bucket 15 gaps of 32768 cycles or more;
// named "0-1", "2-3", "4-7", ..., "16384-32767", "32768+".
size_t accessCountBucket(uint64_t accesses);
size_t interAccessBucket(uint64_t cycles);
std::string accessCountBucketName(size_t bucket);
std::string interAccessBucketName(size_t bucket);

// Sub-words of `subwordBytes` (a power of two) with at least one byte set in `mask`.
uint32_t enabledSubwords(const ByteMask& mask, uint32_t subwordBytes);

class LinePower {
 public:
  // What a hit does to the data array: reads it, writes it, or neither (a store hit that only
  // invalidates the line).
  enum class Data : uint8_t { None, Read, Write };

  // `cfg`: the cache's power section, named `key` in errors ("power.l1d"); `cache` its geometry.
  // `lookaheadAllowed`: whether drowsy.lookahead may be set (the warp scheduler reaches only
  // the L1D). `rtlMode`, `rtlBlock`: rtl.drowsy_controller and rtl.drowsy_controller_block;
  // `instance` names the cache in lockstep messages ("L1 of sm3"). The window is open from
  // cycle 0.
  LinePower(const CachePowerConfig& cfg, const CacheConfig& cache, const std::string& key,
            bool lookaheadAllowed, const std::string& rtlMode = "model",
            const std::string& instance = "",
            const std::string& rtlBlock = "drowsy_line_controller");

  DrowsyPolicy policy() const { return policy_; }

  // A request (one line-sized transaction) of a warp's load, store or atomic whose warp had
  // `threads` active threads (seed 000 Table 1's utilisation counts them).
  void warpRequest(uint32_t threads) {
    if (!open_) return;
    ++c_.warpRequests;
    c_.activeThreads += threads;
  }
  // A tag lookup (one line of an access, hit or miss).
  void lookup() {
    if (open_) ++c_.lookups;
  }
  // A hit of frame (set, way) at `cycle` that touches the bytes `mask` of the line. `byWarp`:
  // the access comes from a warp's instruction (look-ahead applies); `waits`: the access waits
  // for the data array (a store forwarded at once does not). Returns the cycles the access
  // waits for the line to wake (0 if it does not wait).
  uint32_t hit(uint32_t set, uint32_t way, uint64_t cycle, const ByteMask& mask, Data data,
               bool byWarp, bool waits = true);
  // A line placed in frame (set, way) at `cycle`. Returns the cycles the fill waits.
  uint32_t fill(uint32_t set, uint32_t way, uint64_t cycle);

  // Power-on (a new Device): every frame untouched; a new window opens at `cycle`.
  void powerOn(uint64_t cycle);
  // Opens a new window at `cycle`: counters start again (an open window is discarded).
  void beginWindow(uint64_t cycle);
  // Closes the window: it covers [begin, max(cycle, the latest touch + 1)). Without an open
  // window, nothing happens.
  void closeWindow(uint64_t cycle);
  bool windowOpen() const { return open_; }
  // The counters of the last closed window, or of the open one so far (without its line-cycles
  // and access-count histogram, which closing adds).
  const CachePowerCounters& counters() const { return c_; }
  // The counters as closing the window at `cycle` would leave them (counters() if it is
  // closed); changes nothing.
  CachePowerCounters closedAt(uint64_t cycle) const;

  // A unified L1 lends ways [ways, all) to shared memory (L1DataCache::setSharedCarveout): those
  // frames hold live shared data, powered, so they are never DROWSY while lent.
  void setLentWaysFrom(uint32_t ways) { lentFrom_ = ways; }

  // Whether frame (set, way) is DROWSY in `cycle` as far as the touches so far go.
  bool drowsyAt(uint32_t set, uint32_t way, uint64_t cycle) const {
    return controller_->drowsyAt(set, way, cycle);
  }
  // Lockstep (rtl.drowsy_controller): the first divergence of a bank's RTL (empty: none).
  const std::string& divergence() const { return controller_->divergence(); }
  DrowsyLineController& controller() { return *controller_; }

 private:
  static constexpr uint64_t kNever = DrowsyLineController::kNever;

  uint32_t touch(uint32_t set, uint32_t way, uint64_t cycle, bool byWarp, bool waits);
  // Adds the window's end to `c`: window and line-cycles, trailing drowsy cycles, histogram.
  void close(CachePowerCounters& c, uint64_t cycle) const;

  DrowsyPolicy policy_;
  bool lookahead_;
  uint32_t ways_, subwordBytes_;
  uint32_t lentFrom_ = ~0u;  // first way lent to shared memory (none: ~0)

  std::unique_ptr<DrowsyLineController> controller_;  // the decisions, the last touches
  std::vector<uint32_t> windowAccesses_;              // per frame: touches in the window
  bool open_ = true;
  uint64_t windowStart_ = 0;
  uint64_t latestTouch_ = 0;  // the latest touch cycle in the window (its end is past it)
  bool touchedInWindow_ = false;
  CachePowerCounters c_;
};

}  // namespace gpusc::cache
