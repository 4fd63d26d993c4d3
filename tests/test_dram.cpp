// The memory controller and DRAM channel (models/dram), driven through their l2_socket by the
// scripted TLM initiator. Every expected cycle is derived from the platform configuration: DRAM
// timing in command cycles, converted to the core cycles the initiator records through the two
// clocks (gpu.clocks.core_mhz, dram_mhz) the way docs/memory-system.md defines the answer time:
//
//   a request sent at core cycle c may issue its first command at DRAM cycle ceil(c Tcore/Tdram)
//   and is answered at core cycle ceil(end Tdram / Tcore) + memory.controller.latency, where
//   `end` is the DRAM cycle at which its last burst has left the data bus.
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "common/address_map.hpp"
#include "common/error.hpp"
#include "common/protocol_checker.hpp"
#include "common/rng.hpp"
#include "dram/dram_channel.hpp"
#include "dram/dram_scheduler.hpp"
#include "dram/memory_controller.hpp"
#include "support/tlm_harness.hpp"

using namespace gpusc;
using namespace gpusc::test;
using gpusc::dram::MemoryController;

namespace {

uint64_t ceilDiv(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

PlatformConfig platformWith(const std::vector<std::string>& sets = {}) {
  return loadPlatform("gtx480", sets);
}

// The configuration's timing, in the terms the tests need.
struct Timing {
  explicit Timing(const PlatformConfig& cfg)
      : core(cfg.gpu.clocks.core_mhz),
        dram(cfg.gpu.clocks.dram_mhz),
        d(cfg.memory.dram),
        latency(cfg.memory.controller.latency) {}

  // The first DRAM cycle at which a request sent at core cycle `c` may issue a command.
  uint64_t dramCycleAt(uint64_t c) const {
    return ceilDiv(c * core.periodValue(), dram.periodValue());
  }
  // The core cycle at which a request whose last burst ends at DRAM cycle `end` is answered.
  uint64_t answerAt(uint64_t end) const {
    return ceilDiv(end * dram.periodValue(), core.periodValue()) + latency;
  }
  // The core cycle the initiator records for something happening at DRAM cycle `c`.
  uint64_t coreCycleOf(uint64_t c) const { return c * dram.periodValue() / core.periodValue(); }
  // The controller latency in DRAM cycles (rounded up).
  uint64_t latencyInDramCycles() const {
    return ceilDiv(latency * core.periodValue(), dram.periodValue());
  }

  uint64_t bc() const { return d.burstCycles(); }
  // Column-to-column spacing in one bank group / across groups, including the data bus.
  uint64_t sameGroup() const {
    const uint64_t ccd = d.tCCDL == 0 ? d.tCCD : std::max(d.tCCD, d.tCCDL);
    return std::max(ccd, bc());
  }
  uint64_t otherGroup() const { return std::max<uint64_t>(d.tCCD, bc()); }
  uint32_t bursts(uint32_t bytes) const {
    return std::max(1u, static_cast<uint32_t>(ceilDiv(bytes, d.burstBytes())));
  }

  Clock core, dram;
  DramConfig d;
  uint64_t latency;
};

// The device address of (bank, row, column) in partition `p` (AddressMap's inverse: with one
// slice per partition, a slice-local address is the channel's).
uint64_t deviceAddress(const MemoryConfig& m, uint32_t p, uint32_t bank, uint64_t row,
                       uint32_t column) {
  const uint64_t local = (row * m.dram.banks + bank) * m.dram.row_bytes + column;
  return AddressMap(m).device(p, local);
}

// A controller of partition `partition` behind a scripted initiator on the core clock, with a
// protocol checker on the connection.
struct Bench {
  struct Fresh {
    Fresh() { newSimulation(); }
  };

  explicit Bench(const PlatformConfig& c, uint32_t partition = 0)
      : cfg(c),
        t(c),
        part(partition),
        ini("initiator", t.core),
        checker("checker"),
        mc("mc", partition, cfg) {
    bindThrough(checker, ini.socket, mc.l2_socket);
  }

  void add(uint64_t cycle, uint32_t bank, uint64_t row, uint32_t column, uint32_t bytes,
           AccessKind kind = AccessKind::Load) {
    Request r;
    r.cycle = cycle;
    r.addr = deviceAddress(cfg.memory, part, bank, row, column);
    r.kind = kind;
    r.bytes = bytes;
    ini.add(r);
  }
  // Runs until nothing is left to do; every request must have been answered, by the rules.
  void run() {
    sc_core::sc_start();
    ASSERT_TRUE(ini.allAnswered());
    checker.finish();
    for (const std::string& v : checker.violations()) ADD_FAILURE() << v;
  }
  const Outcome& o(size_t i) const { return ini.outcomes().at(i); }
  uint32_t burst() const { return cfg.memory.dram.burstBytes(); }

  Fresh fresh;  // first: every bench is a new simulation
  PlatformConfig cfg;
  Timing t;
  uint32_t part;
  ScriptedInitiator ini;
  ProtocolChecker checker;  // between the initiator and the controller
  MemoryController mc;
};

// A platform whose core and DRAM clocks tick together, so a request can be sent at any DRAM
// cycle.
PlatformConfig sameClocks(std::vector<std::string> sets = {}) {
  sets.push_back("gpu.clocks.core_mhz=1000");
  sets.push_back("gpu.clocks.dram_mhz=1000");
  return platformWith(sets);
}

TEST(Dram, TestAddressesMapWhereIntended) {
  const PlatformConfig cfg = platformWith();
  const AddressMap map(cfg.memory);
  for (uint32_t p : {0u, 3u}) {
    const uint64_t addr = deviceAddress(cfg.memory, p, 5, 77, 384);
    EXPECT_EQ(map.partition(addr), p);
    const DramLocation loc = map.dram(map.local(addr));
    EXPECT_EQ(loc.bank, 5u);
    EXPECT_EQ(loc.row, 77u);
    EXPECT_EQ(loc.column, 384u);
  }
}

// ACT, tRCD, RD, tCL, the burst: plus the controller latency.
TEST(Dram, ReadToIdleBankTakesRcdClAndBurst) {
  for (const auto& sets : std::vector<std::vector<std::string>>{
           {}, {"memory.dram.tRCD=7", "memory.dram.tCL=20", "memory.controller.latency=30"}}) {
    Bench b(platformWith(sets));
    const uint64_t sent = 5;
    b.add(sent, 3, 9, 0, b.burst());
    b.run();
    const uint64_t e0 = b.t.dramCycleAt(sent);
    const DramConfig& d = b.cfg.memory.dram;
    EXPECT_EQ(b.o(0).accepted, sent);
    EXPECT_EQ(b.o(0).answered, b.t.answerAt(e0 + d.tRCD + d.tCL + b.t.bc()));
    // The request waited in the queue from its arrival until its RD.
    const nlohmann::json s = b.mc.statsJson();
    const double queued =
        double((e0 + d.tRCD) * b.t.dram.periodValue()) - double(sent * b.t.core.periodValue());
    const double elapsed = double(b.o(0).answered * b.t.core.periodValue());
    EXPECT_NEAR(s["average_queue_occupancy"].get<double>(), queued / elapsed, 1e-9);
    EXPECT_EQ(s["read_latency_core_cycles"]["max"], b.o(0).answered - sent);
  }
}

// A request of several bursts: consecutive column commands of one bank, spaced by tCCDL.
TEST(Dram, MultiBurstReadSpacesItsColumnCommands) {
  Bench b(platformWith());
  const uint32_t bytes = 4 * b.burst();
  b.add(0, 0, 0, 0, bytes);
  b.run();
  const DramConfig& d = b.cfg.memory.dram;
  const uint64_t lastRd = d.tRCD + (b.t.bursts(bytes) - 1) * b.t.sameGroup();
  EXPECT_EQ(b.o(0).answered, b.t.answerAt(lastRd + d.tCL + b.t.bc()));
  EXPECT_EQ(b.mc.statsJson()["read_bursts"], b.t.bursts(bytes));
}

// A row hit needs no ACT: only tCL and the burst (or the column spacing behind another RD).
TEST(Dram, RowHitPaysOnlyColumnTiming) {
  for (const auto& sets :
       std::vector<std::vector<std::string>>{{}, {"memory.dram.tCCDL=0", "memory.dram.tCCD=5"}}) {
    Bench b(platformWith(sets));
    const DramConfig& d = b.cfg.memory.dram;
    b.add(0, 2, 4, 0, b.burst());
    b.add(0, 2, 4, 512, b.burst());  // right behind: the next column slot of the bank group
    const uint64_t firstAnswer = b.t.answerAt(d.tRCD + d.tCL + b.t.bc());
    const uint64_t later = firstAnswer + 10;  // the row is open and every constraint has passed
    b.add(later, 2, 4, 1024, b.burst());
    b.run();
    EXPECT_EQ(b.o(0).answered, firstAnswer);
    EXPECT_EQ(b.o(1).answered, b.t.answerAt(d.tRCD + b.t.sameGroup() + d.tCL + b.t.bc()));
    EXPECT_EQ(b.o(2).answered, b.t.answerAt(b.t.dramCycleAt(later) + d.tCL + b.t.bc()));
    const nlohmann::json s = b.mc.statsJson();
    EXPECT_EQ(s["row_hits"], 2u);
    EXPECT_EQ(s["row_misses"], 1u);
    EXPECT_EQ(s["activates"], 1u);
  }
}

// Two open banks of different groups take column commands tCCD apart; of one group, tCCDL.
TEST(Dram, ColumnSpacingFollowsBankGroups) {
  const PlatformConfig cfg = platformWith({"memory.dram.tCCD=4", "memory.dram.tCCDL=7"});
  ASSERT_NE(cfg.memory.dram.bank_groups, 1u);
  const uint32_t groups = cfg.memory.dram.bank_groups;
  for (uint32_t second : {1u, groups}) {  // bank 1: another group; bank `groups`: the same group
    Bench b(cfg);
    const DramConfig& d = b.cfg.memory.dram;
    b.add(0, 0, 0, 0, b.burst());  // open both rows
    b.add(0, second, 0, 0, b.burst());
    const uint64_t warm = 1000;  // every constraint of the warm-up has passed
    b.add(warm, 0, 0, 128, b.burst());
    b.add(warm, second, 0, 128, b.burst());
    b.run();
    const uint64_t e = b.t.dramCycleAt(warm);
    const uint64_t spacing = second == 1 ? b.t.otherGroup() : b.t.sameGroup();
    EXPECT_EQ(b.o(2).answered, b.t.answerAt(e + d.tCL + b.t.bc()));
    EXPECT_EQ(b.o(3).answered, b.t.answerAt(e + spacing + d.tCL + b.t.bc()));
  }
}

// Another row of an open bank: PRE (not before tRAS after the ACT, tRTPL after the RD), tRP,
// ACT (not before tRC after the previous ACT), tRCD.
TEST(Dram, RowConflictPaysPrechargeAndActivate) {
  for (const auto& sets : std::vector<std::vector<std::string>>{
           {},  // tRAS + tRP = tRC
           {"memory.dram.tRAS=20", "memory.dram.tRP=5", "memory.dram.tRC=45"}}) {  // tRC rules
    Bench b(platformWith(sets));
    const DramConfig& d = b.cfg.memory.dram;
    b.add(0, 6, 1, 0, b.burst());
    b.add(0, 6, 2, 0, b.burst());
    b.run();
    const uint64_t rd = d.tRCD;
    const uint64_t pre = std::max<uint64_t>(d.tRAS, rd + d.tRTPL);
    const uint64_t act = std::max<uint64_t>(pre + d.tRP, d.tRC);
    EXPECT_EQ(b.o(0).answered, b.t.answerAt(rd + d.tCL + b.t.bc()));
    EXPECT_EQ(b.o(1).answered, b.t.answerAt(act + d.tRCD + d.tCL + b.t.bc()));
    const nlohmann::json s = b.mc.statsJson();
    EXPECT_EQ(s["row_misses"], 1u);
    EXPECT_EQ(s["row_conflicts"], 1u);
    EXPECT_EQ(s["activates"], 2u);
    EXPECT_EQ(s["precharges"], 1u);
  }
}

// ACTs to different banks are tRRD apart.
TEST(Dram, ActivatesToDifferentBanksAreSpacedByRrd) {
  for (const char* rrd : {"memory.dram.tRRD=6", "memory.dram.tRRD=10"}) {
    Bench b(platformWith({rrd}));
    const DramConfig& d = b.cfg.memory.dram;
    ASSERT_GE(d.tRRD, b.t.otherGroup());  // so the second RD waits for its ACT, not the first RD
    b.add(0, 0, 3, 0, b.burst());
    b.add(0, 1, 3, 0, b.burst());
    b.run();
    EXPECT_EQ(b.o(0).answered, b.t.answerAt(d.tRCD + d.tCL + b.t.bc()));
    EXPECT_EQ(b.o(1).answered, b.t.answerAt(d.tRRD + d.tRCD + d.tCL + b.t.bc()));
  }
}

// A write is answered once its data are in; a read after it waits tCDLR after the write data.
TEST(Dram, WriteThenReadRespectsCdlr) {
  for (const char* cdlr : {"memory.dram.tCDLR=5", "memory.dram.tCDLR=12"}) {
    Bench b(platformWith({cdlr}));
    const DramConfig& d = b.cfg.memory.dram;
    b.add(0, 1, 0, 0, b.burst(), AccessKind::Store);
    b.add(0, 1, 0, 256, b.burst());
    b.run();
    const uint64_t wr = d.tRCD, writeEnd = wr + d.tWL + b.t.bc();
    const uint64_t rd = std::max(writeEnd + d.tCDLR, wr + b.t.sameGroup());
    EXPECT_EQ(b.o(0).answered, b.t.answerAt(writeEnd));
    EXPECT_EQ(b.o(1).answered, b.t.answerAt(rd + d.tCL + b.t.bc()));
    EXPECT_EQ(b.mc.statsJson()["writes"], 1u);
  }
}

// A write moves only the bursts that hold bytes of its byte mask (DRAM write data masks cover
// the rest): a line-sized write with only bytes in its last burst takes one burst, with bytes in
// its first and last bursts two, with none at all still one (a request moves a burst).
TEST(Dram, WritesMoveOnlyTheBurstsTheirByteMaskTouches) {
  const PlatformConfig cfg = platformWith();
  const uint32_t burst = cfg.memory.dram.burstBytes(), line = 4 * burst;
  ASSERT_LE(line, 256u);
  const auto byteBit = [](std::array<uint64_t, 4>& m, uint32_t i) {
    m[i / 64] |= 1ull << (i % 64);
  };
  std::array<uint64_t, 4> last{}, ends{}, none{};
  byteBit(last, line - 1);
  byteBit(ends, 0);
  byteBit(ends, line - 1);
  uint64_t bursts = 0;
  for (const auto& mask : {last, ends, none}) {
    Bench b(cfg);
    Request r;
    r.addr = deviceAddress(cfg.memory, 0, 1, 0, 0);
    r.kind = AccessKind::Store;
    r.bytes = line;
    r.byteMask = mask;
    b.ini.add(r);
    b.run();
    bursts += b.mc.statsJson()["write_bursts"].get<uint64_t>();
  }
  EXPECT_EQ(bursts, 1u + 2u + 1u);
}

// A write after a read: its data follow the read data after the bus turnaround.
TEST(Dram, ReadThenWriteTurnsTheBusAround) {
  Bench b(platformWith());
  const DramConfig& d = b.cfg.memory.dram;
  b.add(0, 1, 0, 0, b.burst());
  b.add(0, 1, 0, 256, b.burst(), AccessKind::Store);
  b.run();
  const uint64_t rd = d.tRCD, readEnd = rd + d.tCL + b.t.bc();
  const uint64_t turnaround = d.read_write_turnaround;
  const uint64_t wr = std::max(rd + b.t.sameGroup(), readEnd + turnaround - d.tWL);
  EXPECT_EQ(b.o(0).answered, b.t.answerAt(readEnd));
  EXPECT_EQ(b.o(1).answered, b.t.answerAt(wr + d.tWL + b.t.bc()));
}

// Requests A (row 0), B (row 1), C (row 0) of one bank, in this order: FR-FCFS serves C from the
// open row before B; FCFS serves B first and opens row 0 again for C.
TEST(Dram, FrFcfsServesYoungerRowHitFirstFcfsDoesNot) {
  for (const char* policy : {"fr-fcfs", "fcfs"}) {
    Bench b(platformWith({std::string("memory.controller.scheduler=") + policy}));
    const DramConfig& d = b.cfg.memory.dram;
    b.add(0, 0, 0, 0, b.burst());
    b.add(0, 0, 1, 0, b.burst());
    b.add(0, 0, 0, 128, b.burst());
    b.run();
    const uint64_t rdA = d.tRCD;
    const nlohmann::json s = b.mc.statsJson();
    EXPECT_EQ(b.o(0).answered, b.t.answerAt(rdA + d.tCL + b.t.bc()));
    if (std::string(policy) == "fr-fcfs") {
      const uint64_t rdC = rdA + b.t.sameGroup();
      const uint64_t preB = std::max<uint64_t>(d.tRAS, rdC + d.tRTPL);
      const uint64_t actB = std::max<uint64_t>(preB + d.tRP, d.tRC);
      EXPECT_EQ(b.o(2).answered, b.t.answerAt(rdC + d.tCL + b.t.bc()));
      EXPECT_EQ(b.o(1).answered, b.t.answerAt(actB + d.tRCD + d.tCL + b.t.bc()));
      EXPECT_LT(b.o(2).answered, b.o(1).answered);
      EXPECT_EQ(s["row_hits"], 1u);
      EXPECT_EQ(s["row_conflicts"], 1u);
    } else {
      const uint64_t preB = std::max<uint64_t>(d.tRAS, rdA + d.tRTPL);
      const uint64_t actB = std::max<uint64_t>(preB + d.tRP, d.tRC);
      const uint64_t rdB = actB + d.tRCD;
      const uint64_t preC = std::max<uint64_t>(actB + d.tRAS, rdB + d.tRTPL);
      const uint64_t actC = std::max<uint64_t>(preC + d.tRP, actB + d.tRC);
      EXPECT_EQ(b.o(1).answered, b.t.answerAt(rdB + d.tCL + b.t.bc()));
      EXPECT_EQ(b.o(2).answered, b.t.answerAt(actC + d.tRCD + d.tCL + b.t.bc()));
      EXPECT_LT(b.o(1).answered, b.o(2).answered);
      EXPECT_EQ(s["row_hits"], 0u);
      EXPECT_EQ(s["row_conflicts"], 2u);
    }
    EXPECT_EQ(s["row_misses"], 1u);
  }
}

// FCFS still overlaps the row commands of different banks.
TEST(Dram, FcfsOpensRowsOfOtherBanksAhead) {
  Bench b(platformWith({"memory.controller.scheduler=fcfs"}));
  const DramConfig& d = b.cfg.memory.dram;
  b.add(0, 0, 0, 0, b.burst());
  b.add(0, 1, 0, 0, b.burst());
  b.run();
  const uint64_t rd1 = std::max<uint64_t>(d.tRRD + d.tRCD, d.tRCD + b.t.otherGroup());
  EXPECT_EQ(b.o(1).answered, b.t.answerAt(rd1 + d.tCL + b.t.bc()));
}

// A full queue holds END_REQ and accepts the held request when its oldest entry leaves (at its
// last column command); every request is answered once.
TEST(Dram, FullQueueHoldsEndReqAndLosesNothing) {
  Bench b(platformWith({"memory.controller.queue_entries=2"}));
  const DramConfig& d = b.cfg.memory.dram;
  const uint32_t entries = b.cfg.memory.controller.queue_entries, n = 6;
  for (uint32_t i = 0; i < n; ++i) b.add(0, 0, 0, 64 * i, b.burst());
  b.run();
  auto rdOf = [&](uint64_t i) { return d.tRCD + i * b.t.sameGroup(); };
  for (uint32_t i = 0; i < n; ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(b.o(i).answered, b.t.answerAt(rdOf(i) + d.tCL + b.t.bc()));
    // Request i enters when request i - entries leaves the queue.
    EXPECT_EQ(b.o(i).accepted, i < entries ? 0 : b.t.coreCycleOf(rdOf(i - entries)));
    if (i > 0) {
      EXPECT_GE(b.o(i).sent, b.o(i - 1).accepted);  // one request at a time
    }
  }
  const nlohmann::json s = b.mc.statsJson();
  EXPECT_EQ(s["reads"], n);
  EXPECT_EQ(s["read_latency_core_cycles"]["count"], n);
  // Latency counts from BEGIN_REQ, including the time a request waited for END_REQ.
  uint64_t sum = 0, max = 0;
  for (uint32_t i = 0; i < n; ++i) {
    sum += b.o(i).answered - b.o(i).sent;
    max = std::max(max, b.o(i).answered - b.o(i).sent);
  }
  EXPECT_DOUBLE_EQ(s["read_latency_core_cycles"]["average"].get<double>(), double(sum) / n);
  EXPECT_EQ(s["read_latency_core_cycles"]["max"], max);
  EXPECT_EQ(s["held_requests"], n - entries);
  EXPECT_EQ(s["max_queue_occupancy"], entries);
}

// Refresh every tREFI: a request arriving during tRFC waits for its end.
TEST(Dram, RefreshDelaysRequestsArrivingDuringRfc) {
  const std::vector<std::string> sets{"memory.dram.tREFI=1000", "memory.dram.tRFC=100"};
  const DramConfig d = sameClocks(sets).memory.dram;
  const uint64_t due = d.tREFI, access = d.tRCD + d.tCL + d.burstCycles();
  {  // An idle channel: the refresh is accounted when the request arrives.
    Bench b(sameClocks(sets));
    b.add(due + 10, 0, 0, 0, b.burst());
    b.run();
    EXPECT_EQ(b.o(0).answered, b.t.answerAt(due + d.tRFC + access));
    EXPECT_EQ(b.mc.statsJson()["refreshes"], 1u);
  }
  {  // After tRFC: no delay.
    Bench b(sameClocks(sets));
    const uint64_t sent = due + d.tRFC + 10;
    b.add(sent, 0, 0, 0, b.burst());
    b.run();
    EXPECT_EQ(b.o(0).answered, b.t.answerAt(sent + access));
  }
  {  // An open bank is precharged first.
    Bench b(sameClocks(sets));
    b.add(0, 4, 0, 0, b.burst());
    b.add(due + 10, 5, 0, 0, b.burst());
    b.run();
    EXPECT_EQ(b.o(1).answered, b.t.answerAt(due + d.tRP + d.tRFC + access));
    const nlohmann::json s = b.mc.statsJson();
    EXPECT_EQ(s["refreshes"], 1u);
    EXPECT_EQ(s["precharges"], 1u);
    EXPECT_EQ(s["activates"], 2u);
  }
  {  // A queued request whose row was just opened: the refresh falls due before its RD.
    Bench b(sameClocks(sets));
    const uint64_t sent = due - 5;
    ASSERT_GT(sent + d.tRCD, due);
    b.add(sent, 0, 0, 0, b.burst());
    b.run();
    const uint64_t pre = std::max<uint64_t>(due, sent + d.tRAS);
    const uint64_t ref = std::max<uint64_t>(pre + d.tRP, sent + d.tRC);
    EXPECT_EQ(b.o(0).answered, b.t.answerAt(ref + d.tRFC + access));
    const nlohmann::json s = b.mc.statsJson();
    EXPECT_EQ(s["activates"], 2u);
    EXPECT_EQ(s["row_misses"], 1u);
  }
  {  // A long idle period: every refresh is counted, the last one delays the request.
    Bench b(sameClocks(sets));
    const uint64_t k = 10;
    b.add(k * due + 10, 0, 0, 0, b.burst());
    b.run();
    EXPECT_EQ(b.o(0).answered, b.t.answerAt(k * due + d.tRFC + access));
    EXPECT_EQ(b.mc.statsJson()["refreshes"], k);
  }
}

// A refresh interval must leave room, besides the refresh and a precharge per bank, for the
// longest row cycle of one access (a write's: activate, write, recovery, precharge); at the
// smallest interval accepted, writes and reads that miss rows of one bank are all served.
TEST(Dram, RefreshIntervalLeavesRoomForTheLongestRowCycle) {
  const DramConfig d = sameClocks().memory.dram;
  const uint64_t rfc = 12;
  const uint64_t write = uint64_t(d.tRCD) + d.tWL + d.burstCycles() + d.tWR + d.tRP;
  const uint64_t read = uint64_t(d.tRCD) + d.tRTPL + d.tRP;
  const uint64_t need = rfc + std::max<uint64_t>({d.tRC, write, read}) + d.banks;
  const auto with = [&](uint64_t refi) {
    return std::vector<std::string>{"memory.dram.tRFC=" + std::to_string(rfc),
                                    "memory.dram.tREFI=" + std::to_string(refi)};
  };
  try {
    sameClocks(with(need));
    ADD_FAILURE() << "tREFI " << need << " was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(std::to_string(need) + " in all"), std::string::npos)
        << e.what();
  }
  Bench b(sameClocks(with(need + 1)));
  for (uint32_t i = 0; i < 40; ++i)
    b.add(i * 7, 0, i, 0, b.burst(), i % 2 ? AccessKind::Store : AccessKind::Load);
  b.run();
  EXPECT_GE(b.mc.statsJson()["refreshes"].get<uint64_t>(), 4u);
}

// Without tREFI there is no refresh however long the run.
TEST(Dram, RefreshDisabledByDefault) {
  Bench b(platformWith());
  ASSERT_EQ(b.cfg.memory.dram.tREFI, 0u);
  const uint64_t sent = 1000000;
  b.add(sent, 0, 0, 0, b.burst());
  b.run();
  const DramConfig& d = b.cfg.memory.dram;
  EXPECT_EQ(b.o(0).answered, b.t.answerAt(b.t.dramCycleAt(sent) + d.tRCD + d.tCL + b.t.bc()));
  EXPECT_EQ(b.mc.statsJson()["refreshes"], 0u);
}

// Idle costs nothing: once the last answer is out the controller schedules no further event,
// not even for refresh (it is accounted when work arrives), so the simulation ends there.
TEST(Dram, IdleControllerSchedulesNothing) {
  Bench b(sameClocks({"memory.dram.tREFI=1000", "memory.dram.tRFC=100"}));
  b.add(0, 0, 0, 0, b.burst());
  b.run();
  EXPECT_FALSE(sc_core::sc_pending_activity());
  EXPECT_EQ(sc_core::sc_time_stamp().value(), b.o(0).answered * b.t.core.periodValue());
}

// The DRAM part of the latency is counted in DRAM cycles: half the clock, twice the core cycles.
TEST(Dram, HalvingDramClockDoublesDramLatency) {
  uint64_t dramPart[2] = {};
  const char* clocks[2] = {"gpu.clocks.dram_mhz=1000", "gpu.clocks.dram_mhz=500"};
  for (int i = 0; i < 2; ++i) {
    Bench b(platformWith({"gpu.clocks.core_mhz=1000", clocks[i]}));
    b.add(0, 0, 0, 0, b.burst());
    b.run();
    dramPart[i] = b.o(0).answered - b.cfg.memory.controller.latency;
    const DramConfig& d = b.cfg.memory.dram;
    if (i == 0) {
      EXPECT_EQ(dramPart[i], d.tRCD + d.tCL + b.t.bc());  // 1:1 clocks
    }
  }
  EXPECT_EQ(dramPart[1], 2 * dramPart[0]);
}

// A long stream of row hits. Alternating between two banks of different groups, a column command
// issues every burstCycles (tCCD <= burstCycles < tCCDL), so after the start-up (an ACT per
// bank: at most tRRD + tRCD + tCL) the data bus never idles: utilisation is at least
// busy / (busy + tRRD + tRCD + tCL + the controller latency + 2 cycles of clock rounding).
// In one bank every column command waits tCCDL, so utilisation is at most burstCycles / tCCDL.
// On gtx480's GDDR5 and on rtx3070's GDDR6 (16-bit channels, 32-byte BL16 bursts at 8
// transfers per 1.75 GHz command clock: 28 GB/s per channel, 448 GB/s on 16 channels, the
// board's figure). With refresh (rtx3070's tREFI), each refresh closes the rows and costs at most
// tRP + tRFC + tRRD + tRCD + tCL (+ 2 of rounding) more.
// memory.dram.bank_groups 1 is "none": column commands are tCCD apart, whatever tCCDL says.
TEST(Dram, OneBankGroupIsNoBankGroups) {
  const auto elapsed = [](std::vector<std::string> sets) {
    sets.push_back("memory.dram.tREFI=0");
    Bench b(platformWith(sets));
    const uint32_t n = 200, bytes = 2 * b.burst(), perRow = b.cfg.memory.dram.row_bytes / bytes;
    for (uint32_t i = 0; i < n; ++i) b.add(0, 0, 0, (i % perRow) * bytes, bytes);
    b.run();
    return b.mc.statsJson()["elapsed_dram_cycles"].get<uint64_t>();
  };
  const uint64_t none = elapsed({"memory.dram.bank_groups=1", "memory.dram.tCCDL=0"});
  EXPECT_EQ(elapsed({"memory.dram.bank_groups=1", "memory.dram.tCCDL=12"}), none);
  EXPECT_GT(elapsed({"memory.dram.bank_groups=4", "memory.dram.tCCDL=12"}), none);
}

TEST(Dram, RowHitStreamReachesTheBusBandwidth) {
  for (const char* platform : {"gtx480", "rtx3070"})
    for (bool refresh : {false, true})
      for (bool twoGroups : {true, false}) {
        SCOPED_TRACE(std::string(platform) + (refresh ? " refresh" : "") +
                     (twoGroups ? " two groups" : " one group"));
        Bench b(loadPlatform(platform, refresh ? std::vector<std::string>{}
                                               : std::vector<std::string>{"memory.dram.tREFI=0"}));
        const DramConfig& d = b.cfg.memory.dram;
        if (refresh && d.tREFI == 0) continue;  // gtx480 does not refresh
        ASSERT_LE(d.tCCD, b.t.bc());
        const uint32_t n = 2000, bytes = 2 * b.burst(), perRow = d.row_bytes / bytes;
        for (uint32_t i = 0; i < n; ++i) {
          const uint32_t bank = twoGroups ? i % 2 : 0, index = twoGroups ? i / 2 : i;
          b.add(0, bank, 0, (index % perRow) * bytes, bytes);
        }
        b.mc.resetStats();
        b.run();
        const nlohmann::json s = b.mc.statsJson();
        const uint64_t bursts = uint64_t(n) * b.t.bursts(bytes), busy = bursts * b.t.bc();
        const uint64_t refreshes = s["refreshes"].get<uint64_t>(), banks = twoGroups ? 2 : 1;
        EXPECT_EQ(refreshes > 0, refresh);
        EXPECT_EQ(s["data_bus_busy_cycles"], busy);
        EXPECT_LE(s["row_hits"].get<uint64_t>(), n - banks);
        EXPECT_GE(s["row_hits"].get<uint64_t>(), n - banks * (1 + refreshes));
        const double utilisation = s["bus_utilisation"].get<double>();
        const double spacing = double(twoGroups ? b.t.otherGroup() : b.t.sameGroup());
        const double overhead =
            double(d.tRRD + d.tRCD + d.tCL + b.t.latencyInDramCycles() + 2) +
            double(refreshes) * double(d.tRP + d.tRFC + d.tRRD + d.tRCD + d.tCL + 2);
        const double lower = double(busy) / (double(bursts) * spacing + overhead);
        EXPECT_GE(utilisation, lower);
        EXPECT_LE(utilisation, double(b.t.bc()) / spacing);
        // The bandwidth: burstBytes per burstCycles, times the utilisation.
        const double bytesPerCycle = double(n) * bytes / s["elapsed_dram_cycles"].get<double>();
        EXPECT_GE(bytesPerCycle, lower * d.burstBytes() / double(b.t.bc()));
        if (twoGroups && !refresh) {
          EXPECT_GT(lower, 0.95);  // the bound is meaningful: close to 1
        }
        if (std::string(platform) == "rtx3070") {
          const double hz = b.cfg.gpu.clocks.dram_mhz * 1e6;
          const double peak =
              double(d.burstBytes()) / double(b.t.bc()) * hz * b.cfg.memory.partitions;
          EXPECT_NEAR(peak, 448e9, 1e6);
          EXPECT_GE(bytesPerCycle * hz * b.cfg.memory.partitions, lower * peak);
          if (twoGroups) {
            // Refresh takes tRFC of every tREFI (6 %) and the rows' reopening; still 88 %.
            EXPECT_GT(lower, refresh ? 0.88 : 0.95);
          }
        }
      }
}

// Random traffic (banks, rows, sizes, reads and writes, bursts and idle gaps, refresh on and off)
// through a small queue: every request is answered once, by the rules, and the counts add up.
// FCFS moves data in arrival order, so its answers come in arrival order.
TEST(Dram, RandomTrafficIsAnsweredOnceAndCountsAddUp) {
  for (const char* policy : {"fr-fcfs", "fcfs"}) {
    for (const char* refresh : {"memory.dram.tREFI=0", "memory.dram.tREFI=700"}) {
      SCOPED_TRACE(std::string(policy) + " " + refresh);
      Bench b(platformWith({std::string("memory.controller.scheduler=") + policy, refresh,
                            "memory.dram.tRFC=60", "memory.controller.queue_entries=8"}));
      Rng rng(42);
      const uint32_t n = 3000, sizes[] = {32, 64, 128, 256};
      uint64_t cycle = 0, readBursts = 0, writeBursts = 0, reads = 0;
      for (uint32_t i = 0; i < n; ++i) {
        if (rng.below(8) == 0) cycle += rng.below(2000);  // now and then an idle gap
        cycle += rng.below(3);
        const uint32_t bytes = sizes[rng.below(4)];
        const AccessKind kind = rng.below(10) < 3 ? AccessKind::Store : AccessKind::Load;
        b.add(cycle, rng.below(b.cfg.memory.dram.banks), rng.below(8),
              rng.below(b.cfg.memory.dram.row_bytes / 256) * 256, bytes, kind);
        (kind == AccessKind::Store ? writeBursts : readBursts) += b.t.bursts(bytes);
        reads += kind == AccessKind::Load;
      }
      b.run();
      const nlohmann::json s = b.mc.statsJson();
      EXPECT_EQ(s["reads"], reads);
      EXPECT_EQ(s["writes"], n - reads);
      EXPECT_EQ(s["read_latency_core_cycles"]["count"], reads);
      EXPECT_EQ(s["row_hits"].get<uint64_t>() + s["row_misses"].get<uint64_t>() +
                    s["row_conflicts"].get<uint64_t>(),
                n);
      EXPECT_EQ(s["read_bursts"], readBursts);
      EXPECT_EQ(s["write_bursts"], writeBursts);
      EXPECT_GE(s["activates"].get<uint64_t>(),
                s["row_misses"].get<uint64_t>() + s["row_conflicts"].get<uint64_t>());
      EXPECT_LE(s["precharges"].get<uint64_t>(), s["activates"].get<uint64_t>());
      EXPECT_GT(s["held_requests"].get<uint64_t>(), 0u);  // the queue did fill up
      if (std::string(refresh) != "memory.dram.tREFI=0") {
        EXPECT_EQ(s["refreshes"], b.t.dram.now() / b.cfg.memory.dram.tREFI);
      }
      if (std::string(policy) == "fcfs") {
        for (uint32_t i = 1; i < n; ++i) ASSERT_LE(b.o(i - 1).answered, b.o(i).answered) << i;
      }
    }
  }
}

// Every statistic agrees with the traffic sent (partition 2: addresses are mapped).
TEST(Dram, StatisticsAgreeWithTraffic) {
  Bench b(platformWith(), 2);
  const uint32_t burst = b.burst();
  struct Access {
    uint32_t bank;
    uint64_t row;
    uint32_t column, bytes;
    AccessKind kind;
  };
  const std::vector<Access> script{
      {2, 5, 0, 2 * burst, AccessKind::Load},        // miss
      {2, 5, 256, burst, AccessKind::Load},          // hit
      {2, 6, 0, 2 * burst, AccessKind::Store},       // conflict
      {4, 1, 0, burst / 2, AccessKind::Load},        // miss
      {4, 1, 512, 3 * burst + 8, AccessKind::Store}  // hit
  };
  uint64_t bytes = 0, readBursts = 0, writeBursts = 0;
  for (const Access& a : script) {
    b.add(0, a.bank, a.row, a.column, a.bytes, a.kind);
    bytes += a.bytes;
    (a.kind == AccessKind::Store ? writeBursts : readBursts) += b.t.bursts(a.bytes);
  }
  b.run();
  nlohmann::json s = b.mc.statsJson();
  EXPECT_EQ(s["reads"], 3u);
  EXPECT_EQ(s["writes"], 2u);
  EXPECT_EQ(s["bytes"], bytes);
  EXPECT_EQ(s["row_hits"], 2u);
  EXPECT_EQ(s["row_misses"], 2u);
  EXPECT_EQ(s["row_conflicts"], 1u);
  EXPECT_DOUBLE_EQ(s["row_hit_rate"].get<double>(), 2.0 / 5.0);
  EXPECT_EQ(s["activates"], 3u);
  EXPECT_EQ(s["precharges"], 1u);
  EXPECT_EQ(s["refreshes"], 0u);
  EXPECT_EQ(s["read_bursts"], readBursts);
  EXPECT_EQ(s["write_bursts"], writeBursts);
  EXPECT_EQ(s["data_bus_busy_cycles"], (readBursts + writeBursts) * b.t.bc());
  EXPECT_EQ(s["max_queue_occupancy"], script.size());
  // Read latency: what the initiator saw, per read.
  uint64_t sum = 0, max = 0, count = 0;
  std::vector<uint64_t> buckets;
  for (size_t i = 0; i < script.size(); ++i) {
    if (script[i].kind != AccessKind::Load) continue;
    const uint64_t lat = b.o(i).answered - b.o(i).sent;
    sum += lat;
    max = std::max(max, lat);
    ++count;
    uint32_t bucket = 0;
    while ((2ull << bucket) <= lat) ++bucket;
    if (buckets.size() <= bucket) buckets.resize(bucket + 1);
    ++buckets[bucket];
  }
  const nlohmann::json& lat = s["read_latency_core_cycles"];
  EXPECT_EQ(lat["count"], count);
  EXPECT_DOUBLE_EQ(lat["average"].get<double>(), double(sum) / double(count));
  EXPECT_EQ(lat["max"], max);
  ASSERT_EQ(lat["histogram"].size(), buckets.size());
  for (size_t i = 0; i < buckets.size(); ++i) {
    EXPECT_EQ(lat["histogram"][i]["count"], buckets[i]);
    EXPECT_EQ(lat["histogram"][i]["from"].get<uint64_t>(), i == 0 ? 0 : 1ull << i);
  }

  // resetStats: counting starts again; the rows stay open (a hit now).
  b.mc.resetStats();
  s = b.mc.statsJson();
  EXPECT_EQ(s["reads"], 0u);
  EXPECT_EQ(s["activates"], 0u);
  EXPECT_EQ(s["data_bus_busy_cycles"], 0u);
  const uint64_t later = b.o(4).answered + 100;
  b.add(later, 4, 1, 128, burst);
  b.run();
  s = b.mc.statsJson();
  EXPECT_EQ(s["reads"], 1u);
  EXPECT_EQ(s["row_hits"], 1u);
  EXPECT_EQ(s["activates"], 0u);
  EXPECT_EQ(s["read_latency_core_cycles"]["count"], 1u);
}

// resetState: power-on, every row closed.
TEST(Dram, ResetStateClosesEveryRow) {
  Bench b(platformWith());
  const DramConfig& d = b.cfg.memory.dram;
  b.add(0, 3, 2, 0, b.burst());
  b.run();
  b.mc.resetState();
  const uint64_t later = b.o(0).answered + 100;
  b.add(later, 3, 2, 128, b.burst());  // the same row: a miss again
  b.run();
  EXPECT_EQ(b.o(1).answered, b.t.answerAt(b.t.dramCycleAt(later) + d.tRCD + d.tCL + b.t.bc()));
  EXPECT_EQ(b.mc.statsJson()["row_misses"], 1u);
}

// The scheduling rules as written (docs/memory-system.md), applied to the whole queue oldest
// first: what the policies, which look at each bank's requests only, must decide.
dram::DramDecision referenceDecision(const std::string& policy, const dram::RequestQueue& q,
                                     const dram::DramChannel& ch, uint64_t now) {
  using dram::DramDecision;
  using dram::RequestQueue;
  DramDecision d;
  std::vector<bool> hasHit(ch.banks()), seen(ch.banks()), triedRd(ch.banks()), triedWr(ch.banks());
  if (policy == "fr-fcfs") {
    for (uint32_t i = q.oldest(); i != RequestQueue::kEnd; i = q.next(i)) {
      const dram::DramRequest& r = q[i];
      if (!ch.isRowHit(r.bank, r.row)) continue;
      hasHit[r.bank] = true;
      std::vector<bool>& tried = r.write ? triedWr : triedRd;
      if (tried[r.bank]) continue;
      tried[r.bank] = true;
      const uint64_t t = ch.earliestColumn(r.bank, r.write);
      if (t <= now) return DramDecision{DramDecision::Kind::Column, i, now};
      d.retry = std::min(d.retry, t);
    }
  } else {
    const uint32_t h = q.oldest();
    if (h != RequestQueue::kEnd && ch.isRowHit(q[h].bank, q[h].row)) {
      const uint64_t t = ch.earliestColumn(q[h].bank, q[h].write);
      if (t <= now) return DramDecision{DramDecision::Kind::Column, h, now};
      d.retry = t;
    }
  }
  for (uint32_t i = q.oldest(); i != RequestQueue::kEnd; i = q.next(i)) {
    const uint32_t bank = q[i].bank;
    if (hasHit[bank] || seen[bank]) continue;
    seen[bank] = true;
    if (policy == "fcfs" && ch.isRowHit(bank, q[i].row)) continue;
    const uint64_t t = ch.earliestRowCommand(bank);
    if (t <= now) return DramDecision{DramDecision::Kind::Row, i, now};
    d.retry = std::min(d.retry, t);
  }
  return d;
}

TEST(Dram, PoliciesDecideAsTheRulesOverTheWholeQueue) {
  // Random queues (requests to few rows of every bank, slots reused out of order) against a
  // channel driven by random legal commands; every decision compared with the reference's.
  const PlatformConfig cfg = platformWith();
  const DramConfig& dc = cfg.memory.dram;
  for (const std::string policy : {"fr-fcfs", "fcfs"}) {
    auto p = dram::dramSchedulingPolicies().create(policy, dc);
    dram::DramChannel ch(dc);
    dram::RequestQueue q(cfg.memory.controller.queue_entries, dc.banks);
    Rng rng(policy == "fcfs" ? 11 : 7);
    uint64_t seq = 0, now = 0;
    uint32_t columns = 0, rows = 0, nones = 0;
    for (int step = 0; step < 20000; ++step) {
      now += 1 + rng.below(3);
      // Arrivals and departures keep the queue between empty and full.
      for (uint32_t n = rng.below(4); n > 0 && !q.full(); --n) {
        dram::DramRequest r;
        r.seq = seq++;
        r.bank = rng.below(dc.banks);
        r.row = rng.below(3);
        r.write = rng.below(4) == 0;
        r.burstsLeft = 1;
        q.push(r);
      }
      if (q.empty()) continue;
      const dram::DramDecision want = referenceDecision(policy, q, ch, now);
      const dram::DramDecision got = p->decide(q, ch, now);
      ASSERT_EQ(int(got.kind), int(want.kind)) << policy << " at step " << step;
      ASSERT_EQ(got.request, want.request) << policy << " at step " << step;
      ASSERT_EQ(got.retry, want.retry) << policy << " at step " << step;
      // Carry the decision out, as the controller does, so the channel's rows and timing move.
      if (got.kind == dram::DramDecision::Kind::Column) {
        ++columns;
        const dram::DramRequest& r = q[got.request];
        if (r.write)
          ch.write(r.bank, now);
        else
          ch.read(r.bank, now);
        q.remove(got.request);
      } else if (got.kind == dram::DramDecision::Kind::Row) {
        ++rows;
        const dram::DramRequest& r = q[got.request];
        if (ch.isOpen(r.bank))
          ch.precharge(r.bank, now);
        else
          ch.activate(r.bank, r.row, now);
      } else {
        ++nones;
      }
      // Now and then a request leaves from anywhere (its slot is reused out of order).
      if (!q.empty() && rng.below(8) == 0) {
        uint32_t i = q.oldest();
        for (uint32_t k = rng.below(q.size()); k > 0; --k) i = q.next(i);
        q.remove(i);
      }
    }
    // Every kind of decision was compared many times.
    EXPECT_GT(columns, 1000u) << policy;
    EXPECT_GT(rows, 1000u) << policy;
    EXPECT_GT(nones, 1000u) << policy;
  }
}

TEST(Dram, RequestQueueKeepsEachBanksReadsAndWritesInArrivalOrder) {
  dram::RequestQueue q(10, 4);
  std::vector<uint32_t> slot;
  for (uint32_t k = 0; k < 10; ++k) {
    dram::DramRequest r;
    r.seq = k;
    r.bank = k % 3;        // banks 0, 1, 2; bank 3 empty
    r.write = k % 4 == 3;  // 3 and 7 write
    slot.push_back(q.push(r));
  }
  EXPECT_EQ(q.banksWithRequests(), 0b0111u);
  const auto seqsOf = [&](uint32_t bank, bool write) {
    std::vector<uint64_t> s;
    for (uint32_t i = q.bankOldest(bank, write); i != dram::RequestQueue::kEnd; i = q.bankNext(i))
      s.push_back(q[i].seq);
    return s;
  };
  EXPECT_EQ(seqsOf(0, false), (std::vector<uint64_t>{0, 6, 9}));
  EXPECT_EQ(seqsOf(0, true), (std::vector<uint64_t>{3}));
  EXPECT_EQ(seqsOf(1, true), (std::vector<uint64_t>{7}));
  q.remove(slot[0]);  // bank 0's oldest: its oldest is now the write
  EXPECT_EQ(q[q.bankOldest(0)].seq, 3u);
  q.remove(slot[1]);  // bank 1: reads 4; write 7
  q.remove(slot[4]);
  EXPECT_EQ(q[q.bankOldest(1)].seq, 7u);
  q.remove(slot[7]);  // bank 1 empty
  EXPECT_EQ(q.bankOldest(1), dram::RequestQueue::kEnd);
  EXPECT_EQ(q.banksWithRequests(), 0b0101u);
  EXPECT_EQ(seqsOf(0, false), (std::vector<uint64_t>{6, 9}));
  EXPECT_EQ(seqsOf(2, false), (std::vector<uint64_t>{2, 5, 8}));
  dram::DramRequest r;
  r.seq = 10;
  r.bank = 1;
  r.write = true;
  q.push(r);  // into a freed slot
  EXPECT_EQ(seqsOf(1, true), (std::vector<uint64_t>{10}));
  EXPECT_EQ(q.banksWithRequests(), 0b0111u);
  q.clear();
  EXPECT_EQ(q.banksWithRequests(), 0u);
  EXPECT_EQ(q.bankOldest(0), dram::RequestQueue::kEnd);
  EXPECT_EQ(q.bankOldest(2, false), dram::RequestQueue::kEnd);
}

TEST(Dram, SchedulingPoliciesByName) {
  const auto& reg = dram::dramSchedulingPolicies();
  EXPECT_EQ(reg.names(), (std::vector<std::string>{"fr-fcfs", "fcfs"}));
  const PlatformConfig cfg = platformWith();
  EXPECT_THROW(reg.create("frfcfs", cfg.memory.dram), InputError);
}

}  // namespace
