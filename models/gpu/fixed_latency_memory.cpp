#include "gpu/fixed_latency_memory.hpp"

#include <fmt/format.h>

#include "common/error.hpp"

namespace gpusc::gpu {

FixedLatencyMemory::FixedLatencyMemory(const sc_core::sc_module_name& name,
                                       sc_core::sc_time latency)
    : sc_core::sc_module(name),
      sm_sockets("sm_sockets"),
      latency_(latency),
      peq_(this, &FixedLatencyMemory::respond) {
  sm_sockets.register_nb_transport_fw(this, &FixedLatencyMemory::nb_transport_fw);
}

tlm::tlm_sync_enum FixedLatencyMemory::nb_transport_fw(int id, tlm::tlm_generic_payload& gp,
                                                       tlm::tlm_phase& phase,
                                                       sc_core::sc_time& delay) {
  if (phase == tlm::END_RESP) return tlm::TLM_COMPLETED;
  if (phase != tlm::BEGIN_REQ) throw InternalError(fmt::format("{}: unexpected phase", name()));
  ++requests_;
  gp.acquire();
  route_[&gp] = id;
  peq_.notify(gp, tlm::BEGIN_RESP, delay + latency_);
  phase = tlm::END_REQ;
  return tlm::TLM_UPDATED;
}

void FixedLatencyMemory::respond(tlm::tlm_generic_payload& gp, const tlm::tlm_phase&) {
  auto it = route_.find(&gp);
  const int id = it->second;
  route_.erase(it);
  gp.set_response_status(tlm::TLM_OK_RESPONSE);
  tlm::tlm_phase phase = tlm::BEGIN_RESP;
  sc_core::sc_time t = sc_core::SC_ZERO_TIME;
  sm_sockets[id]->nb_transport_bw(gp, phase, t);  // the initiator completes the transaction
  gp.release();
}

}  // namespace gpusc::gpu
