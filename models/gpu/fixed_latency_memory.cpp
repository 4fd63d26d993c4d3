#include "gpu/fixed_latency_memory.hpp"

#include <fmt/format.h>

#include "common/error.hpp"

namespace gpusc::gpu {

FixedLatencyMemory::FixedLatencyMemory(const sc_core::sc_module_name& name,
                                       sc_core::sc_time latency)
    : sc_core::sc_module(name), sm_sockets("sm_sockets"), latency_(latency) {
  sm_sockets.register_nb_transport_fw(this, &FixedLatencyMemory::nb_transport_fw);
  SC_METHOD(respond);
  sensitive << dueEvent_;
  dont_initialize();
}

tlm::tlm_sync_enum FixedLatencyMemory::nb_transport_fw(int id, tlm::tlm_generic_payload& gp,
                                                       tlm::tlm_phase& phase,
                                                       sc_core::sc_time& delay) {
  if (phase == tlm::END_RESP) return tlm::TLM_COMPLETED;
  if (phase != tlm::BEGIN_REQ) throw InternalError(fmt::format("{}: unexpected phase", name()));
  ++requests_;
  gp.acquire();
  const sc_core::sc_time wait = delay + latency_;
  const uint64_t due = (sc_core::sc_time_stamp() + wait).value();
  if (pending_.empty() || due < pending_.top().due) due_.after(wait);
  pending_.push(Pending{due, seq_++, &gp, id});
  phase = tlm::END_REQ;
  return tlm::TLM_UPDATED;
}

void FixedLatencyMemory::respond() {
  const uint64_t now = sc_core::sc_time_stamp().value();
  while (!pending_.empty() && pending_.top().due <= now) {
    Pending p = pending_.top();
    pending_.pop();
    p.gp->set_response_status(tlm::TLM_OK_RESPONSE);
    tlm::tlm_phase phase = tlm::BEGIN_RESP;
    sc_core::sc_time t = sc_core::SC_ZERO_TIME;
    sm_sockets[p.socket]->nb_transport_bw(*p.gp, phase, t);  // the initiator completes it
    p.gp->release();
  }
  if (!pending_.empty()) due_.after(sc_core::sc_time::from_value(pending_.top().due - now));
}

}  // namespace gpusc::gpu
