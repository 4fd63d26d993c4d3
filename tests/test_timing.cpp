// Microbenchmarks of the cycle-level SM model whose cycle counts follow from the platform
// configuration. Each measures how the cycles of a loop grow with the work in its body, so the
// constant costs of start-up, instruction fetch and the loop itself cancel out:
//
//   slope = [T(K2, I2) - T(K2, I1) - T(K1, I2) + T(K1, I1)] / ((I2 - I1)(K2 - K1))
//
// where T(K, I) is the kernel's cycle count with K copies of the measured instruction in a
// loop that runs I times, measured after a warm-up launch (so the constant cache holds the
// kernel parameters). K1 and K2 are 24 and 40: both bodies cross an instruction-cache line, so
// the loop's own instructions fall the same way in the two-entry instruction buffers and cost
// the same. The model's pipeline (docs/timing-model.md): an instruction issues,
// reads its operands the next cycle (one per register bank per cycle), enters its unit, and its
// result is ready `latency` cycles later; a unit takes a new warp every
// max(initiation interval, warp size / lanes) cycles.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <functional>
#include <map>
#include <numeric>
#include <optional>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "catalog.hpp"
#include "common/error.hpp"
#include "common/host_thread_governor.hpp"
#include "common/host_workers.hpp"
#include "common/strings.hpp"
#include "gpu/device.hpp"
#include "gpu/gpu.hpp"
#include "gpu/report.hpp"
#include "sm/dispatch_unit.hpp"
#include "sm/shared_memory.hpp"
#include "support/ptx_harness.hpp"
#include "support/test_data.hpp"

using namespace gpusc;

namespace {

PlatformConfig platformWith(const std::vector<std::string>& sets) {
  // The microbenchmarks derive cycle counts from memory.fixed_latency; the hierarchy has its
  // own tests (test_memory_system.cpp).
  std::vector<std::string> all{"memory.model=fixed-latency"};
  all.insert(all.end(), sets.begin(), sets.end());
  return loadPlatform("gtx480", all);
}

// A kernel `k(.param .u32 iters, .param .u64 out)` running `body` `iters` times. Registers:
// %r0-%r59 (.b32, declared first: register slot = number), %f0-%f63 (.f32), %fd0-%fd63 (.f64),
// %rd0-%rd7 (.b64), %p2-%p3 (.pred). %r60-%r63, %p1 and the label L belong to the loop.
std::string loopKernel(const std::string& setup, const std::string& body,
                       const std::string& decls = "") {
  return test::module(decls + R"(
.visible .entry k(.param .u32 iters, .param .u64 out)
{
  .reg .b32 %r<64>;
  .reg .f32 %f<64>;
  .reg .f64 %fd<64>;
  .reg .b64 %rd<8>;
  .reg .pred %p<4>;
  mov.u32 %r0, %tid.x;
)" + setup + R"(
  ld.param.u32 %r60, [iters];
  mov.u32 %r61, 0;
L:
)" + body + R"(
  add.u32 %r61, %r61, 1;
  setp.lt.u32 %p1, %r61, %r60;
  @%p1 bra L;
  ld.param.u64 %rd7, [out];
  mul.wide.u32 %rd6, %r0, 4;
  add.s64 %rd7, %rd7, %rd6;
  st.global.u32 [%rd7], %r1;
  ret;
}
)");
}

std::string repeat(const std::string& line, int k) {
  std::string s;
  for (int i = 0; i < k; ++i) s += "  " + line + "\n";
  return s;
}

struct Launch {
  uint64_t cycles = 0;
  sm::SmCounters counters;
  const gpu::TimingResult* timing = nullptr;
};

// Runs kernel `k` of `ptx` with `iters` and a buffer for `out`, in timing mode.
Launch run(Device& dev, const std::string& ptx, Dim3 grid, Dim3 block, uint32_t iters,
           uint32_t dynShared = 0) {
  Module& m = dev.loadModule(ptx, "bench.ptx");
  DevPtr out = dev.malloc(grid.count() * block.count() * 4);
  dev.launch(m.kernel("k"), grid, block, dynShared, KernelArgs().u32(iters).ptr(out));
  Launch l;
  l.timing = &*dev.launches().back().timing;
  l.cycles = l.timing->cycles;
  for (const auto& s : l.timing->sms) l.counters += s.counters;
  return l;
}

constexpr int kK1 = 24, kK2 = 40;

// Cycles per extra body instance per loop iteration (see the top of the file); `body(k)` is
// the loop body with k instances.
double slopeOf(Device& dev, const std::string& setup, const std::function<std::string(int)>& body,
               Dim3 block, uint32_t i1 = 10, uint32_t i2 = 30, uint32_t dynShared = 0) {
  auto T = [&](int k, uint32_t i) {
    return static_cast<double>(
        run(dev, loopKernel(setup, body(k)), {1}, block, i, dynShared).cycles);
  };
  T(kK1, 1);  // warm-up
  return (T(kK2, i2) - T(kK2, i1) - T(kK1, i2) + T(kK1, i1)) /
         (double(i2 - i1) * double(kK2 - kK1));
}

// The same for `line` repeated.
double slope(Device& dev, const std::string& setup, const std::string& line, Dim3 block,
             uint32_t i1 = 10, uint32_t i2 = 30, uint32_t dynShared = 0) {
  return slopeOf(
      dev, setup, [&](int k) { return repeat(line, k); }, block, i1, i2, dynShared);
}

// ---- latency ----------------------------------------------------------------------------------

TEST(TimingLatency, DependentIntegerChain) {
  const PlatformConfig cfg = platformWith({});
  Device dev(cfg, ExecMode::Timing);
  // Each add waits for the previous one: operand collection (1 cycle) + latency.
  EXPECT_EQ(slope(dev, "", "add.u32 %r1, %r1, 1;", {32}), 1 + cfg.sm.latency.int_add.latency);
}

TEST(TimingLatency, DependentChainFollowsTheConfiguredLatency) {
  const PlatformConfig cfg =
      platformWith({"sm.latency.int_add.latency=9", "sm.latency.fp_mad.latency=13"});
  Device dev(cfg, ExecMode::Timing);
  EXPECT_EQ(slope(dev, "", "add.u32 %r1, %r1, 1;", {32}), 1 + 9);
  EXPECT_EQ(slope(dev, "mov.f32 %f1, 0f3F800000;", "fma.rn.f32 %f1, %f1, %f1, %f1;", {32}), 1 + 13);
}

TEST(TimingLatency, DependentSfuAndDoubleChains) {
  const PlatformConfig cfg = platformWith({});
  Device dev(cfg, ExecMode::Timing);
  EXPECT_EQ(slope(dev, "mov.f32 %f1, 0f3F000000;", "sin.approx.f32 %f1, %f1;", {32}),
            1 + cfg.sm.latency.sfu.latency);
  EXPECT_EQ(slope(dev, "mov.f64 %fd1, 0d3FF0000000000000;", "add.f64 %fd1, %fd1, %fd1;", {32}),
            1 + cfg.sm.latency.dp_add.latency);
}

// ---- throughput
// -----------------------------------------------------------------------------------

// `k` independent instructions per body: copy i writes its own register, so no copy waits for
// another in the same iteration.
std::string independent(const std::string& op, int k, int firstReg, const char* prefix = "%r") {
  std::string s;
  for (int i = 0; i < k; ++i) {
    std::string r = prefix + std::to_string(firstReg + i);
    std::string line = op;
    for (size_t p; (p = line.find("$")) != std::string::npos;) line.replace(p, 1, r);
    s += "  " + line + "\n";
  }
  return s;
}

double throughputSlope(Device& dev, const std::string& setup, const std::string& op,
                       const char* prefix, Dim3 block) {
  return slopeOf(
      dev, setup, [&](int k) { return independent(op, k, 1, prefix); }, block);
}

// Unit throughput is measured with one warp whose instruction buffer holds a whole I-cache
// line, so neither fetch nor the warps' relative phases enter the count: the warp issues one
// independent instruction per cycle unless its unit is still busy.
PlatformConfig throughputPlatform(const std::vector<std::string>& more = {}) {
  std::vector<std::string> sets = {"sm.ibuffer_entries=16"};
  sets.insert(sets.end(), more.begin(), more.end());
  return platformWith(sets);
}

// A warp that issues every cycle still waits for its buffer to refill at each I-cache line:
// the next line arrives hit_latency + decode_latency cycles after the last instruction of the
// previous one issued, a bubble of that minus one cycle per line of instructions.
double issueBound(const PlatformConfig& cfg) {
  const double perLine = double(cfg.sm.icache.line_bytes) / cfg.sm.instruction_bytes;
  return 1.0 + double(cfg.sm.icache.hit_latency + cfg.sm.decode_latency - 1) / perLine;
}

TEST(TimingThroughput, AWarpOccupiesASimdUnitForWarpSizeOverLanesCycles) {
  // One SIMD unit: each warp instruction holds it for max(ii, 32 / (simd_lanes x
  // lane_clock_ratio)) core cycles: one on gtx480 (16 lanes at twice the core clock; the warp's
  // own issue, with its instruction-buffer refills, is then the bound), two with the lanes at the
  // core clock, eight with four lanes.
  for (const char* set : {"sm.lane_clock_ratio=2", "sm.lane_clock_ratio=1", "sm.simd_lanes=4"}) {
    const PlatformConfig cfg = throughputPlatform({"sm.simd_units=1", set});
    Device dev(cfg, ExecMode::Timing);
    const uint32_t passes = 32 / cfg.sm.simd_lanes;
    const double occupancy =
        std::max(cfg.sm.latency.int_add.initiation,
                 (passes + cfg.sm.lane_clock_ratio - 1) / cfg.sm.lane_clock_ratio);
    EXPECT_EQ(throughputSlope(dev, "", "mov.u32 $, 7;", "%r", {32}),
              std::max(issueBound(cfg), occupancy))
        << set;
  }
}

TEST(TimingThroughput, TwoSimdUnitsShareTheWarpInstructions) {
  const PlatformConfig cfg = throughputPlatform();
  Device dev(cfg, ExecMode::Timing);
  const double perInst =
      double(std::max(cfg.sm.latency.int_add.initiation, cfg.sm.warpCycles(cfg.sm.simd_lanes))) /
      cfg.sm.simd_units;
  EXPECT_EQ(throughputSlope(dev, "", "mov.u32 $, 7;", "%r", {32}),
            std::max(issueBound(cfg), perInst));
  // Eight warps share the units: within 3% of the same rate per warp instruction (warps drift in
  // phase, and each iteration ends in a dependent counter-compare-branch chain of about twenty
  // cycles that the shorter body hides less well, so the start and the tail of the loop do not
  // cancel exactly). Measured with the lanes at the core clock, where the units and not the two
  // schedulers' issue are the bound.
  const PlatformConfig slow = throughputPlatform({"sm.lane_clock_ratio=1"});
  Device devSlow(slow, ExecMode::Timing);
  const double perSlow =
      double(std::max(slow.sm.latency.int_add.initiation, slow.sm.warpCycles(slow.sm.simd_lanes))) /
      slow.sm.simd_units;
  const uint32_t warps = 8;
  EXPECT_NEAR(throughputSlope(devSlow, "", "mov.u32 $, 7;", "%r", {warps * 32}), warps * perSlow,
              0.03 * warps * perSlow);
}

TEST(TimingThroughput, SpecialFunctionUnit) {
  const PlatformConfig cfg = throughputPlatform();
  Device dev(cfg, ExecMode::Timing);
  const double perInst =
      double(std::max(cfg.sm.latency.sfu.initiation, cfg.sm.warpCycles(cfg.sm.sfu_lanes))) /
      cfg.sm.sfu_units;
  EXPECT_EQ(throughputSlope(dev, "", "sin.approx.f32 $, $;", "%f", {32}), perInst);
  EXPECT_NEAR(throughputSlope(dev, "", "sin.approx.f32 $, $;", "%f", {4 * 32}), 4 * perInst,
              0.02 * 4 * perInst);
}

// sm.conversions_on_sfu and sm.bit_counts_on_sfu: integer<->float conversions, float roundings to
// an integral value and bit counts take the SFU's rate and latency (compute capability 7.x/8.x:
// 16 per clock per SM); without them a conversion is an fp_add and a bit count an int_add on the
// SIMD units. Conversions between integer types and other float conversions stay there.
TEST(TimingThroughput, ConversionsAndBitCountsOnTheSfuTakeItsRate) {
  const PlatformConfig off = throughputPlatform();
  const PlatformConfig on =
      throughputPlatform({"sm.conversions_on_sfu=true", "sm.bit_counts_on_sfu=true"});
  ASSERT_FALSE(off.sm.conversions_on_sfu);
  const double sfu =
      double(std::max(on.sm.latency.sfu.initiation, on.sm.warpCycles(on.sm.sfu_lanes))) /
      on.sm.sfu_units;
  ASSERT_GT(sfu, issueBound(on));
  const auto simd = [&](const OpTiming& t) {
    return std::max(
        issueBound(off),
        double(std::max(t.initiation, off.sm.warpCycles(off.sm.simd_lanes))) / off.sm.simd_units);
  };
  Device devOff(off, ExecMode::Timing);
  EXPECT_EQ(throughputSlope(devOff, "", "popc.b32 $, $;", "%r", {32}),
            simd(off.sm.latency.int_add));
  EXPECT_EQ(throughputSlope(devOff, "", "cvt.rzi.f32.f32 $, $;", "%f", {32}),
            simd(off.sm.latency.fp_add));
  Device devOn(on, ExecMode::Timing);
  for (const char* op : {"popc.b32 $, $;", "clz.b32 $, $;", "brev.b32 $, $;", "bfind.u32 $, $;"})
    EXPECT_EQ(throughputSlope(devOn, "", op, "%r", {32}), sfu) << op;
  EXPECT_EQ(throughputSlope(devOn, "", "cvt.rzi.f32.f32 $, $;", "%f", {32}), sfu);
  // Not conversions the platform moves: between integer types, and f32 saturation.
  EXPECT_EQ(throughputSlope(devOn, "", "cvt.u32.u16 $, $;", "%r", {32}),
            simd(on.sm.latency.int_add));
  EXPECT_EQ(throughputSlope(devOn, "", "cvt.sat.f32.f32 $, $;", "%f", {32}),
            simd(on.sm.latency.fp_add));
  // An integer-to-float conversion waits for the SFU's latency.
  EXPECT_EQ(slope(devOn, "", "cvt.rn.f32.u32 %f1, %r1;\n  cvt.rzi.u32.f32 %r1, %f1;", {32}),
            2 * (1 + on.sm.latency.sfu.latency));
}

TEST(TimingThroughput, DoublePrecisionOnTheSfuPath) {
  const PlatformConfig cfg = throughputPlatform({"sm.dp_path=sfu"});
  ASSERT_EQ(cfg.sm.dp_units, 0u);
  Device dev(cfg, ExecMode::Timing);
  const double perInst =
      double(std::max(cfg.sm.latency.dp_add.initiation, cfg.sm.warpCycles(cfg.sm.sfu_lanes))) /
      cfg.sm.sfu_units;
  EXPECT_EQ(throughputSlope(dev, "", "add.f64 $, $, $;", "%fd", {32}), perInst);
}

// GF100 runs double precision on the CUDA cores (gtx480: sm.dp_path simd): a DP warp instruction
// holds every SIMD unit for its initiation interval, so DP instructions follow one another at
// that interval and the SIMD instructions between them wait for the units too.
TEST(TimingThroughput, DoublePrecisionHoldsEverySimdUnit) {
  const PlatformConfig cfg = throughputPlatform();
  ASSERT_EQ(cfg.sm.dp_units, 0u);
  ASSERT_EQ(cfg.sm.dp_path, "simd");
  Device dev(cfg, ExecMode::Timing);
  const uint32_t dp =
      std::max(cfg.sm.latency.dp_add.initiation, cfg.sm.warpCycles(cfg.sm.simd_lanes));
  EXPECT_EQ(throughputSlope(dev, "", "add.f64 $, $, $;", "%fd", {32}), double(dp));
  // One DP and one integer instruction per body copy. On the SFU path the integer add runs on a
  // SIMD unit while the SFU works, so a pair costs the DP's occupancy alone. On the SIMD path the
  // adds wait for the units; two of them, waiting together, then take the two units in one
  // cycle while the next DP waits for both (the dispatch unit sends younger instructions past
  // an older one that cannot go), so a pair costs the DP's occupancy plus half an add's.
  const auto pairs = [&](Device& d) {
    return slopeOf(d, "",
                   [&](int k) {
                     std::string b;
                     for (int i = 0; i < k; ++i)
                       b += "  add.f64 %fd" + std::to_string(1 + i) + ", %fd" +
                            std::to_string(1 + i) + ", %fd62;\n  add.u32 %r" +
                            std::to_string(2 + i) + ", %r" + std::to_string(2 + i) + ", 1;\n";
                     return b;
                   },
                   {32});
  };
  const uint32_t simd =
      std::max(cfg.sm.latency.int_add.initiation, cfg.sm.warpCycles(cfg.sm.simd_lanes));
  EXPECT_EQ(pairs(dev), double(dp) + double(simd) / cfg.sm.simd_units);
  const PlatformConfig sfu = throughputPlatform({"sm.dp_path=sfu"});
  Device devSfu(sfu, ExecMode::Timing);
  const uint32_t onSfu =
      std::max(sfu.sm.latency.dp_add.initiation, sfu.sm.warpCycles(sfu.sm.sfu_lanes));
  EXPECT_EQ(pairs(devSfu), double(onSfu));
}

// ---- processing blocks (sm.sub_cores) -----------------------------------------------------------

// With sub-cores each warp's scheduler, collectors, register banks and units are its block's. The
// lanes run at the core clock here, so a 16-lane SIMD unit holds a warp for two cycles and the
// units, not the issue of one instruction per cycle, are the bound.
// (gtx480's one SFU does not divide among blocks: two.)
PlatformConfig blockPlatform(const std::vector<std::string>& more = {}) {
  std::vector<std::string> sets = {"sm.lane_clock_ratio=1", "sm.sfu_units=2"};
  sets.insert(sets.end(), more.begin(), more.end());
  return throughputPlatform(sets);
}

// throughputSlope on a Device of its own (a process simulates one platform at a time).
double throughputOn(const PlatformConfig& cfg, const std::string& op, const char* prefix,
                    Dim3 block) {
  Device dev(cfg, ExecMode::Timing);
  return throughputSlope(dev, "", op, prefix, block);
}

double simdOccupancy(const PlatformConfig& cfg, const OpTiming& t) {
  return double(std::max(t.initiation, cfg.sm.warpCycles(cfg.sm.simd_lanes)));
}

TEST(TimingSubCores, AWarpUsesOnlyItsBlocksSimdUnits) {
  // One warp: on a monolithic SM it has both SIMD units, in one of two blocks only one.
  const PlatformConfig whole = blockPlatform();
  const PlatformConfig split = blockPlatform({"sm.sub_cores=2"});
  ASSERT_EQ(whole.sm.simd_units, 2u);
  ASSERT_EQ(split.sm.schedulers, 2u);
  const double occ = simdOccupancy(whole, whole.sm.latency.int_add);
  EXPECT_EQ(throughputOn(whole, "mov.u32 $, 7;", "%r", {32}), std::max(issueBound(whole), occ / 2));
  EXPECT_EQ(throughputOn(split, "mov.u32 $, 7;", "%r", {32}), std::max(issueBound(split), occ));
}

TEST(TimingSubCores, WarpsOfDifferentBlocksIssueInParallel) {
  // Warps 0 and 1 belong to schedulers 0 and 1. With two blocks of one scheduler each, each
  // warp has its own block's unit: a body copy (one instruction of each warp) costs one
  // occupancy. With two blocks of two schedulers each, both warps are block 0's and share its
  // unit: two occupancies.
  const PlatformConfig own = blockPlatform({"sm.sub_cores=2"});
  const PlatformConfig shared = blockPlatform({"sm.sub_cores=2", "sm.schedulers=4"});
  const double occ = simdOccupancy(own, own.sm.latency.int_add);
  EXPECT_NEAR(throughputOn(own, "mov.u32 $, 7;", "%r", {64}), occ, 0.03 * occ);
  EXPECT_NEAR(throughputOn(shared, "mov.u32 $, 7;", "%r", {64}), 2 * occ, 0.03 * 2 * occ);
  // Four blocks issue four warp instructions per cycle: 128 threads, 8 units of one lane-clock
  // pass each (16 lanes, 2 cycles), at the issue rate of one instruction per block per cycle.
  const PlatformConfig four =
      blockPlatform({"sm.sub_cores=4", "sm.schedulers=4", "sm.simd_units=8", "sm.sfu_units=4",
                     "sm.collectors_sp=8", "sm.collectors_sfu=8", "sm.collectors_mem=4"});
  const double perCopy = std::max(issueBound(four), occ / 2);  // two units per block
  EXPECT_NEAR(throughputOn(four, "mov.u32 $, 7;", "%r", {128}), perCopy, 0.03 * perCopy);
}

// Each processing block fetches for one of its warps per cycle (its own L0 instruction cache):
// with two-entry instruction buffers, 16 warps of independent instructions issue one per block
// per cycle on four blocks, 16 / 4 cycles per body copy. A monolithic SM with the same four
// schedulers fetches for one warp per cycle, two instructions: 16 / 2 cycles.
TEST(TimingSubCores, EachBlockFetchesForItsOwnWarps) {
  const std::vector<std::string> units = {"sm.lane_clock_ratio=1", "sm.schedulers=4",
                                          "sm.simd_units=8",       "sm.sfu_units=4",
                                          "sm.collectors_sp=8",    "sm.collectors_sfu=8",
                                          "sm.collectors_mem=4",   "sm.ibuffer_entries=2"};
  std::vector<std::string> blocks = units;
  blocks.push_back("sm.sub_cores=4");
  const PlatformConfig four = platformWith(blocks), one = platformWith(units);
  const uint32_t warps = 16;
  const double perBlock = double(warps) / four.sm.sub_cores;    // issue bound
  const double perSm = double(warps) / one.sm.ibuffer_entries;  // fetch bound
  ASSERT_GE(perBlock, double(warps) / (four.sm.sub_cores * four.sm.ibuffer_entries));
  EXPECT_NEAR(throughputOn(four, "mov.u32 $, 7;", "%r", {warps * 32}), perBlock, 0.05 * perBlock);
  EXPECT_NEAR(throughputOn(one, "mov.u32 $, 7;", "%r", {warps * 32}), perSm, 0.05 * perSm);
}

TEST(TimingSubCores, FpOnlyUnitsDoubleFloatingPointButNotIntegerThroughput) {
  // Ampere's block: one 16-lane unit for FP32 or INT32 and one for FP32 only. Floating-point
  // instructions alternate between them, one per cycle; integer ones have one unit, one per
  // occupancy.
  const PlatformConfig cfg =
      blockPlatform({"sm.sub_cores=2", "sm.simd_units=4", "sm.simd_fp_only_units=2"});
  Device dev(cfg, ExecMode::Timing);
  const double fpOcc = simdOccupancy(cfg, cfg.sm.latency.fp_add);
  const double intOcc = simdOccupancy(cfg, cfg.sm.latency.int_add);
  EXPECT_EQ(throughputSlope(dev, "", "add.f32 $, $, 0f3F800000;", "%f", {32}),
            std::max(issueBound(cfg), fpOcc / 2));
  EXPECT_EQ(throughputSlope(dev, "", "mov.u32 $, 7;", "%r", {32}),
            std::max(issueBound(cfg), intOcc));
  // A floating-point and an integer instruction per copy: the integer one holds the shared unit,
  // the floating-point one takes the FP-only unit, so a pair costs one integer occupancy.
  const double pair = slopeOf(dev, "",
                              [&](int k) {
                                std::string b;
                                for (int i = 0; i < k; ++i)
                                  b += "  add.f32 %f" + std::to_string(1 + i) + ", %f" +
                                       std::to_string(1 + i) + ", 0f3F800000;\n  mov.u32 %r" +
                                       std::to_string(2 + i) + ", 7;\n";
                                return b;
                              },
                              {32});
  EXPECT_EQ(pair, std::max(2 * issueBound(cfg), intOcc));
}

// sm.fp_compare_on_int_units: FP32 compares and min/max take only the units that also run integer
// instructions (GA10x: 64 per clock per SM against 128 FP32 adds); FP32 adds keep both.
TEST(TimingSubCores, FpComparesCanBeKeptOffTheFpOnlyUnits) {
  const std::vector<std::string> ampere = {"sm.sub_cores=2", "sm.simd_units=4",
                                           "sm.simd_fp_only_units=2"};
  std::vector<std::string> intOnly = ampere;
  intOnly.push_back("sm.fp_compare_on_int_units=true");
  const PlatformConfig both = blockPlatform(ampere), one = blockPlatform(intOnly);
  const double occ = simdOccupancy(one, one.sm.latency.fp_max);
  ASSERT_EQ(occ, simdOccupancy(one, one.sm.latency.fp_add));
  const double twoUnits = std::max(issueBound(one), occ / 2),
               oneUnit = std::max(issueBound(one), occ);
  ASSERT_LT(twoUnits, oneUnit);
  EXPECT_EQ(throughputOn(both, "max.f32 $, $, 0f3F800000;", "%f", {32}), twoUnits);
  EXPECT_EQ(throughputOn(one, "max.f32 $, $, 0f3F800000;", "%f", {32}), oneUnit);
  EXPECT_EQ(throughputOn(one, "min.f32 $, $, 0f3F800000;", "%f", {32}), oneUnit);
  EXPECT_EQ(throughputOn(one, "add.f32 $, $, 0f3F800000;", "%f", {32}), twoUnits);
  EXPECT_EQ(throughputOn(one, "set.lt.f32.f32 $, $, 0f3F800000;", "%f", {32}), oneUnit);
}

TEST(TimingSubCores, SharedDoublePrecisionUnitsServeEveryBlock) {
  // GA10x: two FP64 lanes per SM for all four blocks. A DP warp instruction holds a 2-lane unit
  // for 16 cycles; two warps in different blocks take turns on a shared unit, but each has its
  // own with one per block.
  const std::vector<std::string> base = {"sm.sub_cores=2", "sm.dp_lanes=2"};
  auto with = [&](std::vector<std::string> more) {
    more.insert(more.begin(), base.begin(), base.end());
    return blockPlatform(more);
  };
  const PlatformConfig shared = with({"sm.dp_units=1", "sm.dp_shared=true"});
  const PlatformConfig own = with({"sm.dp_units=2"});
  const double occ = double(std::max(shared.sm.latency.dp_add.initiation, shared.sm.warpCycles(2)));
  ASSERT_EQ(occ, 16.0);
  EXPECT_NEAR(throughputOn(shared, "add.f64 $, $, $;", "%fd", {64}), 2 * occ, 0.03 * 2 * occ);
  EXPECT_NEAR(throughputOn(own, "add.f64 $, $, $;", "%fd", {64}), occ, 0.03 * occ);
}

TEST(TimingSubCores, EachBlockHasItsOwnRegisterBanks) {
  // 16 banks in two blocks: 8 each, so registers 8 apart share a bank.
  const PlatformConfig cfg = platformWith({"sm.sub_cores=2", "sm.sfu_units=2"});
  Device dev(cfg, ExecMode::Timing);
  const uint32_t perBlock = cfg.sm.register_banks / cfg.sm.sub_cores;
  const double distinct = slope(dev, "", "add.u32 %r1, %r1, %r2;", {32});
  EXPECT_EQ(slope(dev, "", "add.u32 %r1, %r1, %r" + std::to_string(1 + perBlock) + ";", {32}),
            distinct + 1);
}

TEST(TimingSubCores, UnitsThatDoNotDivideAmongTheBlocksAreRejected) {
  for (const char* set : {"sm.simd_units=3", "sm.schedulers=3", "sm.collectors_mem=3",
                          "sm.register_banks=15", "sm.simd_fp_only_units=1"}) {
    try {
      loadPlatform("gtx480", {"sm.sub_cores=2", "sm.sfu_units=2", set});
      ADD_FAILURE() << set << " was accepted";
    } catch (const InputError& e) {
      const std::string key = std::string(set).substr(0, std::string(set).find('='));
      EXPECT_NE(std::string(e.what()).find(key), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("sub_cores"), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(loadPlatform("gtx480", {"sm.simd_fp_only_units=2"}), InputError);  // no int unit
}

// ---- tensor cores (sm.tensor) -------------------------------------------------------------------

// m16n8k16 with f16 inputs and f32 accumulators: 2048 multiply-adds per warp instruction. Copy i
// of a body accumulates into %f(4 (i % 8) + 1) .. + 4, so copies eight apart depend on each other
// (long done by then) and the others not at all.
constexpr uint32_t kMmaFmas = 16 * 8 * 16;
std::string mmaCopies(int k, bool dependent = false) {
  std::string b;
  for (int i = 0; i < k; ++i) {
    const int a = dependent ? 1 : 4 * (i % 8) + 1;
    const std::string acc = fmt::format("{{%f{}, %f{}, %f{}, %f{}}}", a, a + 1, a + 2, a + 3);
    b += "  mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 " + acc +
         ", {%r1, %r2, %r3, %r4}, {%r5, %r6}, " + acc + ";\n";
  }
  return b;
}
const std::string kMmaSetup = R"(
  mov.b32 %r1, 0x3c003c00;
  mov.b32 %r2, 0x3c003c00;
  mov.b32 %r3, 0x3c003c00;
  mov.b32 %r4, 0x3c003c00;
  mov.b32 %r5, 0x3c003c00;
  mov.b32 %r6, 0x3c003c00;
)";

// Two blocks with a tensor core each, 64 f16/f32 multiply-adds per clock.
PlatformConfig tensorPlatform(const std::vector<std::string>& more = {}) {
  std::vector<std::string> sets = {"sm.sub_cores=2", "sm.tensor.units=2",
                                   "sm.tensor.fma_f16_f32=64"};
  sets.insert(sets.end(), more.begin(), more.end());
  return blockPlatform(sets);
}

double mmaSlope(const PlatformConfig& cfg, Dim3 block, bool dependent = false) {
  Device dev(cfg, ExecMode::Timing);
  return slopeOf(
      dev, kMmaSetup, [&](int k) { return mmaCopies(k, dependent); }, block);
}

TEST(TimingTensor, AnMmaHoldsItsTensorCoreForItsMultiplyAddsOverTheRate) {
  for (const uint32_t rate : {64u, 32u}) {
    const PlatformConfig cfg = tensorPlatform({fmt::format("sm.tensor.fma_f16_f32={}", rate)});
    const double occ = double(kMmaFmas) / cfg.sm.tensor.fma_f16_f32;
    EXPECT_NEAR(mmaSlope(cfg, {32}), occ, 0.03 * occ) << rate;
  }
}

TEST(TimingTensor, EachBlockHasItsOwnTensorCores) {
  // Two warps in two blocks, each with its own tensor core: one occupancy per body copy. With
  // two schedulers per block both warps are block 0's and share its core: two.
  const PlatformConfig own = tensorPlatform();
  const PlatformConfig shared = tensorPlatform({"sm.schedulers=4"});
  const double occ = double(kMmaFmas) / own.sm.tensor.fma_f16_f32;
  EXPECT_NEAR(mmaSlope(own, {64}), occ, 0.03 * occ);
  EXPECT_NEAR(mmaSlope(shared, {64}), 2 * occ, 0.03 * 2 * occ);
}

TEST(TimingTensor, TheResultFollowsTheLastPassAfterTheLatency) {
  // A dependent chain: each mma waits for the previous one's passes and its latency.
  const double base = mmaSlope(tensorPlatform({"sm.tensor.latency=4"}), {32}, true);
  EXPECT_EQ(mmaSlope(tensorPlatform({"sm.tensor.latency=20"}), {32}, true), base + 16);
  const double slow =
      mmaSlope(tensorPlatform({"sm.tensor.latency=4", "sm.tensor.fma_f16_f32=32"}), {32}, true);
  EXPECT_EQ(slow, base + double(kMmaFmas) / 32 - double(kMmaFmas) / 64);
}

TEST(TimingTensor, WithoutATensorCoreAnMmaIsMultiplyAddsOnTheSimdUnits) {
  // No rate for f16 with f32 accumulators: each thread does 2048 / 32 FP32 multiply-adds, one
  // warp-wide pass after another on a SIMD unit, and the block's two units take turns.
  for (const char* set : {"sm.tensor.units=0", "sm.tensor.fma_f16_f32=0"}) {
    const PlatformConfig cfg = tensorPlatform({"sm.simd_units=4", set});
    const double pass =
        std::max(cfg.sm.latency.fp_mad.initiation, cfg.sm.warpCycles(cfg.sm.simd_lanes));
    const double perMma = kMmaFmas / cfg.sm.warp_size * pass / 2;
    EXPECT_NEAR(mmaSlope(cfg, {32}), perMma, 0.03 * perMma) << set;
  }
}

TEST(TimingTensor, TensorUnitsThatDoNotDivideAmongTheBlocksAreRejected) {
  EXPECT_THROW(loadPlatform("gtx480", {"sm.sub_cores=2", "sm.sfu_units=2", "sm.tensor.units=3"}),
               InputError);
}

// ---- register banks
// ---------------------------------------------------------------------------------

TEST(TimingRegisterFile, TwoOperandsInOneBankCostACycle) {
  const PlatformConfig cfg = platformWith({});
  Device dev(cfg, ExecMode::Timing);
  const uint32_t banks = cfg.sm.register_banks;
  const std::string same =
      "add.u32 %r1, %r1, %r" + std::to_string(1 + banks) + ";";  // slots 1 and 1 + banks
  const double conflicting = slope(dev, "", same, {32});
  const double distinct = slope(dev, "", "add.u32 %r1, %r1, %r2;", {32});
  EXPECT_EQ(distinct, 1 + cfg.sm.latency.int_add.latency);
  EXPECT_EQ(conflicting, distinct + 1);
  // One conflicting read per instruction.
  Launch a = run(dev, loopKernel("", repeat(same, 16)), {1}, {32}, 10);
  Launch b = run(dev, loopKernel("", repeat(same, 16)), {1}, {32}, 20);
  EXPECT_EQ(b.counters.rfBankConflicts - a.counters.rfBankConflicts, 10u * 16u);
}

// sm.register_bank_ports = 2 (Volta's 64-bit-wide banks): two operands in one bank are read in
// one cycle, a third costs a cycle more; with one port every operand past the first costs one.
TEST(TimingRegisterFile, BanksWithTwoPortsConflictOnlyOnAThirdOperand) {
  for (uint32_t ports : {1u, 2u}) {
    const PlatformConfig cfg = platformWith({"sm.register_bank_ports=" + std::to_string(ports)});
    ASSERT_EQ(cfg.sm.register_bank_ports, ports);
    Device dev(cfg, ExecMode::Timing);
    const uint32_t banks = cfg.sm.register_banks;
    const std::string b1 = "%r" + std::to_string(1 + banks),
                      b2 = "%r" + std::to_string(1 + 2 * banks);
    // Slots 1, 1 + banks and 1 + 2 x banks share a bank; 1, 2 and 3 do not.
    const double distinct = slope(dev, "", "mad.lo.u32 %r1, %r1, %r2, %r3;", {32});
    EXPECT_EQ(distinct, 1 + cfg.sm.latency.int_mad.latency) << ports;
    EXPECT_EQ(slope(dev, "", "mad.lo.u32 %r1, %r1, " + b1 + ", %r3;", {32}),
              distinct + (ports >= 2 ? 0 : 1))
        << ports;
    EXPECT_EQ(slope(dev, "", "mad.lo.u32 %r1, %r1, " + b1 + ", " + b2 + ";", {32}),
              distinct + (ports >= 2 ? 1 : 2))
        << ports;
  }
}

// ---- shared memory
// ------------------------------------------------------------------------------------

// Setup code leaving in %r5 the byte address lane l reads with conflict degree d: word
// (l / d) + (l % d) * 32, so groups of d lanes share a bank with d distinct words and the
// access needs d passes.
std::string conflictSetup(uint32_t d) {
  return "  and.b32 %r2, %r0, 31;\n  div.u32 %r3, %r2, " + std::to_string(d) +
         ";\n  rem.u32 %r4, %r2, " + std::to_string(d) +
         ";\n  mad.lo.u32 %r5, %r4, 32, %r3;\n  shl.b32 %r5, %r5, 2;\n";
}

TEST(TimingSharedMemory, ConflictDegreesOneToThirtyTwo) {
  const PlatformConfig cfg = throughputPlatform();
  Device dev(cfg, ExecMode::Timing);
  const uint32_t warps = 1;
  for (uint32_t d = 1; d <= 32; ++d) {
    const std::string setup = conflictSetup(d);
    // Each load writes its own register, so no load waits for another.
    const double s = slopeOf(
        dev, setup, [](int k) { return independent("ld.shared.u32 $, [%r5];", k, 6); },
        {warps * 32}, 2, 6, 4096);
    // The load/store unit serves one access every `d` cycles (a conflict-free stream is limited
    // by issue instead).
    EXPECT_EQ(s, std::max(issueBound(cfg), double(warps * d))) << "conflict degree " << d;
    Launch l = run(dev, loopKernel(setup, repeat("ld.shared.u32 %r6, [%r5];", 4)), {1},
                   {warps * 32}, 5, 4096);
    EXPECT_EQ(l.counters.sharedBankConflicts, uint64_t(warps) * 5 * 4 * (d - 1))
        << "conflict degree " << d;
  }
}

TEST(TimingSharedMemory, WarpsWaitingForTheMemoryCollectorsGetTheUnitAtItsConflictRate) {
  // Eight warps load with conflict degree d: the load/store unit serves one access every d
  // cycles, so the memory group's collectors stay full and the other warps' loads wait for one
  // (a structural stall, for which the issue scan parks them until a collector frees). The unit
  // stays the bound: eight warps x d cycles per instance of the body, within 3 % (the warps'
  // loop tails overlap the loads less well in the shorter body, as with the SIMD units).
  const PlatformConfig cfg = throughputPlatform();
  Device dev(cfg, ExecMode::Timing);
  const uint32_t warps = 8, d = 8;
  const std::string setup = conflictSetup(d);
  const double s = slopeOf(
      dev, setup, [](int k) { return independent("ld.shared.u32 $, [%r5];", k, 6); }, {warps * 32},
      2, 6, 4096);
  EXPECT_NEAR(s, double(warps * d), 0.03 * warps * d);
  // Most of the cycles in which the busy SM's schedulers had warps were such stalls.
  Launch l = run(dev, loopKernel(setup, independent("ld.shared.u32 $, [%r5];", kK2, 6)), {1},
                 {warps * 32}, 6, 4096);
  uint64_t structural = 0, withWarps = 0;
  for (const gpu::SmTiming& sm : l.timing->sms) {
    for (const auto& outcomes : sm.schedulers) {
      if (outcomes[int(sm::Stall::Issued)] == 0) continue;  // an idle SM's
      for (int i = 0; i < sm::kNumStalls; ++i)
        if (i != int(sm::Stall::NoWarp)) withWarps += outcomes[i];
      structural += outcomes[int(sm::Stall::Structural)];
    }
  }
  EXPECT_GT(structural, withWarps / 2);
}

TEST(TimingSharedMemory, AtomicsOnOneWordAreSerialisedButDistinctBanksAreNot) {
  // A read is a broadcast when lanes share a word, but atomics on one word read each other's
  // results: `k` lanes on one word take `k` passes of the bank. Lanes on words of distinct banks
  // take one.
  const PlatformConfig cfg = throughputPlatform();
  Device dev(cfg, ExecMode::Timing);
  for (uint32_t lanesPerWord : {1u, 2u, 8u, 32u}) {
    // Lane l adds to word l / lanesPerWord: 32 / lanesPerWord words in distinct banks.
    const std::string setup = "  and.b32 %r2, %r0, 31;\n  div.u32 %r3, %r2, " +
                              std::to_string(lanesPerWord) + ";\n  shl.b32 %r5, %r3, 2;\n";
    const double s = slopeOf(
        dev, setup, [](int k) { return independent("atom.shared.add.u32 $, [%r5], 1;", k, 6); },
        {32}, 2, 6, 4096);
    EXPECT_EQ(s, std::max(issueBound(cfg), double(lanesPerWord)))
        << lanesPerWord << " lanes per word";
    Launch l = run(dev, loopKernel(setup, repeat("atom.shared.add.u32 %r6, [%r5], 1;", 4)), {1},
                   {32}, 5, 4096);
    EXPECT_EQ(l.counters.sharedBankConflicts, 5u * 4u * (lanesPerWord - 1))
        << lanesPerWord << " lanes per word";
  }
}

TEST(TimingSharedMemory, BroadcastIsNotAConflict) {
  const PlatformConfig cfg = platformWith({});
  Device dev(cfg, ExecMode::Timing);
  Launch l = run(dev, loopKernel("  mov.u32 %r5, 64;\n", repeat("ld.shared.u32 %r6, [%r5];", 4)),
                 {1}, {128}, 5, 4096);
  EXPECT_EQ(l.counters.sharedBankConflicts, 0u);
}

// The conflict degree of random accesses (few distinct words, so broadcasts and repeated
// conflicts mix; 4- to 16-byte lanes; every bank count) is the largest number of distinct
// words one bank delivers, or of accesses for atomics, counted here the plain way.
TEST(TimingSharedMemory, ConflictDegreeIsTheMostDistinctWordsOfOneBank) {
  uint64_t seed = 12345;
  const auto next = [&] {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    return uint32_t(seed >> 33);
  };
  for (int trial = 0; trial < 4000; ++trial) {
    const uint32_t banks = 1u << (next() % 8);
    func::MemRecord rec;
    rec.mask = trial % 7 == 0 ? 0xffffffffu : next() | (next() << 16);
    rec.bytes = uint8_t(4u << (next() % 3));
    const bool atomic = next() % 4 == 0;
    const uint32_t spread = 1 + next() % 512;  // distinct word addresses to pick from
    for (auto& a : rec.addr) a = uint64_t(next() % spread) * rec.bytes;
    if (trial % 3 == 1) {  // strided, as kernels index: broadcast, consecutive, padded, ...
      static const uint32_t strides[] = {0, 1, 2, 3, 4, 8, 16, 17, 32, 33};
      const uint32_t stride = strides[next() % 10], base = next() % 4096;
      for (uint32_t l = 0; l < 32; ++l) rec.addr[l] = uint64_t(base + l * stride) * rec.bytes;
      if (next() % 2) rec.addr[next() % 32] = rec.addr[next() % 32];  // a lane repeats another
    }
    std::map<uint32_t, std::vector<uint64_t>> perBank;
    for (uint32_t l = 0; l < 32; ++l) {
      if (!((rec.mask >> l) & 1u)) continue;
      for (uint32_t k = 0; k < std::max(1u, rec.bytes / 4u); ++k) {
        const uint64_t word = rec.addr[l] / 4 + k;
        auto& list = perBank[uint32_t(word % banks)];
        if (atomic || std::find(list.begin(), list.end(), word) == list.end()) list.push_back(word);
      }
    }
    size_t want = 1;
    for (const auto& [bank, list] : perBank) want = std::max(want, list.size());
    ASSERT_EQ(sm::sharedConflictDegree(rec, banks, atomic), want)
        << "trial " << trial << ", banks " << banks << ", bytes " << int(rec.bytes)
        << (atomic ? ", atomic" : "");
  }
}

// ---- dispatch
// --------------------------------------------------------------------------------------

namespace {
class CountingTarget : public sm::DispatchTarget {
 public:
  Answer answer = Answer::Busy;
  std::optional<std::pair<sm::Unit, Answer>> answerFor;  // another answer for one unit kind
  std::vector<std::pair<uint32_t, sm::Unit>> asked;
  sm::Cycle freeAt = 0;  // what unitFreeAt says of every unit (at least the next cycle)
  Answer dispatch(uint32_t inst, sm::Unit u, sm::Cycle) override {
    asked.emplace_back(inst, u);
    return answerFor && answerFor->first == u ? answerFor->second : answer;
  }
  sm::Cycle unitFreeAt(uint32_t, sm::Unit, sm::Cycle now) const override {
    return std::max(freeAt, now + 1);
  }
};

// A simulation context of its own, set up before the modules built after it.
struct FreshContext {
  FreshContext() {
    sc_core::sc_curr_simcontext = new sc_core::sc_simcontext;
    sc_core::sc_default_global_context = sc_core::sc_curr_simcontext;
  }
};

// A DispatchUnit of the default SM over a 16-bank register file.
struct DispatchBench : FreshContext {
  SmConfig cfg;
  sm::RegisterFile rf{"rf", 16};
  sm::DispatchUnit du{"dispatch", cfg, rf};
};
}  // namespace

// A Busy answer (no unit of that kind free, nothing changed) stands for the rest of the cycle:
// the DispatchUnit does not ask again for that kind, but still asks for the other kinds; after
// Refused (the attempt may have had effects, a gated unit began waking) it asks for the next.
TEST(TimingDispatch, ABusyUnitKindIsNotAskedAgainInTheCycle) {
  DispatchBench bench;
  sm::DispatchUnit& du = bench.du;
  for (uint32_t i = 0; i < 3; ++i) du.collect(i, sm::Unit::Sp, 0, 0, {}, 0, 0);
  du.collect(3, sm::Unit::Sfu, 0, 0, {}, 0, 0);
  du.collect(4, sm::Unit::Sp, 0, 0, {}, 0, 0);
  using P = std::pair<uint32_t, sm::Unit>;
  CountingTarget t;
  sm::SmActivity act;
  du.cycle(1, act, t);  // every operand read (none to read): oldest first
  EXPECT_EQ(t.asked, (std::vector<P>{{0, sm::Unit::Sp}, {3, sm::Unit::Sfu}}));
  t.asked.clear();
  t.answer = CountingTarget::Answer::Refused;
  du.cycle(2, act, t);
  EXPECT_EQ(t.asked, (std::vector<P>{{0, sm::Unit::Sp},
                                     {1, sm::Unit::Sp},
                                     {2, sm::Unit::Sp},
                                     {3, sm::Unit::Sfu},
                                     {4, sm::Unit::Sp}}));
  t.asked.clear();
  t.answer = CountingTarget::Answer::Taken;
  du.cycle(3, act, t);
  EXPECT_EQ(t.asked.size(), 5u);
  EXPECT_FALSE(du.busy());
}

// Two warps, one per scheduler, each issuing only SFU instructions: they compete for the SM's
// SFU collectors, and the unit takes one warp instruction per `perInst` cycles. With
// sm.scheduler_arbitration round-robin the schedulers take turns at each collector that frees,
// so both warps finish near the end of the 2 x n instructions; with fixed, scheduler 0 takes the
// collectors first and its warp is done long before the other's.
TEST(TimingDispatch, SchedulersSharingAUnitTakeTurnsWithRoundRobinArbitration) {
  constexpr int kPerIter = 48;  // the loop's own instructions are a small part
  constexpr uint32_t kIters = 16;
  std::string body = independent("sin.approx.f32 $, $;", kPerIter, 1, "%f");
  // %r1: this warp's cycles from its first instruction to its last iteration's last SFU issue.
  body += "  mov.u64 %rd1, %clock64;\n  sub.s64 %rd2, %rd1, %rd0;\n  cvt.u32.u64 %r1, %rd2;\n";
  const std::string ptx = loopKernel("  mov.u64 %rd0, %clock64;\n", body);
  for (const char* arbitration : {"round-robin", "fixed"}) {
    const PlatformConfig cfg =
        throughputPlatform({"sm.perfect_icache=true",  // no cold misses in the first iteration
                            fmt::format("sm.scheduler_arbitration={}", arbitration)});
    ASSERT_EQ(cfg.sm.schedulers, 2u);
    const double perInst =
        double(std::max(cfg.sm.latency.sfu.initiation, cfg.sm.warpCycles(cfg.sm.sfu_lanes))) /
        cfg.sm.sfu_units;
    const double alone = perInst * kPerIter * kIters, both = 2 * alone;
    Device dev(cfg, ExecMode::Timing);
    Module& m = dev.loadModule(ptx, "turns.ptx");
    const DevPtr out = dev.malloc(64 * 4);
    dev.launch(m.kernel("k"), {1}, {64}, 0, KernelArgs().u32(kIters).ptr(out));
    std::vector<uint32_t> spans(64);
    dev.copyToHost(spans.data(), out, spans.size() * 4);
    const double warp0 = spans[0], warp1 = spans[32];
    // Either way the unit is the bound: the later warp ends with the 2 x n instructions.
    EXPECT_NEAR(std::max(warp0, warp1), both, 0.1 * both) << arbitration;
    if (std::string(arbitration) == "round-robin")
      EXPECT_NEAR(warp0, warp1, 0.05 * both) << arbitration;
    else  // (the loop's own instructions give scheduler 1 some collectors: not all wait)
      EXPECT_LT(warp0, warp1 - 0.25 * both) << arbitration;
  }
}

// Collectors that only waited for busy units (every answer Busy or Waits, once those that
// dispatched have left) need no cycle before the first unit frees; an operand still to read, an
// answer with effects (Refused) or a collector that entered in the cycle makes the next cycle
// count.
TEST(TimingDispatch, WaitingCollectorsSleepUntilAUnitFrees) {
  DispatchBench bench;
  sm::DispatchUnit& du = bench.du;
  du.collect(0, sm::Unit::Sp, 0, 0, {}, 0, 0);
  du.collect(1, sm::Unit::Sfu, 0, 0, {}, 0, 0);
  CountingTarget t;
  t.freeAt = 20;
  sm::SmActivity act;
  du.cycle(1, act, t);  // both Busy
  EXPECT_EQ(du.nextChange(1, t), 20u);
  EXPECT_EQ(du.nextChange(2, t), 3u);  // what cycle 1 showed says nothing of cycle 2
  t.answer = CountingTarget::Answer::Waits;
  du.cycle(2, act, t);
  EXPECT_EQ(du.nextChange(2, t), 20u);
  t.answer = CountingTarget::Answer::Refused;
  du.cycle(3, act, t);
  EXPECT_EQ(du.nextChange(3, t), 4u);
  t.answer = CountingTarget::Answer::Busy;
  du.collect(2, sm::Unit::Sp, 0, 0, {1, 17}, 32, 3);  // two registers of one bank, from cycle 4
  du.cycle(4, act, t);                                // one read: the other waits for the bank
  EXPECT_EQ(du.nextChange(4, t), 5u);
  du.cycle(5, act, t);  // the second read: all wait again
  EXPECT_EQ(du.nextChange(5, t), 20u);
  EXPECT_EQ(act.collectorsBusy, 3u * 2 + 2u * 3);  // two collectors in cycles 1-3, three in 4-5
  // The SFU takes its instruction; the two SP collectors still wait for theirs.
  t.answerFor = std::make_pair(sm::Unit::Sfu, CountingTarget::Answer::Taken);
  du.cycle(6, act, t);
  EXPECT_EQ(du.occupied(), 2u);
  EXPECT_EQ(du.nextChange(6, t), 20u);
  // Both SP collectors dispatch: nothing is left to wait.
  t.answerFor = std::make_pair(sm::Unit::Sp, CountingTarget::Answer::Taken);
  t.asked.clear();
  du.cycle(7, act, t);
  EXPECT_FALSE(du.busy());
  EXPECT_EQ(t.asked.size(), 2u);
}

// ---- barriers
// --------------------------------------------------------------------------------------

TEST(TimingBarrier, CostFollowsTheBarrierLatency) {
  for (uint32_t bl : {2u, 7u}) {
    const PlatformConfig cfg = platformWith({"sm.barrier_latency=" + std::to_string(bl)});
    Device dev(cfg, ExecMode::Timing);
    // One warp: it releases the barrier itself and may issue again 1 + latency cycles later.
    EXPECT_EQ(slope(dev, "", "bar.sync 0;", {32}), 1 + bl) << "latency " << bl;
    // Four warps on two schedulers: the last arrives one cycle after the first two.
    const uint32_t warps = 4;
    EXPECT_EQ(slope(dev, "", "bar.sync 0;", {warps * 32}), 1 + bl + (warps / cfg.sm.schedulers - 1))
        << "latency " << bl;
  }
}

// ---- occupancy
// ---------------------------------------------------------------------------------------

uint32_t expectedCtasPerSm(const PlatformConfig& cfg, uint32_t threads, uint32_t regsPerThread,
                           uint32_t shared) {
  const SmConfig& s = cfg.sm;
  const uint32_t warps = (threads + 31) / 32;
  const uint32_t g = s.register_allocation_granularity;
  const uint32_t perWarp = (regsPerThread * 32 + g - 1) / g * g;
  uint32_t n = s.max_ctas;
  n = std::min(n, s.max_threads / threads);
  n = std::min(n, s.max_warps / warps);
  // Each register partition holds the warps whose registers fit it (the slots divide evenly
  // among the schedulers here).
  const uint32_t partitions = s.register_partitions;
  n = std::min(n, partitions * (s.registers / partitions / perWarp) / warps);
  const uint32_t u = s.shared_allocation_granularity;
  if (shared) n = std::min(n, s.shared_memory_bytes / ((shared + u - 1) / u * u));
  return n;
}

// A kernel with `live` 32-bit values live at once and `shared` bytes of static shared memory.
std::string occupancyKernel(uint32_t live, uint32_t shared) {
  std::string setup, use;
  for (uint32_t i = 1; i <= live; ++i)
    setup += "  add.u32 %r" + std::to_string(i) + ", %r0, " + std::to_string(i) + ";\n";
  for (uint32_t i = 2; i <= live; ++i) use += "  add.u32 %r1, %r1, %r" + std::to_string(i) + ";\n";
  const std::string decl =
      shared ? ".shared .align 4 .b8 tile[" + std::to_string(shared) + "];\n" : "";
  return loopKernel(
      setup + use + (shared ? "  mov.u32 %r2, tile;\n  st.shared.u32 [%r2], %r1;\n" : ""),
      "  add.u32 %r1, %r1, 1;\n", decl);
}

TEST(TimingOccupancy, LimitsFromThreadsRegistersAndSharedMemory) {
  const PlatformConfig cfg = platformWith({});
  Device dev(cfg, ExecMode::Timing);
  struct Case {
    uint32_t threads, live, shared;
  };
  for (const Case& c : {Case{256, 4, 0}, Case{256, 4, 20000}, Case{256, 50, 0}, Case{128, 4, 0},
                        Case{64, 4, 9000}}) {
    const std::string ptx = occupancyKernel(c.live, c.shared);
    Module& m = dev.loadModule(ptx, "occ.ptx");
    const uint32_t regs = m.kernel("k").program->regsPerThread;
    const uint32_t want = expectedCtasPerSm(cfg, c.threads, regs, c.shared);
    Launch l = run(dev, ptx, {cfg.gpu.num_sms * 12}, {c.threads}, 50);
    for (const auto& s : l.timing->sms)
      EXPECT_EQ(s.peakCtas, want) << c.threads << " threads, " << regs << " registers/thread, "
                                  << c.shared << " B shared, SM " << s.id;
  }
}

// A kernel whose PTX records what ptxas allocated ("// ptxas ...: k uses N registers", as the
// catalog's committed PTX does) is sized by that count, not by the liveness estimate (a lower
// bound); a malformed record is an error naming the file and line.
TEST(TimingOccupancy, RegistersRecordedFromPtxasDecideTheFootprint) {
  const PlatformConfig cfg = platformWith({});
  Device dev(cfg, ExecMode::Timing);
  const std::string plain = occupancyKernel(4, 0);
  const uint32_t estimate = dev.loadModule(plain, "occ.ptx").kernel("k").program->regsPerThread;
  const uint32_t recorded = 40;
  ASSERT_LT(estimate, recorded);
  const std::string ptx =
      "// ptxas -arch=sm_75: k uses " + std::to_string(recorded) + " registers\n" + plain;
  Module& m = dev.loadModule(ptx, "occ.ptx");
  EXPECT_EQ(m.kernel("k").program->regsPerThread, recorded);
  EXPECT_TRUE(m.kernel("k").program->regsFromPtxas);
  const uint32_t threads = 256;
  const uint32_t want = expectedCtasPerSm(cfg, threads, recorded, 0);
  ASSERT_LT(want, expectedCtasPerSm(cfg, threads, estimate, 0));  // the record matters
  Launch l = run(dev, ptx, {cfg.gpu.num_sms * 12}, {threads}, 50);
  for (const auto& sm : l.timing->sms) EXPECT_EQ(sm.peakCtas, want) << "SM " << sm.id;
  try {
    dev.loadModule("// ptxas -arch=sm_75: k uses many registers\n" + plain, "bad.ptx");
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("bad.ptx:1:"), std::string::npos) << e.what();
  }
}

// With the register file in partitions a warp takes its registers from its scheduler's, so an SM
// holds fewer warps when a partition's share is not a whole number of them; shared memory
// allocated in units holds fewer blocks when a block's bytes are not a whole number of units.
TEST(TimingOccupancy, RegisterPartitionsAndSharedAllocationUnits) {
  struct Case {
    uint32_t threads, regs, shared;
  };
  const std::vector<Case> cases = {{32, 40, 0}, {160, 40, 0}, {64, 8, 9830}, {96, 24, 0}};
  for (const bool split : {false, true}) {
    const PlatformConfig cfg = split ? platformWith({"sm.max_ctas=32", "sm.register_partitions=2",
                                                     "sm.shared_allocation_granularity=128"})
                                     : platformWith({"sm.max_ctas=32"});
    ASSERT_EQ(cfg.sm.max_warps % cfg.sm.schedulers, 0u);
    Device dev(cfg, ExecMode::Timing);
    for (const Case& c : cases) {
      const std::string ptx = "// ptxas -arch=sm_75: k uses " + std::to_string(c.regs) +
                              " registers\n" + occupancyKernel(4, c.shared);
      const uint32_t want = expectedCtasPerSm(cfg, c.threads, c.regs, c.shared);
      Launch l = run(dev, ptx, {cfg.gpu.num_sms * 40}, {c.threads}, 50);
      for (const auto& sm : l.timing->sms)
        EXPECT_EQ(sm.peakCtas, want) << split << ": " << c.threads << " threads, " << c.regs
                                     << " registers/thread, " << c.shared << " B, SM " << sm.id;
      EXPECT_EQ(dev.ctasPerSm(dev.loadModule(ptx, "occ.ptx").kernel("k"), {c.threads}, 0), want);
    }
  }
  // The cases tell the rules apart: 40 registers per thread are 1,280 per warp, 25 warps in
  // 32 K registers but 12 in each half; 9,830 bytes are 77 units of 128.
  const PlatformConfig whole = platformWith({"sm.max_ctas=32"});
  const PlatformConfig split = platformWith(
      {"sm.max_ctas=32", "sm.register_partitions=2", "sm.shared_allocation_granularity=128"});
  for (const Case& c : {cases[0], cases[1], cases[2]})
    EXPECT_GT(expectedCtasPerSm(whole, c.threads, c.regs, c.shared),
              expectedCtasPerSm(split, c.threads, c.regs, c.shared))
        << c.threads << " threads";
  // A block whose warps fit the whole file but not the partitions is refused, naming the key.
  Device dev(split, ExecMode::Timing);
  const std::string ptx = "// ptxas -arch=sm_75: k uses 40 registers\n" + occupancyKernel(4, 0);
  ASSERT_LE(25u * 1280u, split.sm.registers);
  try {
    run(dev, ptx, {1}, {800}, 1);
    ADD_FAILURE() << "a block of 25 warps was launched into partitions holding 24";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("sm.register_partitions"), std::string::npos) << e.what();
  }
}

TEST(TimingOccupancy, ABlockThatCannotFitIsRejected) {
  const PlatformConfig cfg = platformWith({"sm.registers=4096"});
  Device dev(cfg, ExecMode::Timing);
  const std::string ptx = occupancyKernel(40, 0);
  EXPECT_THROW(run(dev, ptx, {1}, {256}, 1), InputError);
}

// ---- scheduling policies
// -------------------------------------------------------------------------

struct IssueLog : sm::IssueObserver {
  std::vector<uint32_t> warps;
  void onIssue(uint32_t, sm::Cycle, uint32_t warp, uint32_t) override { warps.push_back(warp); }
};

std::vector<uint32_t> issueOrder(const std::string& policy) {
  // One scheduler, two warps of independent instructions, a buffer holding a whole I-cache line.
  const PlatformConfig cfg =
      platformWith({"sm.scheduler=" + policy, "sm.schedulers=1", "sm.ibuffer_entries=16"});
  Device dev(cfg, ExecMode::Timing);
  IssueLog log;
  dev.timingEngine()->setIssueObserver(&log);
  run(dev, loopKernel("", independent("add.u32 $, $, 1;", 12, 1)), {1}, {64}, 4);
  dev.timingEngine()->setIssueObserver(nullptr);
  return log.warps;
}

TEST(TimingScheduler, LooseRoundRobinAlternatesGreedyThenOldestStays) {
  auto lrr = issueOrder("lrr");
  auto gto = issueOrder("gto");
  ASSERT_GT(lrr.size(), 40u);
  ASSERT_EQ(lrr.size(), gto.size());
  // After the first few instructions both warps are ready every cycle: LRR alternates.
  uint32_t lrrRepeats = 0, gtoRepeats = 0;
  for (size_t i = 20; i < 40; ++i) {
    lrrRepeats += lrr[i] == lrr[i - 1];
    gtoRepeats += gto[i] == gto[i - 1];
  }
  EXPECT_EQ(lrrRepeats, 0u);
  EXPECT_GE(gtoRepeats, 15u);
  // GTO keeps the oldest warp (slot 0) until it stalls.
  EXPECT_EQ(gto[0], 0u);
  EXPECT_EQ(std::count(gto.begin(), gto.begin() + 10, 0u), 10);
}

// ---- instruction cache
// -------------------------------------------------------------------------------

TEST(TimingICache, MissesOfAKernelLargerThanTheCache) {
  const PlatformConfig cfg = test::platform();
  Device dev(cfg, ExecMode::Timing);
  const uint32_t perLine = cfg.sm.icache.line_bytes / cfg.sm.instruction_bytes;
  const uint32_t lines = cfg.sm.icache.sets * cfg.sm.icache.ways;  // capacity in lines
  auto misses = [&](uint32_t bodyLines, uint32_t iters) {
    // The loop body fills whole lines; everything else of the kernel fits in a few lines.
    Launch l = run(dev, loopKernel("", repeat("add.u32 %r2, %r2, 1;", bodyLines * perLine)), {1},
                   {32}, iters);
    return l.counters.icacheMisses;
  };
  // A body of twice the cache's capacity: LRU evicts every line before it is used again, so
  // each further iteration misses on every body line (plus the loop's last, partial line).
  const uint32_t big = 2 * lines;
  EXPECT_EQ(misses(big, 3) - misses(big, 2), uint64_t(big + 1));
  // A body of a quarter of the capacity stays cached: later iterations do not miss.
  EXPECT_EQ(misses(lines / 4, 3) - misses(lines / 4, 2), 0u);
}

// ---- constant cache
// -------------------------------------------------------------------------------------------

// Every warp's ld.param misses the cold constant cache at once; the misses to the one parameter
// line wait on the first one's MSHR (sm.const_cache.mshr_max_merge), so the SM fetches the line
// once. With a merge limit of one the second warp's load misses and holds the LD/ST unit until
// the line is there (the later warps' loads wait behind it), then everyone hits: still one
// fetch, and no sooner.
TEST(TimingConstantCache, MissesToALineOnItsWayMergeIntoItsMshr) {
  const PlatformConfig cfg = platformWith({});
  const uint32_t warps = 8;
  ASSERT_LE(warps, cfg.sm.const_cache.mshr_max_merge);
  struct Result {
    Launch launch;
    uint64_t requests = 0;
  };
  const auto launch = [&](const std::vector<std::string>& sets) {
    Device dev(platformWith(sets), ExecMode::Timing);
    Result r;
    r.launch = run(dev, loopKernel("", "  add.u32 %r2, %r2, 1;\n"), {1}, {warps * 32}, 1);
    r.requests = r.launch.timing->memory.value("requests", uint64_t(0));
    r.launch.timing = nullptr;  // the device is gone
    return r;
  };
  const Result lr = launch({});
  const Launch& l = lr.launch;
  // Two parameter loads per warp (iters, out), both in the kernel's one parameter line.
  EXPECT_EQ(l.counters.constAccesses, uint64_t(2 * warps));
  EXPECT_EQ(l.counters.constMisses, 1u);
  // Memory requests: the parameter line, the instruction lines and each warp's store.
  EXPECT_EQ(lr.requests, 1u + l.counters.icacheMisses + warps);
  const Result sr = launch({"sm.const_cache.mshr_entries=1", "sm.const_cache.mshr_max_merge=1"});
  const Launch& s = sr.launch;
  EXPECT_EQ(s.counters.constMisses, 2u);
  EXPECT_EQ(sr.requests, 1u + s.counters.icacheMisses + warps);
  EXPECT_GE(s.cycles, l.cycles);
}

// Loads of distinct constant lines beyond the MSHRs wait for a fill: a warp reading four lines
// of a __constant__ array (lanes spread over them) with one MSHR fetches them one after another.
TEST(TimingConstantCache, LinesBeyondTheMshrsWaitForAFill) {
  const std::string decl = ".const .align 4 .b8 table[1024];\n";
  const std::string setup =
      "  shl.b32 %r3, %r0, 3;\n"  // lane l reads byte 8 l: lanes 8k..8k+7 share a 64-byte line
      "  mov.u32 %r4, table;\n"
      "  add.u32 %r3, %r3, %r4;\n";
  const std::string body = "  ld.const.u32 %r5, [%r3];\n  add.u32 %r1, %r1, %r5;\n";
  const auto cycles = [&](uint32_t mshrs) {
    const PlatformConfig cfg =
        platformWith({"sm.const_cache.mshr_entries=" + std::to_string(mshrs)});
    Device dev(cfg, ExecMode::Timing);
    Module& m = dev.loadModule(loopKernel(setup, body, decl), "bench.ptx");
    DevPtr out = dev.malloc(32 * 4);
    dev.launch(m.kernel("k"), {1}, {32}, 0, KernelArgs().u32(1).ptr(out));
    const auto& t = *dev.launches().back().timing;
    uint64_t misses = 0;
    for (const auto& sm : t.sms) misses += sm.counters.constMisses;
    return std::make_pair(t.cycles, misses);
  };
  const PlatformConfig cfg = platformWith({});
  const uint32_t lines = 32 * 8 / cfg.sm.const_cache.line_bytes;  // 4
  const auto [fast, fastMisses] = cycles(lines);
  const auto [slow, slowMisses] = cycles(1);
  EXPECT_EQ(fastMisses, 1u + lines);  // the parameter line and the table's lines
  EXPECT_EQ(slowMisses, 1u + lines);
  // With one MSHR the table's lines arrive one round trip after another.
  EXPECT_GE(slow, fast + (lines - 1) * cfg.memory.fixed_latency);
  EXPECT_LE(slow, fast + (lines - 1) * (cfg.memory.fixed_latency + 4));
}

// ---- asynchronous copies (cp.async)
// --------------------------------------------------------------

// Each thread copies its word of `out` to shared memory: %rd2 its global address, %r5 its shared
// one.
const std::string kCopySetup =
    "  ld.param.u64 %rd1, [out];\n  mul.wide.u32 %rd3, %r0, 4;\n  add.s64 %rd2, %rd1, %rd3;\n"
    "  shl.b32 %r5, %r0, 2;\n";
const std::string kCopy = "cp.async.ca.shared.global [%r5], [%rd2], 4;";

double copySlope(Device& dev, const std::string& line) {
  return slope(dev, kCopySetup, line, {32}, 10, 30, 4096);
}

TEST(TimingAsyncCopy, AWaitWaitsForTheCopiesFromMemory) {
  const PlatformConfig cfg = platformWith({});
  Device dev(cfg, ExecMode::Timing);
  const double latency = cfg.memory.fixed_latency;
  // A copy, its group committed and waited for: one round trip to memory per copy, as a load
  // whose result the next instruction needs.
  const double waited = copySlope(dev, kCopy + " cp.async.commit_group; cp.async.wait_group 0;");
  const double load = copySlope(dev, "ld.global.u32 %r6, [%rd2]; add.u32 %r1, %r1, %r6;");
  EXPECT_GE(waited, latency);
  EXPECT_NEAR(waited, load, 0.05 * latency);
  EXPECT_NEAR(copySlope(dev, kCopy + " cp.async.wait_all;"), waited, 0.05 * latency);
  // Without a wait nothing waits for the copies (they go out one LD/ST slot after another).
  EXPECT_LT(copySlope(dev, kCopy + " cp.async.commit_group;"), 0.1 * latency);
  // Waiting for all but the most recent group keeps two copies in flight: half a round trip per
  // copy.
  const double pipelined = copySlope(dev, kCopy + " cp.async.commit_group; cp.async.wait_group 1;");
  EXPECT_NEAR(pipelined, waited / 2, 0.05 * waited);
}

TEST(TimingAsyncCopy, AWaitForAGroupIgnoresTheOpenOne) {
  // The commit comes first: each wait_group 0 waits for the previous copy, committed, and not
  // for its own, still open. Two copies are in flight: half a round trip per copy. (Were the
  // open group waited for, a whole one.)
  const PlatformConfig cfg = platformWith({});
  Device dev(cfg, ExecMode::Timing);
  const double waited = copySlope(dev, kCopy + " cp.async.commit_group; cp.async.wait_group 0;");
  const double open = copySlope(dev, "cp.async.commit_group; " + kCopy + " cp.async.wait_group 0;");
  EXPECT_NEAR(open, waited / 2, 0.05 * waited);
}

// ---- idle time
// ----------------------------------------------------------------------------------------

TEST(TimingIdle, AnSmWaitingOnMemorySleeps) {
  const PlatformConfig cfg = platformWith({"memory.fixed_latency=100000"});
  Device dev(cfg, ExecMode::Timing);
  // One load whose result is needed at once: 100000 cycles of waiting.
  const std::string ptx = loopKernel(
      "  ld.param.u64 %rd1, [out];\n  ld.global.u32 %r1, [%rd1];\n  add.u32 %r1, %r1, 1;\n",
      "  add.u32 %r2, %r2, 1;\n");
  Launch l = run(dev, ptx, {1}, {32}, 1);
  EXPECT_GT(l.cycles, 100000u);
  EXPECT_LT(l.counters.evaluatedCycles, 200u);  // the SM ran only when something could happen
}

// ---- activity for the power model
// ----------------------------------------------------------------

// Collects what the SMs report, cycle by cycle.
struct ActivityLog : sm::ActivityObserver {
  std::map<uint32_t, std::vector<std::pair<uint64_t, uint64_t>>>
      spans;  // sm -> (first cycle, cycles)
  std::map<uint32_t, sm::SmCounters> sums;
  void onActivity(uint32_t s, uint64_t first, uint64_t cycles, const sm::SmActivity& a) override {
    spans[s].push_back({first, cycles});
    sums[s].add(a, cycles);
  }
};

TEST(TimingActivity, EveryCycleIsReportedOnceAndSumsToTheTotals) {
  const PlatformConfig cfg = test::platform();
  Device dev(cfg, ExecMode::Timing);
  ActivityLog log;
  dev.timingEngine()->setActivityObserver(&log);
  const std::string ptx =
      loopKernel("  ld.param.u64 %rd1, [out];\n  ld.global.u32 %r2, [%rd1];\n",
                 independent("mad.lo.u32 $, $, %r2, 3;", 8, 3) + "  bar.sync 0;\n");
  Launch l = run(dev, ptx, {40}, {256}, 6);
  dev.timingEngine()->setActivityObserver(nullptr);
  ASSERT_EQ(log.spans.size(), cfg.gpu.num_sms);
  for (const auto& s : l.timing->sms) {
    // Contiguous spans covering exactly the kernel's cycles.
    uint64_t next = l.timing->startCycle + 1, covered = 0;
    for (const auto& [first, n] : log.spans[s.id]) {
      EXPECT_EQ(first, next) << "SM " << s.id;
      next = first + n;
      covered += n;
    }
    EXPECT_EQ(covered, l.cycles) << "SM " << s.id;
    const sm::SmCounters& sum = log.sums[s.id];
    EXPECT_EQ(sum.issued, s.counters.issued);
    EXPECT_EQ(sum.rfReads, s.counters.rfReads);
    EXPECT_EQ(sum.laneOps, s.counters.laneOps);
    EXPECT_EQ(sum.warpCycles, s.counters.warpCycles);
    for (int i = 0; i < sm::kNumStalls; ++i) EXPECT_EQ(sum.stalls[i], s.counters.stalls[i]);
  }
}

// ---- determinism
// ---------------------------------------------------------------------------------------

TEST(TimingDeterminism, TheSameLaunchGivesIdenticalStatistics) {
  const PlatformConfig cfg = test::platform();
  auto once = [&] {
    Device dev(cfg, ExecMode::Timing);
    const std::string ptx = loopKernel("", independent("mad.lo.u32 $, $, $, 7;", 6, 1));
    run(dev, ptx, {30}, {96}, 7);
    return dev.launches().back();
  };
  LaunchRecord a = once(), b = once();
  ASSERT_TRUE(a.timing && b.timing);
  EXPECT_EQ(a.timing->cycles, b.timing->cycles);
  for (size_t i = 0; i < a.timing->sms.size(); ++i) {
    EXPECT_EQ(a.timing->sms[i].counters.issued, b.timing->sms[i].counters.issued);
    EXPECT_EQ(a.timing->sms[i].counters.rfBankConflicts, b.timing->sms[i].counters.rfBankConflicts);
    EXPECT_EQ(a.timing->sms[i].schedulers, b.timing->sms[i].schedulers);
  }
  EXPECT_EQ(a.timing->timeline.size(), b.timing->timeline.size());
}

TEST(TimingDeterminism, ADeviceWhosePlatformWasReplacedSaysSo) {
  // A second Device of another platform elaborates that platform in a new context; the first
  // one's next launch is refused with the reason, not run in the dead context.
  Device first(platformWith({}), ExecMode::Timing);
  const std::string ptx = loopKernel("", repeat("add.u32 %r1, %r1, %r2;", 8));
  run(first, ptx, {1}, {32}, 2);
  Device second(platformWith({"gpu.num_sms=2"}), ExecMode::Timing);
  try {
    run(first, ptx, {1}, {32}, 2);
    ADD_FAILURE() << "the first Device launched on a replaced platform";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("one platform at a time"), std::string::npos) << e.what();
  }
  EXPECT_GT(run(second, ptx, {1}, {32}, 2).cycles, 0u);
}

TEST(TimingDeterminism, ATestbenchsOwnSystemCContextDoesNotStrandTheEngine) {
  // A block-level testbench makes a SystemC context of its own (as TimingDispatch above does).
  // A device launching afterwards, with the configuration of the engine left in the previous
  // context, must get an engine in a context that runs, not the old one (sc_start would then
  // run the new, empty context: no activity, a deadlock report): the same cycles as before.
  const PlatformConfig cfg = platformWith({});
  const auto cycles = [&] {
    Device dev(cfg, ExecMode::Timing);
    return run(dev, loopKernel("", repeat("add.u32 %r1, %r1, %r2;", 8)), {1}, {64}, 20).cycles;
  };
  const uint64_t first = cycles();
  EXPECT_EQ(cycles(), first);  // the engine reused in its own context
  sc_core::sc_curr_simcontext = new sc_core::sc_simcontext;
  sc_core::sc_default_global_context = sc_core::sc_curr_simcontext;
  EXPECT_EQ(cycles(), first);
}

// A new Device on the same platform reuses the timing engine of the one before it; every launch
// takes the cycles it took on the first Device. gaussian's 73 launches on the mesh run with the
// SMs' in-flight records and warp schedulers as the first Device left them unless they are
// reset: which record an instruction gets orders its writeback among those of the same cycle
// (dfifo requeues the warps in that order), and lrr and two-level start after the warp that
// issued last.
TEST(TimingDeterminism, ASecondDeviceRepeatsEveryLaunchOfTheFirst) {
  for (const char* scheduler : {"dfifo", "lrr", "two-level"}) {
    const PlatformConfig cfg =
        loadPlatform("stream-4x4", {std::string("sm.scheduler=") + scheduler});
    auto cycles = [&] {
      Device dev(cfg, ExecMode::Timing);
      auto wl = catalog::find("gaussian").make(catalog::Size::Tiny);
      wl->setup(dev);
      wl->run(dev);
      EXPECT_TRUE(wl->check(dev).pass) << scheduler;
      std::vector<uint64_t> out;
      for (const LaunchRecord& l : dev.launches()) out.push_back(l.timing->cycles);
      return out;
    };
    const std::vector<uint64_t> first = cycles();
    EXPECT_EQ(first.size(), 73u) << scheduler;
    EXPECT_EQ(cycles(), first) << scheduler;
  }
}

// ---- host threads
// --------------------------------------------------------------------------------------

TEST(HostWorkers, RunsEveryItemOnceInEveryBatch) {
  for (unsigned threads : {1u, 2u, 3u, 5u}) {
    HostWorkers w(threads);
    EXPECT_EQ(w.threads(), threads);
    for (size_t n : {size_t(0), size_t(1), size_t(2), size_t(7), size_t(110)}) {
      for (int batch = 0; batch < 50; ++batch) {
        std::vector<int> count(n, 0);
        auto job = [&](size_t i) { count[i] += 1; };
        w.run(n, job);
        ASSERT_EQ(std::count(count.begin(), count.end(), 1), static_cast<long>(n))
            << threads << " threads, " << n << " items";
      }
    }
  }
}

// While the team is not engaged the caller runs every item itself, in order, and the workers
// take none; engaged again, they take part as before.
TEST(HostWorkers, RunsEveryItemOnTheCallerWhileNotEngaged) {
  HostWorkers w(3);
  const std::thread::id caller = std::this_thread::get_id();
  for (int round = 0; round < 3; ++round) {
    w.setEngaged(false);
    EXPECT_FALSE(w.engaged());
    std::vector<size_t> order;
    std::vector<std::thread::id> who(40);
    auto job = [&](size_t i) {
      order.push_back(i);
      who[i] = std::this_thread::get_id();
    };
    for (int batch = 0; batch < 20; ++batch) {
      order.clear();
      w.run(who.size(), job);
      ASSERT_EQ(order.size(), who.size());
      for (size_t i = 0; i < order.size(); ++i) ASSERT_EQ(order[i], i);
      for (const auto& id : who) ASSERT_EQ(id, caller);
    }
    w.setEngaged(true);
    std::vector<std::atomic<int>> count(200);
    auto engagedJob = [&](size_t i) { count[i].fetch_add(1); };
    for (int batch = 0; batch < 20; ++batch) {
      for (auto& c : count) c.store(0);
      w.run(count.size(), engagedJob);
      for (auto& c : count) ASSERT_EQ(c.load(), 1);
    }
  }
}

// run()'s first work runs once per batch on the calling thread, engaged or not, and before the
// calling thread takes any item; every item still runs once.
TEST(HostWorkers, RunsTheFirstWorkOnceOnTheCaller) {
  HostWorkers w(2);
  const std::thread::id caller = std::this_thread::get_id();
  for (bool engaged : {true, false}) {
    w.setEngaged(engaged);
    for (size_t n : {size_t(0), size_t(1), size_t(15), size_t(110)}) {
      std::vector<std::atomic<int>> count(n);
      std::atomic<int> firsts{0};
      std::atomic<bool> callerTookItemBeforeFirst{false};
      auto job = [&](size_t i) {
        if (std::this_thread::get_id() == caller && firsts.load() == 0)
          callerTookItemBeforeFirst = true;
        count[i].fetch_add(1);
      };
      std::thread::id firstOn;
      auto first = [&] {
        firstOn = std::this_thread::get_id();
        firsts.fetch_add(1);
      };
      const size_t bounds[] = {0, n / 2, n};
      w.run(n, job, bounds, first);
      EXPECT_EQ(firsts.load(), 1) << n << " items, engaged " << engaged;
      EXPECT_EQ(firstOn, caller);
      EXPECT_FALSE(callerTookItemBeforeFirst.load());
      for (auto& c : count) ASSERT_EQ(c.load(), 1);
    }
  }
}

// A first work that throws (a voltage sink's error, from the PDN's hand-on) does not leave the
// workers evaluating items of a job that is gone: every item runs, then run() rethrows.
TEST(HostWorkers, AFirstWorkThatThrowsStillCompletesTheBatch) {
  HostWorkers w(2);
  for (bool engaged : {true, false}) {
    w.setEngaged(engaged);
    std::vector<std::atomic<int>> count(64);
    auto job = [&](size_t i) {
      std::this_thread::sleep_for(std::chrono::microseconds(100));
      count[i].fetch_add(1);
    };
    auto first = [] { throw std::runtime_error("the sink failed"); };
    const size_t bounds[] = {0, 32, 64};
    EXPECT_THROW(w.run(count.size(), job, bounds, first), std::runtime_error);
    for (auto& c : count) EXPECT_EQ(c.load(), 1) << "engaged " << engaged;
  }
}

// Background work a test hands on item by item, like the PDN's cycles.
namespace {
struct CountingBackground : HostWorkers::Background {
  std::atomic<uint64_t> pending{0}, done{0};
  std::atomic<bool> inside{false}, sawInterrupt{false}, spinUntilInterrupted{false};
  std::atomic<int> holdMs{0};
  const std::thread::id caller = std::this_thread::get_id();
  std::atomic<bool> ranOnCaller{false};
  bool runSome(const HostWorkers::Interrupt& interrupted) override {
    inside = true;
    if (std::this_thread::get_id() == caller) ranOnCaller = true;
    bool did = false;
    if (holdMs.load() > 0) std::this_thread::sleep_for(std::chrono::milliseconds(holdMs.load()));
    while (spinUntilInterrupted.load() && !interrupted()) std::this_thread::yield();
    if (spinUntilInterrupted.load() && interrupted()) sawInterrupt = true;
    while (done.load() < pending.load() && !interrupted()) {
      done.fetch_add(1);
      did = true;
    }
    inside = false;
    return did;
  }
  bool wantsWorker() const override { return done.load() < pending.load(); }
};
// Waits up to ten seconds for `cond`.
template <class Cond>
bool eventually(Cond cond) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!cond()) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
  return true;
}
}  // namespace

// A worker does the background work while it waits for batches, engaged or not, and a sleeping
// worker wakes for it; the caller never does it.
TEST(HostWorkers, WorkersDoTheBackgroundWorkWhileTheyWait) {
  for (bool engaged : {true, false}) {
    HostWorkers w(2);
    w.setEngaged(engaged);
    CountingBackground b;
    w.setBackground(&b);
    // Let the worker go to sleep (it yields for two milliseconds when engaged).
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    b.pending = 1000;
    w.wakeForBackground();
    ASSERT_TRUE(eventually([&] { return b.done.load() == 1000; })) << "engaged " << engaged;
    EXPECT_FALSE(b.ranOnCaller.load());
    // Batches still run every item once.
    std::vector<std::atomic<int>> count(50);
    auto job = [&](size_t i) { count[i].fetch_add(1); };
    for (int batch = 0; batch < 20; ++batch) {
      b.pending.fetch_add(10);
      w.wakeForBackground();
      w.run(count.size(), job);
    }
    for (auto& c : count) ASSERT_EQ(c.load(), 20);
    ASSERT_TRUE(eventually([&] { return b.done.load() == 1200; })) << "engaged " << engaged;
    w.setBackground(nullptr);
  }
}

// A batch interrupts the background work, and setBackground returns only when no worker is in
// the old one.
TEST(HostWorkers, ABatchInterruptsTheBackgroundAndDetachingWaitsForIt) {
  HostWorkers w(2);
  CountingBackground b;
  b.spinUntilInterrupted = true;
  b.pending = 1;
  w.setBackground(&b);
  w.wakeForBackground();
  ASSERT_TRUE(eventually([&] { return b.inside.load(); }));
  std::vector<std::atomic<int>> count(8);
  auto job = [&](size_t i) { count[i].fetch_add(1); };
  w.run(count.size(), job);
  for (auto& c : count) EXPECT_EQ(c.load(), 1);
  ASSERT_TRUE(eventually([&] { return b.sawInterrupt.load(); }));
  // Held in the background for 50 ms: detaching waits until the worker has left it.
  b.spinUntilInterrupted = false;
  b.holdMs = 50;
  b.pending.fetch_add(1000);
  w.wakeForBackground();
  ASSERT_TRUE(eventually([&] { return b.inside.load(); }));
  w.setBackground(nullptr);
  EXPECT_FALSE(b.inside.load());
}

// The governor of the adaptive thread policy, on a clock the test advances: each epoch of
// `work` units costs what the mode it ran in costs per unit.
namespace {
struct GovernorRun {
  double now = 0;
  HostThreadGovernor::Params p{100, 2, 8, 0.03};
  HostThreadGovernor g{[this] { return now; }, p};
  GovernorRun() { g.resume(); }
  std::vector<bool> modes;  // the mode of each epoch run
  // Runs `epochs` epochs; `cost(engaged, epoch)` is the seconds per unit of work.
  template <class Cost>
  void run(int epochs, Cost cost) {
    for (int e = 0; e < epochs; ++e) {
      const bool engaged = g.engaged();
      modes.push_back(engaged);
      for (int k = 0; k < 10; ++k) {
        now += cost(engaged, int(modes.size()) - 1) * 10;
        g.add(10);
      }
    }
  }
};
}  // namespace

TEST(HostThreadGovernor, KeepsTheThreadsWhileTheyPayAndProbesLessAndLessOften) {
  GovernorRun r;
  EXPECT_FALSE(r.g.engagedShare());  // no epoch closed yet
  r.run(60, [](bool engaged, int) { return engaged ? 1.0 : 1.6; });
  // Engaged throughout but for one-epoch probes: the first after 2 epochs, each later one 4, 8,
  // 8, ... epochs after the epoch that follows a probe.
  std::vector<int> probes;
  for (int e = 0; e < int(r.modes.size()); ++e)
    if (!r.modes[e]) probes.push_back(e);
  EXPECT_EQ(probes, (std::vector<int>{2, 8, 18, 28, 38, 48, 58}));
  EXPECT_EQ(r.g.switches(), 0u);
  EXPECT_EQ(r.g.probes(), probes.size());
  EXPECT_EQ(r.g.epochs(), 60u);
  EXPECT_EQ(r.g.engagedEpochs(), 60u - probes.size());
  EXPECT_DOUBLE_EQ(*r.g.engagedShare(), double(60 - probes.size()) / 60.0);
}

TEST(HostThreadGovernor, LeavesTheThreadsOutWhenOneThreadIsCheaperAndComesBack) {
  GovernorRun r;
  // One thread is cheaper for the first 40 epochs (a slow second core), then dearer.
  r.run(80,
        [](bool engaged, int e) { return e < 40 ? (engaged ? 1.5 : 1.0) : (engaged ? 1.0 : 1.5); });
  // The first probe (epoch 2, alone) is cheaper than the epochs on both sides: from epoch 4 on
  // the threads are out, but for probes.
  EXPECT_TRUE(r.modes[0] && r.modes[1] && !r.modes[2] && r.modes[3]);
  for (int e = 4; e < 40; ++e) {
    if (r.modes[e]) {
      EXPECT_FALSE(r.modes[e - 1] || r.modes[e + 1]) << "epoch " << e;
    }
  }
  EXPECT_FALSE(r.modes[4]);
  // After the change the next probe of the threads wins, and they stay.
  int back = -1;
  for (int e = 40; e + 1 < 80 && back < 0; ++e)
    if (r.modes[e] && r.modes[e + 1]) back = e;
  ASSERT_GE(back, 40);
  EXPECT_LE(back, 40 + 8 + 3);  // within one longest wait and a probe
  for (int e = back; e + 1 < 80; ++e) {
    if (!r.modes[e]) {
      EXPECT_TRUE(r.modes[e - 1] && r.modes[e + 1]) << "epoch " << e;
    }
  }
  EXPECT_EQ(r.g.switches(), 2u);
}

TEST(HostThreadGovernor, APhaseGettingCheaperDoesNotPassForTheProbesDoing) {
  GovernorRun r;
  // The work gets 10 % cheaper epoch by epoch whatever the mode, the threads a little cheaper
  // still: each probe of one thread is cheaper than the epoch before it, not than the one after.
  r.run(40, [](bool engaged, int e) { return (engaged ? 1.0 : 1.01) * std::pow(0.9, e); });
  EXPECT_EQ(r.g.switches(), 0u);
  EXPECT_GT(r.g.probes(), 2u);
  // A margin: a probe within 3 % of its neighbours does not switch either.
  GovernorRun close;
  close.run(40, [](bool engaged, int) { return engaged ? 1.0 : 0.98; });
  EXPECT_EQ(close.g.switches(), 0u);
}

TEST(HostThreadGovernor, TimeBetweenLaunchesIsNotCounted) {
  GovernorRun r;
  const auto oneThreadCheaper = [](bool engaged, int) { return engaged ? 1.5 : 1.0; };
  r.run(2, oneThreadCheaper);
  ASSERT_FALSE(r.g.engaged());  // the probe of one thread begins
  // Launches shorter than an epoch, with the testbench's time between them: the probe epoch
  // spans three of them.
  for (int launch = 0; launch < 3; ++launch) {
    r.g.resume();
    r.now += 1.0 * 30;
    r.g.add(30);
    r.g.pause();
    r.now += 1000;
  }
  ASSERT_EQ(r.g.epochs(), 2u);
  r.g.resume();
  r.now += 1.0 * 10;
  EXPECT_TRUE(r.g.add(10));  // the probe's epoch closes: 100 units in 100 s
  r.run(1, oneThreadCheaper);
  EXPECT_EQ(r.g.switches(), 1u);  // counted, the gaps would have made the probe the dearest
  EXPECT_FALSE(r.g.engaged());
}

// The core clock domain hands on the energy model's final currents and steps the PDN before a
// cycle's commits (with host threads, while the SMs are evaluated), which the first commit
// would otherwise begin with. Every power and voltage figure is the same without it, on one and
// on two threads, for kernels whose SMs skip single cycles (bfs) and run back to back (sgemm).
namespace {
// A CSV with header whose cycle columns (start, end, worst_cycle, start_cycle, cycle) count from
// `start`.
std::string fromLaunchStart(const std::string& csv, uint64_t start) {
  std::vector<std::string> lines = split(csv, '\n');
  std::vector<bool> isCycle;
  for (size_t l = 0; l < lines.size(); ++l) {
    if (lines[l].empty()) continue;  // after the last line's newline
    const bool header = l == 0;
    std::vector<std::string> fields = split(lines[l], ',');
    if (header) {
      for (const std::string& f : fields)
        isCycle.push_back(f == "start" || f == "end" || f == "worst_cycle" || f == "start_cycle" ||
                          f == "cycle");
    } else {
      for (size_t i = 0; i < fields.size() && i < isCycle.size(); ++i)
        if (isCycle[i]) fields[i] = std::to_string(std::stoull(fields[i]) - start);
    }
    lines[l] = join(fields, ",");
  }
  return join(lines, "\n");
}
}  // namespace

TEST(TimingHostThreads, HandingOnBeforeTheCommitsChangesNoPowerOrVoltage) {
  struct Run {
    std::vector<nlohmann::json> power, voltage;
    std::vector<std::string> events, trace, window;
  };
  // A trace row per cycle: every cycle's voltages are compared (rows of several cycles align
  // to absolute cycles, which differ between Devices).
  PlatformConfig cfg = test::platform();
  cfg.pdn.monitor.trace_every = 1;
  auto once = [&](const std::string& kernel, unsigned threads, bool before, Run& r) {
    Device dev(cfg, ExecMode::Timing);
    dev.setHostThreads(threads, ThreadPolicy::Fixed);
    gpu::CoreClockDomain& domain = dev.timingEngine()->gpu().coreClockDomain();
    const auto made = domain.beforeCommits();  // the engine outlives the Device: put it back
    ASSERT_TRUE(made) << "the Gpu sets the hand-on up when there is an energy model";
    if (!before) domain.setBeforeCommits({});
    auto wl = catalog::find(kernel).make(catalog::Size::Tiny);
    wl->setup(dev);
    wl->run(dev);
    // Each Device continues the engine's time: cycles count from the launch's start.
    for (const LaunchRecord& l : dev.launches()) {
      const uint64_t start = l.timing->startCycle;
      r.power.push_back(power::toJson(*l.timing->power));
      nlohmann::json v = pdn::toJson(*l.timing->voltage);
      if (v.contains("worst")) v["worst"]["cycle"] = v["worst"]["cycle"].get<uint64_t>() - start;
      r.voltage.push_back(v);
      r.events.push_back(fromLaunchStart(pdn::eventsCsv(*l.timing->voltage), start));
      r.trace.push_back(fromLaunchStart(pdn::traceCsv(*l.timing->voltage), start));
      r.window.push_back(fromLaunchStart(pdn::worstWindowCsv(*l.timing->voltage), start));
    }
    domain.setBeforeCommits(made);
  };
  for (const std::string kernel : {"sgemm", "bfs"}) {
    Run ref;
    once(kernel, 1, false, ref);
    ASSERT_FALSE(ref.power.empty());
    for (unsigned threads : {1u, 2u}) {
      Run r;
      once(kernel, threads, true, r);
      EXPECT_EQ(r.power, ref.power) << kernel << ", " << threads << " threads";
      EXPECT_EQ(r.voltage, ref.voltage) << kernel << ", " << threads << " threads";
      EXPECT_EQ(r.events, ref.events) << kernel << ", " << threads << " threads";
      EXPECT_EQ(r.trace, ref.trace) << kernel << ", " << threads << " threads";
      EXPECT_EQ(r.window, ref.window) << kernel << ", " << threads << " threads";
    }
  }
}

// With host threads the PDN steps on the workers (the team's background work): the voltage
// report, the per-cycle trace, the events and what a VoltageSink gets equal one thread's, and the
// workers did step cycles. With a VCD file the PDN steps on the simulation thread.
namespace {
struct RecordingVoltageSink : pdn::VoltageSink {
  struct Launch {
    std::vector<pdn::DroopEvent> events;
    std::vector<uint64_t> starts;
    std::vector<uint32_t> cycles;
    std::vector<double> volts;
  };
  std::vector<Launch> launches;
  uint32_t numSms = 0;
  std::string throwAfterRows;  // non-empty: traceRow throws an InputError with it after 100 rows
  std::chrono::microseconds rowDelay{0};  // how long each of the first slowRows rows takes
  size_t slowRows = 0;
  size_t rows = 0;
  void beginLaunch(size_t) override { launches.emplace_back(); }
  void droopEvent(const pdn::DroopEvent& e) override { launches.back().events.push_back(e); }
  void traceRow(uint64_t start, uint32_t cycles, const double* v) override {
    if (!throwAfterRows.empty() && ++rows > 100) throw InputError(throwAfterRows);
    if (slowRows > 0) {
      --slowRows;
      std::this_thread::sleep_for(rowDelay);
    }
    launches.back().starts.push_back(start);
    launches.back().cycles.push_back(cycles);
    launches.back().volts.insert(launches.back().volts.end(), v, v + numSms);
  }
  void finishLaunch(pdn::VoltageReport&) override {}
};
}  // namespace

TEST(TimingHostThreads, ThePdnSteppedByTheWorkersGivesTheSameVoltages) {
  PlatformConfig cfg = test::platform();
  cfg.pdn.monitor.trace_every = 1;
  struct Run {
    std::vector<nlohmann::json> voltage;
    std::vector<std::string> events, trace;
    uint64_t byWorkers = 0, stepped = 0;
    bool steppedByWorkers = false;
  };
  auto once = [&](const std::string& kernel, unsigned threads, ThreadPolicy policy, bool sink,
                  std::chrono::microseconds rowDelay = {}) {
    Run r;
    Device dev(cfg, ExecMode::Timing);
    dev.setHostThreads(threads, policy);
    pdn::Pdn* p = dev.timingEngine()->gpu().pdn();
    EXPECT_NE(p, nullptr);
    if (p == nullptr) return r;
    r.steppedByWorkers = p->steppedByWorkers();
    const uint64_t before = p->cyclesSteppedByWorkers(), steppedBefore = p->cyclesStepped();
    RecordingVoltageSink s;
    s.numSms = cfg.gpu.num_sms;
    s.rowDelay = rowDelay;
    s.slowRows = rowDelay.count() > 0 ? 3000 : 0;
    if (sink) dev.setVoltageSink(&s);
    auto wl = catalog::find(kernel).make(catalog::Size::Tiny);
    wl->setup(dev);
    wl->run(dev);
    r.byWorkers = p->cyclesSteppedByWorkers() - before;
    r.stepped = p->cyclesStepped() - steppedBefore;
    for (size_t i = 0; i < dev.launches().size(); ++i) {
      const LaunchRecord& l = dev.launches()[i];
      const uint64_t start = l.timing->startCycle;
      pdn::VoltageReport v = *l.timing->voltage;
      if (sink) {  // the sink had the lists
        EXPECT_TRUE(v.events.empty() && v.traceStart.empty());
        v.events = s.launches.at(i).events;
        v.traceStart = s.launches.at(i).starts;
        v.traceCycles = s.launches.at(i).cycles;
        v.traceMinVolts = s.launches.at(i).volts;
      }
      nlohmann::json j = pdn::toJson(*l.timing->voltage);
      if (j.contains("worst")) j["worst"]["cycle"] = j["worst"]["cycle"].get<uint64_t>() - start;
      r.voltage.push_back(j);
      r.events.push_back(fromLaunchStart(pdn::eventsCsv(v), start));
      r.trace.push_back(fromLaunchStart(pdn::traceCsv(v), start));
    }
    return r;
  };
  for (const std::string kernel : {"sgemm", "bfs"}) {
    const Run ref = once(kernel, 1, ThreadPolicy::Fixed, false);
    ASSERT_FALSE(ref.trace.empty());
    EXPECT_FALSE(ref.steppedByWorkers);
    EXPECT_EQ(ref.byWorkers, 0u);
    // How many cycles the workers step depends on how the host schedules its threads (on a
    // loaded machine a worker may not run before the simulation thread needs the cycles): the
    // voltages must not. The workers must step some over the four runs.
    uint64_t byWorkers = 0;
    for (ThreadPolicy policy : {ThreadPolicy::Fixed, ThreadPolicy::Adaptive}) {
      for (bool sink : {false, true}) {
        const Run r = once(kernel, 2, policy, sink);
        const std::string what =
            kernel + ", policy " + std::to_string(int(policy)) + ", sink " + std::to_string(sink);
        EXPECT_TRUE(r.steppedByWorkers) << what;
        byWorkers += r.byWorkers;
        EXPECT_EQ(r.voltage, ref.voltage) << what;
        EXPECT_EQ(r.events, ref.events) << what;
        EXPECT_EQ(r.trace, ref.trace) << what;
      }
    }
    EXPECT_GT(byWorkers, 0u) << kernel;
    // A sink slow at first (50 microseconds for each of the first 3,000 rows, a row per cycle),
    // so that the ring of at most 1,024 cycles fills: the simulation thread steps the cycles the
    // workers have not, from wherever it stands in a block of gathered cycles, and the workers
    // go on after it (if the host gives them time). Every voltage is still the same.
    const Run slow = once(kernel, 2, ThreadPolicy::Fixed, true, std::chrono::microseconds(50));
    EXPECT_LT(slow.byWorkers, slow.stepped) << kernel;
    EXPECT_EQ(slow.voltage, ref.voltage) << kernel;
    EXPECT_EQ(slow.events, ref.events) << kernel;
    EXPECT_EQ(slow.trace, ref.trace) << kernel;
  }
  // SystemC samples a VCD file's values on the simulation thread.
  PlatformConfig vcd = test::platform();
  vcd.pdn.monitor.vcd_file = testing::TempDir() + "pdn_on_workers";
  Device dev(vcd, ExecMode::Timing);
  dev.setHostThreads(2, ThreadPolicy::Fixed);
  ASSERT_NE(dev.timingEngine()->gpu().pdn(), nullptr);
  EXPECT_FALSE(dev.timingEngine()->gpu().pdn()->steppedByWorkers());
}

// A VoltageSink that fails while a worker steps the PDN fails the run on the simulation thread
// with its message, as with one thread.
TEST(TimingHostThreads, AVoltageSinkErrorOnAWorkerFailsTheRun) {
  PlatformConfig cfg = test::platform();
  cfg.pdn.monitor.trace_every = 1;
  for (unsigned threads : {1u, 2u}) {
    Device dev(cfg, ExecMode::Timing);
    dev.setHostThreads(threads, ThreadPolicy::Fixed);
    RecordingVoltageSink s;
    s.numSms = cfg.gpu.num_sms;
    s.throwAfterRows = "voltage.csv: no space left on the device";
    dev.setVoltageSink(&s);
    auto wl = catalog::find("sgemm").make(catalog::Size::Tiny);
    wl->setup(dev);
    try {
      wl->run(dev);
      ADD_FAILURE() << threads << " threads: the run did not fail";
    } catch (const std::exception& e) {  // SystemC reports what its processes throw
      EXPECT_NE(std::string(e.what()).find("no space left"), std::string::npos) << e.what();
    }
  }
}

// Every thread of 60 CTAs adds 1 to one counter and keeps the old value: on 15 SMs many atomics
// meet in one cycle. Each SM's atomics of a cycle take effect after the cycle, SM by SM, so the
// old values (and everything else) do not depend on the host threads.
TEST(TimingHostThreads, AtomicsOfManySmsGiveTheSameRunOnEveryThreadCount) {
  const std::string ptx = test::module(R"(
.visible .entry k(.param .u64 counter, .param .u64 out)
{
  .reg .b32 %r<8>;
  .reg .b64 %rd<8>;
  mov.u32 %r0, %tid.x;
  mov.u32 %r1, %ctaid.x;
  mov.u32 %r2, %ntid.x;
  mad.lo.u32 %r3, %r1, %r2, %r0;
  ld.param.u64 %rd0, [counter];
  atom.global.add.u32 %r4, [%rd0], 1;
  ld.param.u64 %rd1, [out];
  mul.wide.u32 %rd2, %r3, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r4;
  ret;
}
)");
  const uint32_t ctas = 60, threads = 128, n = ctas * threads;
  struct Run {
    std::vector<uint32_t> olds;
    uint32_t counter = 0;
    uint64_t cycles = 0;
    std::vector<sm::SmCounters> sms;
    uint64_t parallelCycles = 0;
  };
  auto once = [&](unsigned hostThreads) {
    Device dev(test::platform(), ExecMode::Timing);
    dev.setHostThreads(hostThreads, ThreadPolicy::Fixed);
    Module& m = dev.loadModule(ptx, "atomics.ptx");
    DevPtr counter = dev.malloc(4), out = dev.malloc(n * 4);
    dev.memset(counter, 0, 4);
    dev.launch(m.kernel("k"), {ctas}, {threads}, 0, KernelArgs().ptr(counter).ptr(out));
    Run r;
    r.olds = dev.download<uint32_t>(out, n);
    r.counter = dev.download<uint32_t>(counter, 1)[0];
    r.cycles = dev.launches().back().timing->cycles;
    for (const auto& s : dev.launches().back().timing->sms) r.sms.push_back(s.counters);
    r.parallelCycles = dev.timingEngine()->parallelCycles();
    return r;
  };
  const Run one = once(1);
  EXPECT_EQ(one.counter, n);  // every atomic counted
  std::vector<uint32_t> sorted = one.olds;
  std::sort(sorted.begin(), sorted.end());
  for (uint32_t i = 0; i < n; ++i) ASSERT_EQ(sorted[i], i);  // each old value once
  EXPECT_EQ(one.parallelCycles, 0u);
  for (unsigned t : {2u, 3u}) {
    const Run r = once(t);
    EXPECT_GT(r.parallelCycles, 0u) << t << " threads evaluated no cycle in parallel";
    EXPECT_EQ(r.counter, one.counter);
    EXPECT_EQ(r.olds, one.olds) << t << " threads";
    EXPECT_EQ(r.cycles, one.cycles) << t << " threads";
    ASSERT_EQ(r.sms.size(), one.sms.size());
    for (size_t i = 0; i < r.sms.size(); ++i) {
      EXPECT_EQ(r.sms[i].issued, one.sms[i].issued);
      EXPECT_EQ(r.sms[i].memRequests, one.sms[i].memRequests);
      EXPECT_EQ(r.sms[i].warpCycles, one.sms[i].warpCycles);
    }
  }
}

// On a mesh the routers of a busy interconnect cycle are evaluated on the host threads too; what
// they hand on is committed router by router, so every launch takes the same cycles and the
// network's statistics (packets, latencies, every link's flits) are the same on any thread count.
TEST(TimingHostThreads, MeshRoutersOnHostThreadsGiveTheSameRun) {
  const PlatformConfig cfg = loadPlatform("stream-8x8", {});
  struct Run {
    std::vector<uint64_t> cycles;
    std::vector<nlohmann::json> memory;
    uint64_t routerParallelCycles = 0;
  };
  auto once = [&](unsigned hostThreads) {
    Device dev(cfg, ExecMode::Timing);
    dev.setHostThreads(hostThreads, ThreadPolicy::Fixed);
    auto wl = catalog::find("sgemm").make(catalog::Size::Tiny);
    wl->setup(dev);
    wl->run(dev);
    EXPECT_TRUE(wl->check(dev).pass) << hostThreads << " threads";
    Run r;
    for (const LaunchRecord& l : dev.launches()) {
      r.cycles.push_back(l.timing->cycles);
      r.memory.push_back(l.timing->memory);
    }
    r.routerParallelCycles = dev.timingEngine()->routerParallelCycles();
    return r;
  };
  const Run one = once(1);
  EXPECT_EQ(one.routerParallelCycles, 0u);
  for (unsigned t : {2u, 3u}) {
    const Run r = once(t);
    EXPECT_GT(r.routerParallelCycles, 0u) << t << " threads evaluated no routers in parallel";
    EXPECT_EQ(r.cycles, one.cycles) << t << " threads";
    ASSERT_EQ(r.memory.size(), one.memory.size());
    for (size_t i = 0; i < r.memory.size(); ++i)
      EXPECT_EQ(r.memory[i], one.memory[i]) << t << " threads, launch " << i;
  }
}

// Whole catalog kernels: every launch's statistics (its cycles, SM counters, memory system,
// energy, voltage and CTA timeline; all but the host seconds) are the same with two and three
// host threads in every cycle they can take part in as with one, on the crossbar GTX480 and on a
// mesh large enough for its routers to run on the threads too, and on the Ampere platform's
// processing blocks. Kernels with global atomics, barriers, shuffles, irregular memory traffic
// and several launches. (./build.sh tsan runs these under ThreadSanitizer.)
std::vector<nlohmann::json> catalogRun(const std::string& platform, const std::string& kernel,
                                       catalog::Size size, unsigned threads, ThreadPolicy policy) {
  Device dev(loadPlatform(platform), ExecMode::Timing);
  dev.setHostThreads(threads, policy);
  auto wl = catalog::find(kernel).make(size);
  wl->setup(dev);
  wl->run(dev);
  EXPECT_TRUE(wl->check(dev).pass) << kernel << " on " << platform << ", " << threads << " threads";
  std::vector<nlohmann::json> launches;
  for (const LaunchRecord& l : dev.launches()) {
    nlohmann::json j = toJson(l);
    j.erase("host_seconds");
    // The engine outlives the Device: its cycles count on from the last Device's; the launches'
    // own cycles are relative to their start.
    nlohmann::json& t = j["timing"];
    const uint64_t start = t["start_cycle"].get<uint64_t>();
    t["end_cycle"] = t["end_cycle"].get<uint64_t>() - start;
    t.erase("start_cycle");
    if (t.contains("voltage") && t["voltage"].contains("worst"))
      t["voltage"]["worst"]["cycle"] = t["voltage"]["worst"]["cycle"].get<uint64_t>() - start;
    launches.push_back(std::move(j));
  }
  return launches;
}

class CatalogOnHostThreads : public ::testing::TestWithParam<std::tuple<std::string, std::string>> {
};

TEST_P(CatalogOnHostThreads, EveryLaunchIsTheSameAsOnOneThread) {
  const auto& [platform, kernel] = GetParam();
  const auto one = catalogRun(platform, kernel, catalog::Size::Tiny, 1, ThreadPolicy::Fixed);
  for (unsigned t : {2u, 3u}) {
    const auto many = catalogRun(platform, kernel, catalog::Size::Tiny, t, ThreadPolicy::Fixed);
    ASSERT_EQ(many.size(), one.size());
    for (size_t i = 0; i < one.size(); ++i)
      EXPECT_TRUE(many[i] == one[i])
          << t << " threads, launch " << i
          << " differs: " << nlohmann::json::diff(one[i], many[i]).dump().substr(0, 2000);
  }
}

std::string platformKernelName(
    const ::testing::TestParamInfo<std::tuple<std::string, std::string>>& info) {
  std::string s = std::get<0>(info.param) + "_" + std::get<1>(info.param);
  std::replace(s.begin(), s.end(), '-', '_');
  return s;
}

INSTANTIATE_TEST_SUITE_P(TimingHostThreads, CatalogOnHostThreads,
                         ::testing::Combine(::testing::Values("gtx480", "stream-8x8"),
                                            ::testing::Values("vecadd", "sgemm", "bfs", "histogram",
                                                              "reduce_shfl", "kmeans", "scan")),
                         platformKernelName);
INSTANTIATE_TEST_SUITE_P(TimingHostThreadsBlocks, CatalogOnHostThreads,
                         ::testing::Combine(::testing::Values("rtx3070"),
                                            ::testing::Values("sgemm", "bfs", "histogram")),
                         platformKernelName);

// The adaptive policy leaves the threads out and takes them back as it measures (the workers
// sleep and wake between its epochs): a kernel long enough for several epochs, the same run.
// (cli.threads_identity_adaptive compares three kernels' result files.)
TEST(TimingHostThreads, TheAdaptivePolicyGivesTheSameRuns) {
  for (const char* kernel : {"sgemm"}) {
    const auto one = catalogRun("stream-8x8", kernel, catalog::Size::Small, 1, ThreadPolicy::Fixed);
    const auto two =
        catalogRun("stream-8x8", kernel, catalog::Size::Small, 2, ThreadPolicy::Adaptive);
    ASSERT_EQ(two.size(), one.size()) << kernel;
    for (size_t i = 0; i < one.size(); ++i)
      EXPECT_TRUE(two[i] == one[i]) << kernel << ", launch " << i << " differs";
  }
}

// A launch that fails while the workers step its PDN: they stop before the error is handled, and
// the error is the deadlock one thread reports.
TEST(TimingHostThreads, ADeadlockedLaunchStopsTheWorkersBeforeItsError) {
  const std::vector<uint8_t> text = readTestData("deadlock.ptx");
  Device dev(loadPlatform("gtx480"), ExecMode::Timing);
  dev.setHostThreads(2, ThreadPolicy::Fixed);
  Module& m = dev.loadModule(std::string(text.begin(), text.end()), "deadlock.ptx");
  EXPECT_THROW(dev.launch(m.kernel("deadlock"), {3}, {64}, 0, KernelArgs()), KernelFault);
}

}  // namespace

// %globaltimer counts nanoseconds of simulated time, %clock64 core cycles: read between two
// %clock64 reads, it lies between their cycles' times at the platform's core clock.
TEST(TimingClock, GlobalTimerIsNanosecondsOfSimulatedTime) {
  const std::string ptx = test::module(R"(
.visible .entry k(.param .u64 out)
{
  .reg .b64 %rd<6>;
  ld.param.u64 %rd1, [out];
  mov.u64 %rd2, %clock64;
  mov.u64 %rd3, %globaltimer;
  mov.u64 %rd4, %clock64;
  st.global.u64 [%rd1], %rd2;
  st.global.u64 [%rd1+8], %rd3;
  st.global.u64 [%rd1+16], %rd4;
  ret;
}
)");
  for (const char* platform : {"gtx480", "rtx3070"}) {
    Device dev(loadPlatform(platform), ExecMode::Timing);
    const double mhz = dev.config().gpu.clocks.core_mhz;
    // A first launch, so that the second starts late in the run.
    const DevPtr out = dev.malloc(24);
    Module& m = dev.loadModule(ptx, "clock.ptx");
    for (int i = 0; i < 2; ++i) dev.launch(m.kernel("k"), {1}, {32}, 0, KernelArgs().ptr(out));
    const auto v = dev.download<uint64_t>(out, 3);
    ASSERT_LT(v[0], v[2]) << platform;
    EXPECT_GT(v[0], dev.launches()[0].timing->cycles) << platform;  // the run's cycle
    EXPECT_GE(v[1], uint64_t(double(v[0]) * 1000.0 / mhz)) << platform;
    EXPECT_LE(v[1], uint64_t(double(v[2]) * 1000.0 / mhz)) << platform;
    EXPECT_NE(v[1], v[0]) << platform;
  }
}

// nanosleep keeps the warp from issuing for the nanoseconds its lanes ask for (the longest; the
// ISA allows any sleep up to twice that) at the platform's core clock; the functional engine,
// which has no time, does not sleep.
TEST(TimingClock, NanosleepSleepsTheLongestTimeItsLanesAskFor) {
  const std::string ptx = test::module(R"(
.visible .entry k(.param .u64 out)
{
  .reg .b32 %r<4>;
  .reg .b64 %rd<6>;
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, %laneid;
  mul.lo.u32 %r2, %r1, 100;
  add.u32 %r2, %r2, 900;
  mov.u64 %rd2, %clock64;
  nanosleep.u32 %r2;
  mov.u64 %rd3, %clock64;
  sub.s64 %rd4, %rd3, %rd2;
  st.global.u64 [%rd1], %rd4;
  ret;
}
)");
  for (const char* platform : {"gtx480", "rtx3070"}) {
    for (ExecMode mode : {ExecMode::Functional, ExecMode::Timing}) {
      Device dev(loadPlatform(platform), mode);
      const double mhz = dev.config().gpu.clocks.core_mhz;
      const DevPtr out = dev.malloc(8);
      Module& m = dev.loadModule(ptx, "sleep.ptx");
      dev.launch(m.kernel("k"), {1}, {32}, 0, KernelArgs().ptr(out));
      const uint64_t elapsed = dev.download<uint64_t>(out, 1)[0];
      // Lane 31 asks for 900 + 3,100 ns.
      const auto sleep = static_cast<uint64_t>(std::ceil(4000.0 * mhz / 1000.0));
      if (mode == ExecMode::Functional) {
        EXPECT_LT(elapsed, 10u) << platform;
      } else {
        EXPECT_GE(elapsed, sleep) << platform;
        EXPECT_LE(elapsed, sleep + 40) << platform;  // the second read's own issue
      }
    }
  }
}
