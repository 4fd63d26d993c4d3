// ProtocolChecker: a pass-through placed on one connection of the memory system (initiator ->
// `upstream`, `downstream` -> target) that checks the socket conventions of
// docs/memory-system.md. It forwards every call and every return unchanged, in both directions,
// with no delay, no event and no process of its own, and records each violation (simulation
// time, the checker's name, the payload's address, one line of description) without throwing.
//
// What is checked, per connection:
//  Forward path (initiator -> target)
//   - the phase is BEGIN_REQ (END_RESP is flagged as well: responses are completed by returning
//     TLM_COMPLETED to BEGIN_RESP, never with END_RESP; any other phase is flagged);
//   - no BEGIN_REQ while the previous request of the socket has not ended (neither END_REQ nor
//     BEGIN_RESP yet), and no BEGIN_REQ of a payload that is already in flight;
//   - the payload has a memory manager and a MemAccessExtension, a data length of 1 to
//     PayloadPool::kDataBytes bytes, a data pointer, and a command matching the extension's kind
//     (TLM_WRITE_COMMAND for stores, TLM_READ_COMMAND for everything else);
//   - the target returns TLM_ACCEPTED (phase unchanged) or TLM_UPDATED with END_REQ: never
//     TLM_COMPLETED, and no response on the return path;
//   - the delay is zero in the call, and the target sets no delay on the return.
//  Backward path (target -> initiator)
//   - the phase is END_REQ or BEGIN_RESP;
//   - END_REQ only for a payload whose request phase is open, and only once; the initiator
//     returns TLM_ACCEPTED to it;
//   - BEGIN_RESP only for a payload in flight that was not answered yet, with the response status
//     TLM_OK_RESPONSE; it also ends the request phase; the initiator returns TLM_COMPLETED;
//   - the delay is zero in the call, and the initiator sets no delay on the return.
//  Payload lifetime
//   - a target that keeps a payload after BEGIN_REQ (accepted, not answered in the call) must
//     have acquired it: the reference count must rise during the call;
//   - no payload in flight has a reference count of 0 (released too early; looked at on every
//     call through the checker).
//  End (finish(), also called from end_of_simulation())
//   - every request was answered.
// b_transport is forwarded and flagged (the memory sockets are approximately timed);
// transport_dbg, get_direct_mem_ptr and invalidate_direct_mem_ptr are forwarded unchecked.
//
// One checker watches one simple connection; on a multi-socket, wrap each index separately.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>
#include <systemc>
#include <tlm>

namespace gpusc {

class ProtocolChecker : public sc_core::sc_module {
 public:
  tlm_utils::simple_target_socket<ProtocolChecker> upstream;       // bind the initiator to it
  tlm_utils::simple_initiator_socket<ProtocolChecker> downstream;  // bind it to the target

  explicit ProtocolChecker(const sc_core::sc_module_name& name);

  // Records a violation for every request still unanswered (each once). Call it after the
  // simulation; end_of_simulation() calls it too when the simulation ends with sc_stop().
  void finish();

  // "<time> <checker>: 0x<address>: <description>", in the order found.
  const std::vector<std::string>& violations() const { return violations_; }
  bool clean() const { return violations_.empty(); }

  uint64_t requests() const { return requests_; }    // BEGIN_REQ calls
  uint64_t responses() const { return responses_; }  // BEGIN_RESP calls
  size_t outstanding() const { return inFlight_.size(); }
  size_t maxOutstanding() const { return maxOutstanding_; }

  // Forgets the violations, the counters and every request in flight.
  void reset();

 private:
  struct Flight {
    uint64_t seq = 0;  // order of BEGIN_REQ, for reports in a stable order
    uint64_t address = 0;
    sc_core::sc_time began;
    bool requestOpen = true;        // no END_REQ or BEGIN_RESP yet
    bool managed = false;           // has a memory manager: its reference count is meaningful
    bool lifetimeReported = false;  // a lifetime violation is reported once per flight
    bool finishReported = false;
  };

  tlm::tlm_sync_enum nb_transport_fw(tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase,
                                     sc_core::sc_time& delay);
  tlm::tlm_sync_enum nb_transport_bw(tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase,
                                     sc_core::sc_time& delay);
  void b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);
  unsigned int transport_dbg(tlm::tlm_generic_payload& gp);
  bool get_direct_mem_ptr(tlm::tlm_generic_payload& gp, tlm::tlm_dmi& dmi);
  void invalidate_direct_mem_ptr(sc_dt::uint64 start, sc_dt::uint64 end);
  void end_of_simulation() override;

  tlm::tlm_sync_enum beginRequest(tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase,
                                  sc_core::sc_time& delay);
  void checkPayload(const tlm::tlm_generic_payload& gp);
  void endRequestPhase(const tlm::tlm_generic_payload& gp, Flight& f);
  void endRequest(tlm::tlm_generic_payload& gp);
  void beginResponse(tlm::tlm_generic_payload& gp);
  void checkLifetimes();
  void violation(uint64_t address, const std::string& what);

  std::unordered_map<const tlm::tlm_generic_payload*, Flight> inFlight_;
  std::unordered_set<const tlm::tlm_generic_payload*> answered_;  // since their last BEGIN_REQ
  const tlm::tlm_generic_payload* open_ = nullptr;  // the request whose phase has not ended
  std::vector<std::string> violations_;
  uint64_t seq_ = 0;
  uint64_t requests_ = 0, responses_ = 0;
  size_t maxOutstanding_ = 0;
};

// Binds initiator -> checker.upstream and checker.downstream -> target (a simple or multi
// socket on either side).
template <typename InitiatorSocket, typename TargetSocket>
void bindThrough(ProtocolChecker& checker, InitiatorSocket& initiator, TargetSocket& target) {
  initiator.bind(checker.upstream);
  checker.downstream.bind(target);
}

}  // namespace gpusc
