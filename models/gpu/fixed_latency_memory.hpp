// The memory system until the real hierarchy lands (issue #4): a TLM-2.0 approximately-timed
// target that accepts every request at once and answers it memory.fixed_latency core cycles
// later, with no bandwidth limit. It speaks the same base protocol as the real hierarchy.
#pragma once

#include <cstdint>
#include <queue>
#include <vector>

#include <tlm_utils/multi_passthrough_target_socket.h>
#include <systemc>
#include <tlm>

#include "common/edge_scheduler.hpp"

namespace gpusc::gpu {

class FixedLatencyMemory : public sc_core::sc_module {
 public:
  tlm_utils::multi_passthrough_target_socket<FixedLatencyMemory> sm_sockets;

  FixedLatencyMemory(const sc_core::sc_module_name& name, sc_core::sc_time latency);

  uint64_t requests() const { return requests_; }
  void resetStats() { requests_ = 0; }
  // In a platform: runs from `s` (its own process stays idle).
  void attach(EdgeScheduler& s) {
    due_.attach(s, s.add(EdgeScheduler::kMemoryAnswers, [this] { respond(); }));
  }

 private:
  SC_HAS_PROCESS(FixedLatencyMemory);

  struct Pending {
    uint64_t due;  // simulation time value of the response
    uint64_t seq;  // arrival order, for equal times
    tlm::tlm_generic_payload* gp;
    int socket;
    bool operator>(const Pending& o) const { return due != o.due ? due > o.due : seq > o.seq; }
  };

  tlm::tlm_sync_enum nb_transport_fw(int id, tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase,
                                     sc_core::sc_time& delay);
  void respond();  // SC_METHOD: answers every request that is due

  sc_core::sc_time latency_;
  // A heap rather than TLM's payload event queue, whose insertion is linear in the number of
  // outstanding requests (thousands here).
  std::priority_queue<Pending, std::vector<Pending>, std::greater<Pending>> pending_;
  sc_core::sc_event dueEvent_;  // its own process's, while not attached to a scheduler
  Wakeup due_{dueEvent_};
  uint64_t seq_ = 0;
  uint64_t requests_ = 0;
};

}  // namespace gpusc::gpu
