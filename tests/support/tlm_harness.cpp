#include "support/tlm_harness.hpp"

#include <stdexcept>

namespace gpusc::test {

void newSimulation() {
  sc_core::sc_curr_simcontext = new sc_core::sc_simcontext;
  sc_core::sc_default_global_context = sc_core::sc_curr_simcontext;
  sc_core::sc_set_time_resolution(1, sc_core::SC_FS);
}

// ---- ScriptedInitiator
// ---------------------------------------------------------------------------

ScriptedInitiator::ScriptedInitiator(const sc_core::sc_module_name& name, const Clock& clock)
    : sc_core::sc_module(name), socket("socket"), clock_(clock) {
  socket.register_nb_transport_bw(this, &ScriptedInitiator::nb_transport_bw);
  SC_METHOD(run);
  sensitive << wake_;
}

void ScriptedInitiator::add(const Request& r) {
  Outcome o;
  o.request = r;
  outcomes_.push_back(o);
  wake_.notify(sc_core::SC_ZERO_TIME);
}

bool ScriptedInitiator::allAnswered() const {
  for (const auto& o : outcomes_)
    if (!o.done) return false;
  return true;
}

void ScriptedInitiator::run() {
  const uint64_t now = clock_.now();
  while (!blocked_ && next_ < outcomes_.size()) {
    Outcome& o = outcomes_[next_];
    if (o.request.cycle > now) {
      wake_.notify(clock_.until(o.request.cycle));
      return;
    }
    tlm::tlm_generic_payload* gp = pool_.acquire();
    MemAccessExtension& ext = accessOf(*gp);
    ext.sm = o.request.sm;
    ext.kind = o.request.kind;
    ext.activeMask = o.request.activeMask;
    ext.byteMask = o.request.byteMask;
    ext.demandMask = o.request.demandMask;
    ext.tag = next_;
    gp->set_command(o.request.kind == AccessKind::Store ? tlm::TLM_WRITE_COMMAND
                                                        : tlm::TLM_READ_COMMAND);
    gp->set_address(o.request.addr);
    gp->set_data_length(o.request.bytes);
    gp->set_streaming_width(o.request.bytes);
    o.sent = now;
    ++next_;
    tlm::tlm_phase phase = tlm::BEGIN_REQ;
    sc_core::sc_time t = sc_core::SC_ZERO_TIME;
    tlm::tlm_sync_enum s = socket->nb_transport_fw(*gp, phase, t);
    if (s == tlm::TLM_UPDATED && phase == tlm::END_REQ) {
      o.accepted = now;
    } else if (s == tlm::TLM_ACCEPTED) {
      blocked_ = true;
    } else {
      throw std::logic_error(
          "ScriptedInitiator: the target must answer BEGIN_REQ with END_REQ or TLM_ACCEPTED");
    }
    gp->release();
  }
}

tlm::tlm_sync_enum ScriptedInitiator::nb_transport_bw(tlm::tlm_generic_payload& gp,
                                                      tlm::tlm_phase& phase, sc_core::sc_time&) {
  Outcome& o = outcomes_[accessOf(gp).tag];
  if (phase == tlm::END_REQ) {
    o.accepted = clock_.now();
    blocked_ = false;
    wake_.notify(sc_core::SC_ZERO_TIME);
    return tlm::TLM_ACCEPTED;
  }
  if (phase == tlm::BEGIN_RESP) {
    if (blocked_ && next_ > 0 && &outcomes_[next_ - 1] == &o) {  // BEGIN_RESP implies END_REQ
      o.accepted = clock_.now();
      blocked_ = false;
      wake_.notify(sc_core::SC_ZERO_TIME);
    }
    o.answered = clock_.now();
    o.done = true;
    return tlm::TLM_COMPLETED;
  }
  throw std::logic_error("ScriptedInitiator: unexpected phase");
}

// ---- RecordingTarget
// -------------------------------------------------------------------------------

RecordingTarget::RecordingTarget(const sc_core::sc_module_name& name, const Clock& clock,
                                 uint32_t latency, uint32_t maxOutstanding)
    : sc_core::sc_module(name),
      socket("socket"),
      clock_(clock),
      latency_(latency),
      maxOutstanding_(maxOutstanding) {
  socket.register_nb_transport_fw(this, &RecordingTarget::nb_transport_fw);
  SC_METHOD(respond);
  sensitive << due_;
  dont_initialize();
}

tlm::tlm_sync_enum RecordingTarget::nb_transport_fw(tlm::tlm_generic_payload& gp,
                                                    tlm::tlm_phase& phase, sc_core::sc_time&) {
  if (phase == tlm::END_RESP) return tlm::TLM_COMPLETED;
  if (phase != tlm::BEGIN_REQ) throw std::logic_error("RecordingTarget: unexpected phase");
  const MemAccessExtension& ext = accessOf(gp);
  received_.push_back(Received{clock_.now(), gp.get_address(), ext.kind, gp.get_command(),
                               gp.get_data_length(), ext.sm, ext.demandMask, ext.byteMask,
                               ext.sectorBytes});
  gp.acquire();
  if (pending_.size() >= maxOutstanding_) {
    waiting_ = &gp;
    return tlm::TLM_ACCEPTED;
  }
  const uint64_t at = clock_.now() + latency_;
  if (pending_.empty()) due_.notify(clock_.until(at));
  pending_.push_back({at, &gp});
  phase = tlm::END_REQ;
  return tlm::TLM_UPDATED;
}

void RecordingTarget::respond() {
  const uint64_t now = clock_.now();
  while (!pending_.empty() && pending_.front().first <= now) {
    tlm::tlm_generic_payload* gp = pending_.front().second;
    pending_.pop_front();
    gp->set_response_status(tlm::TLM_OK_RESPONSE);
    tlm::tlm_phase phase = tlm::BEGIN_RESP;
    sc_core::sc_time t = sc_core::SC_ZERO_TIME;
    socket->nb_transport_bw(*gp, phase, t);
    gp->release();
    if (waiting_) {  // room again: accept the held request
      tlm::tlm_generic_payload* w = waiting_;
      waiting_ = nullptr;
      pending_.push_back({now + latency_, w});
      tlm::tlm_phase end = tlm::END_REQ;
      sc_core::sc_time t2 = sc_core::SC_ZERO_TIME;
      socket->nb_transport_bw(*w, end, t2);
    }
  }
  if (!pending_.empty()) due_.notify(clock_.until(pending_.front().first));
}

}  // namespace gpusc::test
