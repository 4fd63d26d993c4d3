// ProtocolChecker (models/common/protocol_checker.hpp): correct traffic passes through it
// unchanged (same cycles, same delta cycles as a direct connection) with no violation, also in
// front of gpu::FixedLatencyMemory; and each convention of docs/memory-system.md broken on
// purpose by a small hand-written initiator or target gives exactly the expected violation.
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "common/protocol_checker.hpp"
#include "gpu/fixed_latency_memory.hpp"
#include "support/tlm_harness.hpp"

using namespace gpusc;
using namespace gpusc::test;
using sc_core::SC_NS;
using sc_core::sc_time;
using sc_core::SC_ZERO_TIME;

namespace {

const Clock kClock(1000);  // 1 GHz: a cycle is 1 ns

void fill(tlm::tlm_generic_payload& gp, uint64_t addr, AccessKind kind, unsigned bytes) {
  MemAccessExtension* ext = gp.get_extension<MemAccessExtension>();
  if (ext) ext->kind = kind;
  gp.set_command(kind == AccessKind::Store ? tlm::TLM_WRITE_COMMAND : tlm::TLM_READ_COMMAND);
  gp.set_address(addr);
  gp.set_data_length(bytes);
  gp.set_streaming_width(bytes);
}

// ---- hand-written modules --------------------------------------------------------------------

// An initiator whose calls a test writes by hand: `script` runs in a thread at time 0.
class HandInitiator : public sc_core::sc_module {
 public:
  using Script = std::function<void(HandInitiator&)>;
  tlm_utils::simple_initiator_socket<HandInitiator> socket;
  PayloadPool pool;
  tlm::tlm_sync_enum toEndReq = tlm::TLM_ACCEPTED;      // what it returns to END_REQ
  tlm::tlm_sync_enum toBeginResp = tlm::TLM_COMPLETED;  // what it returns to BEGIN_RESP
  std::vector<std::string> backward;                    // phases received on the backward path

  HandInitiator(const sc_core::sc_module_name& name, Script script)
      : sc_core::sc_module(name), socket("socket"), script_(std::move(script)) {
    socket.register_nb_transport_bw(this, &HandInitiator::nb_transport_bw);
    SC_THREAD(run);
  }

  // A pool payload set up as the conventions want (reference count 1).
  tlm::tlm_generic_payload& request(uint64_t addr, AccessKind kind = AccessKind::Load,
                                    unsigned bytes = 64) {
    tlm::tlm_generic_payload* gp = pool.acquire();
    fill(*gp, addr, kind, bytes);
    return *gp;
  }
  tlm::tlm_sync_enum send(tlm::tlm_generic_payload& gp, tlm::tlm_phase phase = tlm::BEGIN_REQ,
                          sc_time delay = SC_ZERO_TIME) {
    return socket->nb_transport_fw(gp, phase, delay);
  }

 private:
  SC_HAS_PROCESS(HandInitiator);
  void run() { script_(*this); }
  tlm::tlm_sync_enum nb_transport_bw(tlm::tlm_generic_payload&, tlm::tlm_phase& phase, sc_time&) {
    backward.push_back(phase.get_name());
    if (phase == tlm::END_REQ) return toEndReq;
    if (phase == tlm::BEGIN_RESP) return toBeginResp;
    return tlm::TLM_ACCEPTED;
  }

  Script script_;
};

// A target whose answers a test writes by hand: `onRequest` handles each forward call and
// `script` runs in a thread at time 0.
class HandTarget : public sc_core::sc_module {
 public:
  using Handler = std::function<tlm::tlm_sync_enum(HandTarget&, tlm::tlm_generic_payload&,
                                                   tlm::tlm_phase&, sc_time&)>;
  using Script = std::function<void(HandTarget&)>;
  tlm_utils::simple_target_socket<HandTarget> socket;
  PayloadPool pool;
  std::vector<tlm::tlm_generic_payload*> kept;  // BEGIN_REQ payloads, in arrival order
  std::vector<std::string> forward;             // phases received on the forward path
  unsigned blockingCalls = 0;

  HandTarget(const sc_core::sc_module_name& name, Handler onRequest, Script script = nullptr)
      : sc_core::sc_module(name),
        socket("socket"),
        onRequest_(std::move(onRequest)),
        script_(std::move(script)) {
    socket.register_nb_transport_fw(this, &HandTarget::nb_transport_fw);
    socket.register_b_transport(this, &HandTarget::b_transport);
    socket.register_transport_dbg(this, &HandTarget::transport_dbg);
    SC_THREAD(run);
  }

  // Keeps the payload (with a reference) and accepts it in the call.
  static tlm::tlm_sync_enum acceptAtOnce(HandTarget& t, tlm::tlm_generic_payload& gp,
                                         tlm::tlm_phase& phase, sc_time&) {
    if (gp.has_mm()) gp.acquire();
    t.kept.push_back(&gp);
    phase = tlm::END_REQ;
    return tlm::TLM_UPDATED;
  }
  // Keeps the payload (with a reference) and accepts it later (END_REQ or BEGIN_RESP).
  static tlm::tlm_sync_enum acceptLater(HandTarget& t, tlm::tlm_generic_payload& gp,
                                        tlm::tlm_phase&, sc_time&) {
    if (gp.has_mm()) gp.acquire();
    t.kept.push_back(&gp);
    return tlm::TLM_ACCEPTED;
  }

  tlm::tlm_sync_enum call(tlm::tlm_generic_payload& gp, tlm::tlm_phase phase,
                          sc_time delay = SC_ZERO_TIME) {
    return socket->nb_transport_bw(gp, phase, delay);
  }
  // BEGIN_RESP with `status`, then the target's reference is released.
  void answer(tlm::tlm_generic_payload& gp, tlm::tlm_response_status status = tlm::TLM_OK_RESPONSE,
              sc_time delay = SC_ZERO_TIME) {
    gp.set_response_status(status);
    call(gp, tlm::BEGIN_RESP, delay);
    if (gp.has_mm()) gp.release();
  }

 private:
  SC_HAS_PROCESS(HandTarget);
  void run() {
    if (script_) script_(*this);
  }
  tlm::tlm_sync_enum nb_transport_fw(tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase,
                                     sc_time& delay) {
    forward.push_back(phase.get_name());
    if (phase != tlm::BEGIN_REQ) return tlm::TLM_COMPLETED;
    return onRequest_(*this, gp, phase, delay);
  }
  void b_transport(tlm::tlm_generic_payload& gp, sc_time&) {
    ++blockingCalls;
    gp.set_response_status(tlm::TLM_OK_RESPONSE);
  }
  unsigned int transport_dbg(tlm::tlm_generic_payload& gp) { return gp.get_data_length(); }

  Handler onRequest_;
  Script script_;
};

// ---- helpers
// -------------------------------------------------------------------------------------

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += "\n  " + x;
  return s;
}

// Exactly one violation, whose description contains `what`.
void expectOnly(const ProtocolChecker& c, const std::string& what) {
  ASSERT_EQ(c.violations().size(), 1u) << joined(c.violations());
  EXPECT_NE(c.violations()[0].find(what), std::string::npos) << c.violations()[0];
}

std::vector<Request> mixedTraffic(unsigned n) {
  std::vector<Request> rs;
  const AccessKind kinds[] = {AccessKind::Load, AccessKind::Store, AccessKind::Atomic,
                              AccessKind::InstructionFetch, AccessKind::ConstLoad};
  for (unsigned i = 0; i < n; ++i) {
    Request r;
    r.cycle = i / 3;  // bursts of three per cycle
    r.addr = 0x10000 + 128 * ((i * 7) % 97);
    r.kind = kinds[i % 5];
    r.bytes = i % 4 == 0 ? 32 : 128;
    r.sm = i % 15;
    rs.push_back(r);
  }
  return rs;
}

// What a run looks like from both ends.
struct Trace {
  std::vector<uint64_t> sent, accepted, answered;
  std::vector<uint64_t> rcvCycle, rcvAddr, rcvBytes, rcvSm;
  std::vector<int> rcvKind, rcvCommand;
  sc_time end;
  sc_dt::uint64 deltas = 0;
  bool allAnswered = false;

  void takeInitiator(const ScriptedInitiator& ini) {
    for (const auto& o : ini.outcomes()) {
      sent.push_back(o.sent);
      accepted.push_back(o.accepted);
      answered.push_back(o.answered);
    }
    allAnswered = ini.allAnswered();
    end = sc_core::sc_time_stamp();
    deltas = sc_core::sc_delta_count();
  }
  void takeTarget(const RecordingTarget& tgt) {
    for (const auto& r : tgt.received()) {
      rcvCycle.push_back(r.cycle);
      rcvAddr.push_back(r.addr);
      rcvBytes.push_back(r.bytes);
      rcvSm.push_back(r.sm);
      rcvKind.push_back(static_cast<int>(r.kind));
      rcvCommand.push_back(static_cast<int>(r.command));
    }
  }
};

void expectSame(const Trace& direct, const Trace& checked) {
  EXPECT_TRUE(direct.allAnswered);
  EXPECT_TRUE(checked.allAnswered);
  EXPECT_EQ(direct.sent, checked.sent);
  EXPECT_EQ(direct.accepted, checked.accepted);
  EXPECT_EQ(direct.answered, checked.answered);
  EXPECT_EQ(direct.rcvCycle, checked.rcvCycle);
  EXPECT_EQ(direct.rcvAddr, checked.rcvAddr);
  EXPECT_EQ(direct.rcvBytes, checked.rcvBytes);
  EXPECT_EQ(direct.rcvSm, checked.rcvSm);
  EXPECT_EQ(direct.rcvKind, checked.rcvKind);
  EXPECT_EQ(direct.rcvCommand, checked.rcvCommand);
  EXPECT_EQ(direct.end, checked.end);
  EXPECT_EQ(direct.deltas, checked.deltas);  // the checker adds no event and no delta cycle
}

// ScriptedInitiator -> (checkers...) -> RecordingTarget.
Trace runRecording(const std::vector<Request>& rs, uint32_t latency, uint32_t maxOutstanding,
                   unsigned checkers, std::vector<size_t>* maxSeen = nullptr) {
  newSimulation();
  ScriptedInitiator ini("initiator", kClock);
  RecordingTarget tgt("target", kClock, latency, maxOutstanding);
  std::vector<std::unique_ptr<ProtocolChecker>> chain;
  for (unsigned i = 0; i < checkers; ++i)
    chain.push_back(std::make_unique<ProtocolChecker>(("checker" + std::to_string(i)).c_str()));
  if (chain.empty()) {
    ini.socket.bind(tgt.socket);
  } else {
    ini.socket.bind(chain.front()->upstream);
    for (unsigned i = 0; i + 1 < checkers; ++i) chain[i]->downstream.bind(chain[i + 1]->upstream);
    chain.back()->downstream.bind(tgt.socket);
  }
  for (const auto& r : rs) ini.add(r);
  sc_core::sc_start();
  Trace t;
  t.takeInitiator(ini);
  t.takeTarget(tgt);
  for (auto& c : chain) {
    c->finish();
    EXPECT_TRUE(c->clean()) << c->name() << joined(c->violations());
    EXPECT_EQ(c->requests(), rs.size());
    EXPECT_EQ(c->responses(), rs.size());
    EXPECT_EQ(c->outstanding(), 0u);
    if (maxSeen) maxSeen->push_back(c->maxOutstanding());
  }
  return t;
}

// One request from a HandInitiator (spoiled by `spoil`, sent with a delay of
// `delayNs`: an sc_time made before newSimulation() would use the old time resolution) to a
// RecordingTarget; returns the checker's violations after finish().
std::vector<std::string> oneRequest(const std::function<void(tlm::tlm_generic_payload&)>& spoil,
                                    double delayNs = 0) {
  newSimulation();
  HandInitiator ini("initiator", [&](HandInitiator& self) {
    tlm::tlm_generic_payload& gp = self.request(0x2000);
    spoil(gp);
    self.send(gp, tlm::BEGIN_REQ, sc_time(delayNs, SC_NS));
    gp.release();
  });
  RecordingTarget tgt("target", kClock, 4);
  ProtocolChecker chk("checker");
  bindThrough(chk, ini.socket, tgt.socket);
  sc_core::sc_start();
  EXPECT_EQ(tgt.received().size(), 1u);  // forwarded even though it is wrong
  EXPECT_EQ(ini.backward, std::vector<std::string>{"BEGIN_RESP"});
  chk.finish();
  return chk.violations();
}

void expectOnly(const std::vector<std::string>& v, const std::string& what) {
  ASSERT_EQ(v.size(), 1u) << joined(v);
  EXPECT_NE(v[0].find(what), std::string::npos) << v[0];
}

// ---- correct traffic -------------------------------------------------------------------------

TEST(ProtocolChecker, BackPressuredTrafficPassesUnchanged) {
  const std::vector<Request> rs = mixedTraffic(300);
  const Trace direct = runRecording(rs, 7, 2, 0);
  std::vector<size_t> maxSeen;
  const Trace checked = runRecording(rs, 7, 2, 1, &maxSeen);
  expectSame(direct, checked);
  // Two accepted and unanswered, one more held without END_REQ.
  EXPECT_EQ(maxSeen, std::vector<size_t>{3});
  // Back-pressure happened: some request was accepted after it was sent.
  bool held = false;
  for (size_t i = 0; i < checked.sent.size(); ++i) held |= checked.accepted[i] > checked.sent[i];
  EXPECT_TRUE(held);
}

TEST(ProtocolChecker, UnlimitedTargetBurstPassesUnchanged) {
  std::vector<Request> rs;
  for (unsigned i = 0; i < 20; ++i) rs.push_back(Request{0, 0x4000 + 128 * i});
  const Trace direct = runRecording(rs, 10, std::numeric_limits<uint32_t>::max(), 0);
  std::vector<size_t> maxSeen;
  const Trace checked = runRecording(rs, 10, std::numeric_limits<uint32_t>::max(), 1, &maxSeen);
  expectSame(direct, checked);
  EXPECT_EQ(maxSeen, std::vector<size_t>{20});
}

TEST(ProtocolChecker, CheckersInSeriesPassTrafficUnchanged) {
  const std::vector<Request> rs = mixedTraffic(120);
  const Trace direct = runRecording(rs, 5, 3, 0);
  std::vector<size_t> maxSeen;
  const Trace checked = runRecording(rs, 5, 3, 3, &maxSeen);
  expectSame(direct, checked);
  EXPECT_EQ(maxSeen, (std::vector<size_t>{4, 4, 4}));
}

TEST(ProtocolChecker, FixedLatencyMemoryFollowsTheConventions) {
  const std::vector<Request> rs = mixedTraffic(400);
  Trace traces[2];
  for (int checked = 0; checked < 2; ++checked) {
    newSimulation();
    ScriptedInitiator ini("initiator", kClock);
    gpu::FixedLatencyMemory mem("memory", sc_time(25, SC_NS));
    std::unique_ptr<ProtocolChecker> chk;
    if (checked) {
      chk = std::make_unique<ProtocolChecker>("checker");
      bindThrough(*chk, ini.socket, mem.sm_sockets);
    } else {
      ini.socket.bind(mem.sm_sockets);
    }
    for (const auto& r : rs) ini.add(r);
    sc_core::sc_start();
    traces[checked].takeInitiator(ini);
    EXPECT_EQ(mem.requests(), rs.size());
    if (chk) {
      chk->finish();
      EXPECT_TRUE(chk->clean()) << joined(chk->violations());
      EXPECT_EQ(chk->requests(), rs.size());
      EXPECT_EQ(chk->responses(), rs.size());
      // Three a cycle for 25 cycles (and three more if a cycle's requests come before its
      // answers).
      EXPECT_GE(chk->maxOutstanding(), 75u);
      EXPECT_LE(chk->maxOutstanding(), 78u);
    }
  }
  expectSame(traces[0], traces[1]);
  EXPECT_EQ(traces[1].answered[0], 25u);
}

// END_REQ sent later on the backward path, and BEGIN_RESP without END_REQ (which ends the
// request phase): both let the next request go, with no violation.
TEST(ProtocolChecker, LateEndReqAndImplicitEndReqAreClean) {
  newSimulation();
  ScriptedInitiator ini("initiator", kClock);
  ini.add(Request{0, 0x100});
  ini.add(Request{0, 0x200});
  ini.add(Request{0, 0x300});
  HandTarget tgt("target", HandTarget::acceptLater, [](HandTarget& t) {
    sc_core::wait(3, SC_NS);
    t.call(*t.kept[0], tlm::END_REQ);  // the second request follows
    sc_core::wait(2, SC_NS);
    t.answer(*t.kept[1]);  // ends its request phase too: the third follows
    t.answer(*t.kept[0]);
    sc_core::wait(2, SC_NS);
    t.answer(*t.kept[2]);
  });
  ProtocolChecker chk("checker");
  bindThrough(chk, ini.socket, tgt.socket);
  sc_core::sc_start();
  chk.finish();
  EXPECT_TRUE(chk.clean()) << joined(chk.violations());
  ASSERT_TRUE(ini.allAnswered());
  EXPECT_EQ(ini.outcomes()[0].accepted, 3u);
  EXPECT_EQ(ini.outcomes()[1].accepted, 5u);
  EXPECT_EQ(ini.outcomes()[2].sent, 5u);
  EXPECT_EQ(ini.outcomes()[2].answered, 7u);
  EXPECT_EQ(chk.maxOutstanding(), 2u);
}

// ---- forward path ------------------------------------------------------------------------------

TEST(ProtocolChecker, EndRespOnTheForwardPath) {
  newSimulation();
  HandInitiator ini("initiator", [](HandInitiator& self) {
    tlm::tlm_generic_payload& gp = self.request(0x300);
    self.send(gp);
    sc_core::wait(10, SC_NS);  // answered at cycle 4, with TLM_COMPLETED
    self.send(gp, tlm::END_RESP);
    gp.release();
  });
  RecordingTarget tgt("target", kClock, 4);
  ProtocolChecker chk("checker");
  bindThrough(chk, ini.socket, tgt.socket);
  sc_core::sc_start();
  chk.finish();
  expectOnly(chk, "END_RESP on the forward path");
  EXPECT_EQ(ini.backward, std::vector<std::string>{"BEGIN_RESP"});
}

// The base protocol's four-phase response (TLM_ACCEPTED to BEGIN_RESP, then END_RESP) breaks
// the convention twice.
TEST(ProtocolChecker, FourPhaseResponseIsFlaggedTwice) {
  newSimulation();
  HandInitiator ini("initiator", [](HandInitiator& self) {
    tlm::tlm_generic_payload& gp = self.request(0x340);
    self.send(gp);
    sc_core::wait(5, SC_NS);
    self.send(gp, tlm::END_RESP);
    gp.release();
  });
  ini.toBeginResp = tlm::TLM_ACCEPTED;
  RecordingTarget tgt("target", kClock, 4);
  ProtocolChecker chk("checker");
  bindThrough(chk, ini.socket, tgt.socket);
  sc_core::sc_start();
  chk.finish();
  ASSERT_EQ(chk.violations().size(), 2u) << joined(chk.violations());
  EXPECT_NE(chk.violations()[0].find("TLM_ACCEPTED to BEGIN_RESP instead of TLM_COMPLETED"),
            std::string::npos);
  EXPECT_NE(chk.violations()[1].find("END_RESP on the forward path"), std::string::npos);
}

TEST(ProtocolChecker, OtherPhaseOnTheForwardPath) {
  newSimulation();
  HandInitiator ini("initiator", [](HandInitiator& self) {
    tlm::tlm_generic_payload& gp = self.request(0x380);
    self.send(gp, tlm::BEGIN_RESP);
    gp.release();
  });
  HandTarget tgt("target", HandTarget::acceptAtOnce);
  ProtocolChecker chk("checker");
  bindThrough(chk, ini.socket, tgt.socket);
  sc_core::sc_start();
  chk.finish();
  expectOnly(chk, "phase BEGIN_RESP on the forward path");
  EXPECT_EQ(tgt.forward, std::vector<std::string>{"BEGIN_RESP"});  // forwarded
  EXPECT_EQ(chk.requests(), 0u);
}

TEST(ProtocolChecker, BeginReqBeforeThePreviousRequestEnded) {
  newSimulation();
  HandInitiator ini("initiator", [](HandInitiator& self) {
    tlm::tlm_generic_payload& a = self.request(0x400);
    EXPECT_EQ(self.send(a), tlm::TLM_ACCEPTED);
    a.release();
    tlm::tlm_generic_payload& b = self.request(0x480);  // without waiting for END_REQ
    self.send(b);
    b.release();
  });
  HandTarget tgt("target", HandTarget::acceptLater, [](HandTarget& t) {
    sc_core::wait(5, SC_NS);
    t.answer(*t.kept[0]);
    t.answer(*t.kept[1]);
  });
  ProtocolChecker chk("checker");
  bindThrough(chk, ini.socket, tgt.socket);
  sc_core::sc_start();
  chk.finish();
  expectOnly(chk, "BEGIN_REQ while the previous request (0x400) has not ended");
  EXPECT_NE(chk.violations()[0].find("0x480"), std::string::npos);
  EXPECT_EQ(chk.responses(), 2u);
  EXPECT_EQ(tgt.kept.size(), 2u);
}

TEST(ProtocolChecker, BeginReqOfAPayloadAlreadyInFlight) {
  newSimulation();
  HandInitiator ini("initiator", [](HandInitiator& self) {
    tlm::tlm_generic_payload& gp = self.request(0x500);
    self.send(gp);  // accepted at once
    sc_core::wait(1, SC_NS);
    self.send(gp);  // the same payload again, before its answer
    gp.release();
  });
  HandTarget tgt("target", HandTarget::acceptAtOnce, [](HandTarget& t) {
    sc_core::wait(5, SC_NS);
    t.answer(*t.kept[0]);
    t.kept[1]->release();
  });
  ProtocolChecker chk("checker");
  bindThrough(chk, ini.socket, tgt.socket);
  sc_core::sc_start();
  chk.finish();
  expectOnly(chk, "BEGIN_REQ of a payload already in flight");
  EXPECT_EQ(chk.requests(), 2u);
  EXPECT_EQ(chk.outstanding(), 0u);
}

TEST(ProtocolChecker, CompletedOnTheForwardPath) {
  newSimulation();
  tlm::tlm_sync_enum got = tlm::TLM_ACCEPTED;
  HandInitiator ini("initiator", [&](HandInitiator& self) {
    tlm::tlm_generic_payload& gp = self.request(0x600);
    got = self.send(gp);
    gp.release();
  });
  HandTarget tgt("target",
                 [](HandTarget&, tlm::tlm_generic_payload& gp, tlm::tlm_phase&, sc_time&) {
                   gp.set_response_status(tlm::TLM_OK_RESPONSE);
                   return tlm::TLM_COMPLETED;
                 });
  ProtocolChecker chk("checker");
  bindThrough(chk, ini.socket, tgt.socket);
  sc_core::sc_start();
  chk.finish();  // the transaction is over: not reported as unanswered
  expectOnly(chk, "TLM_COMPLETED on the forward path");
  EXPECT_EQ(got, tlm::TLM_COMPLETED);  // returned unchanged
  EXPECT_EQ(chk.outstanding(), 0u);
}

TEST(ProtocolChecker, ResponseOnTheForwardReturnPath) {
  newSimulation();
  HandInitiator ini("initiator", [](HandInitiator& self) {
    tlm::tlm_generic_payload& gp = self.request(0x640);
    self.send(gp);
    gp.release();
  });
  HandTarget tgt("target",
                 [](HandTarget&, tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase, sc_time&) {
                   gp.set_response_status(tlm::TLM_OK_RESPONSE);
                   phase = tlm::BEGIN_RESP;
                   return tlm::TLM_UPDATED;
                 });
  ProtocolChecker chk("checker");
  bindThrough(chk, ini.socket, tgt.socket);
  sc_core::sc_start();
  chk.finish();
  expectOnly(chk, "TLM_UPDATED with BEGIN_RESP");
}

TEST(ProtocolChecker, NonZeroDelayOnTheForwardCall) {
  expectOnly(oneRequest([](tlm::tlm_generic_payload&) {}, 2),
             "BEGIN_REQ on the forward path with a non-zero delay (2 ns)");
}

TEST(ProtocolChecker, NonZeroDelayReturnedByTheTarget) {
  newSimulation();
  HandInitiator ini("initiator", [](HandInitiator& self) {
    tlm::tlm_generic_payload& gp = self.request(0x700);
    self.send(gp);
    gp.release();
  });
  HandTarget tgt(
      "target",
      [](HandTarget& t, tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase, sc_time& delay) {
        delay = sc_time(1, SC_NS);
        return HandTarget::acceptAtOnce(t, gp, phase, delay);
      },
      [](HandTarget& t) {
        sc_core::wait(5, SC_NS);
        t.answer(*t.kept[0]);
      });
  ProtocolChecker chk("checker");
  bindThrough(chk, ini.socket, tgt.socket);
  sc_core::sc_start();
  chk.finish();
  expectOnly(chk, "the target returned a non-zero delay (1 ns) to BEGIN_REQ");
}

// A pool's payload is known by its own data buffer and its extension read directly; any other
// payload's extension is looked up, a payload without one has none, and a pool payload whose
// data pointer was moved elsewhere is looked up too.
TEST(PayloadPool, ExtensionOfPoolAndForeignPayloads) {
  PayloadPool pool;
  tlm::tlm_generic_payload* a = pool.acquire();
  tlm::tlm_generic_payload* b = pool.acquire();
  MemAccessExtension* ea = nullptr;
  a->get_extension(ea);
  ASSERT_NE(ea, nullptr);
  EXPECT_EQ(PayloadPool::extensionOf(*a), ea);
  EXPECT_NE(PayloadPool::extensionOf(*b), ea);
  accessOf(*a).sm = 7;
  EXPECT_EQ(ea->sm, 7u);
  unsigned char elsewhere[16];
  a->set_data_ptr(elsewhere);
  EXPECT_EQ(PayloadPool::extensionOf(*a), ea);  // looked up
  a->release();
  b->release();

  tlm::tlm_generic_payload gp;
  unsigned char data[64];
  gp.set_data_ptr(data);
  EXPECT_EQ(PayloadPool::extensionOf(gp), nullptr);
  MemAccessExtension ext;
  gp.set_extension(&ext);
  EXPECT_EQ(PayloadPool::extensionOf(gp), &ext);
  EXPECT_EQ(&accessOf(gp), &ext);
  gp.clear_extension(&ext);
}

TEST(ProtocolChecker, PayloadWithoutMemoryManager) {
  newSimulation();
  HandInitiator ini("initiator", [](HandInitiator& self) {
    tlm::tlm_generic_payload gp;  // on the stack: no memory manager
    MemAccessExtension ext;
    unsigned char data[64];
    gp.set_extension(&ext);
    gp.set_data_ptr(data);
    fill(gp, 0x800, AccessKind::Load, 64);
    self.send(gp);
    sc_core::wait(10, SC_NS);  // answered at 5 ns
    gp.clear_extension(&ext);
  });
  HandTarget tgt("target", HandTarget::acceptAtOnce, [](HandTarget& t) {
    sc_core::wait(5, SC_NS);
    t.answer(*t.kept[0]);
  });
  ProtocolChecker chk("checker");
  bindThrough(chk, ini.socket, tgt.socket);
  sc_core::sc_start();
  chk.finish();
  expectOnly(chk, "without a memory manager");
  EXPECT_EQ(ini.backward, std::vector<std::string>{"BEGIN_RESP"});
}

// A memory manager whose payloads have no MemAccessExtension.
class BareMm : public tlm::tlm_mm_interface {
 public:
  void free(tlm::tlm_generic_payload*) override { ++freed; }
  unsigned freed = 0;
};

TEST(ProtocolChecker, PayloadWithoutExtension) {
  newSimulation();
  BareMm mm;
  tlm::tlm_generic_payload gp;
  unsigned char data[64];
  HandInitiator ini("initiator", [&](HandInitiator& self) {
    gp.set_mm(&mm);
    gp.acquire();
    gp.set_data_ptr(data);
    fill(gp, 0x900, AccessKind::Load, 64);
    self.send(gp);
    gp.release();
  });
  HandTarget tgt("target", HandTarget::acceptAtOnce, [](HandTarget& t) {
    sc_core::wait(5, SC_NS);
    t.answer(*t.kept[0]);
  });
  ProtocolChecker chk("checker");
  bindThrough(chk, ini.socket, tgt.socket);
  sc_core::sc_start();
  chk.finish();
  expectOnly(chk, "without a MemAccessExtension");
  EXPECT_EQ(mm.freed, 1u);
}

TEST(ProtocolChecker, ZeroDataLength) {
  expectOnly(oneRequest([](tlm::tlm_generic_payload& gp) { gp.set_data_length(0); }),
             "data length of 0");
}

TEST(ProtocolChecker, DataLengthAboveWhatARequestCovers) {
  expectOnly(oneRequest([](tlm::tlm_generic_payload& gp) { gp.set_data_length(512); }),
             "data length of 512 (more than the 256 bytes");
}

TEST(ProtocolChecker, NullDataPointer) {
  expectOnly(oneRequest([](tlm::tlm_generic_payload& gp) { gp.set_data_ptr(nullptr); }),
             "null data pointer");
}

TEST(ProtocolChecker, CommandMustMatchTheKind) {
  expectOnly(oneRequest([](tlm::tlm_generic_payload& gp) {
               accessOf(gp).kind = AccessKind::Store;  // left a read
             }),
             "store access with command TLM_READ_COMMAND (expected TLM_WRITE_COMMAND)");
  expectOnly(oneRequest([](tlm::tlm_generic_payload& gp) {
               accessOf(gp).kind = AccessKind::Atomic;
               gp.set_command(tlm::TLM_WRITE_COMMAND);
             }),
             "atomic access with command TLM_WRITE_COMMAND (expected TLM_READ_COMMAND)");
}

// ---- backward path -----------------------------------------------------------------------------

// A HandInitiator sending one good request at time 0 to `tgt` through a checker.
struct OneRequestBench {
  HandInitiator ini;
  HandTarget tgt;
  ProtocolChecker chk;
  OneRequestBench(HandTarget::Handler onRequest, HandTarget::Script script)
      : ini("initiator",
            [](HandInitiator& self) {
              tlm::tlm_generic_payload& gp = self.request(0xa00);
              self.send(gp);
              gp.release();
            }),
        tgt("target", std::move(onRequest), std::move(script)),
        chk("checker") {
    bindThrough(chk, ini.socket, tgt.socket);
  }
  void run() {
    sc_core::sc_start();
    chk.finish();
  }
};

TEST(ProtocolChecker, EndReqForAPayloadNotInFlight) {
  newSimulation();
  OneRequestBench b(HandTarget::acceptAtOnce, [](HandTarget& t) {
    sc_core::wait(2, SC_NS);
    tlm::tlm_generic_payload* other = t.pool.acquire();
    other->set_address(0xbad0);
    t.call(*other, tlm::END_REQ);
    other->release();
    t.answer(*t.kept[0]);
  });
  b.run();
  expectOnly(b.chk, "END_REQ for a payload whose request is not open");
  EXPECT_NE(b.chk.violations()[0].find("0xbad0"), std::string::npos);
  EXPECT_EQ(b.ini.backward, (std::vector<std::string>{"END_REQ", "BEGIN_RESP"}));  // forwarded
}

TEST(ProtocolChecker, SecondEndReq) {
  newSimulation();
  OneRequestBench b(HandTarget::acceptLater, [](HandTarget& t) {
    sc_core::wait(2, SC_NS);
    t.call(*t.kept[0], tlm::END_REQ);
    sc_core::wait(1, SC_NS);
    t.call(*t.kept[0], tlm::END_REQ);
    t.answer(*t.kept[0]);
  });
  b.run();
  expectOnly(b.chk, "second END_REQ");
}

TEST(ProtocolChecker, EndReqAfterTheResponse) {
  newSimulation();
  OneRequestBench b(HandTarget::acceptLater, [](HandTarget& t) {
    sc_core::wait(2, SC_NS);
    tlm::tlm_generic_payload& gp = *t.kept[0];
    gp.set_response_status(tlm::TLM_OK_RESPONSE);
    t.call(gp, tlm::BEGIN_RESP);  // also ends the request phase
    t.call(gp, tlm::END_REQ);
    gp.release();
  });
  b.run();
  expectOnly(b.chk, "END_REQ after BEGIN_RESP");
}

TEST(ProtocolChecker, InitiatorNotAcceptingEndReq) {
  newSimulation();
  OneRequestBench b(HandTarget::acceptLater, [](HandTarget& t) {
    sc_core::wait(2, SC_NS);
    t.call(*t.kept[0], tlm::END_REQ);
    t.answer(*t.kept[0]);
  });
  b.ini.toEndReq = tlm::TLM_COMPLETED;
  b.run();
  expectOnly(b.chk, "the initiator returned TLM_COMPLETED to END_REQ (expected TLM_ACCEPTED)");
}

TEST(ProtocolChecker, SecondResponse) {
  newSimulation();
  OneRequestBench b(HandTarget::acceptAtOnce, [](HandTarget& t) {
    sc_core::wait(2, SC_NS);
    t.kept[0]->set_response_status(tlm::TLM_OK_RESPONSE);
    t.call(*t.kept[0], tlm::BEGIN_RESP);
    t.answer(*t.kept[0]);
  });
  b.run();
  expectOnly(b.chk, "BEGIN_RESP for a payload already answered");
  EXPECT_EQ(b.chk.responses(), 2u);
}

TEST(ProtocolChecker, ResponseForAPayloadNotInFlight) {
  newSimulation();
  OneRequestBench b(HandTarget::acceptAtOnce, [](HandTarget& t) {
    sc_core::wait(2, SC_NS);
    tlm::tlm_generic_payload* other = t.pool.acquire();
    other->set_address(0xbad0);
    t.answer(*other);
    t.answer(*t.kept[0]);
  });
  b.run();
  expectOnly(b.chk, "BEGIN_RESP for a payload that is not in flight");
}

TEST(ProtocolChecker, ResponseStatusNotOk) {
  for (tlm::tlm_response_status status :
       {tlm::TLM_ADDRESS_ERROR_RESPONSE, tlm::TLM_INCOMPLETE_RESPONSE}) {
    newSimulation();
    OneRequestBench b(HandTarget::acceptAtOnce, [status](HandTarget& t) {
      sc_core::wait(2, SC_NS);
      t.answer(*t.kept[0], status);
    });
    b.run();
    expectOnly(b.chk, "(expected TLM_OK_RESPONSE)");
    EXPECT_NE(b.chk.violations()[0].find(status == tlm::TLM_INCOMPLETE_RESPONSE
                                             ? "TLM_INCOMPLETE_RESPONSE"
                                             : "TLM_ADDRESS_ERROR_RESPONSE"),
              std::string::npos);
    EXPECT_EQ(b.chk.outstanding(), 0u);  // answered all the same
  }
}

TEST(ProtocolChecker, InitiatorNotCompletingTheResponse) {
  newSimulation();
  OneRequestBench b(HandTarget::acceptAtOnce, [](HandTarget& t) {
    sc_core::wait(2, SC_NS);
    t.answer(*t.kept[0]);
  });
  b.ini.toBeginResp = tlm::TLM_ACCEPTED;
  b.run();
  expectOnly(b.chk, "the initiator returned TLM_ACCEPTED to BEGIN_RESP instead of TLM_COMPLETED");
}

TEST(ProtocolChecker, NonZeroDelayOnTheBackwardPath) {
  newSimulation();
  OneRequestBench b(HandTarget::acceptAtOnce, [](HandTarget& t) {
    sc_core::wait(2, SC_NS);
    t.answer(*t.kept[0], tlm::TLM_OK_RESPONSE, sc_time(3, SC_NS));
  });
  b.run();
  expectOnly(b.chk, "BEGIN_RESP on the backward path with a non-zero delay (3 ns)");
}

TEST(ProtocolChecker, OtherPhaseOnTheBackwardPath) {
  newSimulation();
  OneRequestBench b(HandTarget::acceptAtOnce, [](HandTarget& t) {
    sc_core::wait(3, SC_NS);
    t.call(*t.kept[0], tlm::END_RESP);
    t.answer(*t.kept[0]);
  });
  b.run();
  expectOnly(b.chk, "phase END_RESP on the backward path");
  // The record: time, the checker's name, the payload's address, the description.
  EXPECT_EQ(b.chk.violations()[0].rfind("3 ns checker: 0xa00: phase END_RESP", 0), 0u)
      << b.chk.violations()[0];
  EXPECT_EQ(b.ini.backward, (std::vector<std::string>{"END_RESP", "BEGIN_RESP"}));
}

// ---- payload lifetime --------------------------------------------------------------------------

TEST(ProtocolChecker, TargetKeepsThePayloadWithoutAcquire) {
  newSimulation();
  OneRequestBench b(
      [](HandTarget& t, tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase, sc_time&) {
        t.kept.push_back(&gp);  // no acquire()
        phase = tlm::END_REQ;
        return tlm::TLM_UPDATED;
      },
      [](HandTarget& t) {
        sc_core::wait(5, SC_NS);
        tlm::tlm_generic_payload& gp = *t.kept[0];
        EXPECT_EQ(gp.get_ref_count(), 0);  // back in the initiator's pool
        gp.set_response_status(tlm::TLM_OK_RESPONSE);
        t.call(gp, tlm::BEGIN_RESP);
      });
  b.run();
  expectOnly(b.chk, "the target kept the payload without acquire()");
  EXPECT_NE(b.chk.violations()[0].find("0 s checker"), std::string::npos);  // found at once
}

TEST(ProtocolChecker, TargetReleasesThePayloadTooEarly) {
  newSimulation();
  OneRequestBench b(HandTarget::acceptAtOnce, [](HandTarget& t) {
    sc_core::wait(2, SC_NS);
    t.kept[0]->release();  // its reference, long before the answer
    sc_core::wait(3, SC_NS);
    t.kept[0]->set_response_status(tlm::TLM_OK_RESPONSE);
    t.call(*t.kept[0], tlm::BEGIN_RESP);
  });
  b.run();
  expectOnly(b.chk, "reference count 0 while in flight");
  EXPECT_NE(b.chk.violations()[0].find("released too early"), std::string::npos);
  EXPECT_EQ(b.chk.violations()[0].rfind("5 ns", 0), 0u);  // seen at the next call
}

TEST(ProtocolChecker, InitiatorSendsAPayloadItNoLongerHolds) {
  newSimulation();
  HandInitiator ini("initiator", [](HandInitiator& self) {
    tlm::tlm_generic_payload& gp = self.request(0xc00);
    gp.release();  // before the call
    self.send(gp);
  });
  HandTarget tgt("target", HandTarget::acceptAtOnce, [](HandTarget& t) {
    sc_core::wait(2, SC_NS);
    t.answer(*t.kept[0]);
  });
  ProtocolChecker chk("checker");
  bindThrough(chk, ini.socket, tgt.socket);
  sc_core::sc_start();
  chk.finish();
  expectOnly(chk, "BEGIN_REQ of a payload with reference count 0");
}

// ---- end of simulation, reset, other calls ---------------------------------------------------

TEST(ProtocolChecker, UnansweredRequestsAtFinish) {
  newSimulation();
  HandInitiator ini("initiator", [](HandInitiator& self) {
    tlm::tlm_generic_payload& a = self.request(0xd00);
    self.send(a);  // accepted at once
    a.release();
    sc_core::wait(1, SC_NS);
    tlm::tlm_generic_payload& b = self.request(0xd80);
    self.send(b);  // never accepted
    b.release();
  });
  HandTarget tgt("target", [](HandTarget& t, tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase,
                              sc_time& delay) {
    return t.kept.empty() ? HandTarget::acceptAtOnce(t, gp, phase, delay)
                          : HandTarget::acceptLater(t, gp, phase, delay);
  });
  ProtocolChecker chk("checker");
  bindThrough(chk, ini.socket, tgt.socket);
  sc_core::sc_start();
  EXPECT_TRUE(chk.clean()) << joined(chk.violations());  // only finish() can tell
  EXPECT_EQ(chk.outstanding(), 2u);
  chk.finish();
  ASSERT_EQ(chk.violations().size(), 2u) << joined(chk.violations());
  EXPECT_NE(chk.violations()[0].find("0xd00: request never answered (BEGIN_REQ at 0 s, accepted)"),
            std::string::npos)
      << chk.violations()[0];
  EXPECT_NE(chk.violations()[1].find(
                "0xd80: request never answered (BEGIN_REQ at 1 ns, never accepted either)"),
            std::string::npos)
      << chk.violations()[1];
  chk.finish();  // each is reported once
  EXPECT_EQ(chk.violations().size(), 2u);
}

TEST(ProtocolChecker, EndOfSimulationReportsUnansweredRequests) {
  newSimulation();
  OneRequestBench b(HandTarget::acceptAtOnce, [](HandTarget&) {
    sc_core::wait(4, SC_NS);
    sc_core::sc_stop();
  });
  sc_core::sc_start();
  expectOnly(b.chk, "request never answered");
  b.chk.finish();
  EXPECT_EQ(b.chk.violations().size(), 1u);
}

TEST(ProtocolChecker, ResetForgetsEverything) {
  newSimulation();
  OneRequestBench b(HandTarget::acceptAtOnce, [](HandTarget& t) {
    sc_core::wait(2, SC_NS);
    t.answer(*t.kept[0], tlm::TLM_GENERIC_ERROR_RESPONSE);
  });
  b.run();
  EXPECT_EQ(b.chk.violations().size(), 1u);
  EXPECT_EQ(b.chk.requests(), 1u);
  EXPECT_EQ(b.chk.responses(), 1u);
  EXPECT_EQ(b.chk.maxOutstanding(), 1u);
  b.chk.reset();
  EXPECT_TRUE(b.chk.clean());
  EXPECT_EQ(b.chk.requests(), 0u);
  EXPECT_EQ(b.chk.responses(), 0u);
  EXPECT_EQ(b.chk.maxOutstanding(), 0u);
}

TEST(ProtocolChecker, ResetForgetsRequestsInFlight) {
  newSimulation();
  OneRequestBench b(HandTarget::acceptAtOnce, nullptr);  // never answers
  sc_core::sc_start();
  EXPECT_EQ(b.chk.outstanding(), 1u);
  b.chk.reset();
  b.chk.finish();
  EXPECT_TRUE(b.chk.clean()) << joined(b.chk.violations());
}

TEST(ProtocolChecker, BlockingAndDebugCallsAreForwarded) {
  newSimulation();
  unsigned debugBytes = 0;
  HandInitiator ini("initiator", [&](HandInitiator& self) {
    tlm::tlm_generic_payload& gp = self.request(0xe00, AccessKind::Load, 48);
    sc_time t = SC_ZERO_TIME;
    self.socket->b_transport(gp, t);
    EXPECT_EQ(gp.get_response_status(), tlm::TLM_OK_RESPONSE);
    debugBytes = self.socket->transport_dbg(gp);
    gp.release();
  });
  HandTarget tgt("target", HandTarget::acceptAtOnce);
  ProtocolChecker chk("checker");
  bindThrough(chk, ini.socket, tgt.socket);
  sc_core::sc_start();
  chk.finish();
  expectOnly(chk, "b_transport: the memory sockets are approximately timed");
  EXPECT_EQ(tgt.blockingCalls, 1u);
  EXPECT_EQ(debugBytes, 48u);  // transport_dbg is not a violation
}

}  // namespace
