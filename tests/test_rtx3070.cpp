// The Ampere mechanisms on the rtx3070 platform, with expectations derived from its configuration:
// the unified L1 / shared-memory array and its per-launch carve-out, the shared memory compute
// capability 8.x reserves per block, the platform's processing blocks and its tensor cores' rates
// (the microbenchmarks of each mechanism on its own are in test_timing.cpp).
#include <algorithm>

#include <gtest/gtest.h>

#include "catalog.hpp"
#include "common/error.hpp"
#include "gpu/device.hpp"
#include "power/energy_model.hpp"
#include "power/voltage_scaling.hpp"
#include "sm/sm.hpp"
#include "support/ptx_harness.hpp"

using namespace gpusc;

namespace {

// Each of `block` threads reads the words [tid, tid + block, ...) below `words` of `buf` twice
// (a barrier between the passes), and stores its sum to out[tid]. The kernel declares dynamic
// shared memory, which the launch sizes.
const std::string kTwoPasses = test::module(R"(
.extern .shared .align 4 .b8 dyn[];
.visible .entry k(.param .u64 buf, .param .u32 words, .param .u64 out)
{
  .reg .b32 %r<8>;
  .reg .b64 %rd<8>;
  .reg .pred %p<2>;
  ld.param.u64 %rd1, [buf];
  ld.param.u32 %r1, [words];
  mov.u32 %r2, %tid.x;
  mov.u32 %r7, %ntid.x;
  mov.u32 %r5, 0;
  mov.u32 %r6, 0;
PASS:
  mov.u32 %r3, %r2;
LOOP:
  mul.wide.u32 %rd2, %r3, 4;
  add.s64 %rd3, %rd1, %rd2;
  ld.global.u32 %r4, [%rd3];
  add.u32 %r6, %r6, %r4;
  add.u32 %r3, %r3, %r7;
  setp.lt.u32 %p1, %r3, %r1;
  @%p1 bra LOOP;
  bar.sync 0;
  add.u32 %r5, %r5, 1;
  setp.lt.u32 %p1, %r5, 2;
  @%p1 bra PASS;
  ld.param.u64 %rd4, [out];
  mul.wide.u32 %rd5, %r2, 4;
  add.s64 %rd4, %rd4, %rd5;
  st.global.u32 [%rd4], %r6;
  ret;
}
)");

sm::CtaFootprint footprintOf(const SmConfig& s, uint32_t threads, uint32_t shared) {
  sm::CtaFootprint f;
  f.threads = threads;
  f.warps = (threads + s.warp_size - 1) / s.warp_size;
  f.registersPerWarp = s.register_allocation_granularity;
  f.registers = f.warps * f.registersPerWarp;
  f.sharedBytes = shared + s.shared_reserved_per_cta;
  return f;
}

}  // namespace

TEST(Rtx3070, TheCarveoutIsTheSmallestThatKeepsTheOccupancy) {
  const SmConfig s = loadPlatform("rtx3070").sm;
  ASSERT_TRUE(s.unified_l1);
  // For each block shape: the CTAs an SM holds with the largest carve-out, and the smallest
  // listed carve-out holding as many, each block with its reserved kilobyte.
  for (const uint32_t threads : {64u, 256u, 1024u})
    for (const uint32_t shared : {0u, 4096u, 10240u, 20480u, 49152u}) {
      const sm::CtaFootprint f = footprintOf(s, threads, shared);
      const uint32_t most = sm::ctasPerSm(s, f);
      uint32_t want = s.shared_memory_bytes;
      for (uint32_t kb : s.shared_carveouts_kb)
        if (kb * 1024 >= most * f.sharedBytes) {
          want = kb * 1024;
          break;
        }
      EXPECT_EQ(sm::sharedCarveout(s, f), want) << threads << " threads, " << shared << " B";
      EXPECT_EQ(sm::ctasPerSm(s, f, sm::sharedCarveout(s, f)), most);
    }
  // Without a unified array the SM's shared memory is what every launch gets.
  const SmConfig g = loadPlatform("gtx480").sm;
  EXPECT_EQ(sm::sharedCarveout(g, footprintOf(g, 256, 0)), g.shared_memory_bytes);
}

TEST(Rtx3070, TheL1HoldsWhatTheCarveoutLeaves) {
  // One block reads 96 KB twice. With no shared memory of its own the launch gets a small
  // carve-out (its blocks' reserved kilobytes) and the L1 keeps the whole working set: the second
  // pass hits. With 48 KB of dynamic shared memory only the largest carve-out holds two blocks,
  // the L1 keeps 28 KB, and LRU loses every line of a sequential 96 KB before its reuse.
  const PlatformConfig cfg = loadPlatform("rtx3070");
  const uint32_t threads = 256, bytes = 96 * 1024, words = bytes / 4;
  const uint64_t lineAccesses = bytes / cfg.sm.l1d.line_bytes;
  struct Case {
    uint32_t dynShared;
    bool secondPassHits;
  };
  for (const Case c : {Case{0, true}, Case{48 * 1024, false}}) {
    Device dev(cfg, ExecMode::Timing);
    Module& m = dev.loadModule(kTwoPasses, "two_passes.ptx");
    DevPtr buf = dev.malloc(bytes), out = dev.malloc(threads * 4);
    dev.launch(m.kernel("k"), {1}, {threads}, c.dynShared,
               KernelArgs().ptr(buf).u32(words).ptr(out));
    const auto& t = *dev.launches().back().timing;
    const sm::CtaFootprint f = footprintOf(cfg.sm, threads, c.dynShared);
    const uint32_t carve = sm::sharedCarveout(cfg.sm, f);
    const auto& l1 = t.memory["l1d"]["per_sm"][0];
    EXPECT_EQ(l1["shared_carveout_bytes"].get<uint64_t>(), carve);
    EXPECT_EQ(l1["capacity_bytes"].get<uint64_t>(), cfg.sm.l1d.sizeBytes() - carve);
    // A warp's 32 words are one 128-byte line: each pass looks up every line once per warp.
    const auto& loads = l1["by_kind"]["load"];
    EXPECT_EQ(loads["accesses"].get<uint64_t>(), 2 * lineAccesses) << c.dynShared;
    if (c.secondPassHits)
      EXPECT_EQ(loads["hits"].get<uint64_t>(), lineAccesses) << c.dynShared;
    else
      EXPECT_EQ(loads["hits"].get<uint64_t>(), 0u) << c.dynShared;
  }
}

// The driver invalidates the L1s' lines between grids (sm.invalidate_l1d_at_launch, set by
// rtx3070 and gtx480): a kernel that reads 8 KB twice, launched twice, finds the L1 empty at each
// launch, so each launch hits only in its second pass. With the lines kept, the second launch hits
// in both passes.
TEST(Rtx3070, EachLaunchStartsWithAnEmptyL1) {
  for (const std::string platform : {"rtx3070", "gtx480"})
    for (const bool invalidate : {true, false}) {
      const PlatformConfig cfg = loadPlatform(
          platform,
          {std::string("sm.invalidate_l1d_at_launch=") + (invalidate ? "true" : "false")});
      const uint32_t threads = 256, bytes = 8 * 1024, words = bytes / 4;
      const uint64_t lineAccesses = bytes / cfg.sm.l1d.line_bytes;
      Device dev(cfg, ExecMode::Timing);
      Module& m = dev.loadModule(kTwoPasses, "two_passes.ptx");
      DevPtr buf = dev.malloc(bytes), out = dev.malloc(threads * 4);
      for (int launch = 0; launch < 2; ++launch) {
        dev.launch(m.kernel("k"), {1}, {threads}, 0, KernelArgs().ptr(buf).u32(words).ptr(out));
        const auto& loads =
            dev.launches().back().timing->memory["l1d"]["per_sm"][0]["by_kind"]["load"];
        const std::string what = platform + (invalidate ? ", invalidated" : ", kept") +
                                 ", launch " + std::to_string(launch);
        EXPECT_EQ(loads["accesses"].get<uint64_t>(), 2 * lineAccesses) << what;
        EXPECT_EQ(loads["hits"].get<uint64_t>(),
                  launch == 1 && !invalidate ? 2 * lineAccesses : lineAccesses)
            << what;
      }
    }
  EXPECT_TRUE(loadPlatform("rtx3070").sm.invalidate_l1d_at_launch);
  EXPECT_TRUE(loadPlatform("gtx480").sm.invalidate_l1d_at_launch);
}

// With the fixed-latency memory there is no L1 to carve out of, but the carve-out still bounds
// the launch's shared memory: blocks of 48 KB of dynamic shared memory fit two to an SM (the
// largest carve-out, 100 KB, less a reserved kilobyte each), and the results stay right.
TEST(Rtx3070, TheFixedLatencyMemoryKeepsTheSharedMemoryLimit) {
  const PlatformConfig cfg = loadPlatform("rtx3070", {"memory.model=fixed-latency"});
  const uint32_t threads = 64, words = 4096, ctas = 3 * cfg.gpu.num_sms;
  Device dev(cfg, ExecMode::Timing);
  Module& m = dev.loadModule(kTwoPasses, "two_passes.ptx");
  std::vector<uint32_t> in(words);
  for (uint32_t i = 0; i < words; ++i) in[i] = i;
  DevPtr buf = dev.malloc(words * 4), out = dev.malloc(threads * 4);
  dev.copyToDevice(buf, in.data(), words * 4);
  dev.launch(m.kernel("k"), {ctas}, {threads}, 48 * 1024,
             KernelArgs().ptr(buf).u32(words).ptr(out));
  const auto& t = *dev.launches().back().timing;
  const uint32_t perSm = cfg.sm.shared_memory_bytes / (48 * 1024 + cfg.sm.shared_reserved_per_cta);
  ASSERT_EQ(perSm, 2u);
  for (const auto& s : t.sms) EXPECT_EQ(s.peakCtas, perSm);
  // Thread i sums i, i + 64, ... twice.
  std::vector<uint32_t> got(threads);
  dev.copyToHost(got.data(), out, threads * 4);
  for (uint32_t i = 0; i < threads; ++i) {
    uint32_t want = 0;
    for (uint32_t j = i; j < words; j += threads) want += j;
    EXPECT_EQ(got[i], 2 * want) << i;
  }
}

TEST(Rtx3070, ABlockMayUseTheLargestCarveoutLessTheReservedKilobyte) {
  const PlatformConfig cfg = loadPlatform("rtx3070");
  Device dev(cfg, ExecMode::Functional);
  Module& m = dev.loadModule(kTwoPasses, "two_passes.ptx");
  DevPtr buf = dev.malloc(4096), out = dev.malloc(32 * 4);
  const uint32_t most = cfg.sm.shared_memory_bytes - cfg.sm.shared_reserved_per_cta;
  dev.launch(m.kernel("k"), {1}, {32}, most, KernelArgs().ptr(buf).u32(1024).ptr(out));
  try {
    dev.launch(m.kernel("k"), {1}, {32}, most + 1, KernelArgs().ptr(buf).u32(1024).ptr(out));
    ADD_FAILURE() << "a block with " << most + 1 << " bytes of shared memory was launched";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("sm.shared_reserved_per_cta"), std::string::npos)
        << e.what();
  }
}

// A kernel that reads where its block's reserved shared memory is gets the platform's reserved
// kilobyte after its own shared memory, 16-byte aligned: the special registers say where, and
// its bytes are the block's own (written by one warp, read by another after a barrier). On a
// platform that reserves none (gtx480) such a launch is refused, naming the key.
TEST(Rtx3070, TheReservedSharedMemoryFollowsTheKernelsOwn) {
  const std::string ptx = test::module(R"(
.visible .entry k(.param .u64 out)
{
  .shared .align 4 .b8 own[20];
  .reg .b32 %r<12>;
  .reg .b64 %rd<4>;
  .reg .pred %p<2>;
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, %reserved_smem_offset_begin;
  mov.u32 %r2, %reserved_smem_offset_end;
  mov.u32 %r3, %reserved_smem_offset_cap;
  mov.u32 %r4, %reserved_smem_offset_1;
  mov.u32 %r5, %aggr_smem_size;
  mov.u32 %r6, %tid.x;
  setp.ne.u32 %p1, %r6, 0;
  @%p1 bra WAIT;
  add.u32 %r7, %r2, -4;
  st.shared.u32 [%r7], 1234;
  st.shared.u32 [%r4], 5678;
WAIT:
  bar.sync 0;
  setp.ne.u32 %p1, %r6, 32;
  @%p1 bra DONE;
  add.u32 %r7, %r2, -4;
  ld.shared.u32 %r8, [%r7];
  ld.shared.u32 %r9, [%r4];
  st.global.u32 [%rd1], %r1;
  st.global.u32 [%rd1+4], %r2;
  st.global.u32 [%rd1+8], %r3;
  st.global.u32 [%rd1+12], %r5;
  st.global.u32 [%rd1+16], %r8;
  st.global.u32 [%rd1+20], %r9;
DONE:
  ret;
}
)");
  const PlatformConfig cfg = loadPlatform("rtx3070");
  const uint32_t reserved = cfg.sm.shared_reserved_per_cta;
  ASSERT_GT(reserved, 0u);
  for (ExecMode mode : {ExecMode::Functional, ExecMode::Timing}) {
    Device dev(cfg, mode);
    Module& m = dev.loadModule(ptx, "reserved.ptx");
    DevPtr out = dev.malloc(6 * 4);
    dev.launch(m.kernel("k"), {1}, {64}, 0, KernelArgs().ptr(out));
    const std::vector<uint32_t> v = dev.download<uint32_t>(out, 6);
    EXPECT_EQ(v[0], 32u);  // 20 bytes of the kernel's own, rounded up to 16
    EXPECT_EQ(v[1], 32u + reserved);
    EXPECT_EQ(v[2], reserved);
    EXPECT_EQ(v[3], 20u + reserved);
    EXPECT_EQ(v[4], 1234u);
    EXPECT_EQ(v[5], 5678u);
  }
  Device gtx(loadPlatform("gtx480"), ExecMode::Functional);
  Module& m = gtx.loadModule(ptx, "reserved.ptx");
  DevPtr out = gtx.malloc(6 * 4);
  try {
    gtx.launch(m.kernel("k"), {1}, {64}, 0, KernelArgs().ptr(out));
    ADD_FAILURE() << "gtx480 launched a kernel that reads its reserved shared memory";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("sm.shared_reserved_per_cta is 0"), std::string::npos)
        << e.what();
  }
}

// A warp's registers come from its processing block's quarter of the register file: at 48
// registers per thread a block's 16 K hold 10 warps, so an SM holds 40 warps (not the 42 that
// 64 K would), 13 blocks of 3 warps. A 1024-thread block of 64 registers fills every quarter; at
// 72 (2,304 per warp, 7 warps per quarter) it cannot run.
TEST(Rtx3070, EachProcessingBlockHoldsTheWarpsWhoseRegistersFitItsQuarter) {
  const PlatformConfig cfg = loadPlatform("rtx3070");
  const SmConfig& s = cfg.sm;
  ASSERT_EQ(s.register_partitions, s.sub_cores);
  const auto withRegisters = [](uint32_t regs) {
    return "// ptxas -arch=sm_86: k uses " + std::to_string(regs) + " registers\n" + kTwoPasses;
  };
  const uint32_t perWarp = 48 * s.warp_size, quarter = s.registers / s.register_partitions;
  const uint32_t warps = s.register_partitions * (quarter / perWarp);
  ASSERT_EQ(warps, 40u);
  ASSERT_GT(s.registers / perWarp / 3, warps / 3);  // one pool would hold one block more
  Device dev(cfg, ExecMode::Timing);
  Module& m = dev.loadModule(withRegisters(48), "k48.ptx");
  EXPECT_EQ(dev.ctasPerSm(m.kernel("k"), {96}, 0), warps / 3);
  std::vector<uint32_t> in(4096, 1);
  DevPtr buf = dev.malloc(in.size() * 4), out = dev.malloc(96 * 4);
  dev.copyToDevice(buf, in.data(), in.size() * 4);
  dev.launch(m.kernel("k"), {2 * warps / 3 * cfg.gpu.num_sms}, {96}, 0,
             KernelArgs().ptr(buf).u32(96).ptr(out));
  for (const auto& sm : dev.launches().back().timing->sms)
    EXPECT_EQ(sm.peakCtas, warps / 3) << "SM " << sm.id;
  std::vector<uint32_t> got(96);
  dev.copyToHost(got.data(), out, 96 * 4);
  for (uint32_t i = 0; i < 96; ++i) EXPECT_EQ(got[i], 2u) << i;

  Device fdev(cfg, ExecMode::Functional);
  DevPtr fbuf = fdev.malloc(4096), fout = fdev.malloc(1024 * 4);
  Module& m64 = fdev.loadModule(withRegisters(64), "k64.ptx");
  fdev.launch(m64.kernel("k"), {1}, {1024}, 0, KernelArgs().ptr(fbuf).u32(1024).ptr(fout));
  Module& m72 = fdev.loadModule(withRegisters(72), "k72.ptx");
  try {
    fdev.launch(m72.kernel("k"), {1}, {1024}, 0, KernelArgs().ptr(fbuf).u32(1024).ptr(fout));
    ADD_FAILURE() << "a block of 1024 threads with 72 registers each was launched";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("registers"), std::string::npos) << e.what();
  }
}

// Each refusal names the key that was set: the L1's geometry sets the size of its ways and of
// the whole array, which the carve-outs must fit.
TEST(Rtx3070, UnifiedL1ConfigurationsThatCannotWorkAreRejected) {
  const struct {
    const char* set;
    const char* key;
  } cases[] = {
      {"sm.shared_carveouts_kb=[0, 8, 6, 100]", "sm.shared_carveouts_kb"},  // not ascending
      {"sm.shared_carveouts_kb=[0, 2, 100]", "sm.shared_carveouts_kb"},     // not whole 4 KB ways
      {"sm.shared_carveouts_kb=[0, 8, 64]", "sm.shared_carveouts_kb"},  // largest: not all of it
      {"sm.l1d.enabled=false", "sm.l1d.enabled"},                       // no array to carve out of
      // 64-byte lines halve the array to 64 KB: the 100 KB carve-out no longer fits.
      {"sm.l1d.line_bytes=64", "sm.l1d.line_bytes"},
      // 4 sets of 128-byte lines make 512-byte ways: 16 KB is whole ways but the whole array.
      {"sm.l1d.sets=4", "sm.l1d.sets"},
      // 24 ways of 4 KB: a 96 KB array, smaller than the 100 KB carve-out.
      {"sm.l1d.ways=24", "sm.l1d.ways"},
  };
  for (const auto& c : cases) {
    try {
      loadPlatform("rtx3070", {c.set});
      ADD_FAILURE() << c.set << " was accepted";
    } catch (const InputError& e) {
      // "--set KEY=VALUE: KEYS: what is wrong": the keys the rule names, after the --set.
      const std::string m = e.what(), set = std::string("--set ") + c.set + ": ";
      const size_t at = m.find(set), from = at == std::string::npos ? 0 : at + set.size();
      const std::string keys = m.substr(from, m.find(": ", from) - from);
      EXPECT_NE(keys.find(c.key), std::string::npos) << c.set << ": " << m;
    }
  }
}

// The seed mechanisms run on the Ampere platform with the keys they have on gtx480: drowsy L1 and
// L2 lines, lane and SIMD-unit gating with timeout detection, and hierarchical droop smoothing;
// the kernel's results stay right.
TEST(Rtx3070, SeedMechanismsRunOnIt) {
  const PlatformConfig cfg = loadPlatform(
      "rtx3070", {"power.l1d.drowsy.policy=drowsy-after-access", "power.l2.drowsy.policy=timeout",
                  "power.gating.idle_detect=timeout", "smoothing.mode=hierarchical"});
  Device dev(cfg, ExecMode::Timing);
  auto wl = catalog::find("sgemm").make(catalog::Size::Tiny);
  wl->setup(dev);
  wl->run(dev);
  const catalog::CheckResult r = wl->check(dev);
  EXPECT_TRUE(r.pass) << r.message;
  uint64_t l1Drowsy = 0, l2Drowsy = 0;
  double laneGated = 0;
  bool local = false, global = false;
  for (const auto& l : dev.launches()) {
    const gpu::TimingResult& t = *l.timing;
    l1Drowsy += t.memory["l1d"]["totals"]["power_states"]["drowsy_line_cycles"].get<uint64_t>();
    l2Drowsy += t.memory["l2"]["totals"]["power_states"]["drowsy_line_cycles"].get<uint64_t>();
    for (const auto& s : t.sms) laneGated += s.gating.laneNetGatedCycles;
    local = local || t.smoothing.contains("local");
    global = global || t.smoothing.contains("global");
    ASSERT_TRUE(t.power.has_value());
    EXPECT_GT(t.power->total.dynamicJ(), 0.0);
  }
  EXPECT_GT(l1Drowsy, 0u);
  EXPECT_GT(l2Drowsy, 0u);
  EXPECT_GT(laneGated, 0.0);
  EXPECT_TRUE(local);
  EXPECT_TRUE(global);
}

// Each matrix instruction holds its block's tensor core for its multiply-adds over the rate the
// platform gives its input and accumulator types (the GA102 whitepaper's per-core rates); FP64
// has no tensor-core rate on GA10x and runs on the DP units. One warp, one instruction.
TEST(Rtx3070, TensorCoresTakeEachTypeAtItsRate) {
  const PlatformConfig cfg = loadPlatform("rtx3070");
  const TensorConfig& t = cfg.sm.tensor;
  ASSERT_EQ(t.units, cfg.sm.sub_cores);
  struct Case {
    std::string mma;  // operands: A %r1-%r4, B %r5-%r6, C/D as the form needs
    uint32_t fmas, rate;
  } cases[] = {
      {"mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 {%r10, %r11}, {%r1, %r2, %r3, %r4}, "
       "{%r5, %r6}, {%r10, %r11};",
       16 * 8 * 16, t.fma_f16},
      {"mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%f1, %f2, %f3, %f4}, {%r1, %r2, %r3, "
       "%r4}, {%r5, %r6}, {%f1, %f2, %f3, %f4};",
       16 * 8 * 16, t.fma_f16_f32},
      {"mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%f1, %f2, %f3, %f4}, {%r1, %r2, %r3, "
       "%r4}, {%r5, %r6}, {%f1, %f2, %f3, %f4};",
       16 * 8 * 16, t.fma_bf16},
      {"mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%f1, %f2, %f3, %f4}, {%r1, %r2, %r3, "
       "%r4}, {%r5, %r6}, {%f1, %f2, %f3, %f4};",
       16 * 8 * 8, t.fma_tf32},
      {"mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%r10, %r11, %r12, %r13}, {%r1, %r2, %r3, "
       "%r4}, {%r5, %r6}, {%r10, %r11, %r12, %r13};",
       16 * 8 * 32, t.fma_int8},
      {"mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%fd1, %fd2}, {%fd3}, {%fd4}, {%fd1, "
       "%fd2};",
       8 * 8 * 4, t.fma_f64},
  };
  for (const Case& c : cases) {
    Device dev(cfg, ExecMode::Timing);
    Module& m = dev.loadModule(test::module(R"(
.visible .entry k()
{
  .reg .b32 %r<16>;
  .reg .f32 %f<8>;
  .reg .f64 %fd<8>;
  )" + c.mma + R"(
  ret;
}
)"),
                               "mma.ptx");
    dev.launch(m.kernel("k"), {1}, {32}, 0, KernelArgs());
    sm::SmCounters n;
    for (const auto& s : dev.launches().back().timing->sms) n += s.counters;
    const uint32_t tensor = n.dispatched[int(sm::Unit::Tensor)];
    if (c.rate == 0) {
      // 256 / 32 = 8 DP multiply-add passes, each holding the 2-lane unit 16 cycles: the SM's
      // two FP64 results per clock.
      EXPECT_EQ(tensor, 0u) << c.mma;
      EXPECT_EQ(n.dispatched[int(sm::Unit::Dp)], 1u) << c.mma;
      const uint32_t pass =
          std::max(cfg.sm.latency.dp_mad.initiation, cfg.sm.warpCycles(cfg.sm.dpLanes()));
      EXPECT_EQ(n.unitBusy[int(sm::Unit::Dp)], c.fmas / cfg.sm.warp_size * pass) << c.mma;
      continue;
    }
    EXPECT_EQ(tensor, 1u) << c.mma;
    EXPECT_EQ(n.unitBusy[int(sm::Unit::Tensor)], (c.fmas + c.rate - 1) / c.rate) << c.mma;
    // Its energy is its busy cycles at the platform's energy per tensor-core cycle.
    ASSERT_TRUE(dev.launches().back().timing->power.has_value());
    const power::EnergyBreakdown& e = dev.launches().back().timing->power->total;
    EXPECT_NEAR(e[power::Block::Tensor].dynamicJ,
                n.unitBusy[int(sm::Unit::Tensor)] * cfg.power.sm.tensor_cycle_pj * 1e-12 *
                    power::voltageScaling(cfg.power).dynamic,
                1e-18)
        << c.mma;
  }
}
