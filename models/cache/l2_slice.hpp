// The L2 slice of one memory partition (cfg.l2.slice), between the interconnect and the
// partition's memory controller, on the L2 clock. It caches only its partition's addresses and
// indexes them by their address within the partition's channel (AddressMap::local), so every
// set is used; requests to the memory controller carry device addresses.
//
// Write-back, write-allocate:
//   reads (loads, instruction fetches, constant loads): a hit is answered hit_latency cycles
//     after its lookup; a miss takes an MSHR (or merges into the one fetching the line, up to
//     mshr_max_merge requests), the line is read from DRAM, placed, and the merged requests are
//     answered hit_latency cycles after the fill, one per cycle in the order they merged.
//   writes: a hit marks the line dirty and is acknowledged after hit_latency. A miss allocates:
//     a write covering the whole line (by its byte mask) places the line at once, dirty, with
//     no DRAM read; a partial write fetches the line first (as a read miss) and the fill is
//     dirty. Acknowledged hit_latency cycles after the line is there.
//   atomics: performed here, as a read-modify-write: a write that returns data, always
//     fetching the line on a miss.
//   evicting a dirty line writes it back (a line-sized write to DRAM, a payload of our own that
//     no requester waits for).
// Drowsy lines (power.l2.drowsy, LinePower): a hit or fill of a drowsy line waits for it to
// wake: its answer (every answer here waits for the data array: hit_latency), or the fill's
// waiters' answers and the write-back of the line it evicts, come that many cycles later. The
// divided-word-line counting uses a request's demandMask when it has one (an L1's line fetch:
// the bytes its warp needs), else its byteMask.
// A request covering several L2 lines (64-byte L2 lines under 128-byte L1 lines) is answered
// when all of its lines have been served. It is taken whole (every line's MSHR and miss-queue
// entry free at once) unless it covers more lines than the miss queue or the MSHRs hold (16-byte
// L2 lines under 128-byte L1 lines and a 4-entry miss queue): then it is split into its lines,
// taken in address order as their resources free up (stats: split_requests), as a slice whose
// input splits requests into line requests would.
//
// l2.slice.enabled = false: no L2; requests pass straight through to dram_socket and answers
// straight back (in the cycle they arrive).
//
// Back-pressure (END_REQ held): a bank busy this cycle, no free MSHR, a line's MSHR at its
// merge limit, or the miss queue (miss_queue requests waiting for dram_socket) full. At most
// one request leaves per cycle. Write-backs caused by fills join the queue even when it is
// full (a fill cannot be refused); they are bounded by the MSHRs.
//
// The module runs only in cycles where something is due and sleeps on an event otherwise.
#pragma once

#include <cstdint>
#include <limits>

#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>
#include <nlohmann/json.hpp>
#include <systemc>
#include <tlm>

#include "cache/cache_core.hpp"
#include "cache/line_power.hpp"
#include "common/address_map.hpp"
#include "common/clock.hpp"
#include "common/edge_scheduler.hpp"
#include "common/mem_access.hpp"
#include "common/platform_config.hpp"

namespace gpusc::cache {

class L2Slice : public sc_core::sc_module {
 public:
  tlm_utils::simple_target_socket<L2Slice> noc_socket;
  tlm_utils::simple_initiator_socket<L2Slice> dram_socket;

  // L2 slice `slice` of the platform (AddressMap::slice numbering: partition-major).
  // `replacement`: where cfg.l2.slice.replacement is looked up (the platform's Policies, handed
  // down by the Gpu, or the built-ins).
  L2Slice(const sc_core::sc_module_name& name, uint32_t slice, const PlatformConfig& cfg,
          PayloadPool& pool, const ReplacementRegistry& replacement = replacementPolicies());
  // In a platform: runs from `s` (its own process stays idle).
  void attach(EdgeScheduler& s) {
    wakeup_.attach(s, s.add(EdgeScheduler::kL2, [this] { run(); }));
  }

  // The tag array (indexed by partition-local addresses), MSHRs and banks; the power model
  // attaches its LineObserver here.
  CacheCore& core() { return core_; }
  const CacheCore& core() const { return core_; }
  const Clock& clock() const { return clock_; }
  bool enabled() const { return enabled_; }
  // Which lines the work since the statistics were reset (a launch) holds (wave sampling,
  // gpu/wave_sampler.hpp). A set's lines accessed or placed since then are its `touched`; they
  // count as `pending` too when they are fewer than its ways (the set still holds lines from
  // before, which LRU replacement evicts first) but would not be at `growth` times as many.
  struct LineCensus {
    uint64_t touched = 0, pending = 0;
  };
  void census(double growth, LineCensus& c) const;
  uint32_t slice() const { return slice_; }
  uint32_t partition() const { return partition_; }
  // The slice-local address of a device address of this slice, and back.
  uint64_t localOf(uint64_t addr) const { return map_.sliceLocal(addr); }
  uint64_t deviceOf(uint64_t local) const { return map_.device(slice_, local); }
  // Nothing held, queued, outstanding or due.
  bool idle() const;
  // The request held here longest (accepted with END_REQ held back, queued to go down, or an
  // answer not yet delivered), for the no-progress watchdog.
  std::optional<HeldRequest> oldestHeld() const;

  // The statistics; "power_states" holds the line power counters (toJson(powerCounters())
  // once the window is closed; while it is open, the window so far).
  nlohmann::json statsJson() const;
  // Statistics start again, and a new power window opens at the current cycle.
  void resetStats();
  // Power-on state: every line invalid (dirty data dropped; lines untouched: drowsy under a
  // drowsy policy). Only while idle().
  void resetState();

  // Line power states and data-array activity (line_power.hpp) over the accounting window
  // [beginPowerWindow(c0), closePowerWindow(c1)), cycles of the L2 clock (clock().now()).
  // Complete once the window is closed (while it is open: the events so far, without the
  // line-cycles and the access-count histogram).
  const CachePowerCounters& powerCounters() const { return power_.counters(); }
  // What the statistics report: an open window as if it closed after the cycle in progress.
  CachePowerCounters reportedPowerCounters() const { return power_.closedAt(clock_.now() + 1); }
  void beginPowerWindow(uint64_t cycle) { power_.beginWindow(cycle); }
  void closePowerWindow(uint64_t cycle) { power_.closeWindow(cycle); }
  // Lockstep (rtl.drowsy_controller): the first divergence of a bank's drowsy-line controller.
  const std::string& drowsyDivergence() const { return power_.divergence(); }
  cache::LinePower& linePower() { return power_; }

  // A host write (l2.host_writes) of the bytes `mask` of the line at slice-local address `line`,
  // at the current cycle: a present line takes them (and becomes dirty if `dirty`); a missing
  // one is placed holding them, dirty if `dirty`, when a store could place it without reading
  // DRAM (write-validate, or whole sectors), and is left to DRAM otherwise. A dirty line it
  // replaces is dropped (its write-back belongs to the copy, which is not timed). The line
  // power model is not told: a copy is neither timed nor counted (a drowsy line keeps its data
  // and its state). Only while idle().
  void hostWrite(uint64_t line, const ByteMask& mask, bool dirty);
  // Warming after a functional run (Gpu::warmL2): an access to the bytes `mask` of the line at
  // slice-local address `line`, at the current cycle, untimed and uncounted. A read makes the
  // line present with the sectors it needed (a miss places it, evicting the replacement
  // victim; a present line gains the sectors it lacked); a write (store or atomic) does what a
  // store does (the line takes the bytes and becomes dirty; a missing line is placed holding
  // them, with the sectors a partial write needs). A dirty line it replaces is dropped (its
  // write-back belongs to the functional run). The line power model is not told. Only while
  // idle().
  void warm(uint64_t line, const ByteMask& mask, bool write);

 private:
  SC_HAS_PROCESS(L2Slice);
  static constexpr uint64_t kWriteBackTag = std::numeric_limits<uint64_t>::max();

  tlm::tlm_sync_enum nb_transport_fw(tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase,
                                     sc_core::sc_time& delay);
  tlm::tlm_sync_enum nb_transport_bw(tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase,
                                     sc_core::sc_time& delay);
  void run();  // SC_METHOD: everything due at the current cycle

  Stall tryAccept(tlm::tlm_generic_payload& gp, uint64_t cycle);
  Stall passThrough(tlm::tlm_generic_payload& gp, uint64_t cycle);
  struct LineWalk;
  Stall lookup(tlm::tlm_generic_payload& gp, uint64_t cycle);
  Stall lookupInParts(LineWalk& w, uint64_t cycle);
  tlm::tlm_generic_payload* newRequest(tlm::tlm_command cmd, uint64_t deviceAddr, uint32_t sm,
                                       uint64_t tag);
  void evicted(const FillResult& r, uint32_t sm, uint64_t cycle);
  void retryHeld(uint64_t cycle);
  void fill(uint32_t mshr, uint64_t cycle);
  void answerAt(uint64_t cycle, tlm::tlm_generic_payload* gp);
  void wakeAt(uint64_t cycle) { wakeup_.at(cycle * clock_.periodValue()); }
  void noteStall(Stall reason, uint64_t cycle);

  const uint32_t slice_, partition_;
  PayloadPool& pool_;
  const Clock clock_;
  const bool enabled_;
  const AddressMap map_;
  const bool writeValidate_;  // l2.slice.write_allocate write-validate
  const uint32_t hitLatency_, missQueue_;
  CacheCore core_;
  LinePower power_;
  SendQueue down_;
  AnswerQueue answers_;
  PendingRequests pending_;
  sc_core::sc_event wake_;  // its own process's, while not attached to a scheduler
  Wakeup wakeup_{wake_};

  tlm::tlm_generic_payload* held_ = nullptr;  // request whose END_REQ is held back
  // The request being taken line by line (lookupInParts): the next line to take, when its
  // answer may go at the earliest, and its record once a line missed.
  struct InParts {
    tlm::tlm_generic_payload* gp = nullptr;
    uint64_t next = 0, ready = 0;
    uint32_t record = ~0u;
  };
  InParts inParts_;
  Stall heldFor_ = Stall::None;
  uint64_t heldAt_ = 0;  // cycle held_ arrived
  uint64_t heldSince_ = 0;
  uint64_t statsSince_ = 0;  // the cycle the statistics were reset
  uint64_t retryAt_ = 0;     // bank conflicts: when the bank is free
  uint32_t forwarded_ = 0;   // passed-through requests not yet answered (no L2)
  uint32_t writeBacks_ = 0;  // write-backs not yet acknowledged

  DataCacheStats stats_;
};

}  // namespace gpusc::cache
