// The memory controller of one memory partition and its DRAM channel (DRAM clock domain).
//
//   l2_socket (BEGIN_REQ) -> request queue (memory.controller.queue_entries; full: END_REQ is
//   held until a request leaves) -> scheduling policy (memory.controller.scheduler) issues one
//   DRAM command per command cycle -> DramChannel timing -> last burst off the data bus
//   -> + memory.controller.latency core cycles -> BEGIN_RESP on l2_socket
//
// Requests carry device addresses of this partition; AddressMap gives their bank and row. A
// request leaves the queue when its last column command issues (freeing its entry), and is
// answered, reads and writes alike, on the first core-clock edge after its last burst has left
// the data bus plus the controller latency (GPGPU-Sim's dram_latency). Answers go out in the
// order they become due.
//
// Idle costs nothing: the scheduling process evaluates DRAM cycles only while requests are
// queued, and then only the cycles at which a command may issue (it sleeps until the earliest
// one, or until a request arrives). Refresh (tREFI > 0) is accounted lazily: an idle channel
// does not wake for it; when work arrives, every refresh that fell due meanwhile is applied with
// the timing it would have had on time (so a request arriving during tRFC waits for it). While
// requests are queued the controller wakes for each refresh when it falls due; from then on no
// command issues until the refresh (PRE of the open banks, REF) is done.
//
// Statistics (statsJson, since resetStats): requests, bytes, row hits / misses (bank closed) /
// conflicts (another row open) by what each request's first column command needed, commands,
// data-bus busy cycles and utilisation (busy / elapsed DRAM cycles), time-weighted queue
// occupancy, and the read latency from BEGIN_REQ to BEGIN_RESP in core cycles (average, max,
// power-of-two histogram), including any wait for END_REQ.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <queue>
#include <vector>

#include <optional>

#include <tlm_utils/multi_passthrough_target_socket.h>
#include <nlohmann/json.hpp>
#include <systemc>
#include <tlm>

#include "common/address_map.hpp"
#include "common/clock.hpp"
#include "common/edge_scheduler.hpp"
#include "common/mem_access.hpp"
#include "common/platform_config.hpp"
#include "dram/dram_channel.hpp"
#include "dram/dram_scheduler.hpp"

namespace gpusc::dram {

class MemoryController : public sc_core::sc_module {
 public:
  // One port per L2 slice of the partition (l2.slices_per_partition), in slice order.
  tlm_utils::multi_passthrough_target_socket<MemoryController> l2_socket;

  // `schedulers`: where cfg.memory.controller.scheduler is looked up (the platform's Policies,
  // handed down by the Gpu, or the built-ins).
  MemoryController(const sc_core::sc_module_name& name, uint32_t partition,
                   const PlatformConfig& cfg,
                   const DramSchedulerRegistry& schedulers = dramSchedulingPolicies());

  uint32_t partition() const { return partition_; }
  const DramChannel& channel() const { return channel_; }
  uint32_t queued() const { return queue_.size(); }

  nlohmann::json statsJson() const;
  // Command counts since resetStats() for the energy model (as in statsJson(), cheaply).
  struct EnergyCounts {
    uint64_t requests = 0, activates = 0, precharges = 0, readBursts = 0, writeBursts = 0,
             refreshes = 0;
  };
  EnergyCounts energyCounts() const;
  // Statistics start again now (a new launch); the channel keeps its open rows.
  void resetStats();
  // Power-on state (a new Device): rows closed, refresh schedule restarted, statistics reset.
  // The controller must be idle (nothing queued or unanswered).
  void resetState();
  // In a platform: runs from `s` (its own processes stay idle).
  void attach(EdgeScheduler& s) {
    work_.attach(s, s.add(EdgeScheduler::kMemoryController, [this] { schedule(); }));
    answerDue_.attach(s, s.add(EdgeScheduler::kMemoryAnswers, [this] { respond(); }));
  }
  bool idle() const { return queue_.empty() && held_.empty() && answers_.empty(); }
  // The request held here longest (not accepted yet, queued, or answered but not delivered), for
  // the no-progress watchdog.
  std::optional<HeldRequest> oldestHeld() const;

 private:
  SC_HAS_PROCESS(MemoryController);

  static constexpr unsigned kLatencyBuckets = 64;  // power-of-two buckets: [2^i, 2^(i+1))

  struct Answer {
    uint64_t coreCycle;  // when BEGIN_RESP goes out
    uint64_t seq;        // arrival order, among equal cycles
    tlm::tlm_generic_payload* gp;
    uint64_t arrivalCoreCycle;
    uint32_t port;
    bool write;
    bool operator>(const Answer& o) const {
      return coreCycle != o.coreCycle ? coreCycle > o.coreCycle : seq > o.seq;
    }
  };

  // A min-heap of answers on a vector reserved up front (no allocation in steady state).
  class AnswerHeap : public std::priority_queue<Answer, std::vector<Answer>, std::greater<Answer>> {
   public:
    void reserve(size_t n) { c.reserve(n); }
    void clear() { c.clear(); }
  };

  struct Stats {
    uint64_t reads = 0, writes = 0, bytes = 0;
    uint64_t rowHits = 0, rowMisses = 0, rowConflicts = 0;
    uint64_t heldRequests = 0;  // BEGIN_REQs that found the queue full
    uint64_t readLatencySum = 0, readLatencyMax = 0, readsAnswered = 0;
    std::array<uint64_t, kLatencyBuckets> readLatencyHistogram{};
    double queueArea = 0;  // queue entries x femtoseconds
    uint32_t queueMax = 0;
  };

  struct Held {  // a request that found the queue full, waiting for END_REQ
    tlm::tlm_generic_payload* gp;
    uint64_t arrival;
    int port;
  };

  tlm::tlm_sync_enum nb_transport_fw(int port, tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase,
                                     sc_core::sc_time& delay);
  // Bursts of a write that hold bytes of its byte mask.
  uint32_t maskedBursts(const tlm::tlm_generic_payload& gp) const;
  void enqueue(tlm::tlm_generic_payload& gp, uint64_t arrivalCoreCycle, int port);
  void schedule();  // SC_METHOD, DRAM clock: one command per evaluated cycle
  void respond();   // SC_METHOD: sends the answers that are due
  void issueColumn(uint32_t slot, uint64_t now);
  void issueRow(uint32_t slot, uint64_t now);
  void queueSizeChanging();  // accounts the occupancy up to now
  uint64_t refreshesPending(uint64_t dramCycle) const;

  const uint32_t partition_;
  const MemoryConfig memCfg_;
  const Clock core_, dram_;
  const AddressMap map_;
  const uint32_t burstBytes_;
  DramChannel channel_;
  std::unique_ptr<DramSchedulingPolicy> policy_;
  RequestQueue queue_;
  AnswerHeap answers_;
  std::vector<Held> held_;        // at most one per port, oldest first
  std::optional<Held> toAccept_;  // END_REQ to send at the end of this cycle
  uint64_t seq_ = 0;
  uint64_t refreshDue_ = kNever;  // DRAM cycle of the next refresh (kNever: disabled)
  // The processes' own events, while not attached to a scheduler.
  sc_core::sc_event workEvent_, answerEvent_;
  Wakeup work_{workEvent_};         // schedule(): a command cycle
  Wakeup answerDue_{answerEvent_};  // respond(): an answer is due

  Stats stats_;
  uint64_t statsStart_ = 0;       // time value of the last resetStats()
  uint64_t lastQueueChange_ = 0;  // time value of the last queue size change
};

}  // namespace gpusc::dram
