// The L1 data cache of one SM (Fermi policies, cfg.sm.l1d), between the SM's memory socket and
// the interconnect, on the core clock.
//
//   loads    look up their line(s) in the cycle they are accepted. A hit is answered hit_latency
//            cycles later. A miss takes an MSHR (or merges into the one already fetching the
//            line, up to mshr_max_merge requests) and one line-sized read, a payload of our own,
//            goes down; the fill places the line (replacement policy by name) and answers the
//            merged requests hit_latency cycles after it, when the data have passed the data
//            array, one per cycle in the order they merged (the MSHR replays them).
//            Miss latency = hit_latency + the time the next level takes.
//   stores   write-evict (a store hit invalidates the line; write_policy write-through keeps it)
//            and write-no-allocate (a store miss places nothing). Every store is forwarded down
//            (the same payload) in the cycle of its lookup and answered when its
//            acknowledgement returns.
//   drowsy lines (power.l1d.drowsy, LinePower): a hit or fill of a drowsy line waits for it to
//            wake: a load hit is answered, a fill written (and its waiters answered) that many
//            cycles later (less the look-ahead's cycles for hits, with drowsy.lookahead); a
//            store is not delayed (it is forwarded in its lookup cycle and never waits for the
//            data array). The line fetch of a miss carries the request's bytes of the line as
//            its demandMask (the L2's divided-word-line counting uses it).
//   atomics, instruction fetches, constant loads: bypass the cache (forwarded, answered when
//            the answer returns). With l1d.enabled = false every request bypasses.
//
// Back-pressure (END_REQ held): a bank busy this cycle (banks serve one lookup or fill per
// cycle), no free MSHR, the line's MSHR at its merge limit, or the miss queue (miss_queue
// requests waiting for the memory socket) full. At most one request leaves per cycle.
//
// The module runs only in cycles where something is due (an answer, a request to send, a
// held request to retry); it sleeps on an event otherwise.
#pragma once

#include <cstdint>

#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>
#include <nlohmann/json.hpp>
#include <systemc>
#include <tlm>

#include "cache/cache_core.hpp"
#include "cache/line_power.hpp"
#include "common/clock.hpp"
#include "common/event_outbox.hpp"
#include "common/mem_access.hpp"
#include "common/platform_config.hpp"

namespace gpusc::cache {

class L1DataCache : public sc_core::sc_module {
 public:
  tlm_utils::simple_target_socket<L1DataCache> sm_socket;
  tlm_utils::simple_initiator_socket<L1DataCache> memory_socket;

  // `replacement`: where cfg.sm.l1d.replacement is looked up (the platform's Policies, handed
  // down by the Gpu, or the built-ins).
  L1DataCache(const sc_core::sc_module_name& name, uint32_t smId, const PlatformConfig& cfg,
              PayloadPool& pool, const ReplacementRegistry& replacement = replacementPolicies());

  // Notifications go through `o` (its SM's outbox, which holds them while a host thread
  // evaluates the SM's cycle and the requests it sends here).
  void setOutbox(EventOutbox* o) { outbox_ = o; }
  // In a platform: runs from `s` (its own process stays idle).
  void attach(EdgeScheduler& s) {
    wakeup_.attach(s, s.add(EdgeScheduler::kL1, [this] { run(); }));
  }

  // The tag array, MSHRs and banks; the power model attaches its LineObserver here.
  CacheCore& core() { return core_; }
  const CacheCore& core() const { return core_; }
  const Clock& clock() const { return clock_; }
  bool enabled() const { return enabled_; }
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
  // Power-on state: every line invalid (and untouched: drowsy under a drowsy policy). Only
  // while idle().
  void resetState();
  // A unified L1 (sm.unified_l1) lends `sharedBytes` of its array, whole ways, to shared memory
  // for the next launch; the lines of the ways lent leave. Only while idle().
  void setSharedCarveout(uint32_t sharedBytes);
  // Invalidates every line, as the driver does between grids (sm.invalidate_l1d_at_launch). Only
  // while idle().
  void invalidateLines();
  uint32_t sharedCarveout() const { return carveout_; }

  // Line power states and data-array activity (line_power.hpp) over the accounting window
  // [beginPowerWindow(c0), closePowerWindow(c1)), cycles of the core clock (clock().now()).
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

 private:
  SC_HAS_PROCESS(L1DataCache);

  tlm::tlm_sync_enum nb_transport_fw(tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase,
                                     sc_core::sc_time& delay);
  tlm::tlm_sync_enum nb_transport_bw(tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase,
                                     sc_core::sc_time& delay);
  void run();  // SC_METHOD: everything due at the current cycle

  // Accepts `gp` at `cycle` (and does its lookup), or says why not.
  Stall tryAccept(tlm::tlm_generic_payload& gp, uint64_t cycle);
  Stall forward(tlm::tlm_generic_payload& gp, uint64_t cycle);
  Stall load(tlm::tlm_generic_payload& gp, uint64_t cycle);
  Stall store(tlm::tlm_generic_payload& gp, uint64_t cycle);
  void retryHeld(uint64_t cycle);
  void fill(uint32_t mshr, uint64_t cycle);
  void answerAt(uint64_t cycle, tlm::tlm_generic_payload* gp);
  void wakeAt(uint64_t cycle) {
    if (outbox_)
      outbox_->notify(wakeup_, cycle * clock_.periodValue());
    else
      wakeup_.at(cycle * clock_.periodValue());
  }
  void noteStall(Stall reason, uint64_t cycle);

  const uint32_t smId_;
  PayloadPool& pool_;
  const Clock clock_;
  const bool enabled_;
  const bool writeThrough_;  // a store hit keeps the line (else write-evict invalidates it)
  const bool unified_;       // sm.unified_l1: shared memory is carved out of this array
  const uint32_t hitLatency_, missQueue_;
  CacheCore core_;
  LinePower power_;
  SendQueue down_;
  AnswerQueue answers_;
  PendingRequests pending_;
  sc_core::sc_event wake_;  // its own process's, while not attached to a scheduler
  Wakeup wakeup_{wake_};
  EventOutbox* outbox_ = nullptr;  // its SM's (setOutbox)

  tlm::tlm_generic_payload* held_ = nullptr;  // request whose END_REQ is held back
  Stall heldFor_ = Stall::None;
  uint64_t heldAt_ = 0;     // cycle held_ arrived
  uint64_t heldSince_ = 0;  // cycle from which heldFor_ is accounted
  uint64_t retryAt_ = 0;    // bank conflicts: when the bank is free
  uint32_t forwarded_ = 0;  // forwarded requests not yet answered by the next level
  uint32_t carveout_ = 0;   // bytes of the array lent to shared memory (setSharedCarveout)

  DataCacheStats stats_;
};

}  // namespace gpusc::cache
