// Example 2: a block-level TLM-2.0 testbench around one L2 slice (cache/l2_slice.hpp).
//
//   TrafficGenerator -> ProtocolChecker -> L2Slice -> ProtocolChecker -> DramModel
//
// - TrafficGenerator: constrained-random requests (kind, line, size, gap), honouring END_REQ
//   back-pressure, recording when each request was accepted and answered.
// - DramModel: answers after a fixed latency; how many requests it takes at a time alternates
//   between phases: one (it holds END_REQ, so the slice's miss queue fills up) and many (the
//   misses pile up in the slice's MSHRs).
// - Scoreboard: a reference of what the slice may do: every request answered once, OK, no
//   sooner than the hit latency; every DRAM read is a line the generator touched; every DRAM
//   write is a line the generator wrote (a write-back of dirty data); the slice's per-kind
//   request counts match what was sent.
// - The two protocol checkers check both sockets against the TLM conventions of gpusc's memory
//   system.
// - Functional coverage: request kinds x hit/miss, MSHR merges, whole-line and partial writes,
//   evictions and write-backs, and every back-pressure case (bank conflict, no free MSHR, merge
//   limit, miss queue full). The test prints the coverage table and fails if a bin was missed.
//
// The seed and transaction count are constraints of the test, so a failure reproduces exactly.
#include <array>
#include <cstdint>
#include <deque>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>
#include <systemc>
#include <tlm>

#include "cache/l2_slice.hpp"
#include "common/clock.hpp"
#include "common/mem_access.hpp"
#include "common/platform_config.hpp"
#include "common/protocol_checker.hpp"

namespace {

using gpusc::AccessKind;
using gpusc::Clock;

constexpr size_t kKinds = 5;  // gpusc::AccessKind values
const char* const kKindNames[kKinds] = {"load", "store", "atomic", "instruction fetch",
                                        "const load"};

// ---- constrained-random stimulus ----------------------------------------------------------------

struct Constraints {
  uint32_t transactions = 3000;
  uint64_t seed = 1;
  // Kind weights, in AccessKind order: load, store, atomic, instruction fetch, const load.
  std::array<uint32_t, kKinds> kindWeight{50, 25, 10, 8, 7};
  uint32_t hotLines = 24;         // a small working set: hits, merges, conflicts
  uint32_t hotPercent = 70;       // share of requests to the hot lines
  uint32_t coldLines = 1 << 14;   // the rest: mostly misses, evictions
  uint32_t fullLinePercent = 50;  // stores covering the whole line (no fetch)
  uint32_t maxGap = 3;            // cycles between requests: 0 .. maxGap (bursts at 0)
};

struct Transaction {
  uint64_t addr = 0;
  AccessKind kind = AccessKind::Load;
  uint32_t bytes = 0;
  bool fullLine = false;
  uint64_t sent = 0, accepted = 0, answered = 0;
  bool heldBack = false;  // END_REQ came later than the BEGIN_REQ call
  uint32_t answers = 0;
  tlm::tlm_response_status status = tlm::TLM_INCOMPLETE_RESPONSE;
};

class TrafficGenerator : public sc_core::sc_module {
 public:
  tlm_utils::simple_initiator_socket<TrafficGenerator> socket;

  TrafficGenerator(const sc_core::sc_module_name& name, const Clock& clock, const Constraints& c,
                   uint32_t lineBytes, std::vector<uint64_t> hot, std::vector<uint64_t> cold)
      : sc_core::sc_module(name),
        socket("socket"),
        clock_(clock),
        c_(c),
        line_(lineBytes),
        hot_(std::move(hot)),
        cold_(std::move(cold)),
        rng_(c.seed) {
    socket.register_nb_transport_bw(this, &TrafficGenerator::nb_transport_bw);
    SC_THREAD(run);
  }
  const std::vector<Transaction>& transactions() const { return tx_; }

 private:
  SC_HAS_PROCESS(TrafficGenerator);

  uint32_t pick(uint32_t n) { return std::uniform_int_distribution<uint32_t>(0, n - 1)(rng_); }

  Transaction next() {
    Transaction t;
    std::discrete_distribution<size_t> kind(c_.kindWeight.begin(), c_.kindWeight.end());
    t.kind = static_cast<AccessKind>(kind(rng_));
    const bool hot = pick(100) < c_.hotPercent;
    t.addr = hot ? hot_[pick(uint32_t(hot_.size()))] : cold_[pick(uint32_t(cold_.size()))];
    t.bytes = line_;
    if (t.kind == AccessKind::Atomic) {
      t.bytes = 4;
      t.addr += 4 * pick(line_ / 4);
    } else if (t.kind == AccessKind::Store) {
      t.fullLine = pick(100) < c_.fullLinePercent;
      if (!t.fullLine) t.bytes = line_ / 2;
    }
    return t;
  }

  void run() {
    for (uint32_t i = 0; i < c_.transactions; ++i) {
      tx_.push_back(next());
      Transaction& t = tx_.back();
      tlm::tlm_generic_payload* gp = pool_.acquire();
      gpusc::MemAccessExtension& ext = gpusc::accessOf(*gp);
      ext.kind = t.kind;
      ext.activeMask = 0xffffffffu;
      ext.byteMask = {};
      for (uint32_t b = 0; b < t.bytes; ++b) ext.setByte(b + uint32_t(t.addr % line_));
      ext.tag = i;
      gp->set_command(t.kind == AccessKind::Store ? tlm::TLM_WRITE_COMMAND : tlm::TLM_READ_COMMAND);
      gp->set_address(t.addr);
      gp->set_data_length(t.bytes);
      gp->set_streaming_width(t.bytes);
      gp->set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
      t.sent = clock_.now();
      tlm::tlm_phase phase = tlm::BEGIN_REQ;
      sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
      const tlm::tlm_sync_enum s = socket->nb_transport_fw(*gp, phase, delay);
      if (s == tlm::TLM_UPDATED && phase == tlm::END_REQ) {
        t.accepted = t.sent;
      } else {  // back-pressure: wait for END_REQ (or BEGIN_RESP) before the next request
        t.heldBack = true;
        waiting_ = true;
        while (waiting_) wait(endReq_);
      }
      gp->release();
      // 0: another request in the same cycle (a burst), else that many cycles later.
      const uint32_t gap = pick(c_.maxGap + 1);
      if (gap == 0)
        wait(sc_core::SC_ZERO_TIME);
      else
        wait(clock_.until(clock_.now() + gap));
    }
  }

  tlm::tlm_sync_enum nb_transport_bw(tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase,
                                     sc_core::sc_time&) {
    Transaction& t = tx_[gpusc::accessOf(gp).tag];
    if (phase == tlm::END_REQ ||
        (phase == tlm::BEGIN_RESP && t.heldBack && waiting_ && &t == &tx_.back())) {
      t.accepted = clock_.now();
      waiting_ = false;
      endReq_.notify(sc_core::SC_ZERO_TIME);
      if (phase == tlm::END_REQ) return tlm::TLM_ACCEPTED;
    }
    t.answered = clock_.now();
    t.status = gp.get_response_status();
    ++t.answers;
    return tlm::TLM_COMPLETED;
  }

  Clock clock_;
  Constraints c_;
  uint32_t line_;
  std::vector<uint64_t> hot_, cold_;
  std::mt19937_64 rng_;
  gpusc::PayloadPool pool_;
  std::vector<Transaction> tx_;
  bool waiting_ = false;
  sc_core::sc_event endReq_;
};

// ---- the level below: a DRAM that answers after `latency` cycles --------------------------------

// How many requests the DRAM holds at once: `narrow` and `wide` in alternate phases of
// `phaseCycles` cycles.
struct DramPhases {
  uint32_t latency = 40;
  uint32_t phaseCycles = 300;
  uint32_t narrow = 1, wide = 64;
};

class DramModel : public sc_core::sc_module {
 public:
  tlm_utils::simple_target_socket<DramModel> socket;
  std::vector<uint64_t> reads, writes;  // line addresses, in arrival order

  DramModel(const sc_core::sc_module_name& name, const Clock& clock, const DramPhases& p)
      : sc_core::sc_module(name), socket("socket"), clock_(clock), p_(p) {
    socket.register_nb_transport_fw(this, &DramModel::nb_transport_fw);
    SC_METHOD(respond);
    sensitive << due_;
    dont_initialize();
  }

 private:
  SC_HAS_PROCESS(DramModel);

  tlm::tlm_sync_enum nb_transport_fw(tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase,
                                     sc_core::sc_time&) {
    (gp.is_write() ? writes : reads).push_back(gp.get_address());
    gp.acquire();
    if (pending_.size() >= limit()) {  // full: hold END_REQ until an answer leaves
      held_.push_back(&gp);
      return tlm::TLM_ACCEPTED;
    }
    schedule(&gp);
    phase = tlm::END_REQ;
    return tlm::TLM_UPDATED;
  }
  uint32_t limit() const { return (clock_.now() / p_.phaseCycles) % 2 == 0 ? p_.narrow : p_.wide; }
  void schedule(tlm::tlm_generic_payload* gp) {
    const uint64_t at = clock_.now() + p_.latency;
    if (pending_.empty()) due_.notify(clock_.until(at));
    pending_.push_back({at, gp});
  }
  void respond() {
    while (!pending_.empty() && pending_.front().first <= clock_.now()) {
      tlm::tlm_generic_payload* gp = pending_.front().second;
      pending_.pop_front();
      gp->set_response_status(tlm::TLM_OK_RESPONSE);
      tlm::tlm_phase phase = tlm::BEGIN_RESP;
      sc_core::sc_time t = sc_core::SC_ZERO_TIME;
      socket->nb_transport_bw(*gp, phase, t);
      gp->release();
      while (!held_.empty() && pending_.size() < limit()) {  // room again: accept what waits
        tlm::tlm_generic_payload* h = held_.front();
        held_.pop_front();
        schedule(h);
        tlm::tlm_phase end = tlm::END_REQ;
        sc_core::sc_time t2 = sc_core::SC_ZERO_TIME;
        socket->nb_transport_bw(*h, end, t2);
      }
    }
    if (!pending_.empty()) due_.notify(clock_.until(pending_.front().first));
  }

  Clock clock_;
  DramPhases p_;
  std::deque<std::pair<uint64_t, tlm::tlm_generic_payload*>> pending_;
  std::deque<tlm::tlm_generic_payload*> held_;
  sc_core::sc_event due_;
};

// ---- functional coverage ------------------------------------------------------------------------

class Coverage {
 public:
  void sample(const std::string& bin, uint64_t hits) { bins_[bin] += hits; }
  std::vector<std::string> missed() const {
    std::vector<std::string> out;
    for (const auto& [bin, n] : bins_)
      if (n == 0) out.push_back(bin);
    return out;
  }
  std::string report() const {
    std::string s = "functional coverage of the L2 slice:\n";
    size_t covered = 0;
    for (const auto& [bin, n] : bins_) {
      s += "  " + bin + std::string(bin.size() < 40 ? 40 - bin.size() : 1, ' ') +
           std::to_string(n) + (n ? "" : "   <- not covered") + "\n";
      covered += n > 0;
    }
    return s + "  " + std::to_string(covered) + " of " + std::to_string(bins_.size()) +
           " bins covered\n";
  }

 private:
  std::map<std::string, uint64_t> bins_;
};

// ---- the testbench ------------------------------------------------------------------------------

struct L2SliceBench {
  gpusc::PlatformConfig cfg;
  gpusc::PayloadPool pool;
  Clock clock;
  std::unique_ptr<TrafficGenerator> gen;
  gpusc::ProtocolChecker nocSide{"noc_side"};
  std::unique_ptr<gpusc::cache::L2Slice> l2;
  gpusc::ProtocolChecker dramSide{"dram_side"};
  std::unique_ptr<DramModel> dram;

  L2SliceBench(const gpusc::PlatformConfig& c, const Constraints& k, const DramPhases& d)
      : cfg(c), clock(c.gpu.clocks.l2_mhz) {
    l2 = std::make_unique<gpusc::cache::L2Slice>("l2", 0, cfg, pool);
    // Addresses of this slice: the hot lines fall into a few sets (conflicts, evictions).
    const gpusc::CacheConfig& s = cfg.l2.slice;
    std::vector<uint64_t> hot, cold;
    for (uint32_t i = 0; i < k.hotLines; ++i)
      hot.push_back(l2->deviceOf(uint64_t(i % 4 + (i / 4) * s.sets) * s.line_bytes));
    for (uint32_t i = 0; i < k.coldLines; ++i)
      cold.push_back(l2->deviceOf(uint64_t(4 * s.sets + i) * s.line_bytes));
    gen = std::make_unique<TrafficGenerator>("gen", clock, k, s.line_bytes, hot, cold);
    dram = std::make_unique<DramModel>("dram", clock, d);
    gen->socket.bind(nocSide.upstream);
    nocSide.downstream.bind(l2->noc_socket);
    l2->dram_socket.bind(dramSide.upstream);
    dramSide.downstream.bind(dram->socket);
  }
};

gpusc::PlatformConfig slicePlatform() {
  // One partition with one slice (slice-local = device addresses); a small slice with few
  // MSHRs, a short merge limit and a short miss queue, so the random traffic reaches every
  // back-pressure case.
  return gpusc::loadPlatform(
      "gtx480", {"memory.partitions=1", "l2.slices_per_partition=1", "l2.slice.sets=16",
                 "l2.slice.ways=4", "l2.slice.mshr_entries=8", "l2.slice.mshr_max_merge=2",
                 "l2.slice.miss_queue=4", "l2.slice.banks=2"});
}

TEST(L2SliceTlm, ConstrainedRandomTrafficMeetsTheScoreboardAndClosesCoverage) {
  // A fresh SystemC simulation context for this design, time resolution 1 fs.
  sc_core::sc_curr_simcontext = new sc_core::sc_simcontext;
  sc_core::sc_default_global_context = sc_core::sc_curr_simcontext;
  sc_core::sc_set_time_resolution(1, sc_core::SC_FS);

  const gpusc::PlatformConfig cfg = slicePlatform();
  const Constraints k;
  L2SliceBench b(cfg, k, DramPhases{});
  sc_core::sc_start();
  b.nocSide.finish();
  b.dramSide.finish();

  // The protocol checkers.
  EXPECT_TRUE(b.nocSide.clean()) << b.nocSide.violations().front();
  EXPECT_TRUE(b.dramSide.clean()) << b.dramSide.violations().front();
  EXPECT_TRUE(b.l2->idle());

  // The scoreboard.
  const uint32_t line = cfg.l2.slice.line_bytes, H = cfg.l2.slice.hit_latency;
  const auto& tx = b.gen->transactions();
  ASSERT_EQ(tx.size(), k.transactions);
  std::set<uint64_t> touched, written;
  std::array<uint64_t, kKinds> sent{};
  for (size_t i = 0; i < tx.size(); ++i) {
    const Transaction& t = tx[i];
    ASSERT_EQ(t.answers, 1u) << "request " << i << " answered " << t.answers << " times";
    EXPECT_EQ(t.status, tlm::TLM_OK_RESPONSE) << "request " << i;
    EXPECT_GE(t.answered, t.accepted + H) << "request " << i << " answered before hit_latency";
    const uint64_t lineAddr = t.addr / line * line;
    touched.insert(lineAddr);
    if (t.kind == AccessKind::Store || t.kind == AccessKind::Atomic) written.insert(lineAddr);
    ++sent[size_t(t.kind)];
  }
  for (uint64_t a : b.dram->reads)
    EXPECT_TRUE(touched.count(a / line * line)) << "DRAM read of an untouched line " << a;
  for (uint64_t a : b.dram->writes)
    EXPECT_TRUE(written.count(a / line * line)) << "DRAM write of a line never written " << a;
  const nlohmann::json st = b.l2->statsJson();
  for (size_t k2 = 0; k2 < kKinds; ++k2)
    EXPECT_EQ(st["by_kind"][gpusc::accessKindName(AccessKind(k2))]["requests"].get<uint64_t>(),
              sent[k2])
        << kKindNames[k2];
  EXPECT_EQ(st["dirty_writebacks"].get<uint64_t>(), b.dram->writes.size());

  // Functional coverage.
  Coverage cov;
  for (size_t k2 = 0; k2 < kKinds; ++k2) {
    const auto& s = st["by_kind"][gpusc::accessKindName(AccessKind(k2))];
    cov.sample(std::string("kind ") + kKindNames[k2] + " x hit", s["hits"].get<uint64_t>());
    cov.sample(std::string("kind ") + kKindNames[k2] + " x miss", s["misses"].get<uint64_t>());
  }
  uint64_t full = 0, partial = 0, held = 0;
  for (const Transaction& t : tx) {
    if (t.kind == AccessKind::Store) (t.fullLine ? full : partial) += 1;
    held += t.heldBack;
  }
  cov.sample("store x whole line", full);
  cov.sample("store x partial line", partial);
  cov.sample("MSHR merge", st["mshr_merges"].get<uint64_t>());
  cov.sample("eviction", st["evictions"].get<uint64_t>());
  cov.sample("dirty write-back", st["dirty_writebacks"].get<uint64_t>());
  cov.sample("back-pressure seen by the generator", held);
  for (const char* reason : {"bank_conflict", "mshr_full", "merge_limit", "miss_queue_full"})
    cov.sample(std::string("back-pressure: ") + reason + " (cycles)",
               st["stall_cycles"][reason].get<uint64_t>());
  std::printf("%s", cov.report().c_str());
  EXPECT_TRUE(cov.missed().empty()) << cov.report();
}

}  // namespace
