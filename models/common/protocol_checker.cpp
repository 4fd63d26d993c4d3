#include "common/protocol_checker.hpp"

#include <algorithm>
#include <utility>

#include <fmt/format.h>

#include "common/mem_access.hpp"

namespace gpusc {

namespace {

const char* syncName(tlm::tlm_sync_enum s) {
  switch (s) {
    case tlm::TLM_ACCEPTED:
      return "TLM_ACCEPTED";
    case tlm::TLM_UPDATED:
      return "TLM_UPDATED";
    case tlm::TLM_COMPLETED:
      return "TLM_COMPLETED";
  }
  return "an invalid tlm_sync_enum";
}

const char* commandName(tlm::tlm_command c) {
  switch (c) {
    case tlm::TLM_READ_COMMAND:
      return "TLM_READ_COMMAND";
    case tlm::TLM_WRITE_COMMAND:
      return "TLM_WRITE_COMMAND";
    case tlm::TLM_IGNORE_COMMAND:
      return "TLM_IGNORE_COMMAND";
  }
  return "an invalid command";
}

bool zero(const sc_core::sc_time& t) { return t == sc_core::SC_ZERO_TIME; }

}  // namespace

ProtocolChecker::ProtocolChecker(const sc_core::sc_module_name& name)
    : sc_core::sc_module(name), upstream("upstream"), downstream("downstream") {
  // Registering b_transport too keeps the target socket from spawning its b-to-nb converter.
  upstream.register_nb_transport_fw(this, &ProtocolChecker::nb_transport_fw);
  upstream.register_b_transport(this, &ProtocolChecker::b_transport);
  upstream.register_transport_dbg(this, &ProtocolChecker::transport_dbg);
  upstream.register_get_direct_mem_ptr(this, &ProtocolChecker::get_direct_mem_ptr);
  downstream.register_nb_transport_bw(this, &ProtocolChecker::nb_transport_bw);
  downstream.register_invalidate_direct_mem_ptr(this, &ProtocolChecker::invalidate_direct_mem_ptr);
}

void ProtocolChecker::reset() {
  inFlight_.clear();
  answered_.clear();
  open_ = nullptr;
  violations_.clear();
  seq_ = 0;
  requests_ = responses_ = 0;
  maxOutstanding_ = 0;
}

void ProtocolChecker::violation(uint64_t address, const std::string& what) {
  violations_.push_back(fmt::format("{} {}: 0x{:x}: {}", sc_core::sc_time_stamp().to_string(),
                                    name(), address, what));
}

// ---- forward path ------------------------------------------------------------------------------

tlm::tlm_sync_enum ProtocolChecker::nb_transport_fw(tlm::tlm_generic_payload& gp,
                                                    tlm::tlm_phase& phase,
                                                    sc_core::sc_time& delay) {
  checkLifetimes();
  if (!zero(delay))
    violation(gp.get_address(), fmt::format("{} on the forward path with a non-zero delay ({})",
                                            phase.get_name(), delay.to_string()));
  if (phase == tlm::BEGIN_REQ) return beginRequest(gp, phase, delay);

  if (phase == tlm::END_RESP)
    violation(gp.get_address(),
              "END_RESP on the forward path: by convention the initiator completes a response by "
              "returning TLM_COMPLETED to BEGIN_RESP");
  else
    violation(gp.get_address(),
              fmt::format("phase {} on the forward path (only BEGIN_REQ)", phase.get_name()));
  const std::string sent = phase.get_name();
  const sc_core::sc_time sentDelay = delay;
  const tlm::tlm_sync_enum s = downstream->nb_transport_fw(gp, phase, delay);
  if (delay != sentDelay && !zero(delay))
    violation(gp.get_address(), fmt::format("the target returned a non-zero delay ({}) to {}",
                                            delay.to_string(), sent));
  return s;
}

void ProtocolChecker::checkPayload(const tlm::tlm_generic_payload& gp) {
  const uint64_t a = gp.get_address();
  if (!gp.has_mm())
    violation(a, "BEGIN_REQ of a payload without a memory manager (not from a PayloadPool)");
  const MemAccessExtension* ext = gp.get_extension<MemAccessExtension>();
  if (!ext) violation(a, "BEGIN_REQ of a payload without a MemAccessExtension");
  const unsigned len = gp.get_data_length();
  if (len == 0)
    violation(a, "BEGIN_REQ with a data length of 0");
  else if (len > PayloadPool::kDataBytes)
    violation(a, fmt::format("BEGIN_REQ with a data length of {} (more than the {} bytes a "
                             "request covers)",
                             len, PayloadPool::kDataBytes));
  if (!gp.get_data_ptr()) violation(a, "BEGIN_REQ with a null data pointer");
  if (ext) {
    const tlm::tlm_command want =
        ext->kind == AccessKind::Store ? tlm::TLM_WRITE_COMMAND : tlm::TLM_READ_COMMAND;
    if (gp.get_command() != want)
      violation(a, fmt::format("BEGIN_REQ of a {} access with command {} (expected {})",
                               accessKindName(ext->kind), commandName(gp.get_command()),
                               commandName(want)));
  }
}

tlm::tlm_sync_enum ProtocolChecker::beginRequest(tlm::tlm_generic_payload& gp,
                                                 tlm::tlm_phase& phase, sc_core::sc_time& delay) {
  ++requests_;
  const uint64_t a = gp.get_address();
  checkPayload(gp);
  if (open_) {
    const auto prev = inFlight_.find(open_);
    violation(a, fmt::format("BEGIN_REQ while the previous request (0x{:x}) has not ended (no "
                             "END_REQ or BEGIN_RESP yet)",
                             prev == inFlight_.end() ? 0 : prev->second.address));
  }
  if (const auto it = inFlight_.find(&gp); it != inFlight_.end()) {
    violation(a, fmt::format("BEGIN_REQ of a payload already in flight (its request of 0x{:x} "
                             "from {} is not answered)",
                             it->second.address, it->second.began.to_string()));
    inFlight_.erase(it);
  }
  answered_.erase(&gp);
  Flight f;
  f.seq = seq_++;
  f.address = a;
  f.began = sc_core::sc_time_stamp();
  f.managed = gp.has_mm();
  const int refsBefore = gp.get_ref_count();
  if (f.managed && refsBefore <= 0) {
    violation(a,
              "BEGIN_REQ of a payload with reference count 0 (the initiator holds no reference)");
    f.lifetimeReported = true;
  }
  inFlight_[&gp] = f;
  open_ = &gp;
  maxOutstanding_ = std::max(maxOutstanding_, inFlight_.size());

  const sc_core::sc_time sentDelay = delay;
  const tlm::tlm_sync_enum s = downstream->nb_transport_fw(gp, phase, delay);

  if (delay != sentDelay && !zero(delay))
    violation(a, fmt::format("the target returned a non-zero delay ({}) to BEGIN_REQ",
                             delay.to_string()));
  // The target may have answered it within the call (on the backward path): look it up again.
  auto it = inFlight_.find(&gp);
  const bool inFlight = it != inFlight_.end();
  switch (s) {
    case tlm::TLM_ACCEPTED:
      if (phase != tlm::BEGIN_REQ)
        violation(a, fmt::format("the target returned TLM_ACCEPTED to BEGIN_REQ but changed the "
                                 "phase to {}",
                                 phase.get_name()));
      break;
    case tlm::TLM_UPDATED:
      if (phase == tlm::END_REQ) {
        if (!inFlight)
          violation(a, "the target returned END_REQ for a request it has already answered");
        else if (!it->second.requestOpen)
          violation(a,
                    "second END_REQ: the target returned END_REQ after ending the request "
                    "phase on the backward path");
        else
          endRequestPhase(gp, it->second);
      } else if (phase == tlm::BEGIN_RESP) {
        ++responses_;
        violation(a,
                  "the target returned the response (TLM_UPDATED with BEGIN_RESP) on the "
                  "forward path: responses come with BEGIN_RESP on the backward path");
        if (inFlight) {
          if (open_ == &gp) open_ = nullptr;
          inFlight_.erase(it);
          answered_.insert(&gp);
        }
      } else {
        violation(a, fmt::format("the target returned TLM_UPDATED to BEGIN_REQ with phase {} "
                                 "(expected END_REQ)",
                                 phase.get_name()));
      }
      break;
    case tlm::TLM_COMPLETED:
      violation(a, "the target returned TLM_COMPLETED on the forward path (never allowed)");
      if (inFlight) {  // the transaction is over: nothing more is expected of it
        if (open_ == &gp) open_ = nullptr;
        inFlight_.erase(it);
        answered_.insert(&gp);
      }
      break;
  }
  // A target that keeps the payload must have taken a reference of its own: the initiator
  // releases its reference after the call.
  it = inFlight_.find(&gp);
  if (it != inFlight_.end() && it->second.managed && !it->second.lifetimeReported &&
      gp.get_ref_count() <= refsBefore) {
    it->second.lifetimeReported = true;
    violation(a, fmt::format("the target kept the payload without acquire() (reference count {} "
                             "before and {} after BEGIN_REQ): it is released too early",
                             refsBefore, gp.get_ref_count()));
  }
  return s;
}

void ProtocolChecker::b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
  violation(gp.get_address(),
            "b_transport: the memory sockets are approximately timed (nb_transport_fw only)");
  downstream->b_transport(gp, delay);
}

unsigned int ProtocolChecker::transport_dbg(tlm::tlm_generic_payload& gp) {
  return downstream->transport_dbg(gp);
}

bool ProtocolChecker::get_direct_mem_ptr(tlm::tlm_generic_payload& gp, tlm::tlm_dmi& dmi) {
  return downstream->get_direct_mem_ptr(gp, dmi);
}

// ---- backward path -----------------------------------------------------------------------------

tlm::tlm_sync_enum ProtocolChecker::nb_transport_bw(tlm::tlm_generic_payload& gp,
                                                    tlm::tlm_phase& phase,
                                                    sc_core::sc_time& delay) {
  checkLifetimes();
  const uint64_t a = gp.get_address();
  if (!zero(delay))
    violation(a, fmt::format("{} on the backward path with a non-zero delay ({})", phase.get_name(),
                             delay.to_string()));
  const tlm::tlm_phase sent = phase;
  if (phase == tlm::END_REQ)
    endRequest(gp);
  else if (phase == tlm::BEGIN_RESP)
    beginResponse(gp);
  else
    violation(a, fmt::format("phase {} on the backward path (only END_REQ and BEGIN_RESP)",
                             phase.get_name()));

  const sc_core::sc_time sentDelay = delay;
  const tlm::tlm_sync_enum s = upstream->nb_transport_bw(gp, phase, delay);

  if (delay != sentDelay && !zero(delay))
    violation(a, fmt::format("the initiator returned a non-zero delay ({}) to {}",
                             delay.to_string(), sent.get_name()));
  if (sent == tlm::END_REQ && s != tlm::TLM_ACCEPTED)
    violation(a, fmt::format("the initiator returned {} to END_REQ (expected TLM_ACCEPTED)",
                             syncName(s)));
  if (sent == tlm::BEGIN_RESP && s != tlm::TLM_COMPLETED)
    violation(a, fmt::format("the initiator returned {} to BEGIN_RESP instead of TLM_COMPLETED "
                             "(a response is taken at once)",
                             syncName(s)));
  return s;
}

void ProtocolChecker::endRequestPhase(const tlm::tlm_generic_payload& gp, Flight& f) {
  f.requestOpen = false;
  if (open_ == &gp) open_ = nullptr;
}

void ProtocolChecker::endRequest(tlm::tlm_generic_payload& gp) {
  const auto it = inFlight_.find(&gp);
  if (it == inFlight_.end())
    violation(gp.get_address(),
              answered_.count(&gp)
                  ? "END_REQ after BEGIN_RESP: the response already ended the request phase"
                  : "END_REQ for a payload whose request is not open (not in flight)");
  else if (!it->second.requestOpen)
    violation(gp.get_address(), "second END_REQ: the request phase has already ended");
  else
    endRequestPhase(gp, it->second);
}

void ProtocolChecker::beginResponse(tlm::tlm_generic_payload& gp) {
  ++responses_;
  const uint64_t a = gp.get_address();
  if (gp.get_response_status() != tlm::TLM_OK_RESPONSE)
    violation(a, fmt::format("BEGIN_RESP with response status {} (expected TLM_OK_RESPONSE)",
                             gp.get_response_string()));
  const auto it = inFlight_.find(&gp);
  if (it == inFlight_.end()) {
    violation(a, answered_.count(&gp)
                     ? "BEGIN_RESP for a payload already answered (one response per request)"
                     : "BEGIN_RESP for a payload that is not in flight (no BEGIN_REQ)");
    return;
  }
  if (it->second.requestOpen) endRequestPhase(gp, it->second);  // BEGIN_RESP implies END_REQ
  inFlight_.erase(it);
  answered_.insert(&gp);
}

void ProtocolChecker::invalidate_direct_mem_ptr(sc_dt::uint64 start, sc_dt::uint64 end) {
  upstream->invalidate_direct_mem_ptr(start, end);
}

// ---- lifetime and end --------------------------------------------------------------------------

void ProtocolChecker::checkLifetimes() {
  std::vector<std::pair<uint64_t, Flight*>> found;
  for (auto& [gp, f] : inFlight_)
    if (f.managed && !f.lifetimeReported && gp->get_ref_count() <= 0) found.push_back({f.seq, &f});
  std::sort(found.begin(), found.end(),
            [](const auto& x, const auto& y) { return x.first < y.first; });
  for (auto& [seq, f] : found) {
    f->lifetimeReported = true;
    violation(f->address, fmt::format("reference count 0 while in flight (BEGIN_REQ at {}): the "
                                      "payload was released too early",
                                      f->began.to_string()));
  }
}

void ProtocolChecker::finish() {
  std::vector<std::pair<uint64_t, Flight*>> left;
  for (auto& [gp, f] : inFlight_)
    if (!f.finishReported) left.push_back({f.seq, &f});
  std::sort(left.begin(), left.end(),
            [](const auto& x, const auto& y) { return x.first < y.first; });
  for (auto& [seq, f] : left) {
    f->finishReported = true;
    violation(f->address,
              fmt::format("request never answered (BEGIN_REQ at {}, {})", f->began.to_string(),
                          f->requestOpen ? "never accepted either" : "accepted"));
  }
}

void ProtocolChecker::end_of_simulation() { finish(); }

}  // namespace gpusc
