// End-to-end tests of the memory hierarchy behind the SMs (docs/memory-system.md): a pointer
// chase whose per-load latency is the sum of the configured latencies of the levels it crosses,
// a streaming kernel against the configured DRAM peak bandwidth, and the catalog on every
// platform with a TLM-2.0 protocol checker on every memory connection.
//
// Latency measurement. One thread runs a loop of K dependent loads (`ld.global.u64 %rd1,
// [%rd1]`) I times; with T(K, I) the kernel's cycles,
//
//   per-load cycles = [T(K2, I2) - T(K2, I1) - T(K1, I2) + T(K1, I1)] / ((I2 - I1)(K2 - K1))
//
// cancels start-up, instruction fetch and the loop's own instructions. The SM's share of a load
// (issue, operand read, address generation, writeback) is measured the same way against the
// fixed-latency memory, whose share is memory.fixed_latency exactly; what remains with the
// hierarchy is the memory system's latency. All clocks run at the core clock, so every level's
// cycles add up in one unit.
#include <algorithm>
#include <cmath>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "cache/l2_slice.hpp"
#include "catalog.hpp"
#include "common/address_map.hpp"
#include "gpu/device.hpp"
#include "gpu/gpu.hpp"
#include "gpu/timing_engine.hpp"
#include "support/ptx_harness.hpp"

using namespace gpusc;

namespace {

constexpr uint32_t kFixedLatency = 400;

// The GTX480 platform with every clock at the core clock and the given overrides.
PlatformConfig sameClocks(std::vector<std::string> sets) {
  std::string platform = "gtx480";
  if (!sets.empty() && sets.front().rfind("platform=", 0) == 0) {
    platform = sets.front().substr(9);
    sets.erase(sets.begin());
  }
  std::vector<std::string> all{"gpu.clocks.interconnect_mhz=700", "gpu.clocks.l2_mhz=700",
                               "gpu.clocks.dram_mhz=700"};
  all.insert(all.end(), sets.begin(), sets.end());
  return loadPlatform(platform, all);
}

// Offsets of a cyclic chain's nodes from a base that maps like address 0 (same partition, bank
// and row): node i holds the address of node i + 1. Every launch makes a multiple of eight
// loads and starts at node 0, so with eight nodes (or one) it ends where the next one expects
// the caches to be.
using Chain = std::vector<uint64_t>;

// Cycles of one dependent load with `cfg`, the chain's nodes placed at `chain` offsets.
double perLoadCycles(const PlatformConfig& cfg, const Chain& chain,
                     const std::string& load = "ld.global.u64") {
  Device dev(cfg, ExecMode::Timing);
  const MemoryConfig& m = cfg.memory;
  const uint64_t period =
      uint64_t(m.partition_interleave_bytes) * m.partitions *
      (m.dram.row_bytes / std::min(m.dram.row_bytes, m.partition_interleave_bytes)) * m.dram.banks;
  const uint64_t span = *std::max_element(chain.begin(), chain.end()) + 8;
  const DevPtr region = dev.malloc(span + period);
  const DevPtr base = (region + period - 1) / period * period;
  for (size_t i = 0; i < chain.size(); ++i) {
    const uint64_t next = base + chain[(i + 1) % chain.size()];
    dev.copyToDevice(base + chain[i], &next, sizeof next);
  }
  const DevPtr out = dev.malloc(8);
  constexpr int kK1 = 4, kK2 = 8;
  constexpr uint32_t kI1 = 2, kI2 = 6;
  const Kernel* kernels[2] = {
      &dev.loadModule(test::chaseKernel(kK1, load), "chase4.ptx").kernel("chase"),
      &dev.loadModule(test::chaseKernel(kK2, load), "chase8.ptx").kernel("chase")};
  auto T = [&](int k, uint32_t iters) {
    dev.launch(*kernels[k == kK2], {1}, {1}, 0,
               KernelArgs().ptr(base + chain.front()).u32(iters).ptr(out));
    return double(dev.launches().back().timing->cycles);
  };
  // Warm-up: the instruction and constant caches hold both kernels and their parameters (so
  // the measured launches fetch nothing else from memory), and the chain's lines are where the
  // test wants them; the last warm-up's fetches left no other row open in the chain's bank.
  T(kK1, 2);
  T(kK2, 1);
  T(kK1, 2);
  const double t22 = T(kK2, kI2), t21 = T(kK2, kI1), t12 = T(kK1, kI2), t11 = T(kK1, kI1);
  return (t22 - t21 - t12 + t11) / (double(kI2 - kI1) * double(kK2 - kK1));
}

// The SM's own cycles of a dependent load: the per-load cycles against the fixed-latency memory,
// less its latency.
double smShare() {
  static const double share =
      perLoadCycles(sameClocks({"memory.model=fixed-latency",
                                "memory.fixed_latency=" + std::to_string(kFixedLatency)}),
                    {0}) -
      kFixedLatency;
  return share;
}

double memoryLatency(const std::vector<std::string>& sets, const Chain& chain) {
  return perLoadCycles(sameClocks(sets), chain) - smShare();
}

// Eight nodes `stride` bytes apart.
Chain eightNodes(uint64_t stride) {
  Chain c;
  for (uint64_t i = 0; i < 8; ++i) c.push_back(i * stride);
  return c;
}

// Interconnect cycles of a packet through `routers` routers on an idle network
// (models/noc/interconnect.hpp): packetisation, each router's pipeline and output link, and a
// flit a cycle behind the head.
uint64_t packetCycles(const NocConfig& n, uint32_t routers, uint32_t dataBytes) {
  const uint32_t flits = (n.header_bytes + dataBytes + n.flit_bytes - 1) / n.flit_bytes;
  return 1 +
         uint64_t(routers) *
             (n.routing_delay + n.vc_alloc_delay + n.switch_alloc_delay + 1 + n.link_latency) +
         (flits - 1);
}

// A line read request and its reply through `routers` routers.
uint64_t roundTrip(const PlatformConfig& c, uint32_t routers) {
  return packetCycles(c.noc, routers, 0) + packetCycles(c.noc, routers, c.sm.l1d.line_bytes);
}

// DRAM cycles from a line read's arrival at the controller, with its row open (row hit) or
// another row open in its bank (conflict), to its data's end: the line's bursts go to one bank,
// a column command every max(tCCDL, burst) cycles.
uint64_t dramRead(const DramConfig& d, uint32_t lineBytes, bool conflict) {
  const uint32_t bursts = lineBytes / d.burstBytes();
  const uint32_t burstCycles = d.burst_length / d.data_rate;
  const uint32_t spacing = std::max(d.bank_groups > 1 ? d.tCCDL : d.tCCD, burstCycles);
  return (conflict ? d.tRP + d.tRCD : 0) + (bursts - 1) * spacing + d.tCL + burstCycles;
}

TEST(MemoryLatency, TheSmShareIsSmallAndWhole) {
  EXPECT_GE(smShare(), 1.0);
  EXPECT_LE(smShare(), 10.0);
  EXPECT_EQ(smShare(), std::round(smShare()));
}

TEST(MemoryLatency, AnL1HitTakesTheHitLatency) {
  const PlatformConfig c = sameClocks({});
  EXPECT_EQ(memoryLatency({}, {0}), c.sm.l1d.hit_latency);
  EXPECT_EQ(memoryLatency({"sm.l1d.hit_latency=7"}, {0}), 7);
}

TEST(MemoryLatency, AnL2HitAddsTheCrossbarBothWays) {
  const PlatformConfig c = sameClocks({});
  ASSERT_EQ(c.noc.topology, "crossbar");
  const double want = roundTrip(c, 1) + c.l2.slice.hit_latency;
  EXPECT_EQ(memoryLatency({"sm.l1d.enabled=false"}, {0}), want);
  // Eight lines in one L1 set of four ways miss the L1 every time and hit the L2; the L1 adds
  // its latency after the fill.
  const uint64_t l1SetStride = uint64_t(c.sm.l1d.sets) * c.sm.l1d.line_bytes;
  EXPECT_EQ(memoryLatency({}, eightNodes(l1SetStride)), c.sm.l1d.hit_latency + want);
}

// Loads the L1 does not cache go to the L2 each time, as with the L1 disabled: .cg and .cv
// (cached at the L2 only; fetched again), volatile loads, and .relaxed or .acquire loads at
// .gpu scope (the L1 is not coherent). .ca, .nc and .cta-scope loads hit the L1.
TEST(MemoryLatency, LoadsCachedInTheL2OnlyPassTheL1) {
  const PlatformConfig c = sameClocks({});
  const double l2 = roundTrip(c, 1) + c.l2.slice.hit_latency;
  for (const char* load : {"ld.global.cg.u64", "ld.global.cv.u64", "ld.volatile.global.u64",
                           "ld.relaxed.gpu.global.u64", "ld.acquire.gpu.global.u64"})
    EXPECT_EQ(perLoadCycles(c, {0}, load) - smShare(), l2) << load;
  for (const char* load :
       {"ld.global.ca.u64", "ld.global.nc.u64", "ld.relaxed.cta.global.u64", "ld.u64"})
    EXPECT_EQ(perLoadCycles(c, {0}, load) - smShare(), c.sm.l1d.hit_latency) << load;
}

// memory.partition_hash fold: every address keeps one partition, slice and local address
// (the slice's device() finds it again), the channel address is the unhashed one, and chunks a
// multiple of partitions x interleave apart, which all share a partition without the hash,
// reach every partition (runs of partitions such chunks from a multiple of partitions, and of
// chunks a power of partitions of them apart); for power-of-two and other partition counts.
TEST(AddressMap, AHashedPartitionSpreadsStridesAndKeepsEachAddressOnce) {
  for (const auto& [partitions, slices] : {std::pair{16u, 2u}, std::pair{6u, 1u}, {6u, 2u}}) {
    const PlatformConfig plain =
        loadPlatform("gtx480", {fmt::format("memory.partitions={}", partitions),
                                fmt::format("l2.slices_per_partition={}", slices)});
    PlatformConfig hashed = plain;
    hashed.memory.partition_hash = "fold";
    const AddressMap none(plain), map(hashed);
    const uint64_t chunk = plain.memory.partition_interleave_bytes;
    const uint64_t stride = chunk * partitions;
    std::set<std::pair<uint32_t, uint64_t>> seen;
    for (uint64_t a = 0; a < stride * partitions * partitions * 4; a += chunk / 4) {
      const uint32_t slice = map.slice(a);
      ASSERT_EQ(map.device(slice, map.sliceLocal(a)), a) << partitions << " " << a;
      ASSERT_EQ(slice / slices, map.partition(a));
      ASSERT_EQ(map.local(a), none.local(a));
      ASSERT_TRUE(seen.insert({map.partition(a), map.local(a)}).second) << a;
    }
    for (uint64_t step : {stride, stride * partitions, stride * partitions * partitions}) {
      for (uint64_t base : {uint64_t(0), step * partitions * 7 + chunk * 3}) {
        std::set<uint32_t> reached, unhashed;
        for (uint32_t k = 0; k < partitions; ++k) {
          reached.insert(map.partition(base + k * step));
          unhashed.insert(none.partition(base + k * step));
        }
        EXPECT_EQ(reached.size(), partitions) << partitions << " " << step << " from " << base;
        EXPECT_EQ(unhashed.size(), 1u);
      }
    }
  }
}

TEST(MemoryLatency, DramRowHitsAndConflicts) {
  const PlatformConfig c = sameClocks({});
  const MemoryConfig& m = c.memory;
  const std::vector<std::string> noCaches{"sm.l1d.enabled=false", "l2.slice.enabled=false"};
  const double noc = roundTrip(c, 1);
  // One line, again and again: its row stays open.
  EXPECT_EQ(memoryLatency(noCaches, {0}),
            noc + m.controller.latency + dramRead(m.dram, c.sm.l1d.line_bytes, false));
  // Two rows of one bank, alternately: every read closes the other's row.
  AddressMap map(m);
  const uint64_t nextRow = uint64_t(m.partition_interleave_bytes) * m.partitions *
                           (m.dram.row_bytes / m.partition_interleave_bytes) * m.dram.banks;
  ASSERT_EQ(map.partition(nextRow), 0u);
  ASSERT_EQ(map.dram(map.local(nextRow)).bank, 0u);
  ASSERT_EQ(map.dram(map.local(nextRow)).row, 1u);
  EXPECT_EQ(memoryLatency(noCaches, {0, nextRow}),
            noc + m.controller.latency + dramRead(m.dram, c.sm.l1d.line_bytes, true));
  // The controller's latency adds one for one.
  EXPECT_EQ(
      memoryLatency(
          {"sm.l1d.enabled=false", "l2.slice.enabled=false", "memory.controller.latency=10"}, {0}),
      noc + 10 + dramRead(m.dram, c.sm.l1d.line_bytes, false));
}

TEST(MemoryLatency, AMissInBothCachesAddsEveryLevel) {
  // Eight lines in one L1 set and one L2 set of four ways, in one partition; each DRAM read
  // finds another row open in its bank.
  const PlatformConfig c = sameClocks({"l2.slice.ways=4"});
  const MemoryConfig& m = c.memory;
  AddressMap map(m);
  const uint64_t stride =
      uint64_t(m.partition_interleave_bytes) * m.partitions *
      (uint64_t(c.l2.slice.sets) * c.l2.slice.line_bytes / m.partition_interleave_bytes) *
      m.dram.banks;
  const Chain chain = eightNodes(stride);
  for (uint64_t a : chain) {
    ASSERT_EQ(map.partition(a), 0u);
    ASSERT_EQ(a / c.sm.l1d.line_bytes % c.sm.l1d.sets, 0u);
    ASSERT_EQ(map.local(a) / c.l2.slice.line_bytes % c.l2.slice.sets, 0u);
  }
  const double want = c.sm.l1d.hit_latency + roundTrip(c, 1) + c.l2.slice.hit_latency +
                      m.controller.latency + dramRead(m.dram, c.sm.l1d.line_bytes, true);
  EXPECT_EQ(memoryLatency({"l2.slice.ways=4"}, chain), want);
}

TEST(MemoryLatency, EachMeshHopCostsTheRouterPipeline) {
  // fermi16-mesh: SM 0 at (0,0); partition 0 at (1,0) (two routers), partition 3 at (4,2)
  // (seven routers). The CTA runs on SM 0.
  const std::vector<std::string> sets{"platform=fermi16-mesh", "sm.l1d.enabled=false"};
  const PlatformConfig c = sameClocks(sets);
  ASSERT_EQ(c.noc.topology, "mesh");
  ASSERT_EQ(c.noc.sm_positions.at(0).x, 0u);
  ASSERT_EQ(c.noc.mc_positions.at(3).x, 4u);
  const uint64_t p3 = 3 * c.memory.partition_interleave_bytes;
  EXPECT_EQ(memoryLatency(sets, {0}), roundTrip(c, 2) + c.l2.slice.hit_latency);
  EXPECT_EQ(memoryLatency(sets, {p3}), roundTrip(c, 7) + c.l2.slice.hit_latency);
}

// ---- bandwidth --------------------------------------------------------------------------------

// Every thread reads `iters` 16-byte vectors, a grid's width apart, and writes their sum.
const char* const kStreamKernel = R"(
.visible .entry stream(.param .u64 in, .param .u32 iters, .param .u64 out)
{
  .reg .b64 %rd<8>;
  .reg .b32 %r<8>;
  .reg .f32 %f<8>;
  .reg .pred %p<2>;
  ld.param.u64 %rd1, [in];
  ld.param.u32 %r1, [iters];
  mov.u32 %r2, %ctaid.x;
  mov.u32 %r3, %ntid.x;
  mov.u32 %r4, %tid.x;
  mad.lo.u32 %r5, %r2, %r3, %r4;
  mov.u32 %r6, %nctaid.x;
  mul.lo.u32 %r6, %r6, %r3;
  mul.wide.u32 %rd2, %r5, 16;
  add.s64 %rd1, %rd1, %rd2;
  mul.wide.u32 %rd3, %r6, 16;
  mov.f32 %f0, 0f00000000;
  mov.u32 %r7, 0;
L:
  ld.global.v4.f32 {%f1, %f2, %f3, %f4}, [%rd1];
  add.f32 %f0, %f0, %f1;
  add.f32 %f0, %f0, %f2;
  add.f32 %f0, %f0, %f3;
  add.f32 %f0, %f0, %f4;
  add.s64 %rd1, %rd1, %rd3;
  add.u32 %r7, %r7, 1;
  setp.lt.u32 %p1, %r7, %r1;
  @%p1 bra L;
  ld.param.u64 %rd4, [out];
  mul.wide.u32 %rd5, %r5, 4;
  add.s64 %rd4, %rd4, %rd5;
  st.global.f32 [%rd4], %f0;
  ret;
}
)";

// The DRAM's peak bandwidth in bytes per core cycle: every channel's data bus busy.
double peakBytesPerCoreCycle(const PlatformConfig& c) {
  const MemoryConfig& m = c.memory;
  return double(m.partitions) * m.dram.chips * m.dram.bus_width_bytes * m.dram.data_rate *
         c.gpu.clocks.dram_mhz / c.gpu.clocks.core_mhz;
}

// Streams `iters` x 16 bytes per thread through six 256-thread CTAs per SM; returns the DRAM
// bytes moved and the kernel's cycles.
std::pair<double, uint64_t> stream(const PlatformConfig& c, uint32_t iters, uint64_t* bytesRead) {
  Device dev(c, ExecMode::Timing);
  const uint32_t ctas = c.gpu.num_sms * 6, threads = 256;
  *bytesRead = uint64_t(ctas) * threads * iters * 16;
  const DevPtr in = dev.malloc(*bytesRead), out = dev.malloc(uint64_t(ctas) * threads * 4);
  Module& m = dev.loadModule(test::module(kStreamKernel), "stream.ptx");
  dev.launch(m.kernel("stream"), {ctas}, {threads}, 0, KernelArgs().ptr(in).u32(iters).ptr(out));
  const gpu::TimingResult& t = *dev.launches().back().timing;
  return {t.memory["dram"]["totals"]["bytes"].get<double>(), t.cycles};
}

// Seed 003's 4x4 mesh (8 SMs, 8 channels, GPU:DRAM 1:1) has more SMs' worth of requests in
// flight than its channels need: a read stream keeps the DRAM data buses at least 90 % busy
// over the whole kernel (ramp-up and drain included). docs/memory-system.md explains why
// gtx480's single-VC crossbar stays further from its peak.
TEST(MemoryBandwidth, AStreamReachesTheDramPeakOnTheMesh) {
  const PlatformConfig c = loadPlatform("stream-4x4");
  uint64_t read = 0;
  const auto [bytes, cycles] = stream(c, 16, &read);
  EXPECT_GE(bytes, double(read));         // every byte read came from DRAM (no reuse)
  EXPECT_LE(bytes, double(read) * 1.01);  // and little else did (code, parameters, results)
  const double fraction = bytes / double(cycles) / peakBytesPerCoreCycle(c);
  EXPECT_GE(fraction, 0.90);
  EXPECT_LE(fraction, 1.0);
}

// Halving the DRAM clock halves the peak: the same stream takes about twice the cycles.
TEST(MemoryBandwidth, TheStreamFollowsTheDramClock) {
  const PlatformConfig full = loadPlatform("stream-4x4");
  const PlatformConfig half = loadPlatform(
      "stream-4x4", {"gpu.clocks.dram_mhz=" + std::to_string(full.gpu.clocks.dram_mhz / 2)});
  uint64_t read = 0;
  const uint64_t fast = stream(full, 8, &read).second, slow = stream(half, 8, &read).second;
  EXPECT_NEAR(double(slow) / double(fast), 2.0, 0.15);
}

// ---- L2 ports and the write path ------------------------------------------------------------

// The stream kernel without the advance: every iteration reads the same 16 bytes per thread.
std::string rereadKernel() {
  std::string k = kStreamKernel;
  const std::string advance = "  add.s64 %rd1, %rd1, %rd3;\n";
  k.erase(k.find(advance), advance.size());
  return k;
}

// Bytes per core cycle that the L2 slices return to the SMs when every SM reads an L2-resident
// buffer over and over with its L1 off: a first launch brings the buffer into the L2, a second
// one rereads it `iters` times.
double l2HitBytesPerCycle(const PlatformConfig& c, uint32_t iters) {
  Device dev(c, ExecMode::Timing);
  const uint32_t ctas = c.gpu.num_sms * 6, threads = 256;
  const uint64_t bytes = uint64_t(ctas) * threads * 16;
  const DevPtr in = dev.malloc(bytes), out = dev.malloc(uint64_t(ctas) * threads * 4);
  Module& m = dev.loadModule(test::module(rereadKernel()), "reread.ptx");
  dev.launch(m.kernel("stream"), {ctas}, {threads}, 0, KernelArgs().ptr(in).u32(1).ptr(out));
  dev.launch(m.kernel("stream"), {ctas}, {threads}, 0, KernelArgs().ptr(in).u32(iters).ptr(out));
  const gpu::TimingResult& t = *dev.launches().back().timing;
  EXPECT_EQ(t.memory["dram"]["totals"]["reads"].get<uint64_t>(), 0u);  // all L2 hits
  return double(bytes) * iters / double(t.cycles);
}

// A port carries a flit per interconnect cycle, so an L2 slice returns at most one line per
// ceil((header + line) / flit) cycles: gtx480's two slices per channel double what one slice per
// channel could return. With four virtual channels (no blocking at the head of line in the
// crossbar; gtx480's single VC loses about half of it, as GPGPU-Sim's does) the rereads reach at
// least 85 % of the ports' limit and never exceed it.
// rtx3070's 32 slices (two per 16-bit channel) take its 46 SMs' rereads at 1,024 bytes per
// cycle, as its platform file reasons.
TEST(MemoryBandwidth, L2HitsAreLimitedByTheL2SlicesPorts) {
  struct Case {
    std::string platform;
    std::vector<std::string> sets;
  };
  const std::vector<Case> cases{
      {"gtx480",
       {"sm.l1d.enabled=false", "noc.virtual_channels=4", "l2.slices_per_partition=1",
        "l2.slice.sets=64"}},
      {"gtx480",
       {"sm.l1d.enabled=false", "noc.virtual_channels=4", "l2.slices_per_partition=2",
        "l2.slice.sets=32"}},
      {"rtx3070", {"sm.unified_l1=false", "sm.l1d.enabled=false", "noc.virtual_channels=4"}}};
  for (const auto& [platform, sets] : cases) {
    const PlatformConfig c = loadPlatform(platform, sets);
    const uint32_t slices = c.l2.slices_per_partition;
    const NocConfig& n = c.noc;
    const uint32_t line = c.l2.slice.line_bytes;
    const uint32_t flits = (n.header_bytes + line + n.flit_bytes - 1) / n.flit_bytes;
    const double ports = double(c.memory.partitions) * slices;
    const double limit =
        ports * line / flits * c.gpu.clocks.interconnect_mhz / c.gpu.clocks.core_mhz;
    const double got = l2HitBytesPerCycle(c, 16);
    SCOPED_TRACE(fmt::format("{}, {} slices per partition: {:.1f} of {:.1f} B/cycle", platform,
                             slices, got, limit));
    EXPECT_LE(got, limit);
    EXPECT_GE(got, 0.85 * limit);
  }
}

// Every thread stores one word at out + 4 + 4 x thread: each warp's 128 bytes straddle two lines,
// so every line the kernel writes is first written in part.
const char* const kOffsetStoreKernel = R"(
.visible .entry offset_store(.param .u64 out)
{
  .reg .b64 %rd<4>;
  .reg .b32 %r<6>;
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, %ctaid.x;
  mov.u32 %r2, %ntid.x;
  mov.u32 %r3, %tid.x;
  mad.lo.u32 %r4, %r1, %r2, %r3;
  mul.wide.u32 %rd2, %r4, 4;
  add.s64 %rd1, %rd1, %rd2;
  st.global.u32 [%rd1+4], %r4;
  ret;
}
)";

// With write-validate (gtx480) a store that misses the L2 allocates its line without reading
// DRAM; with fetch-on-write allocation every partly written line is read first. The DRAM reads
// of the two differ by exactly the lines the kernel writes (code and parameters are read alike).
TEST(MemoryWrites, WriteValidateStoresReadNothingFromDram) {
  const uint32_t ctas = 60, threads = 256;
  const auto reads = [&](const char* allocate) {
    const PlatformConfig c =
        loadPlatform("gtx480", {std::string("l2.slice.write_allocate=") + allocate});
    Device dev(c, ExecMode::Timing);
    const DevPtr out = dev.malloc(uint64_t(ctas) * threads * 4 + 128);
    Module& m = dev.loadModule(test::module(kOffsetStoreKernel), "offset_store.ptx");
    dev.launch(m.kernel("offset_store"), {ctas}, {threads}, 0, KernelArgs().ptr(out));
    return dev.launches().back().timing->memory["dram"]["totals"]["reads"].get<uint64_t>();
  };
  const PlatformConfig c = loadPlatform("gtx480");
  const uint64_t lines = (4 + uint64_t(ctas) * threads * 4 + c.l2.slice.line_bytes - 1) /
                         c.l2.slice.line_bytes;  // out is line-aligned (a fresh allocation)
  const uint64_t validate = reads("write-validate"), fetch = reads("allocate");
  EXPECT_EQ(fetch - validate, lines);
  EXPECT_LT(validate, lines / 10);  // only the kernel's code and parameter lines
}

// ---- atomics ---------------------------------------------------------------------------------

// Every thread adds 1, `iters` times, to word (thread mod `words`) of one line.
const char* const kAtomicKernel = R"(
.visible .entry atomics(.param .u64 out, .param .u32 words, .param .u32 iters)
{
  .reg .b64 %rd<4>;
  .reg .b32 %r<10>;
  .reg .pred %p<2>;
  ld.param.u64 %rd1, [out];
  ld.param.u32 %r1, [words];
  ld.param.u32 %r2, [iters];
  mov.u32 %r3, %tid.x;
  rem.u32 %r4, %r3, %r1;
  mul.wide.u32 %rd2, %r4, 4;
  add.s64 %rd1, %rd1, %rd2;
  mov.u32 %r5, 0;
L:
  atom.global.add.u32 %r6, [%rd1], 1;
  add.u32 %r5, %r5, 1;
  setp.lt.u32 %p1, %r5, %r2;
  @%p1 bra L;
  ret;
}
)";

// Atomics are performed at the L2, and lanes' operations on one word read each other's results,
// so they run one per cycle: with every lane of every warp of every SM on one word, the line's
// L2 bank is the bound, a warp instruction's 32 lanes taking 32 of its cycles. With the lanes on
// 32 different words of the same line a warp instruction takes one, and the slice's port,
// which carries each answer (the line's data) in ceil((header + line) / flit) flits, becomes
// the bound: 8 times fewer cycles on gtx480.
TEST(MemoryAtomics, LanesOnOneWordAreSerialisedAtTheL2) {
  const PlatformConfig c = loadPlatform("gtx480");
  const uint32_t ctas = c.gpu.num_sms, threads = 256, iters = 16;
  const uint64_t warpOps = uint64_t(ctas) * (threads / 32) * iters;
  const auto run = [&](uint32_t words) {
    Device dev(c, ExecMode::Timing);
    const DevPtr out = dev.malloc(c.l2.slice.line_bytes);
    dev.memset(out, 0, c.l2.slice.line_bytes);
    Module& m = dev.loadModule(test::module(kAtomicKernel), "atomics.ptx");
    dev.launch(m.kernel("atomics"), {ctas}, {threads}, 0,
               KernelArgs().ptr(out).u32(words).u32(iters));
    std::vector<uint32_t> v(words);
    dev.copyToHost(v.data(), out, words * 4);
    for (uint32_t w = 0; w < words; ++w)
      EXPECT_EQ(v[w], uint64_t(ctas) * threads / words * iters) << w;
    return dev.launches().back().timing->cycles;
  };
  const uint64_t oneWord = run(1), spread = run(32);
  const uint64_t bound = warpOps * 32;  // cycles of the line's bank
  EXPECT_GE(oneWord, bound);
  EXPECT_LE(oneWord, bound + bound / 20);  // the bank is busy almost all the time
  const NocConfig& n = c.noc;
  const uint64_t portBound =
      warpOps * ((n.header_bytes + c.l2.slice.line_bytes + n.flit_bytes - 1) / n.flit_bytes);
  EXPECT_GE(spread, portBound);
  EXPECT_LE(spread, 2 * portBound);
  EXPECT_LT(spread * 4, oneWord);
}

}  // namespace

namespace {

// A launch on a new Device takes the same cycles whatever ran before it in the process: the
// memory system starts empty and every clock domain starts at the same phase.
uint64_t vecaddCycles(const PlatformConfig& c) {
  Device dev(c, ExecMode::Timing);
  auto wl = catalog::find("vecadd").make(catalog::Size::Tiny);
  wl->setup(dev);
  wl->run(dev);
  EXPECT_TRUE(wl->check(dev).pass);
  return dev.launches().back().timing->cycles;
}

TEST(MemoryDeterminism, AFreshDeviceRepeatsTheCyclesOfTheFirst) {
  for (const char* dram : {"700", "924"}) {
    const PlatformConfig c = loadPlatform("gtx480", {std::string("gpu.clocks.dram_mhz=") + dram});
    const uint64_t first = vecaddCycles(c);
    EXPECT_EQ(vecaddCycles(c), first) << "DRAM at " << dram << " MHz";
    EXPECT_EQ(vecaddCycles(c), first) << "DRAM at " << dram << " MHz";
  }
}

}  // namespace

// l2.host_writes: a host copy of twice the L2's capacity, from an address where every slice and
// set takes an equal share, leaves the L2 holding exactly the copy's second half (each set's
// last `ways` lines written, least recently used first out), dirty with write-back, clean with
// write-through; with dram it leaves the L2 as it was (empty).
TEST(MemoryHostWrites, ACopyLeavesItsLastL2SizedPartInTheL2) {
  for (const std::string mode : {"dram", "write-back", "write-through"}) {
    for (const std::string platform : {"gtx480", "rtx3070"}) {
      const PlatformConfig cfg = loadPlatform(platform, {"l2.host_writes=" + mode});
      Device dev(cfg, ExecMode::Timing);
      gpu::Gpu& g = dev.timingEngine()->gpu();
      const AddressMap map(cfg);
      const uint32_t lineBytes = cfg.l2.slice.line_bytes;
      const uint64_t capacity = uint64_t(g.l2Slices()) * cfg.l2.slice.sizeBytes();
      const uint64_t period =
          uint64_t(cfg.memory.partition_interleave_bytes) * map.slices() * cfg.l2.slice.sets;
      const DevPtr region = dev.malloc(2 * capacity + period);
      const DevPtr base = (region + period - 1) / period * period;
      const std::vector<uint8_t> host(2 * capacity, 7);
      dev.copyToDevice(base, host.data(), host.size());
      uint64_t valid = 0, dirty = 0;
      for (uint32_t s = 0; s < g.l2Slices(); ++s) {
        const cache::CacheCore& c = g.l2(s).core();
        for (uint32_t set = 0; set < c.sets(); ++set)
          for (uint32_t way = 0; way < c.ways(); ++way) {
            valid += c.line(set, way).valid;
            dirty += c.line(set, way).valid && c.line(set, way).dirty;
          }
      }
      const std::string what = platform + " " + mode;
      if (mode == "dram") {
        EXPECT_EQ(valid, 0u) << what;
        continue;
      }
      EXPECT_EQ(valid, capacity / lineBytes) << what;
      EXPECT_EQ(dirty, mode == "write-back" ? valid : 0u) << what;
      for (uint64_t a = base; a < base + 2 * capacity; a += lineBytes) {
        const bool present =
            g.l2(map.slice(a)).core().find(map.sliceLocal(a)) != cache::CacheCore::kNoWay;
        ASSERT_EQ(present, a >= base + capacity) << what << " offset " << a - base;
      }
    }
  }
}

// sm.perfect_icache and sm.perfect_const_cache: no instruction fetch or constant load leaves the
// SM (the L2 sees none, each SM counts no miss), the kernel's results stay right, and the launch
// is shorter by the misses it no longer waits for.
TEST(MemoryPerfectCaches, NoFetchOrConstantLoadLeavesTheSm) {
  struct Run {
    uint64_t cycles = 0, ifetch = 0, constLoads = 0, smIcacheMisses = 0, smConstMisses = 0;
  };
  const auto run = [](bool perfect) {
    const std::string v = perfect ? "true" : "false";
    const PlatformConfig c =
        loadPlatform("gtx480", {"sm.perfect_icache=" + v, "sm.perfect_const_cache=" + v});
    Device dev(c, ExecMode::Timing);
    auto wl = catalog::find("vecadd").make(catalog::Size::Tiny);
    wl->setup(dev);
    wl->run(dev);
    EXPECT_TRUE(wl->check(dev).pass);
    const gpu::TimingResult& t = *dev.launches().back().timing;
    Run r;
    r.cycles = t.cycles;
    const auto& kinds = t.memory["l2"]["totals"]["by_kind"];
    r.ifetch = kinds["ifetch"]["accesses"].get<uint64_t>();
    r.constLoads = kinds["const"]["accesses"].get<uint64_t>();
    for (const auto& s : t.sms) {
      r.smIcacheMisses += s.counters.icacheMisses;
      r.smConstMisses += s.counters.constMisses;
    }
    return r;
  };
  const Run real = run(false), perfect = run(true);
  EXPECT_GT(real.ifetch, 0u);
  EXPECT_GT(real.constLoads, 0u);
  EXPECT_EQ(real.smIcacheMisses, real.ifetch);
  EXPECT_EQ(perfect.ifetch, 0u);
  EXPECT_EQ(perfect.constLoads, 0u);
  EXPECT_EQ(perfect.smIcacheMisses, 0u);
  EXPECT_EQ(perfect.smConstMisses, 0u);
  EXPECT_LT(perfect.cycles, real.cycles);
}

// Host writes change no line power state (copies are neither timed nor counted): before the
// first launch, with drowsy L2 lines whose controllers run in lockstep with their RTL, a copy
// once touched the controllers at a cycle before their own (an internal error).
TEST(MemoryHostWrites, CopiesBeforeTheFirstLaunchLeaveTheDrowsyControllersAlone) {
  for (const char* mode : {"write-back", "write-through"}) {
    const PlatformConfig c = loadPlatform(
        "rtx3070", {std::string("l2.host_writes=") + mode, "power.l2.drowsy.policy=timeout",
                    "rtl.drowsy_controller=lockstep"});
    Device dev(c, ExecMode::Timing);
    auto wl = catalog::find("vecadd").make(catalog::Size::Tiny);
    wl->setup(dev);  // copies the inputs
    ASSERT_NO_THROW(wl->run(dev)) << mode;
    EXPECT_TRUE(wl->check(dev).pass) << mode;
    // The inputs were in the L2 (write-validate: the partly written last lines too): every load
    // hits there.
    const auto& loads = dev.launches().back().timing->memory["l2"]["totals"]["by_kind"]["load"];
    EXPECT_EQ(loads["hits"].get<uint64_t>(), loads["accesses"].get<uint64_t>()) << mode;
  }
}

// Local memory is laid out as the CUDA Programming Guide describes ("Local Memory"): a warp's
// word i is one 128-byte line, and a thread's words are consecutive lines in consecutive sets.
// So a local array of a few KB that one warp reads over and over stays in the L1: each of its
// lines misses at most once. (With word i of every thread of the GPU together, a thread's words
// were num_sms x max_threads x 4 bytes apart, in one or two sets of the L1: 40 lines thrashed.)
TEST(LocalMemory, AWarpsLocalArrayStaysInTheL1) {
  constexpr uint32_t kWords = 40, kPasses = 10;
  const std::string ptx = test::module(fmt::format(
      R"(
.visible .entry k(.param .u64 out)
{{
  .local .align 4 .b8 arr[{bytes}];
  .reg .b32 %r<8>;
  .reg .b64 %rd<6>;
  .reg .pred %p<3>;
  mov.u64 %rd1, arr;
  mov.u32 %r1, 0;
INIT:
  mul.wide.u32 %rd2, %r1, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.local.u32 [%rd3], %r1;
  add.u32 %r1, %r1, 1;
  setp.lt.u32 %p1, %r1, {words};
  @%p1 bra INIT;
  mov.u32 %r2, 0;
  mov.u32 %r3, 0;
READ:
  rem.u32 %r4, %r3, {words};
  mul.wide.u32 %rd2, %r4, 4;
  add.s64 %rd3, %rd1, %rd2;
  ld.local.u32 %r5, [%rd3];
  add.u32 %r2, %r2, %r5;
  add.u32 %r3, %r3, 1;
  setp.lt.u32 %p2, %r3, {reads};
  @%p2 bra READ;
  ld.param.u64 %rd4, [out];
  mov.u32 %r6, %tid.x;
  mul.wide.u32 %rd5, %r6, 4;
  add.s64 %rd4, %rd4, %rd5;
  st.global.u32 [%rd4], %r2;
  ret;
}}
)",
      fmt::arg("bytes", 4 * kWords), fmt::arg("words", kWords),
      fmt::arg("reads", kWords * kPasses)));
  for (const char* platform : {"gtx480", "rtx3070"}) {
    const PlatformConfig cfg = loadPlatform(platform);
    const uint64_t l1Lines = uint64_t(cfg.sm.l1d.sets) * cfg.sm.l1d.ways;
    ASSERT_LE(kWords, l1Lines) << platform;  // the array fits the L1
    Device dev(cfg, ExecMode::Timing);
    const Kernel& k = dev.loadModule(ptx, "local.ptx").kernel("k");
    const DevPtr out = dev.malloc(32 * 4);
    dev.launch(k, {1}, {32}, 0, KernelArgs().ptr(out));
    std::vector<uint32_t> sums(32);
    dev.copyToHost(sums.data(), out, 32 * 4);
    for (uint32_t s : sums) EXPECT_EQ(s, kPasses * kWords * (kWords - 1) / 2) << platform;
    const auto& loads = dev.launches().back().timing->memory["l1d"]["totals"]["by_kind"]["load"];
    EXPECT_LE(loads["misses"].get<uint64_t>(), kWords) << platform;
    EXPECT_GE(loads["hits"].get<uint64_t>(), uint64_t(kWords) * (kPasses - 1)) << platform;
  }
}
