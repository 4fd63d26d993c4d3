// Sampled simulation (docs/sampling.md): the kernel sampler's grouping and estimates on
// synthetic launch signatures, and sampled runs of the catalog: every kernel's check passes, a
// run whose launches all start groups equals the full run exactly, extrapolated launches get
// their group's cycles per warp instruction, a wave-sampled launch's estimate follows from its
// detailed waves and lands near the full run, a launch of one wave is never cut, and sampled
// runs are deterministic.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <set>

#include "catalog.hpp"
#include "common/address_map.hpp"
#include "common/error.hpp"
#include "common/platform_config.hpp"
#include "common/statistics.hpp"
#include "func/access_log.hpp"
#include "func/global_memory.hpp"
#include "gpu/device.hpp"
#include "gpu/kernel_sampler.hpp"
#include "gpu/report.hpp"

using namespace gpusc;
using gpu::KernelSampler;
using gpu::LaunchSignature;

// A trial launch's undo log (GlobalMemory::beginUndoLog): every page written since it began is
// put back, through a translation cached before it began too, or one cached by a read since (a
// write through translateForWrite saves the page first), and a page created since is gone (zeros,
// as never touched); endUndoLog keeps the changes. The second log's pages come from the buffers
// the first one's undo() freed, and read as zeros where not written.
TEST(UndoLog, PutsBackEveryPageTouchedSinceItBegan) {
  func::GlobalMemory g(64u << 20);
  const uint64_t kPage = func::GlobalMemory::kPageSize;
  const uint64_t a = g.allocate(4 * kPage), b = g.allocate(2 * kPage);
  std::vector<uint8_t> bytes(4 * kPage);
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<uint8_t>(i * 7 + 3);
  g.write(a, bytes.data(), bytes.size());
  func::GlobalMemory::Tlb tlb;
  uint8_t* cached = g.translate(a + 16, tlb);  // a translation from before the log
  ASSERT_NE(cached, nullptr);
  const auto readAll = [&](uint64_t at, uint64_t n) {
    std::vector<uint8_t> v(n);
    g.read(at, v.data(), n);
    return v;
  };
  const std::vector<uint8_t> beforeB = readAll(b, 2 * kPage);
  for (bool keep : {false, true}) {
    const std::vector<uint8_t> beforeA = readAll(a, 4 * kPage);
    g.beginUndoLog();
    *g.translateForWrite(a + 16, tlb) ^= 0xff;  // the kernel's way, cached page
    EXPECT_EQ(*g.translate(a + 2 * kPage + 7, tlb), beforeA[2 * kPage + 7]);  // a read first
    *g.translateForWrite(a + 2 * kPage + 7, tlb) = 0x3c;  // then a write to the page
    *g.translateForWrite(a + 3 * kPage + 5, tlb) = 0x5a;  // another page of a
    const uint32_t word = 0xdeadbeef;
    g.write(a + kPage + 100, &word, sizeof word);  // a host copy
    g.fill(b + kPage, 0x77, 64);                   // a page created since
    *g.translateForWrite(b + 8, tlb) = 1;          // another one, the kernel's way
    if (keep) {
      g.endUndoLog();
      std::vector<uint8_t> want = beforeA;
      want[16] ^= 0xff;
      want[2 * kPage + 7] = 0x3c;
      want[3 * kPage + 5] = 0x5a;
      std::memcpy(want.data() + kPage + 100, &word, sizeof word);
      EXPECT_EQ(readAll(a, 4 * kPage), want);
      std::vector<uint8_t> wantB = beforeB;
      std::fill(wantB.begin() + kPage, wantB.begin() + kPage + 64, 0x77);
      wantB[8] = 1;
      EXPECT_EQ(readAll(b, 2 * kPage), wantB);
    } else {
      g.undo();
      EXPECT_EQ(readAll(a, 4 * kPage), beforeA);
      EXPECT_EQ(readAll(b, 2 * kPage), beforeB);
      EXPECT_FALSE(g.logging());
      // The memory works on: a translation after undo() reaches the page as it is now.
      EXPECT_EQ(*g.translate(a + 16, tlb), beforeA[16]);
    }
  }
  EXPECT_THROW(g.undo(), InternalError);  // no log open
}

// A wave-sampled launch's tail (gpu::FunctionalTail) runs on GlobalMemory::copyOnAccess: each
// page as it was when the copy was made, though the memory changed it since (through a
// translation cached before); applyChanges writes back only the bytes the copy changed.
TEST(UndoLog, ACopyOnAccessSeesMemoryAsItWasWhenMade) {
  func::GlobalMemory g(64u << 20);
  const uint64_t kPage = func::GlobalMemory::kPageSize;
  const uint64_t a = g.allocate(3 * kPage);
  std::vector<uint8_t> bytes(2 * kPage);
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<uint8_t>(i * 5 + 1);
  g.write(a, bytes.data(), bytes.size());  // pages 0 and 1; page 2 never touched
  func::GlobalMemory::Tlb tlb;
  ASSERT_NE(g.translate(a, tlb), nullptr);
  std::unique_ptr<func::GlobalMemory> copy = g.copyOnAccess();
  EXPECT_TRUE(g.logging());
  *g.translateForWrite(a + 1, tlb) = 0xaa;              // the model, after the copy was made
  *g.translateForWrite(a + 2 * kPage + 9, tlb) = 0xbb;  // a page it creates
  EXPECT_EQ(*copy->translate(a + 1), bytes[1]);
  EXPECT_EQ(*copy->translate(a + 2 * kPage + 9), 0);
  *copy->translateForWrite(a + kPage + 2) = 0x55;       // the tail's change
  *copy->translateForWrite(a + 3) = bytes[3];           // a store of the value there: no change
  *copy->translateForWrite(a + 2 * kPage + 10) = 0x66;  // in the page the model created
  EXPECT_EQ(copy->translate(a + 8 * kPage), nullptr);   // outside the allocation, as in g
  g.applyChanges(*copy);
  EXPECT_FALSE(g.logging());
  std::vector<uint8_t> now(3 * kPage);
  g.read(a, now.data(), now.size());
  std::vector<uint8_t> want = bytes;
  want.resize(3 * kPage, 0);
  want[1] = 0xaa;
  want[kPage + 2] = 0x55;
  want[2 * kPage + 9] = 0xbb;
  want[2 * kPage + 10] = 0x66;
  EXPECT_EQ(now, want);
}

namespace {

// A launch of kernel `k` on 8 CTAs of 128 threads: `insts` warp instructions, a share `memShare`
// of them loads and stores (the rest integer), `lanes` active lanes per instruction.
LaunchSignature sig(const std::string& k, uint64_t insts, double memShare = 0.2, double lanes = 32,
                    uint32_t ctas = 8) {
  func::ExecStats s;
  s.warpInsts = insts;
  s.threadInsts = uint64_t(std::llround(lanes * double(insts)));
  const auto mem = uint64_t(std::llround(memShare * double(insts)));
  s.byClass[int(func::InstClass::Load)] = mem;
  s.byClass[int(func::InstClass::IntAdd)] = insts - mem;
  return LaunchSignature::of(k, {ctas, 1, 1}, {128, 1, 1}, 0, s);
}

SamplingConfig kernelSampling(double tolerance = 5, uint32_t every = 4) {
  SamplingConfig c;
  c.mode = "kernel";
  c.tolerance_pct = tolerance;
  c.detail_every = every;
  return c;
}

}  // namespace

TEST(KernelSampler, GroupsBySignatureWithinTheTolerance) {
  KernelSampler s(kernelSampling(5, 4));
  // The first launch of a shape starts a group and runs in detail.
  auto d = s.decide(sig("a", 1000));
  EXPECT_TRUE(d.newGroup);
  EXPECT_TRUE(d.detail);
  EXPECT_EQ(d.group, 0u);
  // Within 5 %: instructions +4 %, memory share +0.04, lanes -1.5 (4.7 % of 32).
  for (const LaunchSignature& x :
       {sig("a", 1040), sig("a", 1000, 0.24), sig("a", 1000, 0.2, 30.5)}) {
    d = s.decide(x);
    EXPECT_FALSE(d.newGroup);
    EXPECT_EQ(d.group, 0u);
  }
  // Beyond it, or another shape or kernel: new groups.
  EXPECT_TRUE(s.decide(sig("a", 1060)).newGroup);               // +6 % instructions
  EXPECT_TRUE(s.decide(sig("a", 1000, 0.26)).newGroup);         // memory share +0.06
  EXPECT_TRUE(s.decide(sig("a", 1000, 0.2, 30)).newGroup);      // 2 lanes of 32: 6.25 %
  EXPECT_TRUE(s.decide(sig("a", 1000, 0.2, 32, 16)).newGroup);  // another grid
  EXPECT_TRUE(s.decide(sig("b", 1000)).newGroup);               // another kernel
  EXPECT_EQ(s.groups(), 6u);
  EXPECT_EQ(s.members(0), 4u);
}

// A launch needs its signature measured first (a functional run) only when some group of its
// shape would extrapolate it; one due for detail in every such group runs in detail at once.
TEST(KernelSampler, ALaunchDueForDetailInEveryGroupOfItsShapeNeedsNoSignatureFirst) {
  KernelSampler s(kernelSampling(5, 4));
  EXPECT_TRUE(s.detailWhereverItJoins(sig("a", 1)));  // no group has the shape: a new one
  s.decide(sig("a", 1000));
  EXPECT_TRUE(s.detailWhereverItJoins(sig("a", 1)));  // group 0's second member: warm, detailed
  s.decide(sig("a", 1000));
  EXPECT_FALSE(s.detailWhereverItJoins(sig("a", 1)));  // its third would be extrapolated
  s.decide(sig("b", 1000));
  EXPECT_TRUE(s.detailWhereverItJoins(sig("b", 1)));   // another kernel: its own groups
  EXPECT_FALSE(s.detailWhereverItJoins(sig("a", 1)));  // unchanged
  s.decide(sig("a", 2000));                            // a second group of shape a
  s.decide(sig("a", 1000));
  s.decide(sig("a", 1000));
  EXPECT_TRUE(s.detailWhereverItJoins(sig("a", 1)));  // group 0's member 4 and group 2's second
  s.decide(sig("a", 2000));
  EXPECT_FALSE(s.detailWhereverItJoins(sig("a", 1)));  // group 2's third would be extrapolated
  EXPECT_FALSE(s.detailWhereverItJoins(sig("a", 1, 0.2, 32)));
  EXPECT_TRUE(s.detailWhereverItJoins(sig("a", 1, 0.2, 32, 16)));  // another grid
}

TEST(KernelSampler, TheFirstTwoAndEveryDetailEveryThMemberRunInDetail) {
  KernelSampler s(kernelSampling(5, 4));
  std::vector<bool> detail;
  for (int i = 0; i < 13; ++i) detail.push_back(s.decide(sig("a", 1000)).detail);
  // The first (cold), the second (warm), then members 4, 8 and 12 of the group.
  const std::vector<bool> want = {true,  true, false, false, true,  false, false,
                                  false, true, false, false, false, true};
  EXPECT_EQ(detail, want);
  KernelSampler all(kernelSampling(5, 1));
  for (int i = 0; i < 5; ++i) EXPECT_TRUE(all.decide(sig("a", 1000)).detail);
}

TEST(KernelSampler, EstimatesFromTheWarmCyclesPerInstructionAndTheirSpread) {
  using BoundFrom = KernelSampler::BoundFrom;
  KernelSampler s(kernelSampling(50, 2));
  s.decide(sig("a", 1000));
  s.recordDetailed(0, 0, 1000, 4000);  // cold: CPI 4
  // The cold launch alone: its CPI, no bound.
  KernelSampler::Estimate e = s.estimate(0, 1200);
  EXPECT_DOUBLE_EQ(e.cpi, 4.0);
  EXPECT_DOUBLE_EQ(e.cycles, 4800.0);
  EXPECT_FALSE(e.bound.pct.has_value());
  EXPECT_EQ(e.bound.from, BoundFrom::None);
  // One warm launch (CPI 3): the estimate is the warm CPI. The cold and the warm CPI are the
  // group's two: their sample spread, |4 - 3| / sqrt(2) relative to 3, with one degree of
  // freedom; the interval for one more launch is t(1) = 12.706 spreads times sqrt(1 + 1/1).
  s.recordDetailed(0, 1, 1000, 3000);
  e = s.estimate(0, 1000);
  EXPECT_DOUBLE_EQ(e.cpi, 3.0);
  EXPECT_DOUBLE_EQ(e.cycles, 3000.0);
  ASSERT_TRUE(e.bound.pct.has_value());
  EXPECT_NEAR(*e.bound.pct, 100.0 * 12.7062047 * (1.0 / std::sqrt(2.0)) / 3.0 * std::sqrt(2.0),
              1e-4);
  EXPECT_EQ(e.bound.from, BoundFrom::ColdWarm);
  // A second warm launch at CPI 3.3: mean 3.15, sample spread 0.2121 / 3.15 with one degree of
  // freedom; the 95 % prediction interval for one more launch is t(1) = 12.706 spreads times
  // sqrt(1 + 1/2).
  s.recordDetailed(0, 3, 1000, 3300);
  e = s.estimate(0, 1000);
  EXPECT_DOUBLE_EQ(e.cpi, 3.15);
  ASSERT_TRUE(e.bound.pct.has_value());
  EXPECT_NEAR(*e.bound.pct, 100.0 * 12.7062047 * (0.3 / std::sqrt(2.0)) / 3.15 * std::sqrt(1.5),
              1e-4);
  EXPECT_EQ(e.bound.from, BoundFrom::Group);
  // Another group with only its cold launch borrows the pooled warm spread (one degree of
  // freedom), for an estimate that rests on one launch: sqrt(1 + 1/1).
  s.decide(sig("b", 500));
  s.recordDetailed(1, 4, 500, 1000);
  e = s.estimate(1, 500);
  EXPECT_DOUBLE_EQ(e.cpi, 2.0);
  ASSERT_TRUE(e.bound.pct.has_value());
  EXPECT_EQ(e.bound.from, BoundFrom::Pooled);
  const double r1 = 3.0 / 3.15 - 1, r2 = 3.3 / 3.15 - 1;
  EXPECT_NEAR(*e.bound.pct, 100.0 * 12.7062047 * std::sqrt(r1 * r1 + r2 * r2) * std::sqrt(2.0),
              1e-4);
  // A third warm launch (CPI 3.15): two degrees of freedom, t(2) = 4.303, three warm launches.
  s.recordDetailed(0, 5, 1000, 3150);
  e = s.estimate(0, 1000);
  EXPECT_DOUBLE_EQ(e.cpi, 3.15);
  ASSERT_TRUE(e.bound.pct.has_value());
  EXPECT_NEAR(*e.bound.pct,
              100.0 * 4.3026527 * std::sqrt((r1 * r1 + r2 * r2) / 2.0) * std::sqrt(4.0 / 3.0),
              1e-4);
}

TEST(KernelSampler, StudentsTQuantilesWidenTheBoundsOfFewSamples) {
  EXPECT_NEAR(studentT95(1), 12.7062047, 1e-6);
  EXPECT_NEAR(studentT95(3), 3.1824463, 1e-6);
  EXPECT_NEAR(studentT95(30), 2.0422725, 1e-6);
  EXPECT_NEAR(studentT95(1000000), 1.9599640, 1e-5);
  EXPECT_THROW(studentT95(0), InternalError);
}

// sampling.borrow_pct: a new group near a measured one of its shape takes that group's CPI and
// runs in the functional engine, once a check has measured what borrowing errs by; every
// detail_every-th candidate of the shape is a check, and a check that misses by more than the
// tolerance makes the next one a check too.
TEST(KernelSampler, NewGroupsBorrowANeighboursCpiOnceAndWhileChecksHold) {
  using BoundFrom = KernelSampler::BoundFrom;
  SamplingConfig c = kernelSampling(5, 4);
  c.borrow_pct = 30;
  KernelSampler s(c);
  auto d = s.decide(sig("a", 1000));  // group 0: no lender
  EXPECT_TRUE(d.detail);
  EXPECT_FALSE(s.lender(d.group).has_value());
  EXPECT_FALSE(s.recordDetailed(0, 0, 1000, 2000).has_value());  // cold CPI 2; no check
  d = s.decide(sig("a", 1000));
  EXPECT_FALSE(s.recordDetailed(0, 1, 1000, 2200).has_value());  // warm CPI 2.2
  // Group 1 (-10 %) has a lender but no check has run: it is the check, in detail.
  d = s.decide(sig("a", 900));
  EXPECT_TRUE(d.newGroup);
  EXPECT_TRUE(d.detail);
  EXPECT_FALSE(s.lender(d.group).has_value());
  // The lender's 2.2 errs by -4.35 %: within 5 %.
  const std::optional<double> error = s.recordDetailed(1, 2, 900, 900 * 2.3);
  ASSERT_TRUE(error.has_value());
  EXPECT_NEAR(*error, 2.2 / 2.3 - 1, 1e-12);
  // Now a new group borrows from the nearest measured one (group 1, at 800 against 900: -11 %;
  // group 0 is at -20 %): no detail, so its signature must be measured first.
  EXPECT_FALSE(s.detailWhereverItJoins(sig("a", 1)));
  d = s.decide(sig("a", 800));
  EXPECT_TRUE(d.newGroup);
  EXPECT_FALSE(d.detail);
  ASSERT_TRUE(s.lender(d.group).has_value());
  EXPECT_EQ(*s.lender(d.group), 1u);
  EXPECT_EQ(s.estimatedFrom(2), 1u);
  KernelSampler::Estimate e = s.estimate(2, 800);
  EXPECT_DOUBLE_EQ(e.cpi, 2.3);  // group 1 has only its first: that one's CPI
  EXPECT_DOUBLE_EQ(e.cycles, 2.3 * 800);
  ASSERT_TRUE(e.bound.pct.has_value());
  EXPECT_EQ(e.bound.from, BoundFrom::Borrowed);
  // One error, one degree of freedom: t(1) x |error|.
  EXPECT_NEAR(*e.bound.pct, 100.0 * 12.7062047 * std::abs(2.2 / 2.3 - 1), 1e-4);
  // A borrowed group's members are borrowed too, until member detail_every (warm) runs.
  for (int i = 1; i < 4; ++i) EXPECT_FALSE(s.decide(sig("a", 800)).detail) << i;
  EXPECT_TRUE(s.decide(sig("a", 800)).detail);
  s.recordDetailed(2, 9, 800, 800 * 2.5);
  EXPECT_EQ(s.estimatedFrom(2), 2u);
  EXPECT_DOUBLE_EQ(s.estimate(2, 800).cpi, 2.5);
  // Too far from every measured group (-50 % from the nearest): a group of its own, in detail.
  d = s.decide(sig("a", 400));
  EXPECT_TRUE(d.detail);
  EXPECT_FALSE(s.lender(d.group).has_value());
  // Candidates 2 and 3 borrow; candidate 4 (the detail_every-th) checks.
  EXPECT_FALSE(s.decide(sig("a", 700)).detail);
  EXPECT_FALSE(s.decide(sig("a", 650)).detail);
  d = s.decide(sig("a", 600));
  EXPECT_TRUE(d.detail);
  const size_t check = d.group;
  // It misses by far more than 5 %: the next candidate checks too.
  s.recordDetailed(check, 20, 600, 600 * 4.0);
  EXPECT_TRUE(s.decide(sig("a", 560)).detail);
  // Another shape checks its own first candidate, and its borrowed estimates are bounded by its
  // own checks' errors.
  s.decide(sig("b", 1000));
  s.recordDetailed(s.groups() - 1, 21, 1000, 1000);
  d = s.decide(sig("b", 900));
  EXPECT_TRUE(d.detail);
  s.recordDetailed(d.group, 22, 900, 936);  // CPI 1.04: the lender's 1.0 errs by -3.8 %
  d = s.decide(sig("b", 800));
  EXPECT_FALSE(d.detail);
  e = s.estimate(d.group, 800);
  EXPECT_DOUBLE_EQ(e.cpi, 1.04);
  ASSERT_TRUE(e.bound.pct.has_value());
  EXPECT_NEAR(*e.bound.pct, 100.0 * 12.7062047 * (1.0 - 1.0 / 1.04), 1e-4);
  // A launch of the same kernel and block on another grid borrows too, its CTA count one more
  // difference: 9 CTAs against 8 (+12.5 %) and 700 instructions against its lender's 900 (-22 %).
  d = s.decide(sig("b", 700, 0.2, 32, 9));
  EXPECT_FALSE(d.detail);
  ASSERT_TRUE(s.lender(d.group).has_value());
  EXPECT_DOUBLE_EQ(s.estimate(d.group, 700).cpi, 1.04);
  EXPECT_TRUE(s.decide(sig("b", 700, 0.2, 32, 16)).detail);  // twice the CTAs: too far
  // Off (borrow_pct 0): new groups never borrow.
  KernelSampler off(kernelSampling(5, 4));
  off.decide(sig("a", 1000));
  off.recordDetailed(0, 0, 1000, 2000);
  off.decide(sig("a", 900));
  off.recordDetailed(1, 1, 900, 1800);
  EXPECT_TRUE(off.decide(sig("a", 800)).detail);
}

TEST(KernelSampler, MemoryUnitsPerAccessSeparateGroups) {
  KernelSampler s(kernelSampling(5, 4));
  func::ExecStats a;
  a.warpInsts = 1000;
  a.threadInsts = 32000;
  a.byClass[int(func::InstClass::Atomic)] = 200;
  a.byClass[int(func::InstClass::IntAdd)] = 800;
  a.memInsts = 200;
  a.memUnits = 200 * 2;  // two lanes on one address at most
  func::ExecStats b = a;
  b.memUnits = 200 * 20;  // the same instructions, twenty lanes on one address: contention
  EXPECT_TRUE(s.decide(LaunchSignature::of("h", {4, 1, 1}, {256, 1, 1}, 0, a)).newGroup);
  EXPECT_TRUE(s.decide(LaunchSignature::of("h", {4, 1, 1}, {256, 1, 1}, 0, b)).newGroup);
  EXPECT_FALSE(s.decide(LaunchSignature::of("h", {4, 1, 1}, {256, 1, 1}, 0, a)).newGroup);
}

// A launch's memory units (its signature's memory units per access, counted in timing mode
// with kernel sampling): per load the distinct 32-byte sectors its lanes touch, per atomic the
// most lanes on one address. One warp, each access once.
TEST(KernelSampler, MemoryUnitsCountSectorsOrTheMostLanesOnOneAddress) {
  const std::string ptx = R"(.version 9.0
.target sm_90
.address_size 64
.visible .entry units(.param .u64 p) {
  .reg .b32 %r<12>;
  .reg .b64 %rd<12>;
  .reg .pred %p<2>;
  .shared .align 16 .b8 sh[512];
  ld.param.u64 %rd1, [p];
  cvta.to.global.u64 %rd2, %rd1;
  mov.u32 %r1, %tid.x;
  mul.wide.u32 %rd3, %r1, 4;
  add.s64 %rd4, %rd2, %rd3;
  ld.global.u32 %r2, [%rd4];
  mul.wide.u32 %rd5, %r1, 128;
  add.s64 %rd6, %rd2, %rd5;
  ld.global.u32 %r3, [%rd6];
  mul.wide.u32 %rd7, %r1, 16;
  add.s64 %rd8, %rd2, %rd7;
  ld.global.v4.u32 {%r4, %r5, %r6, %r7}, [%rd8];
  ld.global.u32 %r8, [%rd2+36];
  and.b32 %r9, %r1, 3;
  mul.wide.u32 %rd9, %r9, 4;
  add.s64 %rd10, %rd2, %rd9;
  atom.global.add.u32 %r10, [%rd10], 1;
  mov.u32 %r11, sh;
  add.s32 %r11, %r11, %r9;
  ld.shared.u8 %r11, [%r11];
  sub.u32 %r9, 31, %r1;
  mul.wide.u32 %rd9, %r9, 128;
  add.s64 %rd10, %rd2, %rd9;
  ld.global.u32 %r8, [%rd10];
  and.b32 %r9, %r1, 15;
  shr.u32 %r10, %r1, 4;
  mul.lo.u32 %r10, %r10, 512;
  add.u32 %r9, %r9, %r10;
  mul.wide.u32 %rd9, %r9, 4;
  add.s64 %rd10, %rd2, %rd9;
  setp.lt.u32 %p1, %r1, 24;
  @%p1 ld.global.u32 %r8, [%rd10];
  ld.global.u32 %r8, [%rd10];
  shr.u32 %r9, %r1, 1;
  mul.wide.u32 %rd9, %r9, 4;
  add.s64 %rd10, %rd2, %rd9;
  ld.global.u32 %r8, [%rd10];
  setp.eq.u32 %p1, %r1, 31;
  selp.u32 %r9, 0, %r1, %p1;
  mul.wide.u32 %rd9, %r9, 4;
  add.s64 %rd10, %rd2, %rd9;
  ld.global.u32 %r8, [%rd10];
  ret;
})";
  Device dev(loadPlatform("gtx480", {"sampling.mode=kernel"}), ExecMode::Timing);
  Module& m = dev.loadModule(ptx, "units.ptx");
  const DevPtr buf = dev.upload(std::vector<uint32_t>(1024, 0));
  dev.launch(m.kernel("units"), {1}, {32}, 0, KernelArgs().ptr(buf));
  const func::ExecStats& st = dev.launches().at(0).stats;
  // Each count path: ld.param (1: every lane the same bytes), coalesced (4), strided by 128 bytes
  // (32: in ascending order), .v4 (16), one address (1), the atomic (8 lanes on each of 4
  // addresses: 8), shared bytes 0, 1, 2, 3, 0, ... (1: out of order within 1 KB), strided by
  // 128 bytes downwards (32: out of order and beyond 1 KB, counted by sorting), and two rows of
  // 16 lanes 2 KB apart with lanes 24 to 31 masked off (2 sectors of the first row, 1 of the
  // second); the same two rows with every lane (4: ascending, in the full warp's own pass), two
  // lanes on each element of a row (2: ascending, not one stride), and a row whose last lane
  // reads its first element (4: out of order, within 1 KB).
  EXPECT_EQ(st.memInsts, 12u);
  EXPECT_EQ(st.memUnits, 1u + 4 + 32 + 16 + 1 + 8 + 1 + 32 + 3 + 4 + 2 + 4);
}

// The memory units of an instruction whose warps repeat a pattern (MemoryUnitsMemo): six warps
// load rows of 4-byte words, 16 lanes (even warps) or 20 (odd warps), each row 8 bytes after the
// previous warp's. Warps 0 and 4 (and 1 and 5) differ by one whole sector, so they touch as many
// sectors; warp 2's row starts half a sector after warp 0's, and touches one more. Each warp's
// count is the distinct sectors of its own addresses, in the timing model's steps (the first two
// launches, in detail) and in the functional engine's (the third, a trial, extrapolated).
TEST(KernelSampler, MemoryUnitsOfRepeatedPatternsAreEachWarpsOwn) {
  const std::string ptx = R"(.version 9.0
.target sm_90
.address_size 64
.visible .entry rows(.param .u64 p) {
  .reg .b32 %r<8>;
  .reg .b64 %rd<6>;
  .reg .pred %p<2>;
  ld.param.u64 %rd1, [p];
  cvta.to.global.u64 %rd2, %rd1;
  mov.u32 %r1, %tid.x;
  and.b32 %r2, %r1, 31;
  shr.u32 %r3, %r1, 5;
  and.b32 %r4, %r3, 1;
  shl.b32 %r4, %r4, 2;
  add.u32 %r4, %r4, 16;
  setp.lt.u32 %p1, %r2, %r4;
  shl.b32 %r5, %r3, 3;
  shl.b32 %r6, %r2, 2;
  add.u32 %r5, %r5, %r6;
  cvt.u64.u32 %rd3, %r5;
  add.s64 %rd4, %rd2, %rd3;
  @%p1 ld.global.u32 %r7, [%rd4];
  ret;
})";
  const auto sectors = [](uint64_t first, int lanes) {
    std::set<uint64_t> s;
    for (int l = 0; l < lanes; ++l) {
      s.insert((first + 4 * uint64_t(l)) >> 5);
      s.insert((first + 4 * uint64_t(l) + 3) >> 5);
    }
    return uint64_t(s.size());
  };
  uint64_t rows = 0;
  for (int w = 0; w < 6; ++w) rows += sectors(8 * uint64_t(w), w % 2 ? 20 : 16);
  ASSERT_NE(sectors(0, 16), sectors(16, 16));  // the pattern shifted by half a sector differs
  ASSERT_EQ(sectors(0, 16), sectors(32, 16));
  Device dev(loadPlatform("gtx480", {"sampling.mode=kernel"}), ExecMode::Timing);
  Module& m = dev.loadModule(ptx, "rows.ptx");
  const DevPtr buf = dev.upload(std::vector<uint32_t>(1024, 0));
  for (int k = 0; k < 3; ++k) dev.launch(m.kernel("rows"), {1}, {192}, 0, KernelArgs().ptr(buf));
  ASSERT_EQ(dev.launches().size(), 3u);
  EXPECT_FALSE(dev.launches()[2].sampled->detail);
  for (const LaunchRecord& l : dev.launches()) {
    EXPECT_EQ(l.stats.memInsts, 12u);            // ld.param and the row, in each warp
    EXPECT_EQ(l.stats.memUnits, 6u * 1 + rows);  // ld.param: one sector
  }
}

namespace {

struct SampledRun {
  std::vector<LaunchRecord> launches;
  nlohmann::json totals;
  bool pass = false;
  std::string message;
};

SampledRun runCatalog(const std::string& kernel, const std::vector<std::string>& sets,
                      catalog::Size size = catalog::Size::Tiny, unsigned threads = 1) {
  const PlatformConfig cfg = loadPlatform("gtx480", sets);
  Device dev(cfg, ExecMode::Timing);
  dev.setHostThreads(threads);
  auto wl = catalog::find(kernel).make(size);
  wl->setup(dev);
  wl->run(dev);
  const catalog::CheckResult r = wl->check(dev);
  return {dev.launches(), runTotalsJson(dev.launches(), cfg), r.pass, r.message};
}

// The warm mean cycles per warp instruction of the detailed launches `from` (all but the first,
// while there is another), as an extrapolated launch resting on them gets.
double warmCpiOf(const std::vector<LaunchRecord>& launches, const std::vector<size_t>& from) {
  std::vector<double> cpis;
  for (size_t k : from)
    cpis.push_back(double(launches[k].timing->cycles) / double(launches[k].stats.warpInsts));
  if (cpis.size() == 1) return cpis[0];
  double cpi = 0;
  for (size_t k = 1; k < cpis.size(); ++k) cpi += cpis[k] / double(cpis.size() - 1);
  return cpi;
}

}  // namespace

// Every catalog kernel, sampled by launches and waves (on two SMs, so that launches have waves to
// sample at tiny size): its check passes, every launch says whether it ran in detail and whether
// its waves were sampled, and the run's figures add up.
class SampledCatalog : public ::testing::TestWithParam<std::string> {};

TEST_P(SampledCatalog, PassesItsCheckWithEveryLaunchAccountedFor) {
  const SampledRun r = runCatalog(
      GetParam(), {"sampling.mode=kernel+wave", "sampling.detail_every=4", "gpu.num_sms=2"});
  EXPECT_TRUE(r.pass) << r.message;
  ASSERT_TRUE(r.totals.contains("sampling"));
  const auto& s = r.totals["sampling"];
  uint64_t detailed = 0, cycles = 0;
  for (const auto& l : r.launches) {
    ASSERT_TRUE(l.timing && l.sampled);
    detailed += l.sampled->detail;
    cycles += l.timing->cycles;
    if (!l.sampled->detail) {
      ASSERT_FALSE(l.sampled->detailedFrom.empty());
      for (size_t from : l.sampled->detailedFrom) {
        ASSERT_LT(from, r.launches.size());
        EXPECT_TRUE(r.launches[from].sampled->detail);
        EXPECT_EQ(r.launches[from].sampled->group, l.sampled->group);
      }
      EXPECT_TRUE(l.timing->sms.empty());
    }
    if (l.sampled->waves) {
      const WaveSample& w = *l.sampled->waves;
      EXPECT_TRUE(l.sampled->detail);
      EXPECT_EQ(w.ctasTotal, l.grid.count());
      EXPECT_EQ(l.stats.ctas, w.ctasTotal);  // every CTA ran, in one engine or the other
      EXPECT_EQ((w.ctasTotal - w.ctasDetailed) % w.ctasPerWave, 0u);
      EXPECT_EQ(l.timing->cycles,
                uint64_t(std::llround(double(w.detailedCycles) + w.extrapolatedCycles)));
    }
  }
  EXPECT_GE(detailed, 1u);
  EXPECT_EQ(s["launches_detailed"].get<uint64_t>(), detailed);
  EXPECT_EQ(s["launches_extrapolated"].get<uint64_t>(), r.launches.size() - detailed);
  EXPECT_EQ(r.totals["cycles"].get<uint64_t>(), cycles);
}

INSTANTIATE_TEST_SUITE_P(Tiny, SampledCatalog, ::testing::ValuesIn(catalog::names()),
                         [](const auto& info) { return info.param; });

// A workload whose launches each start a group (scan at tiny: five launches, none within 5 % of
// an earlier one of its shape) runs every launch in detail: the sampled run is the full run,
// cycle for cycle.
TEST(SampledRun, EqualsTheFullRunWhenEveryLaunchStartsAGroup) {
  const SampledRun full = runCatalog("scan", {});
  const SampledRun sampled = runCatalog("scan", {"sampling.mode=kernel"});
  ASSERT_TRUE(sampled.pass) << sampled.message;
  ASSERT_GT(full.launches.size(), 1u);
  ASSERT_EQ(full.launches.size(), sampled.launches.size());
  for (size_t i = 0; i < full.launches.size(); ++i) {
    EXPECT_TRUE(sampled.launches[i].sampled->detail);
    EXPECT_EQ(full.launches[i].timing->cycles, sampled.launches[i].timing->cycles) << i;
  }
  EXPECT_EQ(full.totals["cycles"], sampled.totals["cycles"]);
  EXPECT_EQ(full.totals["energy"], sampled.totals["energy"]);
}

// Gaussian elimination launches its two kernels once per column on the same grid: later columns
// join groups, run in the functional engine, and get their group's cycles per warp instruction.
TEST(SampledRun, ExtrapolatesFromTheGroupsDetailedLaunchesDeterministically) {
  const std::vector<std::string> sets = {"sampling.mode=kernel", "sampling.detail_every=4",
                                         "sampling.tolerance_pct=20"};
  const SampledRun a = runCatalog("gaussian", sets);
  ASSERT_TRUE(a.pass) << a.message;
  size_t extrapolated = 0;
  for (const auto& l : a.launches) {
    if (l.sampled->detail) continue;
    ++extrapolated;
    const double cpi = warmCpiOf(a.launches, l.sampled->detailedFrom);
    EXPECT_NEAR(double(l.timing->cycles), cpi * double(l.stats.warpInsts), 0.5);
    EXPECT_DOUBLE_EQ(l.sampled->cpi, cpi);
  }
  EXPECT_GT(extrapolated, 0u);
  const SampledRun b = runCatalog("gaussian", sets);
  ASSERT_EQ(a.launches.size(), b.launches.size());
  for (size_t i = 0; i < a.launches.size(); ++i) {
    EXPECT_EQ(a.launches[i].timing->cycles, b.launches[i].timing->cycles) << i;
    EXPECT_EQ(a.launches[i].sampled->detail, b.launches[i].sampled->detail) << i;
  }
  // The same figures (the worst droop's cycle counts on from the engine's earlier runs in this
  // process: the engine outlives a Device).
  nlohmann::json ta = a.totals, tb = b.totals;
  ta["voltage"].erase("worst_cycle");
  tb["voltage"].erase("worst_cycle");
  EXPECT_EQ(ta, tb);
}

// With sampling.borrow_pct, gaussian's columns that start groups borrow a measured neighbour's
// cycles per warp instruction: they run in the functional engine (the result stays exact), get
// the lender's warm CPI times their own warp instructions, and the run's bound counts them.
TEST(SampledRun, NewGroupsBorrowTheirNeighboursCyclesPerInstruction) {
  const std::vector<std::string> sets = {"sampling.mode=kernel", "sampling.borrow_pct=50"};
  const SampledRun a = runCatalog("gaussian", sets, catalog::Size::Small);
  ASSERT_TRUE(a.pass) << a.message;
  const SampledRun plain = runCatalog("gaussian", {"sampling.mode=kernel"}, catalog::Size::Small);
  size_t borrowed = 0, detailed = 0, detailedPlain = 0, checks = 0;
  for (const auto& l : plain.launches) detailedPlain += l.sampled->detail ? 1 : 0;
  for (size_t i = 0; i < a.launches.size(); ++i) {
    const LaunchRecord& l = a.launches[i];
    if (l.sampled->detail) ++detailed;
    if (l.sampled->checkErrorPct) {  // a check of borrowing runs in detail, before any borrows
      ++checks;
      EXPECT_TRUE(l.sampled->detail);
      EXPECT_TRUE(std::isfinite(*l.sampled->checkErrorPct));
      if (checks == 1) {
        EXPECT_EQ(borrowed, 0u);
      }
    }
    if (!l.sampled->lender) continue;
    ++borrowed;
    EXPECT_FALSE(l.sampled->detail);
    ASSERT_FALSE(l.sampled->detailedFrom.empty());
    // Every launch it rests on is a detailed member of the lender's group, which ran before it.
    for (size_t from : l.sampled->detailedFrom) {
      ASSERT_LT(from, i);
      EXPECT_EQ(a.launches[from].sampled->group, *l.sampled->lender);
      EXPECT_TRUE(a.launches[from].sampled->detail);
    }
    const double cpi = warmCpiOf(a.launches, l.sampled->detailedFrom);
    EXPECT_DOUBLE_EQ(l.sampled->cpi, cpi);
    EXPECT_NEAR(double(l.timing->cycles), cpi * double(l.stats.warpInsts), 0.5);
    ASSERT_TRUE(l.sampled->boundPct.has_value());
    EXPECT_EQ(l.sampled->boundFrom, KernelSampler::BoundFrom::Borrowed);
  }
  EXPECT_GT(borrowed, 0u);
  EXPECT_GT(checks, 0u);
  EXPECT_LT(detailed, detailedPlain);
  EXPECT_FALSE(a.totals["sampling"]["cycles_bound"].is_null());
  // Deterministic.
  const SampledRun b = runCatalog("gaussian", sets, catalog::Size::Small);
  ASSERT_EQ(a.launches.size(), b.launches.size());
  for (size_t i = 0; i < a.launches.size(); ++i)
    EXPECT_EQ(a.launches[i].timing->cycles, b.launches[i].timing->cycles) << i;
}

// transpose_padded on two SMs at small size: hundreds of CTAs in waves of a few. The rate
// settles, the rest of the CTAs run in the functional engine (the transposed matrix is still
// exact), and the estimate is the detailed cycles plus the rest's instructions at the measured
// rate, within 5 % of the full run.
TEST(WaveSampledRun, ExtrapolatesTheWavesAfterTheRateSettles) {
  const std::vector<std::string> base = {"gpu.num_sms=2"};
  std::vector<std::string> sets = base;
  sets.push_back("sampling.mode=wave");
  const SampledRun full = runCatalog("transpose_padded", base, catalog::Size::Small);
  const SampledRun a = runCatalog("transpose_padded", sets, catalog::Size::Small);
  ASSERT_TRUE(a.pass) << a.message;
  ASSERT_EQ(a.launches.size(), 1u);
  const LaunchRecord& l = a.launches[0];
  ASSERT_TRUE(l.sampled && l.sampled->waves);
  const WaveSample& w = *l.sampled->waves;
  EXPECT_LT(w.ctasDetailed, w.ctasTotal);
  EXPECT_EQ((w.ctasTotal - w.ctasDetailed) % w.ctasPerWave, 0u);
  // Every CTA counted, the instructions exact.
  EXPECT_EQ(l.stats.ctas, w.ctasTotal);
  EXPECT_EQ(l.stats.warpInsts, full.launches[0].stats.warpInsts);
  EXPECT_LT(w.detailedInsts, l.stats.warpInsts);
  EXPECT_NEAR(w.extrapolatedCycles, double(l.stats.warpInsts - w.detailedInsts) / w.ipc, 1e-6);
  EXPECT_EQ(l.timing->cycles,
            uint64_t(std::llround(double(w.detailedCycles) + w.extrapolatedCycles)));
  const double err = std::abs(double(l.timing->cycles) - double(full.launches[0].timing->cycles)) /
                     double(full.launches[0].timing->cycles);
  EXPECT_LT(err, 0.05);
  // Energy scaled: static by the cycles, dynamic by the instructions.
  ASSERT_TRUE(l.timing->power && full.launches[0].timing->power);
  const auto& s = a.totals["sampling"];
  EXPECT_EQ(s["launches_waves_sampled"].get<uint64_t>(), 1u);
  EXPECT_EQ(s["ctas_detailed_in_them"].get<uint64_t>(), w.ctasDetailed);
  EXPECT_EQ(s["cycles_detailed"].get<uint64_t>(), w.detailedCycles);
  EXPECT_EQ(s["cycles_detailed"].get<uint64_t>() + s["cycles_extrapolated"].get<uint64_t>(),
            l.timing->cycles);
  // Deterministic.
  const SampledRun b = runCatalog("transpose_padded", sets, catalog::Size::Small);
  EXPECT_EQ(b.launches[0].timing->cycles, l.timing->cycles);
  EXPECT_EQ(b.launches[0].sampled->waves->ctasDetailed, w.ctasDetailed);
}

// A launch the GPU holds at once (vecadd at tiny: fewer CTAs than a wave) is never cut: the
// wave-sampled run is the full run, cycle for cycle and joule for joule.
TEST(WaveSampledRun, EqualsTheFullRunForALaunchOfOneWave) {
  const SampledRun full = runCatalog("vecadd", {});
  const SampledRun sampled = runCatalog("vecadd", {"sampling.mode=wave"});
  ASSERT_TRUE(sampled.pass) << sampled.message;
  ASSERT_EQ(full.launches.size(), sampled.launches.size());
  for (size_t i = 0; i < full.launches.size(); ++i) {
    EXPECT_FALSE(sampled.launches[i].sampled->waves);
    EXPECT_EQ(full.launches[i].timing->cycles, sampled.launches[i].timing->cycles);
  }
  EXPECT_EQ(full.totals["energy"], sampled.totals["energy"]);
  EXPECT_EQ(sampled.totals["sampling"]["launches_waves_sampled"].get<uint64_t>(), 0u);
}

// The access log keeps one entry per line a warp instruction touches (the 32-byte sectors it
// touched, whether it wrote), the latest ones, oldest first; only global accesses.
TEST(AccessLog, KeepsTheLatestLinesEachWarpInstructionTouched) {
  func::MemRecord r;
  r.space = func::MemSpace::Global;
  r.bytes = 4;
  r.mask = 0xffffffffu;
  for (int l = 0; l < 32; ++l) r.addr[l] = 0x10000 + 4 * uint64_t(l);  // one whole line
  func::AccessLog log(4);
  log.record(r);
  std::vector<func::AccessLog::Entry> got;
  auto entries = [&] {
    got.clear();
    log.forEach([&](const func::AccessLog::Entry& e) { got.push_back(e); });
  };
  entries();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].line, 0x10000u >> 7);
  EXPECT_EQ(got[0].sectors, 0xf);
  EXPECT_FALSE(got[0].write);
  // A stride of 128 bytes: a line per lane, the sector of each lane's offset; a store writes.
  r.write = true;
  for (int l = 0; l < 32; ++l) r.addr[l] = 0x20000 + 128 * uint64_t(l) + 40;
  log.record(r);
  EXPECT_EQ(log.logged(), 33u);
  entries();
  ASSERT_EQ(got.size(), 4u);  // the latest four, oldest first
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(got[size_t(i)].line, (0x20000u >> 7) + 28 + uint64_t(i));
    EXPECT_EQ(got[size_t(i)].sectors, 0x2);
    EXPECT_TRUE(got[size_t(i)].write);
  }
  // Two lanes of 8 bytes in two lines, an atomic (the L2 performs it: a write); shared memory
  // is not logged.
  r.write = false;
  r.atomic = true;
  r.bytes = 8;
  r.mask = 0x5;
  r.addr[0] = 0x30078;
  r.addr[2] = 0x30080;
  log.record(r);
  entries();
  ASSERT_EQ(got.size(), 4u);
  EXPECT_EQ(got[2].line, 0x30000u >> 7);
  EXPECT_EQ(got[2].sectors, 0x8);
  EXPECT_EQ(got[3].line, (0x30000u >> 7) + 1);
  EXPECT_EQ(got[3].sectors, 0x1);
  EXPECT_TRUE(got[3].write);
  r.space = func::MemSpace::Shared;
  log.record(r);
  EXPECT_EQ(log.logged(), 35u);
  log.clear();
  entries();
  EXPECT_TRUE(got.empty());
}

// The CTAs a wave-sampled launch runs in the functional engine warm the L2 with their accesses,
// as the cycle-level model would have. scan's add_offsets reads the blocks scan_blocks wrote: in
// a full run its first CTAs miss in the L2, which holds the last blocks. Without warming the L2
// still holds the first blocks (the detailed part's), and those CTAs hit there.
TEST(WaveSampledRun, TheFunctionallyRunWavesWarmTheL2ForTheNextLaunch) {
  const std::vector<std::string> base = {"gpu.num_sms=2"};
  auto with = [&](std::vector<std::string> sets) {
    sets.insert(sets.begin(), base.begin(), base.end());
    return runCatalog("scan", sets, catalog::Size::Small);
  };
  const SampledRun full = with({});
  const SampledRun warm = with({"sampling.mode=wave"});
  const SampledRun cold = with({"sampling.mode=wave", "sampling.warm_l2=false"});
  for (const SampledRun* r : {&warm, &cold}) ASSERT_TRUE(r->pass) << r->message;
  ASSERT_EQ(warm.launches.size(), full.launches.size());
  const LaunchRecord& first = warm.launches.front();
  ASSERT_TRUE(first.sampled && first.sampled->waves);  // scan_blocks' rest ran functionally
  auto l2Hits = [](const LaunchRecord& l) {
    return l.timing->memory["l2"]["totals"]["by_kind"]["load"]["hits"].get<uint64_t>();
  };
  auto loads = [](const LaunchRecord& l) {
    return l.timing->memory["l2"]["totals"]["by_kind"]["load"]["accesses"].get<uint64_t>();
  };
  const LaunchRecord &f = full.launches.back(), &w = warm.launches.back(),
                     &c = cold.launches.back();
  ASSERT_EQ(f.kernel, "add_offsets");
  // The full run's add_offsets hits in the L2 for under 1 % of its loads, the warmed one too;
  // the cold one hits for a quarter or more of its detailed part's (scan_blocks' detailed CTAs
  // left the lines of their blocks, and it runs them until it has turned the L2 over).
  EXPECT_LT(double(l2Hits(f)), 0.01 * double(loads(f)));
  EXPECT_LT(double(l2Hits(w)), 0.01 * double(loads(w)));
  EXPECT_GT(double(l2Hits(c)), 0.25 * double(loads(c)));
  const auto err = [&](const LaunchRecord& l) {
    return std::abs(double(l.timing->cycles) / double(f.timing->cycles) - 1.0);
  };
  EXPECT_LT(err(w), 0.01);
  EXPECT_GT(err(c), 0.04);
}

// On two host threads the functional engine runs the launch's rest, and an extrapolated
// launch's trial, on both: each thread logs its blocks' accesses and the logs merge in block
// order, so the L2 is warmed as on one thread and every launch's cycles and L2 hits are the
// one-thread run's.
TEST(WaveSampledRun, TwoHostThreadsGiveTheOneThreadRun) {
  for (const char* mode : {"sampling.mode=wave", "sampling.mode=kernel+wave"}) {
    const std::vector<std::string> sets = {"gpu.num_sms=2", mode};
    const SampledRun one = runCatalog("scan", sets, catalog::Size::Small, 1);
    const SampledRun two = runCatalog("scan", sets, catalog::Size::Small, 2);
    ASSERT_TRUE(two.pass) << two.message;
    ASSERT_EQ(one.launches.size(), two.launches.size());
    bool sampled = false;
    for (size_t i = 0; i < one.launches.size(); ++i) {
      const LaunchRecord &a = one.launches[i], &b = two.launches[i];
      sampled = sampled || (a.sampled && (a.sampled->waves || !a.sampled->detail));
      EXPECT_EQ(a.timing->cycles, b.timing->cycles) << mode << ", launch " << i;
      EXPECT_EQ(a.stats.warpInsts, b.stats.warpInsts) << mode << ", launch " << i;
      if (a.timing->memory.contains("l2")) {
        EXPECT_EQ(a.timing->memory["l2"]["totals"], b.timing->memory["l2"]["totals"])
            << mode << ", launch " << i;
      }
    }
    EXPECT_TRUE(sampled) << mode;
    // The worst droop's cycle is the timing engine's, which counts on from the first run.
    nlohmann::json a = one.totals, b = two.totals;
    a["voltage"].erase("worst_cycle");
    b["voltage"].erase("worst_cycle");
    EXPECT_EQ(a, b) << mode;
  }
}

// An extrapolated launch's trial runs its last CTAs first and only they log their accesses
// (runCtasLoggingTheLast), while every CTA's memory units are counted. hotspot at small size on
// an L2 of one set per slice (a log of 1,536 entries, which the trial's last few dozen of 425
// CTAs fill): the third launch is extrapolated, the fourth runs in detail on the L2 its trial
// warmed. An instruction limit (which it never reaches) makes the trial run its CTAs in order,
// all logging: the memory units and every launch's cycles are the same, and without warming the
// fourth launch's cycles differ, so the log's contents show in them.
TEST(SampledRun, ATrialLogsOnlyItsLastBlocksAndCountsEveryBlocksMemoryUnits) {
  const std::vector<std::string> sets = {"sampling.mode=kernel", "sampling.detail_every=3",
                                         "l2.slice.sets=1"};
  auto with = [&](const std::string& extra) {
    std::vector<std::string> s = sets;
    if (!extra.empty()) s.push_back(extra);
    return runCatalog("hotspot", s, catalog::Size::Small);
  };
  const SampledRun last = with(""), inOrder = with("limits.max_warp_instructions=1000000000000"),
                   cold = with("sampling.warm_l2=false");
  for (const SampledRun* r : {&last, &inOrder, &cold}) ASSERT_TRUE(r->pass) << r->message;
  ASSERT_EQ(last.launches.size(), 4u);
  ASSERT_EQ(inOrder.launches.size(), 4u);
  ASSERT_EQ(cold.launches.size(), 4u);
  const LaunchRecord& trial = last.launches[2];
  ASSERT_FALSE(trial.sampled->detail);
  EXPECT_TRUE(last.launches[3].sampled->detail);
  EXPECT_GT(trial.stats.memInsts, 0u);
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(last.launches[i].stats.memInsts, inOrder.launches[i].stats.memInsts) << i;
    EXPECT_EQ(last.launches[i].stats.memUnits, inOrder.launches[i].stats.memUnits) << i;
    EXPECT_EQ(last.launches[i].timing->cycles, inOrder.launches[i].timing->cycles) << i;
  }
  EXPECT_NE(last.launches[3].timing->cycles, cold.launches[3].timing->cycles);
}

namespace {

// A run that a cycle limit stops. Returns the launches recorded.
std::vector<LaunchRecord> runToLimit(const std::string& kernel, std::vector<std::string> sets,
                                     uint64_t maxCycles, catalog::Size size) {
  sets.push_back("limits.max_cycles=" + std::to_string(maxCycles));
  Device dev(loadPlatform("gtx480", sets), ExecMode::Timing);
  auto wl = catalog::find(kernel).make(size);
  wl->setup(dev);
  try {
    wl->run(dev);
    ADD_FAILURE() << kernel << ": the run did not stop at " << maxCycles << " cycles";
  } catch (const RunStopped& e) {
    EXPECT_EQ(e.reason(), StopReason::MaxCycles);
  }
  return dev.launches();
}

uint64_t cyclesOf(const std::vector<LaunchRecord>& launches) {
  uint64_t c = 0;
  for (const LaunchRecord& l : launches) c += l.timing ? l.timing->cycles : 0;
  return c;
}

}  // namespace

// A launch the kernel sampler would extrapolate to an end past the cycle limit runs in detail
// instead, so the sampled run stops at the limit's cycle, as the full run does, not past it.
TEST(SampledRun, ALaunchWhoseEstimateReachesTheCycleLimitRunsInDetailToIt) {
  const std::vector<std::string> sets = {"sampling.mode=kernel"};
  const SampledRun free = runCatalog("bfs", sets);
  ASSERT_TRUE(free.pass) << free.message;
  size_t j = 0;  // the first extrapolated launch
  while (j < free.launches.size() && free.launches[j].sampled->detail) ++j;
  ASSERT_LT(j, free.launches.size());
  uint64_t before = 0;
  for (size_t i = 0; i < j; ++i) before += free.launches[i].timing->cycles;
  const uint64_t limit = before + free.launches[j].timing->cycles / 2;
  const std::vector<LaunchRecord> stopped = runToLimit("bfs", sets, limit, catalog::Size::Tiny);
  ASSERT_EQ(stopped.size(), j + 1);
  for (size_t i = 0; i < j; ++i)
    EXPECT_EQ(stopped[i].timing->cycles, free.launches[i].timing->cycles) << i;
  EXPECT_FALSE(stopped[j].complete());
  EXPECT_EQ(cyclesOf(stopped), limit);
}

// The wave sampler makes no cut whose launch would end past the cycle limit at the waves' mean
// length: every CTA runs in detail and the limit stops the launch at its cycle.
TEST(WaveSampledRun, MakesNoCutWhoseLaunchWouldEndPastTheCycleLimit) {
  const std::vector<std::string> sets = {"gpu.num_sms=2", "sampling.mode=wave"};
  const SampledRun free = runCatalog("transpose_padded", sets, catalog::Size::Small);
  ASSERT_TRUE(free.pass) << free.message;
  ASSERT_EQ(free.launches.size(), 1u);
  ASSERT_TRUE(free.launches[0].sampled->waves);
  const uint64_t cycles = free.launches[0].timing->cycles;
  const uint64_t limit = cycles - cycles / 20;  // 5 % short of the sampled run's end
  const std::vector<LaunchRecord> stopped =
      runToLimit("transpose_padded", sets, limit, catalog::Size::Small);
  ASSERT_EQ(stopped.size(), 1u);
  EXPECT_FALSE(stopped[0].complete());
  EXPECT_EQ(stopped[0].timing->cycles, limit);
}

// The host time of the functional engine's part of a sampled run is counted (stats.json's
// simulation.functional_seconds), and is part of the launches' time; a full run has none.
TEST(WaveSampledRun, CountsTheFunctionalEnginesHostTime) {
  for (const bool sampled : {false, true}) {
    std::vector<std::string> sets = {"gpu.num_sms=2"};
    if (sampled) sets.push_back("sampling.mode=wave");
    Device dev(loadPlatform("gtx480", sets), ExecMode::Timing);
    auto wl = catalog::find("scan").make(catalog::Size::Small);
    wl->setup(dev);
    wl->run(dev);
    double launches = 0;
    for (const LaunchRecord& l : dev.launches()) launches += l.seconds;
    if (sampled) {
      EXPECT_GT(dev.functionalSeconds(), 0.0);
      EXPECT_LT(dev.functionalSeconds(), launches);
    } else {
      EXPECT_EQ(dev.functionalSeconds(), 0.0);
    }
  }
}

// With every launch due for detail (detail_every 1), no launch runs in the functional engine
// first to measure its signature, and the sampled run is the full run.
TEST(SampledRun, LaunchesDueForDetailRunNoFunctionalTrial) {
  std::vector<uint64_t> cycles[2];
  for (const bool sampled : {false, true}) {
    std::vector<std::string> sets;
    if (sampled) sets = {"sampling.mode=kernel", "sampling.detail_every=1"};
    Device dev(loadPlatform("gtx480", sets), ExecMode::Timing);
    auto wl = catalog::find("gaussian").make(catalog::Size::Tiny);
    wl->setup(dev);
    wl->run(dev);
    ASSERT_TRUE(wl->check(dev).pass);
    EXPECT_EQ(dev.functionalSeconds(), 0.0);
    for (const LaunchRecord& l : dev.launches()) {
      cycles[sampled].push_back(l.timing->cycles);
      if (sampled) {
        EXPECT_TRUE(l.sampled->detail);
      }
    }
  }
  ASSERT_GT(cycles[0].size(), 2u);
  EXPECT_EQ(cycles[0], cycles[1]);
}

// Gpu::warmL2 places each logged sector in the L2 lines that hold it: one line of 128 bytes, or
// both 16-byte lines of the sector; a write leaves them dirty (gtx480's L2 is write-validate),
// and nothing else enters the L2.
// A full warp at evenly spaced addresses (any stride up to 64 bytes, any access size, any
// alignment): one entry per line touched, in ascending order, with exactly the sectors some lane's
// bytes fall in, as counted byte by byte here.
TEST(AccessLog, EvenlySpacedLanesLogEachLineOnceWithTheSectorsTheyTouch) {
  for (const uint64_t stride : {0u, 4u, 8u, 12u, 24u, 32u, 40u, 64u})
    for (const uint8_t bytes : {uint8_t(1), uint8_t(4), uint8_t(8), uint8_t(16)})
      for (const uint64_t base : {0x40000u, 0x40048u, 0x4007cu}) {
        func::MemRecord r;
        r.space = func::MemSpace::Global;
        r.bytes = bytes;
        r.mask = 0xffffffffu;
        for (int l = 0; l < 32; ++l) r.addr[l] = base + stride * uint64_t(l);
        std::map<uint64_t, uint8_t> want;  // line -> sectors
        for (int l = 0; l < 32; ++l)
          for (uint64_t a = r.addr[l]; a < r.addr[l] + bytes; ++a)
            want[a >> 7] |= uint8_t(1u << ((a >> 5) & 3));
        func::AccessLog log(64);
        log.record(r);
        std::vector<std::pair<uint64_t, uint8_t>> got;
        log.forEach([&](const func::AccessLog::Entry& e) { got.push_back({e.line, e.sectors}); });
        const std::vector<std::pair<uint64_t, uint8_t>> expected(want.begin(), want.end());
        EXPECT_EQ(got, expected) << "stride " << stride << ", " << int(bytes) << " bytes from "
                                 << base;
      }
}

TEST(AccessLog, WarmingPlacesEachSectorInTheL2LinesThatHoldIt) {
  for (const uint32_t lineBytes : {16u, 128u}) {
    const PlatformConfig cfg = loadPlatform(
        "gtx480", {"l2.slice.line_bytes=" + std::to_string(lineBytes), "sampling.mode=wave"});
    Device dev(cfg, ExecMode::Timing);
    gpu::Gpu& g = dev.timingEngine()->gpu();
    const AddressMap map(cfg);
    func::MemRecord r;
    r.space = func::MemSpace::Global;
    r.bytes = 4;
    r.mask = 0x1;
    r.write = true;
    r.addr[0] = 0x10044;  // sector 2 of its 128-byte line
    func::AccessLog log(8);
    log.record(r);
    g.warmL2(log);
    uint64_t valid = 0;
    for (uint32_t s = 0; s < g.l2Slices(); ++s) {
      const cache::CacheCore& c = g.l2(s).core();
      for (uint32_t set = 0; set < c.sets(); ++set)
        for (uint32_t way = 0; way < c.ways(); ++way) valid += c.line(set, way).valid;
    }
    EXPECT_EQ(valid, 32u / std::min(32u, lineBytes)) << lineBytes;
    for (uint64_t a = 0x10040; a < 0x10060; a += std::min(32u, lineBytes)) {
      const cache::CacheCore& c = g.l2(map.slice(a)).core();
      const uint64_t local = map.sliceLocal(a);
      const uint32_t way = c.find(local);
      ASSERT_NE(way, cache::CacheCore::kNoWay) << lineBytes << " " << a;
      EXPECT_TRUE(c.line(c.setOf(local), way).dirty) << lineBytes << " " << a;
    }
  }
}
