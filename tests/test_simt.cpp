// The SIMT engine on whole kernels: divergence and reconvergence, loops, calls with divergent
// returns, partial exits, barriers (including bar.red), atomics under contention, shuffles,
// votes, local/shared/generic memory, faults and deadlock detection.
#include <algorithm>
#include <cstring>
#include <numeric>

#include <gtest/gtest.h>

#include "common/error.hpp"
#include "support/ptx_harness.hpp"

using namespace gpusc;
using namespace gpusc::test;

namespace {

// Runs `entry` of `ptx` with (out, in, n) arguments; in[i] = i unless given.
struct KernelRun {
  Device dev{platform()};
  std::vector<uint32_t> out;

  KernelRun(const std::string& ptx, Dim3 grid, Dim3 block, uint32_t outCount,
            std::vector<uint32_t> in = {}, uint32_t dynShared = 0) {
    Module& m = dev.loadModule(module(ptx), "test.ptx");
    if (in.empty()) {
      in.resize(outCount);
      std::iota(in.begin(), in.end(), 0u);
    }
    DevPtr din = dev.upload(in);
    DevPtr dout = dev.malloc(outCount * 4);
    dev.memset(dout, 0, outCount * 4);
    dev.launch(m.kernel("k"), grid, block, dynShared,
               KernelArgs().ptr(dout).ptr(din).u32(static_cast<uint32_t>(in.size())));
    out = dev.download<uint32_t>(dout, outCount);
  }
  const func::ExecStats& stats() const { return dev.launches().back().stats; }
};

// Common prologue: %rd1 = &out[tid], %rd2 = &in[tid], %r1 = tid (global), %r2 = in[tid].
const char* kPrologue = R"(
  .reg .b32 %r<32>;
  .reg .b64 %rd<16>;
  .reg .pred %p<8>;
  ld.param.u64 %rd10, [out];
  ld.param.u64 %rd11, [in];
  mov.u32 %r10, %ctaid.x;
  mov.u32 %r11, %ntid.x;
  mov.u32 %r12, %tid.x;
  mad.lo.s32 %r1, %r10, %r11, %r12;
  mul.wide.u32 %rd3, %r1, 4;
  add.s64 %rd1, %rd10, %rd3;
  add.s64 %rd2, %rd11, %rd3;
  ld.global.u32 %r2, [%rd2];
)";

std::string kernel(const std::string& body, const std::string& extra = "") {
  return extra + ".visible .entry k(.param .u64 out, .param .u64 in, .param .u32 n)\n{\n" +
         kPrologue + body + "\n  ret;\n}\n";
}

TEST(Simt, IfElseDivergenceReconverges) {
  KernelRun r(kernel(R"(
  and.b32 %r3, %r1, 1;
  setp.eq.u32 %p1, %r3, 0;
  @%p1 bra EVEN;
  mul.lo.u32 %r4, %r1, 3;
  bra.uni JOIN;
EVEN:
  shl.b32 %r4, %r1, 1;
JOIN:
  add.u32 %r4, %r4, 1000;
  st.global.u32 [%rd1], %r4;)"),
              {2}, {64}, 128);
  for (uint32_t i = 0; i < 128; ++i) EXPECT_EQ(r.out[i], (i % 2 ? i * 3 : i * 2) + 1000) << i;
  EXPECT_EQ(r.stats().divergentBranches, 4u);  // one per warp
  // The two sides ran with 16 lanes; everything else with 32.
  EXPECT_EQ(r.stats().activeLanes[16], 4u * 3u);
  EXPECT_EQ(r.stats().activeLanes[32] + r.stats().activeLanes[16], r.stats().warpInsts);
}

// Every thread of blocks whose sizes are not multiples of the warp (the last warp partial, a
// warp spanning rows and planes) stores its %tid.x, %tid.y and %tid.z, packed, at its linear
// index in the block; the expected values are the PTX definitions: t % ntid.x,
// (t / ntid.x) % ntid.y, t / (ntid.x * ntid.y).
TEST(Simt, ThreadIndicesOfOddBlockShapes) {
  const std::string k = R"(
.visible .entry k(.param .u64 out, .param .u64 in, .param .u32 n)
{
  .reg .b32 %r<16>;
  .reg .b64 %rd<8>;
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, %tid.y;
  mov.u32 %r3, %tid.z;
  mov.u32 %r4, %ntid.x;
  mov.u32 %r5, %ntid.y;
  mad.lo.u32 %r6, %r3, %r5, %r2;
  mad.lo.u32 %r6, %r6, %r4, %r1;
  shl.b32 %r7, %r3, 20;
  shl.b32 %r8, %r2, 10;
  or.b32 %r7, %r7, %r8;
  or.b32 %r7, %r7, %r1;
  mul.wide.u32 %rd2, %r6, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r7;
  ret;
}
)";
  for (const Dim3 block : {Dim3{3, 5, 7}, Dim3{33, 2, 1}, Dim3{1, 1, 40}, Dim3{5, 1, 9}}) {
    const uint32_t n = static_cast<uint32_t>(block.count());
    KernelRun r(k, {1}, block, n);
    for (uint32_t t = 0; t < n; ++t) {
      const uint32_t x = t % block.x, y = (t / block.x) % block.y, z = t / (block.x * block.y);
      EXPECT_EQ(r.out[t], (z << 20) | (y << 10) | x)
          << "thread " << t << " of a " << block.x << "x" << block.y << "x" << block.z << " block";
    }
  }
}

TEST(Simt, DataDependentLoopTripCounts) {
  // out[i] = sum of 0..(i%37)-1, each lane leaving the loop at its own iteration.
  KernelRun r(kernel(R"(
  rem.u32 %r3, %r1, 37;
  mov.u32 %r4, 0;
  mov.u32 %r5, 0;
LOOP:
  setp.ge.u32 %p1, %r5, %r3;
  @%p1 bra DONE;
  add.u32 %r4, %r4, %r5;
  add.u32 %r5, %r5, 1;
  bra.uni LOOP;
DONE:
  st.global.u32 [%rd1], %r4;)"),
              {1}, {96}, 96);
  for (uint32_t i = 0; i < 96; ++i) {
    uint32_t k = i % 37;
    EXPECT_EQ(r.out[i], k * (k - 1) / 2) << i;  // k = 0 gives 0 * (2^32 - 1) = 0
  }
}

TEST(Simt, NestedDivergenceAndBreak) {
  // for (j = 0; j < 8; ++j) { if (j == lane % 5) break; if (j & 1) acc += j; else acc += 10; }
  KernelRun r(kernel(R"(
  and.b32 %r3, %r1, 31;
  rem.u32 %r3, %r3, 5;
  mov.u32 %r4, 0;
  mov.u32 %r5, 0;
LOOP:
  setp.eq.u32 %p1, %r5, %r3;
  @%p1 bra OUT;
  and.b32 %r6, %r5, 1;
  setp.ne.u32 %p2, %r6, 0;
  @%p2 bra ODD;
  add.u32 %r4, %r4, 10;
  bra.uni NEXT;
ODD:
  add.u32 %r4, %r4, %r5;
NEXT:
  add.u32 %r5, %r5, 1;
  setp.lt.u32 %p3, %r5, 8;
  @%p3 bra LOOP;
OUT:
  st.global.u32 [%rd1], %r4;)"),
              {1}, {32}, 32);
  for (uint32_t i = 0; i < 32; ++i) {
    uint32_t acc = 0;
    for (uint32_t j = 0; j < 8; ++j) {
      if (j == i % 5) break;
      acc += (j & 1) ? j : 10;
    }
    EXPECT_EQ(r.out[i], acc) << i;
  }
}

// Five nested divergent branches: on the path where every condition holds the SIMT stack holds
// 11 entries. Each lane's sum says which branches it took, and the active mask after the last
// join says the warp reconverged.
TEST(Simt, DeepNestedDivergenceReconverges) {
  KernelRun r(kernel(R"(
  and.b32 %r3, %r1, 31;
  mov.u32 %r4, 0;
  and.b32 %r6, %r3, 1;
  setp.eq.u32 %p1, %r6, 0;
  @%p1 bra E0;
  add.u32 %r4, %r4, 1;
  and.b32 %r6, %r3, 2;
  setp.eq.u32 %p1, %r6, 0;
  @%p1 bra E1;
  add.u32 %r4, %r4, 2;
  and.b32 %r6, %r3, 4;
  setp.eq.u32 %p1, %r6, 0;
  @%p1 bra E2;
  add.u32 %r4, %r4, 4;
  and.b32 %r6, %r3, 8;
  setp.eq.u32 %p1, %r6, 0;
  @%p1 bra E3;
  add.u32 %r4, %r4, 8;
  and.b32 %r6, %r3, 16;
  setp.eq.u32 %p1, %r6, 0;
  @%p1 bra E4;
  add.u32 %r4, %r4, 16;
  bra.uni J4;
E4:
  add.u32 %r4, %r4, 100;
J4:
  bra.uni J3;
E3:
  add.u32 %r4, %r4, 200;
J3:
  bra.uni J2;
E2:
  add.u32 %r4, %r4, 300;
J2:
  bra.uni J1;
E1:
  add.u32 %r4, %r4, 400;
J1:
  bra.uni J0;
E0:
  add.u32 %r4, %r4, 500;
J0:
  activemask.b32 %r7;
  popc.b32 %r8, %r7;
  mul.lo.u32 %r8, %r8, 1000;
  add.u32 %r4, %r4, %r8;
  st.global.u32 [%rd1], %r4;)"),
              {1}, {64}, 64);
  for (uint32_t i = 0; i < 64; ++i) {
    const uint32_t lane = i % 32;
    uint32_t acc = 32000;
    const uint32_t other[5] = {500, 400, 300, 200, 100};
    for (uint32_t b = 0; b < 5; ++b) {
      if (!((lane >> b) & 1)) {
        acc += other[b];
        break;
      }
      acc += 1u << b;
    }
    EXPECT_EQ(r.out[i], acc) << i;
  }
}

TEST(Simt, CallWithDivergentReturn) {
  const std::string func = R"(
.func (.param .b32 rv) f(.param .b32 x)
{
  .reg .b32 %q<4>;
  .reg .pred %pp;
  ld.param.b32 %q1, [x];
  setp.lt.u32 %pp, %q1, 10;
  @%pp bra SMALL;
  mul.lo.u32 %q2, %q1, 2;
  st.param.b32 [rv], %q2;
  ret;
SMALL:
  add.u32 %q2, %q1, 100;
  st.param.b32 [rv], %q2;
  ret;
}
)";
  KernelRun r(kernel(R"(
  {
  .param .b32 a0;
  .param .b32 r0;
  st.param.b32 [a0], %r1;
  call.uni (r0), f, (a0);
  ld.param.b32 %r3, [r0];
  }
  add.u32 %r3, %r3, 1;
  st.global.u32 [%rd1], %r3;)",
                     func),
              {1}, {32}, 32);
  for (uint32_t i = 0; i < 32; ++i) EXPECT_EQ(r.out[i], (i < 10 ? i + 100 : i * 2) + 1) << i;
}

TEST(Simt, PartialExitThenBarrierAmongRemainingWarps) {
  // Threads of odd warps exit at once; even warps exchange data through shared memory.
  KernelRun r(kernel(R"(
  .shared .align 4 .b32 s[128];
  shr.u32 %r3, %r12, 5;
  and.b32 %r3, %r3, 1;
  setp.ne.u32 %p1, %r3, 0;
  @%p1 exit;
  shl.b32 %r4, %r12, 2;
  mov.u32 %r5, s;
  add.u32 %r6, %r5, %r4;
  st.shared.u32 [%r6], %r1;
  bar.sync 0;
  xor.b32 %r7, %r12, 64;
  shl.b32 %r7, %r7, 2;
  add.u32 %r7, %r5, %r7;
  ld.shared.u32 %r8, [%r7];
  st.global.u32 [%rd1], %r8;)"),
              {1}, {128}, 128);
  for (uint32_t i = 0; i < 128; ++i) EXPECT_EQ(r.out[i], ((i / 32) % 2) ? 0u : (i ^ 64)) << i;
}

// A warp that waits for another warp of its block in a loop with nanosleep ends its turn at each
// sleep, as a sleeping warp on a GPU lets the others issue: the warp it waits for runs at once.
// Warp 1 releases the barrier, so it runs on first: it sleeps once, warp 0 sets the flag, and
// warp 1 sees it on its second look (without the yield it would spin for its whole turn).
TEST(Simt, NanosleepInASpinLoopLetsTheAwaitedWarpRun) {
  KernelRun r(kernel(R"(
  .shared .u32 flag;
  setp.eq.u32 %p3, %r12, 0;
  @%p3 st.shared.u32 [flag], 0;
  bar.sync 0;
  mov.u32 %r5, 0;
  setp.lt.u32 %p1, %r12, 32;
  @%p1 bra SET;
WAIT:
  ld.volatile.shared.u32 %r3, [flag];
  setp.ne.u32 %p2, %r3, 0;
  @%p2 bra DONE;
  add.u32 %r5, %r5, 1;
  nanosleep.u32 100;
  bra WAIT;
SET:
  st.volatile.shared.u32 [flag], 7;
DONE:
  st.global.u32 [%rd1], %r5;)"),
              {1}, {64}, 64);
  for (uint32_t i = 0; i < 64; ++i) EXPECT_EQ(r.out[i], i < 32 ? 0u : 1u) << i;
}

// Lanes 1-31 poll a flag lane 0 sets, reading %clock64 each time (so the poll never looks like
// spinning), with `sleep` (nanosleep, or nothing) after each look; each lane's result is the
// number of looks that found no flag, at most 100,000 (then it gives up). The polling lanes are
// the taken path, so they run first.
KernelRun pollFlagOfLaneZero(const std::string& sleep) {
  return KernelRun(kernel(R"(
  .shared .u32 flag;
  .reg .b64 %t<2>;
  setp.eq.u32 %p3, %r12, 0;
  @%p3 st.shared.u32 [flag], 0;
  bar.sync 0;
  mov.u32 %r5, 0;
  setp.ne.u32 %p1, %r12, 0;
  @%p1 bra WAIT;
  st.volatile.shared.u32 [flag], 7;
  bra DONE;
WAIT:
  mov.u64 %t0, %clock64;
  ld.volatile.shared.u32 %r3, [flag];
  setp.ne.u32 %p2, %r3, 0;
  @%p2 bra DONE;
  add.u32 %r5, %r5, 1;
  setp.ge.u32 %p4, %r5, 100000;
  @%p4 bra DONE;
  )" + sleep + R"(
  bra WAIT;
DONE:
  st.global.u32 [%rd1], %r5;)"),
                   {1}, {32}, 32);
}

// A path of a divergent warp that sleeps lets the warp's other path run first: the polling lanes
// sleep once, lane 0 sets the flag, and they see it on their second look; without the yield they
// would poll until they give up.
TEST(Simt, ASleepingPathLetsAnotherPathOfItsWarpRun) {
  KernelRun r = pollFlagOfLaneZero("nanosleep.u32 100;");
  for (uint32_t i = 0; i < 32; ++i) EXPECT_EQ(r.out[i], i == 0 ? 0u : 1u) << i;
}

// A path that polls without sleeping still yields once its loop has run long: the polling lanes
// see the flag after a few tens of thousands of polls instead of giving up after 100,000.
TEST(Simt, ALongPollReadingAClockLetsAnotherPathOfItsWarpRun) {
  KernelRun r = pollFlagOfLaneZero("");
  EXPECT_EQ(r.out[0], 0u);
  EXPECT_GT(r.out[1], 1000u);
  EXPECT_LT(r.out[1], 100000u);
  for (uint32_t i = 2; i < 32; ++i) EXPECT_EQ(r.out[i], r.out[1]) << i;
}

// Lanes of one warp wait at an mbarrier from both sides of a branch (cuda::barrier built for
// compute capability 8.0 and later): the path that waits first lets the other path run to its
// arrival, as independent thread scheduling does, instead of putting the whole warp to sleep
// (which left no lane to complete the phase: a deadlock). Each lane reads the value a lane of
// the other half stored before it arrived.
TEST(Simt, LanesWaitingAtAnMbarrierFromBothSidesOfABranchLetEachOtherArrive) {
  KernelRun r(kernel(R"(
  .shared .align 8 .b64 bar;
  .shared .align 4 .u32 data[32];
  .reg .b64 %s<2>;
  setp.eq.u32 %p3, %r12, 0;
  @%p3 mbarrier.init.shared.b64 [bar], 32;
  bar.sync 0;
  shl.b32 %r4, %r12, 2;
  mov.u32 %r6, data;
  add.u32 %r7, %r6, %r4;
  xor.b32 %r8, %r4, 64;
  add.u32 %r8, %r6, %r8;
  setp.lt.u32 %p1, %r12, 16;
  @%p1 bra LOW;
  mul.lo.u32 %r5, %r12, 3;
  st.shared.u32 [%r7], %r5;
  mbarrier.arrive.shared.b64 %s0, [bar];
HIGHWAIT:
  mbarrier.try_wait.shared.b64 %p2, [bar], %s0;
  @!%p2 bra HIGHWAIT;
  bra DONE;
LOW:
  mul.lo.u32 %r5, %r12, 3;
  st.shared.u32 [%r7], %r5;
  mbarrier.arrive.shared.b64 %s0, [bar];
LOWWAIT:
  mbarrier.try_wait.shared.b64 %p2, [bar], %s0;
  @!%p2 bra LOWWAIT;
DONE:
  ld.shared.u32 %r9, [%r8];
  st.global.u32 [%rd1], %r9;)"),
              {1}, {32}, 32);
  for (uint32_t i = 0; i < 32; ++i) EXPECT_EQ(r.out[i], (i ^ 16) * 3) << i;
}

TEST(Simt, BarrierReduction) {
  // bar.red.popc counts threads with an even input across the whole CTA (4 warps).
  std::vector<uint32_t> in(128);
  for (uint32_t i = 0; i < 128; ++i) in[i] = i % 3;  // even for i%3 in {0, 2}
  KernelRun r2(kernel(R"(
  and.b32 %r3, %r2, 1;
  setp.eq.u32 %p1, %r3, 0;
  bar.red.popc.u32 %r4, 0, %p1;
  bar.red.or.pred %p2, 1, %p1;
  selp.u32 %r5, 1000, 0, %p2;
  add.u32 %r4, %r4, %r5;
  st.global.u32 [%rd1], %r4;)"),
               {1}, {128}, 128, in);
  uint32_t even = 0;
  for (uint32_t v : in) even += (v % 2 == 0);
  for (uint32_t i = 0; i < 128; ++i) EXPECT_EQ(r2.out[i], even + 1000) << i;
}

TEST(Simt, BarrierReductionResultGoesOnlyToTheLanesThatExecutedIt) {
  // Lanes 16-31 of each warp skip the bar.red by its guard: they keep their own value, and
  // their predicates do not count.
  KernelRun r(kernel(R"(
  mov.u32 %r4, 7;
  and.b32 %r3, %r12, 31;
  setp.lt.u32 %p3, %r3, 16;
  setp.eq.u32 %p1, %r3, 3;
  @%p3 bar.red.popc.u32 %r4, 0, %p1;
  st.global.u32 [%rd1], %r4;)"),
              {1}, {128}, 128);
  for (uint32_t i = 0; i < 128; ++i) EXPECT_EQ(r.out[i], i % 32 < 16 ? 4u : 7u) << i;
}

TEST(Simt, BarrierReductionReleasedByAnExitingWarpDeliversItsResult) {
  // The last warp exits after the other three wait in bar.red: its exit releases the barrier,
  // and the waiting warps still get the count (their 96 threads, all with %p1 set).
  KernelRun r(kernel(R"(
  mov.u32 %r4, 7;
  setp.ge.u32 %p2, %r12, 96;
  @%p2 bra LAST;
  setp.ne.u32 %p1, %r2, 1000000;
  bar.red.popc.u32 %r4, 0, %p1;
  st.global.u32 [%rd1], %r4;
  ret;
LAST:
  add.u32 %r5, %r2, 1;
  add.u32 %r5, %r5, 1;
  st.global.u32 [%rd1], %r5;
  exit;)"),
              {1}, {128}, 128);
  for (uint32_t i = 0; i < 128; ++i) EXPECT_EQ(r.out[i], i < 96 ? 96u : i + 2) << i;
}

TEST(Simt, AtomicsUnderContention) {
  // Every thread adds to one global counter, increments a wrapping counter, and takes the max.
  KernelRun r(kernel(R"(
  ld.param.u64 %rd5, [out];
  atom.global.add.u32 %r3, [%rd5+4], 1;
  atom.global.inc.u32 %r4, [%rd5+8], 9;
  atom.global.max.s32 %r5, [%rd5+12], %r1;
  red.global.add.u32 [%rd5+16], %r1;
  atom.global.cas.b32 %r6, [%rd5+20], 0, 77;
  atom.global.exch.b32 %r7, [%rd5+24], %r1;)"),
              {4}, {256}, 8);
  const uint32_t n = 1024;
  EXPECT_EQ(r.out[1], n);
  EXPECT_EQ(r.out[2], n % 10);  // inc wraps to 0 after 9
  EXPECT_EQ(r.out[3], n - 1);
  EXPECT_EQ(r.out[4], n * (n - 1) / 2);
  EXPECT_EQ(r.out[5], 77u);
  EXPECT_EQ(r.out[6], n - 1);  // the last thread in execution order
}

TEST(Simt, SharedAtomicsAndReturnValuesAreUnique) {
  // Each thread takes a ticket from a shared counter; tickets 0..255 each appear once.
  KernelRun r(kernel(R"(
  .shared .align 4 .b32 counter;
  setp.ne.u32 %p1, %r12, 0;
  @%p1 bra WAIT;
  st.shared.u32 [counter], 0;
WAIT:
  bar.sync 0;
  atom.shared.add.u32 %r3, [counter], 1;
  st.global.u32 [%rd1], %r3;)"),
              {1}, {256}, 256);
  std::vector<uint32_t> t = r.out;
  std::sort(t.begin(), t.end());
  for (uint32_t i = 0; i < 256; ++i) EXPECT_EQ(t[i], i);
}

TEST(Simt, Shuffles) {
  auto shfl = [](const std::string& insn) {
    return KernelRun(kernel("  " + insn + R"(
  selp.u32 %r5, 0x10000, 0, %p1;
  add.u32 %r4, %r4, %r5;
  st.global.u32 [%rd1], %r4;)"),
                     {1}, {32}, 32)
        .out;
  };
  auto down = shfl("shfl.sync.down.b32 %r4|%p1, %r1, 3, 31, -1;");
  for (uint32_t i = 0; i < 32; ++i) EXPECT_EQ(down[i], i + 3 <= 31 ? (i + 3) | 0x10000 : i) << i;
  auto up = shfl("shfl.sync.up.b32 %r4|%p1, %r1, 2, 0, -1;");
  for (uint32_t i = 0; i < 32; ++i) EXPECT_EQ(up[i], i >= 2 ? (i - 2) | 0x10000 : i) << i;
  auto bfly = shfl("shfl.sync.bfly.b32 %r4|%p1, %r1, 5, 31, -1;");
  for (uint32_t i = 0; i < 32; ++i) EXPECT_EQ(bfly[i], (i ^ 5) | 0x10000) << i;
  auto idx = shfl("shfl.sync.idx.b32 %r4|%p1, %r1, 7, 31, -1;");
  for (uint32_t i = 0; i < 32; ++i) EXPECT_EQ(idx[i], 7u | 0x10000) << i;
  // Width 8 segments (c = ((32 - 8) << 8) | 31): idx 2 reads lane 2 of each 8-lane segment.
  auto seg = shfl("shfl.sync.idx.b32 %r4|%p1, %r1, 2, 6175, -1;");
  for (uint32_t i = 0; i < 32; ++i) EXPECT_EQ(seg[i], ((i & ~7u) + 2) | 0x10000) << i;
  auto segDown = shfl("shfl.sync.down.b32 %r4|%p1, %r1, 4, 6175, -1;");
  for (uint32_t i = 0; i < 32; ++i)
    EXPECT_EQ(segDown[i], (i % 8) + 4 < 8 ? (i + 4) | 0x10000 : i) << i;
}

TEST(Simt, VotesAndActiveMaskUnderDivergence) {
  KernelRun r(kernel(R"(
  and.b32 %r3, %r12, 3;
  setp.eq.u32 %p1, %r3, 0;
  @!%p1 bra SKIP;
  activemask.b32 %r4;
  setp.lt.u32 %p2, %r12, 16;
  vote.sync.ballot.b32 %r5, %p2, %r4;
  vote.sync.all.pred %p3, %p2, %r4;
  vote.sync.any.pred %p4, %p2, %r4;
  selp.u32 %r6, 1, 0, %p3;
  selp.u32 %r7, 2, 0, %p4;
  or.b32 %r6, %r6, %r7;
  xor.b32 %r4, %r4, %r5;
  st.global.u32 [%rd1], %r4;
  st.global.u32 [%rd1+128], %r6;
SKIP:)"),
              {1}, {32}, 64);
  const uint32_t active = 0x11111111u, ballot = 0x00001111u;
  for (uint32_t i = 0; i < 32; i += 4) {
    EXPECT_EQ(r.out[i], active ^ ballot) << i;
    EXPECT_EQ(r.out[32 + i], 2u) << i;  // not all, but any
  }
}

// Each lane combines with the lanes its member mask names (a cooperative group's tile): lanes
// 0-15 and 16-31 of one warp vote, match and reduce apart in one instruction.
TEST(Simt, WarpSyncInstructionsCombineOnlyTheirMemberLanes) {
  KernelRun r(kernel(R"(
  and.b32 %r3, %r12, 16;
  mov.u32 %r4, 65535;
  shl.b32 %r4, %r4, %r3;
  rem.u32 %r5, %r12, 3;
  setp.eq.u32 %p1, %r5, 0;
  vote.sync.ballot.b32 %r6, %p1, %r4;
  st.global.u32 [%rd1], %r6;
  redux.sync.add.u32 %r7, %r12, %r4;
  st.global.u32 [%rd1+128], %r7;
  and.b32 %r8, %r12, 3;
  match.any.sync.b32 %r9, %r8, %r4;
  st.global.u32 [%rd1+256], %r9;
  vote.sync.any.pred %p2, %p1, %r4;
  setp.lt.u32 %p3, %r12, 20;
  vote.sync.all.pred %p4, %p3, %r4;
  selp.u32 %r13, 1, 0, %p2;
  selp.u32 %r14, 2, 0, %p4;
  or.b32 %r13, %r13, %r14;
  st.global.u32 [%rd1+384], %r13;
  shr.u32 %r15, %r12, 4;
  match.all.sync.b32 %r16|%p5, %r15, %r4;
  selp.u32 %r17, 1, 0, %p5;
  add.u32 %r16, %r16, %r17;
  st.global.u32 [%rd1+512], %r16;)"),
              {1}, {32}, 160);
  for (uint32_t i = 0; i < 32; ++i) {
    const uint32_t group = i < 16 ? 0x0000ffffu : 0xffff0000u;
    uint32_t ballot = 0, sum = 0, same = 0;
    for (uint32_t k = 0; k < 32; ++k) {
      if (!((group >> k) & 1u)) continue;
      ballot |= uint32_t(k % 3 == 0) << k;
      sum += k;
      same |= uint32_t(k % 4 == i % 4) << k;
    }
    EXPECT_EQ(r.out[i], ballot) << i;
    EXPECT_EQ(r.out[32 + i], sum) << i;
    EXPECT_EQ(r.out[64 + i], same) << i;
    EXPECT_EQ(r.out[96 + i], i < 16 ? 3u : 1u) << i;  // any; all below 20 only in 0-15
    EXPECT_EQ(r.out[128 + i], group + 1) << i;        // each half's values are equal
  }
}

// The two halves of a warp call one function from the two sides of a branch, and the function
// shuffles, votes and syncs with the whole warp (nvcc -G makes every __shfl_sync such a call). The
// lanes of the member mask meet at the instruction as on sm_70 and later: each lane gets its
// partner's value from the other path, the ballot sees both, in both modes.
// Runs `ptx`'s kernel `k` with (out, in = zeros, outCount) in functional and in timing mode:
// the outputs (and each run's spin yields), functional first. A path spinning for ever stops the
// run at the instruction limit.
void runBothModes(const std::string& ptx, Dim3 block, uint32_t outCount,
                  std::vector<uint32_t> (&outs)[2], uint64_t (*yields)[2] = nullptr) {
  int i = 0;
  PlatformConfig cfg = platform();
  cfg.limits.max_warp_instructions = 1000000;  // a path spinning for ever stops the run
  for (ExecMode mode : {ExecMode::Functional, ExecMode::Timing}) {
    Device dev(cfg, mode);
    Module& m = dev.loadModule(module(ptx), "test.ptx");
    std::vector<uint32_t> in(outCount, 0);
    DevPtr din = dev.upload(in);
    DevPtr dout = dev.malloc(outCount * 4);
    dev.memset(dout, 0, outCount * 4);
    dev.launch(m.kernel("k"), {1}, block, 0, KernelArgs().ptr(dout).ptr(din).u32(outCount));
    if (yields) (*yields)[i] = dev.launches().back().stats.spinYields;
    outs[i++] = dev.download<uint32_t>(dout, outCount);
  }
}

TEST(Simt, WarpSyncInAFunctionCalledFromBothPathsMeetsTheOtherPath) {
  const std::string func = R"(
.func (.param .b32 rv) f(.param .b32 x)
{
  .reg .b32 %q<6>;
  .reg .pred %pp;
  ld.param.b32 %q1, [x];
  shfl.sync.bfly.b32 %q2, %q1, 16, 31, -1;
  rem.u32 %q3, %q1, 3;
  setp.eq.u32 %pp, %q3, 0;
  vote.sync.ballot.b32 %q4, %pp, -1;
  bar.warp.sync -1;
  xor.b32 %q5, %q2, %q4;
  st.param.b32 [rv], %q5;
  ret;
}
)";
  const std::string body = R"(
  setp.lt.u32 %p1, %r12, 16;
  @%p1 bra LOW;
  {
  .param .b32 a0;
  .param .b32 r0;
  st.param.b32 [a0], %r12;
  call (r0), f, (a0);
  ld.param.b32 %r3, [r0];
  }
  add.u32 %r3, %r3, 2000;
  bra.uni JOIN;
LOW:
  {
  .param .b32 a1;
  .param .b32 r1;
  st.param.b32 [a1], %r12;
  call (r1), f, (a1);
  ld.param.b32 %r3, [r1];
  }
  add.u32 %r3, %r3, 1000;
JOIN:
  st.global.u32 [%rd1], %r3;)";
  uint32_t ballot = 0;
  for (uint32_t k = 0; k < 32; ++k) ballot |= uint32_t(k % 3 == 0) << k;
  std::vector<uint32_t> outs[2];
  runBothModes(kernel(body, func), {32}, 32, outs);
  for (int m = 0; m < 2; ++m)
    for (uint32_t i = 0; i < 32; ++i)
      EXPECT_EQ(outs[m][i], ((i ^ 16) ^ ballot) + (i < 16 ? 1000u : 2000u))
          << i << (m ? " timing" : " functional");
}

// Lanes 0-15 call f, whose shuffle names only them; lanes 16-31 call g once more and return
// from both activations of g on a path of their own. f's shuffle first lets the other path run
// (it holds lanes of the warp), so those lanes return while lanes 0-15 wait inside f's frame:
// each `ret` leaves their own frame of g (a recursive call's, which restores their activation,
// then the kernel's indirect call's, which copies their results back), not f's, and each lane
// comes back to the kernel once, with its own result.
TEST(Simt, LanesReturningWhileOthersWaitInADeeperCallLeaveTheirOwnFrame) {
  const std::string funcs = R"(
.func (.param .b32 rv) f(.param .b32 x)
{
  .reg .b32 %q<4>;
  ld.param.b32 %q1, [x];
  shfl.sync.bfly.b32 %q2, %q1, 1, 31, 65535;
  st.param.b32 [rv], %q2;
  ret;
}
.func (.param .b32 rv) g(.param .b32 x)
{
  .reg .b32 %q<6>;
  .reg .pred %pp;
  .reg .pred %ph;
  ld.param.b32 %q1, [x];
  setp.lt.u32 %pp, %q1, 16;
  @%pp bra LOW;
  setp.ge.u32 %ph, %q1, 48;
  @%ph bra HIGH;
  add.u32 %q4, %q1, 32;
  {
  .param .b32 a2;
  .param .b32 r2;
  st.param.b32 [a2], %q4;
  call (r2), g, (a2);
  ld.param.b32 %q5, [r2];
  }
  add.u32 %q5, %q5, %q1;
  st.param.b32 [rv], %q5;
  ret;
HIGH:
  mul.lo.u32 %q2, %q1, 3;
  st.param.b32 [rv], %q2;
  ret;
LOW:
  {
  .param .b32 a1;
  .param .b32 r1;
  st.param.b32 [a1], %q1;
  call (r1), f, (a1);
  ld.param.b32 %q3, [r1];
  }
  add.u32 %q3, %q3, 1000;
  st.param.b32 [rv], %q3;
  ret;
}
)";
  const std::string body = R"(
  {
  .param .b32 a0;
  .param .b32 r0;
  st.param.b32 [a0], %r12;
  mov.u64 %rd5, g;
  targets: .calltargets g;
  call (r0), %rd5, (a0), targets;
  ld.param.b32 %r3, [r0];
  }
  add.u32 %r3, %r3, 1;
  st.global.u32 [%rd1], %r3;
  ld.global.u32 %r4, [%rd1+128];
  add.u32 %r4, %r4, 1;
  st.global.u32 [%rd1+128], %r4;)";
  std::vector<uint32_t> outs[2];
  runBothModes(kernel(body, funcs), {32}, 64, outs);
  for (int m = 0; m < 2; ++m) {
    const char* name = m ? " timing" : " functional";
    for (uint32_t i = 0; i < 32; ++i) {
      EXPECT_EQ(outs[m][i], (i < 16 ? (i ^ 1u) + 1000u : 3 * (i + 32) + i) + 1) << i << name;
      EXPECT_EQ(outs[m][32 + i], 1u) << i << name << ": lanes come back from g once";
    }
  }
}

// A branch one of whose paths may exit reconverges at the exit; the barrier after the branch
// still waits for every lane of the warp (the compiler reconverges the paths before it), so
// no lane reads shared memory its neighbour has not written yet.
TEST(Simt, BarrierAfterABranchThatMayExitWaitsForEveryPath) {
  const std::string body = R"(
  .shared .align 4 .b32 s[64];
  shl.b32 %r3, %r12, 2;
  mov.u32 %r4, s;
  add.u32 %r5, %r4, %r3;
  mov.u32 %r6, -1;
  st.shared.u32 [%r5], %r6;
  and.b32 %r7, %r12, 1;
  setp.eq.u32 %p1, %r7, 1;
  @%p1 bra ODD;
  shl.b32 %r8, %r2, 1;
  bra.uni JOIN;
ODD:
  setp.gt.u32 %p2, %r2, 1000;
  @%p2 bra DONE;
  mov.u32 %r8, %r2;
JOIN:
  st.shared.u32 [%r5], %r8;
  bar.sync 0;
  xor.b32 %r9, %r12, 1;
  shl.b32 %r9, %r9, 2;
  add.u32 %r9, %r4, %r9;
  ld.shared.u32 %r13, [%r9];
  st.global.u32 [%rd1], %r13;
DONE:)";
  // No lane exits; then lanes 5 and 41 do (their inputs are large), and never write.
  for (const bool exits : {false, true}) {
    std::vector<uint32_t> in(64);
    std::iota(in.begin(), in.end(), 0u);
    if (exits) in[5] = in[41] = 5000;
    KernelRun r(kernel(body), {1}, {64}, 64, in);
    for (uint32_t t = 0; t < 64; ++t) {
      const uint32_t s = t ^ 1u;
      const uint32_t wrote = in[s] > 1000 ? ~0u : (s & 1u) ? in[s] : 2 * in[s];
      EXPECT_EQ(r.out[t], in[t] > 1000 ? 0u : wrote) << t << (exits ? " exits" : "");
    }
  }
}

TEST(Simt, LocalMemoryDynamicIndexing) {
  KernelRun r(kernel(R"(
  .local .align 4 .b8 buf[64];
  mov.u64 %rd5, buf;
  mov.u32 %r3, 0;
FILL:
  mul.wide.u32 %rd6, %r3, 4;
  add.s64 %rd7, %rd5, %rd6;
  mad.lo.u32 %r4, %r3, %r1, 1;
  st.local.u32 [%rd7], %r4;
  add.u32 %r3, %r3, 1;
  setp.lt.u32 %p1, %r3, 16;
  @%p1 bra FILL;
  and.b32 %r5, %r1, 15;
  mul.wide.u32 %rd6, %r5, 4;
  add.s64 %rd7, %rd5, %rd6;
  ld.local.u32 %r6, [%rd7];
  st.global.u32 [%rd1], %r6;)"),
              {2}, {32}, 64);
  for (uint32_t i = 0; i < 64; ++i) EXPECT_EQ(r.out[i], (i % 16) * i + 1) << i;
}

TEST(Simt, DynamicSharedAndGenericAddressing) {
  // Reverse through extern shared memory, writing with a generic pointer from cvta.shared.
  KernelRun r(kernel(R"(
  mov.u64 %rd5, dyn;
  cvta.shared.u64 %rd6, %rd5;
  mul.wide.u32 %rd7, %r12, 4;
  add.s64 %rd8, %rd6, %rd7;
  st.u32 [%rd8], %r2;
  bar.sync 0;
  sub.u32 %r3, 63, %r12;
  shl.b32 %r3, %r3, 2;
  cvt.u32.u64 %r4, %rd5;
  add.u32 %r4, %r4, %r3;
  ld.shared.u32 %r5, [%r4];
  st.global.u32 [%rd1], %r5;)",
                     ".extern .shared .align 16 .b8 dyn[];\n"),
              {1}, {64}, 64, {}, 256);
  for (uint32_t i = 0; i < 64; ++i) EXPECT_EQ(r.out[i], 63 - i) << i;
}

TEST(Simt, IndexedBranch) {
  KernelRun r(kernel(R"(
  rem.u32 %r3, %r1, 3;
  ts: .branchtargets A, B, C;
  brx.idx %r3, ts;
A:
  mov.u32 %r4, 100;
  bra.uni J;
B:
  mov.u32 %r4, 200;
  bra.uni J;
C:
  mov.u32 %r4, 300;
J:
  add.u32 %r4, %r4, %r1;
  st.global.u32 [%rd1], %r4;)"),
              {1}, {32}, 32);
  for (uint32_t i = 0; i < 32; ++i) EXPECT_EQ(r.out[i], 100 * (i % 3 + 1) + i) << i;
}

TEST(Simt, ModuleVariablesConstantBankAndAddressInitialisers) {
  // out[i] = coef[i % 4] (constant bank) + table[i % 3] (module .global, read through a pointer
  // stored in another .global's initialiser).
  KernelRun r(kernel(R"(
  rem.u32 %r3, %r1, 4;
  mul.wide.u32 %rd5, %r3, 4;
  mov.u64 %rd6, coef;
  add.s64 %rd6, %rd6, %rd5;
  ld.const.u32 %r4, [%rd6];
  ld.global.u64 %rd7, [ptr];
  rem.u32 %r5, %r1, 3;
  mul.wide.u32 %rd8, %r5, 4;
  add.s64 %rd7, %rd7, %rd8;
  ld.global.u32 %r6, [%rd7];
  add.u32 %r4, %r4, %r6;
  ld.const.u32 %r7, [coef+12];
  add.u32 %r4, %r4, %r7;
  st.global.u32 [%rd1], %r4;)",
                     ".const .align 4 .u32 coef[4] = {10, 20, 30, 40};\n"
                     ".global .align 4 .u32 table[3] = {1000, 2000, 3000};\n"
                     ".global .align 8 .u64 ptr = generic(table);\n"),
              {1}, {32}, 32);
  for (uint32_t i = 0; i < 32; ++i)
    EXPECT_EQ(r.out[i], 10 * (i % 4 + 1) + 1000 * (i % 3 + 1) + 40) << i;
}

TEST(Simt, CopyToAndFromSymbols) {
  Device dev(platform());
  Module& m = dev.loadModule(module(R"(
.const .align 4 .u32 scale[2];
.global .align 4 .u32 result[32];
.visible .entry k()
{
  .reg .b32 %r<6>;
  .reg .b64 %rd<4>;
  mov.u32 %r1, %tid.x;
  ld.const.u32 %r2, [scale];
  ld.const.u32 %r3, [scale+4];
  mad.lo.u32 %r4, %r1, %r2, %r3;
  mul.wide.u32 %rd1, %r1, 4;
  mov.u64 %rd2, result;
  add.s64 %rd2, %rd2, %rd1;
  st.global.u32 [%rd2], %r4;
  ret;
}
)"),
                             "sym.ptx");
  const uint32_t scale[2] = {3, 7};
  dev.copyToSymbol(m, "scale", scale, sizeof scale);
  dev.launch(m.kernel("k"), {1}, {32}, 0, KernelArgs());
  uint32_t out[32];
  dev.copyFromSymbol(m, "result", out, sizeof out);
  for (uint32_t i = 0; i < 32; ++i) EXPECT_EQ(out[i], 3 * i + 7) << i;
  EXPECT_THROW(dev.copyToSymbol(m, "scale", scale, sizeof scale, 4),
               InputError);  // runs off the end
  EXPECT_THROW(dev.copyToSymbol(m, "scal", scale, 4), InputError);
}

TEST(Simt, IllegalAddressFaultsWithThreadAndLine) {
  try {
    KernelRun r(kernel(R"(
  setp.eq.u32 %p1, %r1, 37;
  @!%p1 bra OK;
  mov.u64 %rd1, 16;
OK:
  st.global.u32 [%rd1], %r1;)"),
                {2}, {32}, 64);
    FAIL() << "no fault";
  } catch (const KernelFault& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("illegal 4-byte write at global address 0x10"), std::string::npos) << m;
    EXPECT_NE(m.find("thread (5,0,0) of block (1,0,0)"), std::string::npos) << m;
    EXPECT_NE(m.find("test.ptx:"), std::string::npos) << m;
  }
}

TEST(Simt, MisalignedAccessFaults) {
  EXPECT_THROW(KernelRun(kernel("  st.global.u32 [%rd1+2], %r1;"), {1}, {32}, 64), KernelFault);
}

TEST(Simt, OutOfBoundsSharedAccessFaults) {
  EXPECT_THROW(KernelRun(kernel(R"(
  .shared .align 4 .b32 s[4];
  mov.u32 %r3, s;
  shl.b32 %r4, %r12, 2;
  add.u32 %r3, %r3, %r4;
  st.shared.u32 [%r3], %r1;)"),
                         {1}, {32}, 32),
               KernelFault);
}

// Shared-memory faults name the access, the space, the offset and the first faulting thread, for
// reads and writes, scalars and vectors.
TEST(Simt, SharedAccessFaultsNameTheThreadAndTheOffset) {
  const auto faultOf = [](const std::string& body) {
    try {
      KernelRun r(kernel(R"(
  .shared .align 8 .b32 s[8];
  mov.u32 %r3, s;
  shl.b32 %r4, %r12, 2;
  add.u32 %r3, %r3, %r4;
)" + body),
                  {1}, {32}, 32);
    } catch (const KernelFault& e) {
      return std::string(e.what());
    }
    return std::string("no fault");
  };
  const std::string write = faultOf("  st.shared.u32 [%r3], %r1;");
  EXPECT_NE(write.find("illegal 4-byte write at shared address 0x20"), std::string::npos) << write;
  EXPECT_NE(write.find("thread (8,0,0)"), std::string::npos) << write;
  const std::string read = faultOf("  ld.shared.u32 %r5, [%r3+4];");
  EXPECT_NE(read.find("illegal 4-byte read at shared address 0x20"), std::string::npos) << read;
  EXPECT_NE(read.find("thread (7,0,0)"), std::string::npos) << read;
  const std::string vector = faultOf("  ld.shared.v2.u32 {%r5, %r6}, [%r3];");
  EXPECT_NE(vector.find("misaligned 8-byte read access at shared address 0x4"), std::string::npos)
      << vector;
  EXPECT_NE(vector.find("thread (1,0,0)"), std::string::npos) << vector;
}

// An address just below a space's start wraps to the top of the 64-bit range: it faults (the
// bound check must not overflow into accepting it), for every window space, read or write.
TEST(Simt, AddressesThatWrapAroundFault) {
  for (const char* access :
       {"ld.shared.u32 %r5, [%rd5];", "st.shared.u32 [%rd5], %r1;", "ld.local.u32 %r5, [%rd5];",
        "st.local.u32 [%rd5], %r1;", "ld.const.u32 %r5, [%rd5];", "ld.param.u32 %r5, [%rd5];",
        "ld.shared.u32 %r5, [%rd6+-4];"}) {
    try {
      KernelRun r(kernel(std::string(R"(
  .shared .align 4 .b32 s[32];
  .local .align 4 .b32 l[4];
  mov.u64 %rd5, -4;
  mov.u64 %rd6, 0;
  )") + access + "\n  st.global.u32 [%rd1], %r5;",
                         R"(.const .align 4 .b32 c[4];
)"),
                  {1}, {32}, 32);
      ADD_FAILURE() << "no fault: " << access;
    } catch (const KernelFault& e) {
      EXPECT_NE(std::string(e.what()).find("0xfffffffffffffffc"), std::string::npos)
          << access << ": " << e.what();
    }
  }
}

// Independent thread scheduling: a path that spins waiting for lanes of its own warp on another
// path yields to them (executor.cpp, yieldPath), in both modes.
TEST(Simt, ALockTakenByALaneOfTheSameWarpIsReleasedToTheOthers) {
  // Every thread takes a global spin lock, increments a counter under it and releases it. The
  // lane that gets the lock leaves the loop, which its warp's other lanes do not: without
  // independent thread scheduling they would spin for ever at the loop's branch.
  const std::string ptx = kernel(R"(
  ld.param.u64 %rd5, [out];
LOCK:
  atom.global.cas.b32 %r3, [%rd5], 0, 1;
  setp.ne.u32 %p1, %r3, 0;
  @%p1 bra LOCK;
  ld.volatile.global.u32 %r4, [%rd5+4];
  add.u32 %r4, %r4, 1;
  st.volatile.global.u32 [%rd5+4], %r4;
  membar.gl;
  atom.global.exch.b32 %r5, [%rd5], 0;)");
  std::vector<uint32_t> outs[2];
  uint64_t yields[2] = {};
  runBothModes(ptx, {64}, 64, outs, &yields);
  for (int m = 0; m < 2; ++m) {
    EXPECT_EQ(outs[m][0], 0u) << (m ? "timing" : "functional") << ": the lock is free at the end";
    EXPECT_EQ(outs[m][1], 64u) << (m ? "timing" : "functional") << ": every thread counted once";
    EXPECT_GT(yields[m], 0u) << (m ? "timing" : "functional");
  }
}

TEST(Simt, ALongDivergentLoopThatComputesNeverYields) {
  // Lane 0 of each warp runs 5,000 iterations while the others wait at the loop's end: its
  // registers change every iteration, so it is not spinning, and runs to the end unchanged.
  const std::string ptx = kernel(R"(
  and.b32 %r3, %r12, 31;
  setp.eq.u32 %p1, %r3, 0;
  selp.u32 %r6, 5000, 3, %p1;
  mov.u32 %r4, 0;
  mov.u32 %r5, 0;
LOOP:
  add.u32 %r4, %r4, %r5;
  add.u32 %r5, %r5, 1;
  setp.lt.u32 %p2, %r5, %r6;
  @%p2 bra LOOP;
  st.global.u32 [%rd1], %r4;)");
  std::vector<uint32_t> outs[2];
  uint64_t yields[2] = {9, 9};
  runBothModes(ptx, {64}, 64, outs, &yields);
  for (int m = 0; m < 2; ++m) {
    EXPECT_EQ(yields[m], 0u) << (m ? "timing" : "functional");
    for (uint32_t i = 0; i < 64; ++i)
      EXPECT_EQ(outs[m][i], i % 32 == 0 ? 5000u * 4999u / 2 : 3u) << i;
  }
}

TEST(Simt, LanesWaitingForAFlagThatTheOtherPathSetsGetIt) {
  // Odd lanes run first (the taken path) and wait for the even lane beside them, on the other
  // path, to set its flag: the waiting path yields to the path that has not run yet.
  const std::string ptx = kernel(R"(
  .shared .align 4 .b32 flags[64];
  mov.u32 %r20, flags;
  shl.b32 %r21, %r12, 2;
  add.u32 %r22, %r20, %r21;
  st.shared.u32 [%r22], 0;
  bar.sync 0;
  and.b32 %r3, %r12, 1;
  setp.eq.u32 %p1, %r3, 1;
  @%p1 bra ODD;
  mad.lo.u32 %r4, %r12, 3, 1;
  st.volatile.shared.u32 [%r22], %r4;
  st.global.u32 [%rd1], %r4;
  bra JOIN;
ODD:
  sub.u32 %r23, %r22, 4;
WAIT:
  ld.volatile.shared.u32 %r5, [%r23];
  setp.eq.u32 %p2, %r5, 0;
  @%p2 bra WAIT;
  add.u32 %r5, %r5, 1000;
  st.global.u32 [%rd1], %r5;
JOIN:)");
  std::vector<uint32_t> outs[2];
  runBothModes(ptx, {64}, 64, outs);
  for (int m = 0; m < 2; ++m)
    for (uint32_t i = 0; i < 64; ++i)
      EXPECT_EQ(outs[m][i], i % 2 ? (i - 1) * 3 + 1 + 1000 : i * 3 + 1)
          << i << (m ? " timing" : " functional");
}

// Lanes that ran ahead of a spinning path (yieldPath) into a function that is not inlined, and
// stopped there at a barrier or a warp-synchronous instruction, are one path again with the lanes
// they left when those arrive there through the same call (mergeSameContinuation): thread 0 waits
// for warp 1's flag in global memory (a grid sync's spin, as cooperative groups write it), its
// warp's other lanes go on into `first` (a block barrier, as nvcc -G's __barrier_sync, or a
// shuffle), and every lane of warp 0 stores to shared memory before the barrier after it. Warp 1
// reads the stores after that barrier.
void ranAheadIntoACall(const std::string& funcs, const std::string& first,
                       uint32_t (*expect)(uint32_t)) {
  const std::string ptx = kernel(R"(
  .shared .align 4 .b32 sh[64];
  mov.u32 %r21, sh;
  setp.ne.u32 %p1, %r12, 0;
  @%p1 bra JOIN;
SPIN:
  ld.volatile.global.u32 %r3, [%rd11];
  setp.eq.u32 %p2, %r3, 0;
  @%p2 bra SPIN;
JOIN:
  setp.lt.u32 %p3, %r12, 32;
  @%p3 bra CALL;
  mov.u32 %r9, 0;
DELAY:
  add.u32 %r9, %r9, 1;
  setp.lt.u32 %p4, %r9, 2000;
  @%p4 bra DELAY;
  setp.ne.u32 %p5, %r12, 32;
  @%p5 bra CALL;
  st.volatile.global.u32 [%rd11], 1;
CALL:
)" + first + R"(
  shl.b32 %r22, %r12, 2;
  add.u32 %r23, %r21, %r22;
  st.shared.u32 [%r23], %r4;
  call bsync, ();
  sub.u32 %r5, 63, %r12;
  shl.b32 %r6, %r5, 2;
  add.u32 %r7, %r21, %r6;
  ld.shared.u32 %r8, [%r7];
  st.global.u32 [%rd1], %r8;)",
                                 R"(
.func bsync()
{
  bar.sync 0;
  ret;
}
)" + funcs);
  std::vector<uint32_t> outs[2];
  uint64_t yields[2] = {};
  runBothModes(ptx, {64}, 64, outs, &yields);
  for (int m = 0; m < 2; ++m) {
    EXPECT_GT(yields[m], 0u) << (m ? "timing" : "functional");
    for (uint32_t i = 0; i < 64; ++i)
      EXPECT_EQ(outs[m][i], expect(63 - i)) << (m ? "timing" : "functional") << " thread " << i;
  }
}

TEST(Simt, LanesThatRanAheadToABarrierInACallAreOnePathAgainWithTheLanesTheyLeft) {
  ranAheadIntoACall("", R"(
  call bsync, ();
  add.u32 %r4, %r12, 1;)",
                    [](uint32_t t) { return t + 1; });
}

TEST(Simt, LanesThatRanAheadToAShuffleInACallAreOnePathAgainWithTheLanesTheyLeft) {
  ranAheadIntoACall(R"(
.func (.param .b32 rv) xor1(.param .b32 x)
{
  .reg .b32 %q<3>;
  ld.param.b32 %q1, [x];
  shfl.sync.bfly.b32 %q2, %q1, 1, 31, -1;
  st.param.b32 [rv], %q2;
  ret;
}
)",
                    R"(
  {
  .param .b32 a0;
  .param .b32 r0;
  st.param.b32 [a0], %r12;
  call (r0), xor1, (a0);
  ld.param.b32 %r4, [r0];
  })",
                    [](uint32_t t) { return t ^ 1u; });
}

TEST(Simt, DeadlockIsReported) {
  // Only warp 1 arrives at a barrier expecting 64 threads.
  try {
    KernelRun r(kernel(R"(
  setp.lt.u32 %p1, %r12, 32;
  @%p1 bra DONE;
  bar.sync 1, 64;
DONE:)"),
                {1}, {64}, 64);
    FAIL() << "no deadlock reported";
  } catch (const KernelFault& e) {
    EXPECT_NE(std::string(e.what()).find("deadlock"), std::string::npos) << e.what();
  }
}

// A warp's loads take shortcuts when each half-warp reads one element (a broadcast) or a row of
// consecutive elements: one translation and a block copy per half. Every pattern, element size
// and extension must load what lane-by-lane loads would, from shared and global memory, in both
// modes: rows, broadcasts, a whole-warp row, halves of different kinds, a gather, and a load
// whose destination is its address register.
TEST(Simt, HalfWarpRowsAndBroadcastsLoadEveryLanesElement) {
  struct Type {
    const char* name;
    unsigned bytes;
    bool isSigned;
  };
  const Type types[] = {{"u8", 1, false},  {"s8", 1, true},  {"s16", 2, true}, {"u16", 2, false},
                        {"u32", 4, false}, {"s32", 4, true}, {"b64", 8, false}};
  // Byte offsets per lane, in elements of the type's size (times `bytes` below).
  std::vector<std::pair<const char*, std::vector<uint32_t>>> patterns;
  std::vector<uint32_t> rows, broadcast, warpRow, mixed, rowAndGather, gather;
  for (uint32_t l = 0; l < 32; ++l) {
    rows.push_back(l % 16 + (l / 16) * 16);  // two rows
    broadcast.push_back((l / 16) * 3 + 1);   // one element per half
    warpRow.push_back(l);
    mixed.push_back(l < 16 ? 5 : l);              // a broadcast, then a row
    rowAndGather.push_back(l < 16 ? l : 47 - l);  // a row, then a reversed row
    gather.push_back((l * 7) % 32);
  }
  patterns = {{"rows", rows},
              {"broadcast", broadcast},
              {"warp row", warpRow},
              {"broadcast and row", mixed},
              {"row and gather", rowAndGather},
              {"gather", gather}};
  std::vector<uint8_t> data(256);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<uint8_t>(i * 37 + 0x81);
  const auto expected = [&](const Type& t, uint32_t byteOffset) {
    uint64_t v = 0;
    std::memcpy(&v, data.data() + byteOffset, t.bytes);
    if (t.isSigned && t.bytes < 8 && (v >> (8 * t.bytes - 1)) != 0)
      v |= ~0ull << (8 * t.bytes);  // sign-extended
    return v;
  };
  for (ExecMode mode : {ExecMode::Functional, ExecMode::Timing}) {
    for (const Type& t : types) {
      const std::string ty = t.name;
      // %rd4 = in (the data), %r20 = this lane's byte offset (in[64 + lane]); loads the element
      // at that offset from shared memory (a copy of the data) and from global memory, into
      // out[2 * lane] (shared) and out[64 + 2 * lane] (global) as 64-bit values, and once more
      // through an address register that is also the destination (shared, into out[128+]).
      const std::string body =
          R"(
  .shared .align 8 .b8 s[256];
  .reg .b64 %v<4>;
  ld.param.u64 %rd4, [in];
  mov.u32 %r13, s;
  ld.global.u32 %r14, [%rd2];
  shl.b32 %r15, %r12, 2;
  add.u32 %r16, %r13, %r15;
  st.shared.u32 [%r16], %r14;
  ld.global.u32 %r14, [%rd2+128];
  st.shared.u32 [%r16+128], %r14;
  bar.sync 0;
  ld.global.u32 %r20, [%rd2+256];
  add.u32 %r21, %r13, %r20;
  ld.shared.)" +
          ty + R"( %)" + (t.bytes == 8 ? "v1" : "r22") + R"(, [%r21];
  cvt.u64.u32 %rd5, %r20;
  add.s64 %rd6, %rd4, %rd5;
  ld.global.)" +
          ty + R"( %)" + (t.bytes == 8 ? "v2" : "r23") + R"(, [%rd6];
  mul.wide.u32 %rd7, %r12, 8;
  add.s64 %rd8, %rd10, %rd7;
)" +
          (t.bytes == 8 ? ""
                        : std::string("  cvt.") + (t.isSigned ? "s64.s32" : "u64.u32") +
                              " %v1, %r22;\n  cvt." + (t.isSigned ? "s64.s32" : "u64.u32") +
                              " %v2, %r23;\n") +
          R"(  st.global.u64 [%rd8], %v1;
  st.global.u64 [%rd8+256], %v2;
  cvt.u64.u32 %v3, %r21;
  ld.shared.)" +
          ty + R"( %)" + (t.bytes == 8 ? "v3, [%v3]" : "r21, [%r21]") + R"(;
)" +
          (t.bytes == 8
               ? ""
               : std::string("  cvt.") + (t.isSigned ? "s64.s32" : "u64.u32") + " %v3, %r21;\n") +
          R"(  st.global.u64 [%rd8+512], %v3;)";
      for (const auto& [name, offsets] : patterns) {
        Device dev(platform(), mode);
        Module& m = dev.loadModule(module(kernel(body)), "test.ptx");
        std::vector<uint32_t> in(96);
        std::memcpy(in.data(), data.data(), data.size());
        for (uint32_t l = 0; l < 32; ++l) in[64 + l] = offsets[l] * t.bytes;
        DevPtr din = dev.upload(in);
        DevPtr dout = dev.malloc(96 * 8);
        dev.launch(m.kernel("k"), {1}, {32}, 0, KernelArgs().ptr(dout).ptr(din).u32(96));
        const std::vector<uint64_t> out = dev.download<uint64_t>(dout, 96);
        for (uint32_t l = 0; l < 32; ++l) {
          const uint64_t want = expected(t, offsets[l] * t.bytes);
          const std::string where = ty + " " + name + " lane " + std::to_string(l) +
                                    (mode == ExecMode::Timing ? " timing" : " functional");
          EXPECT_EQ(out[l], want) << "shared " << where;
          EXPECT_EQ(out[32 + l], want) << "global " << where;
          EXPECT_EQ(out[64 + l], want) << "shared, destination = address, " << where;
        }
      }
    }
  }
}

// Stores take the same shortcuts. Each lane stores a value of its own to its element of shared
// and of global memory; where lanes store to one element, the last lane in lane order wins, as
// lane by lane: within a broadcast half, and where the second half overlaps the first.
TEST(Simt, HalfWarpRowsAndBroadcastsStoreInLaneOrder) {
  struct Type {
    const char* name;
    unsigned bytes;
  };
  const Type types[] = {{"b8", 1}, {"b16", 2}, {"b32", 4}, {"b64", 8}};
  std::vector<std::pair<const char*, std::vector<uint32_t>>> patterns;
  std::vector<uint32_t> rows, broadcast, oneElement, overlapping, gather;
  for (uint32_t l = 0; l < 32; ++l) {
    rows.push_back(l % 16 + (l / 16) * 16);
    broadcast.push_back((l / 16) * 3 + 1);
    oneElement.push_back(7);                    // both halves on one element: lane 31 wins
    overlapping.push_back(l < 16 ? l : l - 8);  // the second half's row overlaps the first's
    gather.push_back((l * 7) % 32);
  }
  patterns = {{"rows", rows},
              {"broadcast", broadcast},
              {"one element", oneElement},
              {"overlapping rows", overlapping},
              {"gather", gather}};
  for (ExecMode mode : {ExecMode::Functional, ExecMode::Timing}) {
    for (const Type& t : types) {
      const std::string ty = t.name;
      // The value of lane l: 0x8070605040302010 + l * 0x0101010101010101 (its low bytes).
      // Stores it at s + offset and at in + offset, then copies shared memory to out[0..255].
      const std::string body = R"(
  .shared .align 8 .b8 s[256];
  .reg .b64 %v<4>;
  ld.param.u64 %rd4, [in];
  mov.u32 %r13, s;
  shl.b32 %r15, %r12, 2;
  add.u32 %r16, %r13, %r15;
  mov.u32 %r14, 0;
  st.shared.u32 [%r16], %r14;
  st.shared.u32 [%r16+128], %r14;
  bar.sync 0;
  ld.global.u32 %r20, [%rd2+256];
  add.u32 %r21, %r13, %r20;
  cvt.u64.u32 %v1, %r12;
  mul.lo.u64 %v1, %v1, 72340172838076673;
  add.u64 %v1, %v1, -9191740941672636400;
)" +
                               (t.bytes == 8 ? std::string("  mov.b64 %v2, %v1;\n")
                                             : std::string("  cvt.u32.u64 %r22, %v1;\n")) +
                               "  st.shared." + ty + " [%r21], " + (t.bytes == 8 ? "%v2" : "%r22") +
                               R"(;
  cvt.u64.u32 %rd5, %r20;
  add.s64 %rd6, %rd4, %rd5;
  st.global.)" + ty + " [%rd6], " +
                               (t.bytes == 8 ? "%v2" : "%r22") + R"(;
  bar.sync 0;
  ld.shared.u32 %r23, [%r16];
  st.global.u32 [%rd1], %r23;
  ld.shared.u32 %r23, [%r16+128];
  st.global.u32 [%rd1+128], %r23;)";
      for (const auto& [name, offsets] : patterns) {
        Device dev(platform(), mode);
        Module& m = dev.loadModule(module(kernel(body)), "test.ptx");
        std::vector<uint32_t> in(96, 0);
        for (uint32_t l = 0; l < 32; ++l) in[64 + l] = offsets[l] * t.bytes;
        DevPtr din = dev.upload(in);
        DevPtr dout = dev.malloc(64 * 4);
        dev.launch(m.kernel("k"), {1}, {32}, 0, KernelArgs().ptr(dout).ptr(din).u32(96));
        const std::vector<uint32_t> out = dev.download<uint32_t>(dout, 64);
        const std::vector<uint32_t> global = dev.download<uint32_t>(din, 64);
        std::vector<uint8_t> want(256, 0);
        for (uint32_t l = 0; l < 32; ++l) {  // lane order
          const uint64_t v = 0x8070605040302010ull + l * 0x0101010101010101ull;
          std::memcpy(want.data() + offsets[l] * t.bytes, &v, t.bytes);
        }
        std::vector<uint8_t> gotShared(256), gotGlobal(256);
        std::memcpy(gotShared.data(), out.data(), 256);
        std::memcpy(gotGlobal.data(), global.data(), 256);
        const std::string where =
            ty + " " + name + (mode == ExecMode::Timing ? " timing" : " functional");
        EXPECT_EQ(gotShared, want) << "shared " << where;
        EXPECT_EQ(gotGlobal, want) << "global " << where;
      }
    }
  }
}

// A row of global loads that runs off the end of the device's last page faults at the first
// lane outside it, as lane-by-lane loads do (device memory is valid page by page).
TEST(Simt, AGlobalRowPastTheLastPageFaultsAtItsFirstLaneOutside) {
  Device dev(platform());
  Module& m = dev.loadModule(module(kernel(R"(
  ld.param.u64 %rd4, [in];
  add.s64 %rd5, %rd4, 65504;
  mul.wide.u32 %rd6, %r12, 4;
  add.s64 %rd7, %rd5, %rd6;
  ld.global.u32 %r5, [%rd7];
  st.global.u32 [%rd1], %r5;)")),
                             "test.ptx");
  DevPtr dout = dev.malloc(32 * 4);
  DevPtr din = dev.malloc(65536);  // one page, the last allocated
  try {
    dev.launch(m.kernel("k"), {1}, {32}, 0, KernelArgs().ptr(dout).ptr(din).u32(32));
    FAIL() << "no fault";
  } catch (const KernelFault& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("illegal 4-byte read at global address"), std::string::npos) << what;
    EXPECT_NE(what.find("thread (8,0,0)"), std::string::npos) << what;
  }
}

// Warps of a block take turns in the functional engine: a warp spinning on shared memory for a
// later warp of its block (as cooperative groups' multi-warp tiles sync) lets that warp run.
TEST(Simt, AWarpSpinningOnSharedMemoryLetsTheOtherWarpsRun) {
  KernelRun r(kernel(R"(
  .shared .align 4 .b32 flag;
  mov.u32 %r3, flag;
  setp.lt.u32 %p1, %r12, 32;
  @%p1 bra SPIN;
  mov.u32 %r6, 7;
  st.volatile.shared.u32 [%r3], %r6;
  bra.uni DONE;
SPIN:
  ld.volatile.shared.u32 %r4, [%r3];
  setp.eq.u32 %p2, %r4, 0;
  @%p2 bra SPIN;
DONE:
  ld.volatile.shared.u32 %r5, [%r3];
  st.global.u32 [%rd1], %r5;)"),
              {1}, {64}, 64);
  for (uint32_t i = 0; i < 64; ++i) EXPECT_EQ(r.out[i], 7u) << i;
}

TEST(Simt, TrapFaults) { EXPECT_THROW(KernelRun(kernel("  trap;"), {1}, {32}, 32), KernelFault); }

}  // namespace
