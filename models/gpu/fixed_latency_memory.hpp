// The memory system until the real hierarchy lands (issue #4): a TLM-2.0 approximately-timed
// target that accepts every request at once and answers it memory.fixed_latency core cycles
// later, with no bandwidth limit. It speaks the same base protocol as the real hierarchy.
#pragma once

#include <cstdint>
#include <unordered_map>

#include <tlm_utils/multi_passthrough_target_socket.h>
#include <tlm_utils/peq_with_cb_and_phase.h>
#include <systemc>
#include <tlm>

namespace gpusc::gpu {

class FixedLatencyMemory : public sc_core::sc_module {
 public:
  tlm_utils::multi_passthrough_target_socket<FixedLatencyMemory> sm_sockets;

  FixedLatencyMemory(const sc_core::sc_module_name& name, sc_core::sc_time latency);

  uint64_t requests() const { return requests_; }
  void resetStats() { requests_ = 0; }

 private:
  tlm::tlm_sync_enum nb_transport_fw(int id, tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase,
                                     sc_core::sc_time& delay);
  void respond(tlm::tlm_generic_payload& gp, const tlm::tlm_phase& phase);

  sc_core::sc_time latency_;
  tlm_utils::peq_with_cb_and_phase<FixedLatencyMemory> peq_;
  std::unordered_map<tlm::tlm_generic_payload*, int> route_;
  uint64_t requests_ = 0;
};

}  // namespace gpusc::gpu
