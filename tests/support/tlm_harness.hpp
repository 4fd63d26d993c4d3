// Test benches for TLM-2.0 memory-system modules: a scripted initiator that sends requests at
// chosen cycles (honouring END_REQ back-pressure) and records when each was accepted and
// answered, and a target that answers after a fixed number of cycles and records what it
// received. Both follow the conventions of docs/memory-system.md.
//
// Each test builds its own design: call newSimulation() first, which gives the test a fresh
// SystemC simulation context (so several tests can run in one process) with a 1 fs resolution.
#pragma once

#include <cstdint>
#include <deque>
#include <limits>
#include <vector>

#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>
#include <systemc>
#include <tlm>

#include "common/clock.hpp"
#include "common/mem_access.hpp"

namespace gpusc::test {

void newSimulation();

struct Request {
  uint64_t cycle = 0;  // not sent before this cycle of the initiator's clock
  uint64_t addr = 0;
  AccessKind kind = AccessKind::Load;
  uint32_t bytes = 128;
  uint32_t sm = 0;
  uint32_t activeMask = 0xffffffffu;
  std::array<uint64_t, 4> byteMask{~0ull, ~0ull, ~0ull, ~0ull};
  std::array<uint64_t, 4> demandMask{};  // MemAccessExtension::demandMask (none by default)
};

struct Outcome {
  Request request;
  uint64_t sent = 0, accepted = 0, answered = 0;  // cycles of the initiator's clock
  bool done = false;
};

class ScriptedInitiator : public sc_core::sc_module {
 public:
  tlm_utils::simple_initiator_socket<ScriptedInitiator> socket;

  ScriptedInitiator(const sc_core::sc_module_name& name, const Clock& clock);
  // Queues requests (before or during the simulation); they are sent in order.
  void add(const Request& r);
  const std::vector<Outcome>& outcomes() const { return outcomes_; }
  bool allAnswered() const;

 private:
  SC_HAS_PROCESS(ScriptedInitiator);
  void run();
  tlm::tlm_sync_enum nb_transport_bw(tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase,
                                     sc_core::sc_time& t);

  Clock clock_;
  PayloadPool pool_;
  std::vector<Outcome> outcomes_;
  size_t next_ = 0;
  bool blocked_ = false;  // waiting for END_REQ
  sc_core::sc_event wake_;
};

struct Received {
  uint64_t cycle = 0;  // of the target's clock
  uint64_t addr = 0;
  AccessKind kind = AccessKind::Load;
  tlm::tlm_command command = tlm::TLM_READ_COMMAND;
  uint32_t bytes = 0;
  uint32_t sm = 0;
  std::array<uint64_t, 4> demandMask{};
  std::array<uint64_t, 4> byteMask{};
  uint32_t sectorBytes = 0;  // MemAccessExtension::sectorBytes
};

class RecordingTarget : public sc_core::sc_module {
 public:
  tlm_utils::simple_target_socket<RecordingTarget> socket;

  // Answers every request `latency` cycles after accepting it; accepts at most `maxOutstanding`
  // unanswered requests (then holds END_REQ until one is answered).
  RecordingTarget(const sc_core::sc_module_name& name, const Clock& clock, uint32_t latency,
                  uint32_t maxOutstanding = std::numeric_limits<uint32_t>::max());
  const std::vector<Received>& received() const { return received_; }

 private:
  SC_HAS_PROCESS(RecordingTarget);
  tlm::tlm_sync_enum nb_transport_fw(tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase,
                                     sc_core::sc_time& t);
  void respond();

  Clock clock_;
  uint32_t latency_, maxOutstanding_;
  std::deque<std::pair<uint64_t, tlm::tlm_generic_payload*>> pending_;  // answer cycle, payload
  tlm::tlm_generic_payload* waiting_ = nullptr;  // accepted once there is room
  std::vector<Received> received_;
  sc_core::sc_event due_;
};

}  // namespace gpusc::test
