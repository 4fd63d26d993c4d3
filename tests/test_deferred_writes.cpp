// Deferred global writes (func::StepEnv, func::GlobalWriteLog): the timing model's way to step
// several SMs' cycles on several host threads with results that do not depend on the thread
// count. Kernels are decoded from PTX text and driven through Executor::step directly: a "cycle"
// steps each SM (each with its own StepEnv and log), then applies the logs in SM order.
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "catalog.hpp"
#include "common/error.hpp"
#include "func/decoder.hpp"
#include "func/executor.hpp"
#include "func/step_env.hpp"
#include "support/ptx_harness.hpp"

using namespace gpusc;
using func::Dim3;

namespace {

constexpr uint64_t kDeviceBytes = 1ull << 30;

std::string module(const std::string& body) {
  return ".version 9.0\n.target sm_90\n.address_size 64\n\n" + body;
}

using Kernel = test::DecodedKernel;
using test::launchOf;

Dim3 ctaidOf(const func::LaunchState& L, uint64_t id) {
  return Dim3{static_cast<uint32_t>(id % L.grid.x), static_cast<uint32_t>(id / L.grid.x % L.grid.y),
              static_cast<uint32_t>(id / (uint64_t(L.grid.x) * L.grid.y))};
}

// Steps warp `w` (no env) until its next instruction's opcode starts with `prefix`.
void stepTo(func::Executor& ex, func::Cta& cta, func::Warp& w, const std::string& prefix) {
  func::ExecStats st;
  const func::Program& p = *ex.launch().prog;
  for (int i = 0; i < 1000 && !w.done(); ++i) {
    if (p.info[w.pc()].opcode.rfind(prefix, 0) == 0) return;
    ex.step(cta, w, st);
  }
  FAIL() << "no instruction starting with " << prefix;
}

// Lane 0 of the register an instruction at `pc` writes first.
uint64_t& destLane0(func::Warp& w, const func::Program& p, uint32_t pc) {
  return w.regs[size_t(p.code[pc].dst[0]) * func::kWarpSize];
}

uint32_t read32(func::GlobalMemory& g, uint64_t addr) {
  uint32_t v;
  g.read(addr, &v, 4);
  return v;
}
void write32(func::GlobalMemory& g, uint64_t addr, uint32_t v) { g.write(addr, &v, 4); }

// One SM's step environment whose global writes go to its own log (as the timing model's SMs).
struct Deferring {
  func::GlobalWriteLog log;
  func::StepEnv env;
  Deferring() { env.log = &log; }
  Deferring(const Deferring&) = delete;
  Deferring& operator=(const Deferring&) = delete;
};

// ---- three ways to run a launch
// ------------------------------------------------------------------

enum class Runner {
  Immediate,  // Executor::runCta, CTA after CTA (the functional mode)
  EachStep,   // the same order, every step with a StepEnv whose log is applied after it
  Lockstep,   // cycles of `sms` SMs, two issues per SM per cycle, logs applied after each cycle
  Threads,    // every CTA at once on its own host thread, logs applied (in CTA order) at the end
};

void runImmediate(func::LaunchState& L) {
  func::Executor ex(L);
  func::Cta cta;
  func::ExecStats st;
  for (uint64_t id = 0; id < L.grid.count(); ++id) {
    ex.initCta(cta, ctaidOf(L, id), id, 0);
    ex.runCta(cta, st);
  }
}

void runEachStep(func::LaunchState& L) {
  func::Executor ex(L);
  func::Cta cta;
  func::ExecStats st;
  Deferring d;
  for (uint64_t id = 0; id < L.grid.count(); ++id) {
    ex.initCta(cta, ctaidOf(L, id), id, 0);
    while (cta.liveWarps > 0) {  // runCta's order
      bool progress = false;
      for (func::Warp& w : cta.warps)
        while (w.state == func::WarpState::Ready) {
          d.env.clock += 1;
          ex.step(cta, w, st, nullptr, &d.env);
          d.log.apply(*L.gmem);
          progress = true;
        }
      if (!progress) throw KernelFault("deadlock");
    }
  }
}

void runLockstep(func::LaunchState& L, uint32_t sms) {
  func::Executor ex(L);
  struct Sm {
    func::Cta cta;
    bool busy = false;
    size_t nextWarp = 0;
    Deferring d;
    func::ExecStats st;
  };
  std::vector<Sm> sm(sms);
  uint64_t next = 0;
  for (uint64_t cycle = 0;; ++cycle) {
    bool any = false, stepped = false;
    for (uint32_t s = 0; s < sms; ++s) {
      Sm& m = sm[s];
      if (!m.busy && next < L.grid.count()) {
        ex.initCta(m.cta, ctaidOf(L, next), next, s);
        ++next;
        m.busy = true;
      }
      if (!m.busy) continue;
      any = true;
      m.d.env.clock = cycle + 1;
      const size_t n = m.cta.warps.size();
      std::vector<bool> issued(n, false);
      for (int issue = 0; issue < 2; ++issue)
        for (size_t k = 0; k < n; ++k) {
          const size_t wi = (m.nextWarp + k) % n;
          func::Warp& w = m.cta.warps[wi];
          if (issued[wi] || w.state != func::WarpState::Ready) continue;
          ex.step(m.cta, w, m.st, nullptr, &m.d.env);
          issued[wi] = true;
          stepped = true;
          m.nextWarp = wi + 1;
          break;
        }
    }
    if (!any) break;
    for (Sm& m : sm) m.d.log.apply(*L.gmem);
    for (Sm& m : sm)
      if (m.busy && m.cta.liveWarps == 0) m.busy = false;
    if (!stepped) throw KernelFault("deadlock");
  }
}

// Only for kernels whose CTAs do not read what they write to global memory.
void runThreads(func::LaunchState& L) {
  func::Executor ex(L);
  const uint64_t n = L.grid.count();
  std::vector<func::Cta> ctas(n);
  std::vector<Deferring> sms(n);
  std::vector<std::thread> threads;
  for (uint64_t id = 0; id < n; ++id)
    ex.initCta(ctas[id], ctaidOf(L, id), id, static_cast<uint32_t>(id));
  for (uint64_t id = 0; id < n; ++id)
    threads.emplace_back([&, id] {
      func::ExecStats st;
      func::Cta& cta = ctas[id];
      while (cta.liveWarps > 0)
        for (func::Warp& w : cta.warps)
          while (w.state == func::WarpState::Ready) {
            sms[id].env.clock += 1;
            ex.step(cta, w, st, nullptr, &sms[id].env);
          }
    });
  for (auto& t : threads) t.join();
  for (Deferring& d : sms) d.log.apply(*L.gmem);
}

struct Buffer {
  uint64_t addr, bytes;
};
struct Setup {
  std::vector<uint64_t> args;
  std::vector<Buffer> outputs;
};
using SetupFn = std::function<Setup(func::GlobalMemory&)>;

// The bytes of the outputs after running `k` on a fresh device memory with `runner`.
std::vector<std::vector<uint8_t>> outputsOf(const Kernel& k, Dim3 grid, Dim3 block,
                                            const SetupFn& setup, Runner runner, uint32_t sms = 3) {
  func::GlobalMemory g(kDeviceBytes);
  Setup s = setup(g);
  func::LaunchState L = launchOf(k, g, grid, block, s.args, sms);
  switch (runner) {
    case Runner::Immediate:
      runImmediate(L);
      break;
    case Runner::EachStep:
      runEachStep(L);
      break;
    case Runner::Lockstep:
      runLockstep(L, sms);
      break;
    case Runner::Threads:
      runThreads(L);
      break;
  }
  if (runner != Runner::Immediate) {
    EXPECT_EQ(L.clock, 0u) << "a step with an env wrote it";
  }
  std::vector<std::vector<uint8_t>> out;
  for (const Buffer& b : s.outputs) {
    out.emplace_back(b.bytes);
    g.read(b.addr, out.back().data(), b.bytes);
  }
  return out;
}

template <class T>
uint64_t upload(func::GlobalMemory& g, const std::vector<T>& v) {
  const uint64_t a = g.allocate(v.size() * sizeof(T));
  g.write(a, v.data(), v.size() * sizeof(T));
  return a;
}

// ---- hand-written kernels
// ------------------------------------------------------------------------

const char* kStoreLoad = R"(
.visible .entry store_val(.param .u64 p, .param .u32 v)
{
  .reg .b64 %rd<3>;
  .reg .b32 %r<3>;
  ld.param.u64 %rd1, [p];
  ld.param.u32 %r1, [v];
  st.global.u32 [%rd1], %r1;
  ret;
}
.visible .entry load_val(.param .u64 p, .param .u64 out)
{
  .reg .b64 %rd<3>;
  .reg .b32 %r<3>;
  ld.param.u64 %rd1, [p];
  ld.param.u64 %rd2, [out];
  ld.global.u32 %r1, [%rd1];
  st.global.u32 [%rd2], %r1;
  ret;
}
)";

TEST(DeferredWrites, AStoreIsInvisibleToLoadsOfItsCycleAndVisibleAfterApply) {
  const std::string text = module(kStoreLoad);
  Kernel ks(text, "store_val"), kl(text, "load_val");
  func::GlobalMemory g(kDeviceBytes);
  const uint64_t buf = g.allocate(4), out = g.allocate(8);
  write32(g, buf, 7);
  func::LaunchState La = launchOf(ks, g, {1}, {1}, {buf, 42});
  func::LaunchState Lb = launchOf(kl, g, {1}, {1}, {buf, out});
  func::Executor exA(La), exB(Lb);
  func::Cta a, b;
  exA.initCta(a, {0, 0, 0}, 0, 0);
  exB.initCta(b, {0, 0, 0}, 0, 1);
  stepTo(exA, a, a.warps[0], "st.global");
  stepTo(exB, b, b.warps[0], "ld.global");
  Deferring A, B;
  func::ExecStats st;
  // One cycle: SM A stores, SM B loads the same word.
  exA.step(a, a.warps[0], st, nullptr, &A.env);
  exB.step(b, b.warps[0], st, nullptr, &B.env);
  EXPECT_FALSE(A.log.empty());
  EXPECT_TRUE(B.log.empty());
  EXPECT_EQ(read32(g, buf), 7u) << "the store was not deferred";
  A.log.apply(g);
  B.log.apply(g);
  EXPECT_TRUE(A.log.empty());
  EXPECT_EQ(read32(g, buf), 42u);
  // Next cycle: B stores what it loaded, the old value.
  exB.step(b, b.warps[0], st, nullptr, &B.env);
  EXPECT_EQ(read32(g, out), 0u);
  B.log.apply(g);
  EXPECT_EQ(read32(g, out), 7u);
  // A load of a later cycle sees the new value.
  func::Cta c;
  exB.initCta(c, {0, 0, 0}, 0, 1);
  stepTo(exB, c, c.warps[0], "ret");
  EXPECT_EQ(read32(g, out), 42u);
}

const char* kAtomAdd = R"(
.visible .entry atom_add(.param .u64 p, .param .u64 out, .param .u32 v)
{
  .reg .b64 %rd<3>;
  .reg .b32 %r<3>;
  ld.param.u64 %rd1, [p];
  ld.param.u64 %rd2, [out];
  ld.param.u32 %r1, [v];
  atom.global.add.u32 %r2, [%rd1], %r1;
  st.global.u32 [%rd2], %r2;
  ret;
}
)";

TEST(DeferredWrites, TwoSmsAddingToOneWordInACycleBothCountInApplyOrder) {
  for (bool aFirst : {true, false}) {
    Kernel k(module(kAtomAdd), "atom_add");
    func::GlobalMemory g(kDeviceBytes);
    const uint64_t word = g.allocate(4), outA = g.allocate(4), outB = g.allocate(4);
    write32(g, word, 100);
    func::LaunchState La = launchOf(k, g, {1}, {1}, {word, outA, 1});
    func::LaunchState Lb = launchOf(k, g, {1}, {1}, {word, outB, 2});
    func::Executor exA(La), exB(Lb);
    func::Cta a, b;
    exA.initCta(a, {0, 0, 0}, 0, 0);
    exB.initCta(b, {0, 0, 0}, 0, 1);
    stepTo(exA, a, a.warps[0], "atom");
    stepTo(exB, b, b.warps[0], "atom");
    const uint32_t pc = a.warps[0].pc();
    uint64_t& dstA = destLane0(a.warps[0], *k.prog, pc);
    uint64_t& dstB = destLane0(b.warps[0], *k.prog, pc);
    dstA = dstB = 0xdead;
    Deferring A, B;
    func::ExecStats st;
    exA.step(a, a.warps[0], st, nullptr, &A.env);
    exB.step(b, b.warps[0], st, nullptr, &B.env);
    EXPECT_EQ(read32(g, word), 100u);
    EXPECT_EQ(dstA, 0xdeadu) << "the deferred atomic wrote its destination at step time";
    EXPECT_EQ(dstB, 0xdeadu);
    if (aFirst) {
      A.log.apply(g);
      B.log.apply(g);
    } else {
      B.log.apply(g);
      A.log.apply(g);
    }
    EXPECT_EQ(read32(g, word), 103u);
    EXPECT_EQ(dstA, aFirst ? 100u : 102u);
    EXPECT_EQ(dstB, aFirst ? 101u : 100u);
    stepTo(exA, a, a.warps[0], "ret");
    stepTo(exB, b, b.warps[0], "ret");
    EXPECT_EQ(read32(g, outA), aFirst ? 100u : 102u);
    EXPECT_EQ(read32(g, outB), aFirst ? 101u : 100u);
  }
}

// Lanes of one warp on one word: cas chain (lane l swaps l for l + 1), exch, 64-bit cas, and
// stores of every lane to one address (the highest lane's value stays).
const char* kLanes = R"(
.visible .entry lanes(.param .u64 p, .param .u64 out)
{
  .reg .b64 %rd<8>;
  .reg .b32 %r<8>;
  ld.param.u64 %rd1, [p];
  ld.param.u64 %rd2, [out];
  mov.u32 %r1, %tid.x;
  add.u32 %r2, %r1, 1;
  atom.global.cas.b32 %r3, [%rd1], %r1, %r2;
  atom.global.exch.b32 %r4, [%rd1+4], %r1;
  cvt.u64.u32 %rd3, %r1;
  add.u64 %rd4, %rd3, 1;
  atom.global.cas.b64 %rd5, [%rd1+8], %rd3, %rd4;
  st.global.u32 [%rd1+16], %r1;
  st.global.v2.u32 [%rd1+24], {%r2, %r1};
  mul.wide.u32 %rd6, %r1, 16;
  add.s64 %rd7, %rd2, %rd6;
  st.global.v2.u32 [%rd7], {%r3, %r4};
  st.global.u64 [%rd7+8], %rd5;
  ret;
}
)";

Setup lanesSetup(func::GlobalMemory& g) {
  const uint64_t p = upload<uint32_t>(g, {0, 0xabc, 0, 0, 0, 0, 0, 0});
  const uint64_t out = g.allocate(32 * 16);
  return {{p, out}, {{p, 32}, {out, 32 * 16}}};
}

TEST(DeferredWrites, CasExchAndSameAddressStoresMatchImmediateMode) {
  Kernel k(module(kLanes), "lanes");
  const auto want = outputsOf(k, {1}, {32}, lanesSetup, Runner::Immediate);
  // The sequential results, independently of the engine.
  uint32_t p[8];
  std::memcpy(p, want[0].data(), 32);
  EXPECT_EQ(p[0], 32u);  // every lane's cas succeeded in lane order
  EXPECT_EQ(p[1], 31u);  // the last exch
  EXPECT_EQ(p[2], 32u);  // the 64-bit cas chain
  EXPECT_EQ(p[4], 31u);  // highest lane's store
  EXPECT_EQ(p[6], 32u);
  EXPECT_EQ(p[7], 31u);
  for (uint32_t l = 0; l < 32; ++l) {
    uint32_t o[4];
    std::memcpy(o, want[1].data() + 16 * l, 16);
    EXPECT_EQ(o[0], l);
    EXPECT_EQ(o[1], l == 0 ? 0xabcu : l - 1);
    EXPECT_EQ(o[2], l);
  }
  EXPECT_EQ(outputsOf(k, {1}, {32}, lanesSetup, Runner::EachStep), want);
  EXPECT_EQ(outputsOf(k, {1}, {32}, lanesSetup, Runner::Lockstep), want);
}

const char* kIllegal = R"(
.visible .entry illegal(.param .u64 p, .param .u32 kind)
{
  .reg .b64 %rd<3>;
  .reg .b32 %r<3>;
  .reg .pred %q;
  ld.param.u64 %rd1, [p];
  ld.param.u32 %r1, [kind];
  add.s64 %rd1, %rd1, 0x100000;
  setp.eq.u32 %q, %r1, 0;
  @%q st.global.u32 [%rd1], %r1;
  @!%q atom.global.add.u32 %r2, [%rd1], 1;
  ret;
}
)";

TEST(DeferredWrites, AnIllegalGlobalWriteFaultsAtStepTime) {
  Kernel k(module(kIllegal), "illegal");
  for (uint32_t kind : {0u, 1u}) {
    func::GlobalMemory g(kDeviceBytes);
    const uint64_t p = g.allocate(4);
    func::LaunchState L = launchOf(k, g, {1}, {1}, {p, kind});
    func::Executor ex(L);
    func::Cta cta;
    ex.initCta(cta, {0, 0, 0}, 0, 0);
    stepTo(ex, cta, cta.warps[0], kind == 0 ? "st.global" : "atom");
    Deferring d;
    func::ExecStats st;
    EXPECT_THROW(ex.step(cta, cta.warps[0], st, nullptr, &d.env), KernelFault) << kind;
    EXPECT_TRUE(d.log.empty());
  }
}

const char* kClock = R"(
.visible .entry clk(.param .u64 p)
{
  .reg .b64 %rd<3>;
  .reg .b32 %r<3>;
  ld.param.u64 %rd1, [p];
  mov.u64 %rd2, %clock64;
  mov.u32 %r1, %clock;
  st.global.u64 [%rd1], %rd2;
  st.global.u32 [%rd1+8], %r1;
  ret;
}
)";

TEST(DeferredWrites, ClockReadsTheEnvAndLeavesTheLaunchClockAlone) {
  Kernel k(module(kClock), "clk");
  func::GlobalMemory g(kDeviceBytes);
  const uint64_t p = g.allocate(16);
  func::LaunchState L = launchOf(k, g, {1}, {1}, {p});
  L.clock = 5;
  func::Executor ex(L);
  func::Cta cta;
  ex.initCta(cta, {0, 0, 0}, 0, 0);
  Deferring d;
  func::ExecStats st;
  func::Warp& w = cta.warps[0];
  for (uint64_t clock : {0x1'0000'0010ull, 0x1'0000'0020ull, 0x1'0000'0030ull, 0x1'0000'0040ull,
                         0x1'0000'0050ull, 0x1'0000'0060ull}) {
    d.env.clock = clock;
    if (!w.done()) ex.step(cta, w, st, nullptr, &d.env);
    d.log.apply(g);
  }
  EXPECT_TRUE(w.done());
  EXPECT_EQ(L.clock, 5u);
  uint64_t c64;
  g.read(p, &c64, 8);
  EXPECT_EQ(c64, 0x1'0000'0020ull);
  EXPECT_EQ(read32(g, p + 8), 0x30u);
}

TEST(DeferredWrites, SmidIsTheSmTheCtaWasPlacedOn) {
  Kernel k(module(R"(
.visible .entry smid(.param .u64 p)
{
  .reg .b64 %rd<2>;
  .reg .b32 %r<2>;
  ld.param.u64 %rd1, [p];
  mov.u32 %r1, %smid;
  st.global.u32 [%rd1], %r1;
  ret;
}
)"),
           "smid");
  func::GlobalMemory g(kDeviceBytes);
  const uint64_t p = g.allocate(4);
  func::LaunchState L = launchOf(k, g, {1}, {1}, {p}, 8);
  func::Executor ex(L);
  func::Cta cta;
  func::ExecStats st;
  for (uint32_t sm : {3u, 0u, 7u}) {
    ex.initCta(cta, {0, 0, 0}, 0, sm);
    ex.runCta(cta, st);
    EXPECT_EQ(read32(g, p), sm);
  }
}

// A mix of every kind of global write: vector and generic stores, generic and typed atomics on
// the thread's own words (whose returned values are stored), integer atomics and reductions of
// the whole grid on shared counters, bulk copies and bulk reductions from shared memory.
const char* kMixed = R"(
.visible .entry mixed(.param .u64 buf, .param .u64 cnt)
{
  .reg .b32 %r<20>;
  .reg .b64 %rd<20>;
  .reg .f32 %f<4>;
  .reg .f64 %fd<4>;
  .reg .pred %p<4>;
  .shared .align 16 .b8 sbuf[16];
  ld.param.u64 %rd1, [buf];
  ld.param.u64 %rd2, [cnt];
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, %ctaid.x;
  mov.u32 %r3, %ntid.x;
  mad.lo.u32 %r4, %r2, %r3, %r1;
  mul.wide.u32 %rd3, %r4, 96;
  add.s64 %rd4, %rd1, %rd3;
  add.u32 %r5, %r4, 1;
  add.u32 %r6, %r4, 2;
  add.u32 %r7, %r4, 3;
  st.global.v4.u32 [%rd4], {%r4, %r5, %r6, %r7};
  cvt.u64.u32 %rd5, %r4;
  st.global.v2.u64 [%rd4+16], {%rd5, %rd5};
  st.u32 [%rd4+32], %r7;
  atom.add.u32 %r8, [%rd4+32], 5;
  cvt.rn.f32.u32 %f1, %r4;
  st.global.f32 [%rd4+36], %f1;
  atom.global.add.f32 %f2, [%rd4+36], 0f3FC00000;
  cvt.rn.f64.u32 %fd1, %r4;
  st.global.f64 [%rd4+40], %fd1;
  atom.global.add.f64 %fd2, [%rd4+40], 0d3FE0000000000000;
  mov.b32 %r9, 0x3C003C00;
  st.global.u32 [%rd4+48], %r9;
  atom.global.add.noftz.f16x2 %r10, [%rd4+48], %r9;
  atom.global.exch.b64 %rd6, [%rd4+16], %rd3;
  atom.global.cas.b32 %r11, [%rd4+4], %r5, %r1;
  st.global.u32 [%rd4+52], %r8;
  st.global.f32 [%rd4+56], %f2;
  st.global.u32 [%rd4+60], %r10;
  st.global.f64 [%rd4+64], %fd2;
  st.global.u64 [%rd4+72], %rd6;
  st.global.u32 [%rd4+80], %r11;
  atom.global.add.u32 %r12, [%rd2], 1;
  red.global.add.u64 [%rd2+8], %rd5;
  atom.global.max.s32 %r13, [%rd2+16], %r4;
  atom.global.min.u32 %r14, [%rd2+20], %r4;
  red.global.or.b32 [%rd2+24], %r5;
  red.global.xor.b32 [%rd2+28], %r5;
  atom.global.inc.u32 %r15, [%rd2+32], 1000;
  atom.global.and.b32 %r16, [%rd2+36], %r7;
  setp.ne.u32 %p1, %r1, 0;
  @%p1 bra DONE;
  add.u32 %r17, %r2, 1;
  st.shared.v4.u32 [sbuf], {%r17, %r17, %r2, %r3};
  cp.reduce.async.bulk.global.shared::cta.bulk_group.add.u32 [%rd2+48], [sbuf], 16;
  mul.wide.u32 %rd7, %r2, 16;
  add.s64 %rd8, %rd2, %rd7;
  cp.async.bulk.global.shared::cta.bulk_group [%rd8+64], [sbuf], 16;
  cp.async.bulk.commit_group;
  cp.async.bulk.wait_group 0;
DONE:
  ret;
}
)";

constexpr uint32_t kMixedCtas = 5, kMixedThreads = 64;

Setup mixedSetup(func::GlobalMemory& g) {
  const uint64_t buf = g.allocate(96 * kMixedCtas * kMixedThreads);
  std::vector<uint32_t> cnt(16 + 4 * kMixedCtas, 0);
  cnt[5] = ~0u;  // min
  cnt[9] = ~0u;  // and
  const uint64_t c = upload(g, cnt);
  return {{buf, c}, {{buf, 96 * kMixedCtas * kMixedThreads}, {c, cnt.size() * 4}}};
}

TEST(DeferredWrites, EveryKindOfGlobalWriteMatchesImmediateMode) {
  Kernel k(module(kMixed), "mixed");
  const Dim3 grid{kMixedCtas}, block{kMixedThreads};
  const auto want = outputsOf(k, grid, block, mixedSetup, Runner::Immediate);
  uint32_t cnt[16];
  std::memcpy(cnt, want[1].data(), 64);
  const uint32_t n = kMixedCtas * kMixedThreads;
  EXPECT_EQ(cnt[0], n);
  EXPECT_EQ(cnt[4], n - 1);
  EXPECT_EQ(cnt[5], 0u);
  EXPECT_EQ(cnt[8], n);
  EXPECT_EQ(cnt[12], kMixedCtas * (kMixedCtas + 1) / 2);  // bulk reduction of every CTA
  EXPECT_EQ(outputsOf(k, grid, block, mixedSetup, Runner::EachStep), want);
  for (uint32_t sms : {1u, 2u, 3u})
    EXPECT_EQ(outputsOf(k, grid, block, mixedSetup, Runner::Lockstep, sms), want) << sms;
}

// ---- catalog kernels (nvcc's PTX) ---------------------------------------------------------------

Setup vecaddSetup(func::GlobalMemory& g) {
  const uint32_t n = 1000;
  std::vector<float> a(n), b(n);
  for (uint32_t i = 0; i < n; ++i) {
    a[i] = 0.5f * float(i) - 3.0f;
    b[i] = 1.0f / float(i + 1);
  }
  const uint64_t pa = upload(g, a), pb = upload(g, b), pc = g.allocate(4 * n);
  return {{pa, pb, pc, n}, {{pc, 4 * n}}};
}

Setup histogramSetup(func::GlobalMemory& g) {
  const uint32_t n = 5003;
  std::vector<uint8_t> data(n + 1);
  uint32_t x = 12345;
  for (auto& d : data) {
    x = x * 1103515245u + 12345u;
    d = static_cast<uint8_t>(x >> 16);
  }
  const uint64_t pd = upload(g, data);
  const uint64_t ph = upload(g, std::vector<uint32_t>(256, 0));
  return {{pd, n, ph}, {{ph, 256 * 4}}};
}

Setup reduceSetup(func::GlobalMemory& g) {
  const uint32_t n = 3001, blocks = 6;
  std::vector<float> x(n);
  for (uint32_t i = 0; i < n; ++i) x[i] = float(int(i % 17) - 8) * 0.37f;
  const uint64_t px = upload(g, x);
  const uint64_t sum = upload(g, std::vector<float>{0.0f});
  const uint64_t pos = upload(g, std::vector<uint32_t>{0});
  const uint64_t bs = g.allocate(4 * blocks);
  return {{px, n, sum, pos, bs}, {{sum, 4}, {pos, 4}, {bs, 4 * blocks}}};
}

TEST(DeferredWrites, CatalogKernelsMatchImmediateMode) {
  const std::string_view vecadd = catalog::ptx("vecadd");
  const std::string_view histogram = catalog::ptx("histogram");
  const std::string_view reduce = catalog::ptx("reduce_shfl");
  Kernel kv(vecadd, "vecadd"), kh(histogram, "histogram"), kr(reduce, "reduce_shfl");
  struct Case {
    const Kernel& k;
    Dim3 grid, block;
    SetupFn setup;
    bool orderFree;  // the results do not depend on the order of the CTAs' atomics
  };
  const Case cases[] = {{kv, {8}, {128}, vecaddSetup, true},
                        {kh, {7}, {96}, histogramSetup, true},
                        {kr, {6}, {128}, reduceSetup, false}};
  for (const Case& c : cases) {
    const std::string name = c.k.prog->name;
    const auto want = outputsOf(c.k, c.grid, c.block, c.setup, Runner::Immediate);
    EXPECT_EQ(outputsOf(c.k, c.grid, c.block, c.setup, Runner::EachStep), want) << name;
    if (!c.orderFree) continue;
    EXPECT_EQ(outputsOf(c.k, c.grid, c.block, c.setup, Runner::Lockstep, 3), want) << name;
    EXPECT_EQ(outputsOf(c.k, c.grid, c.block, c.setup, Runner::Threads), want) << name;
  }
}

// ---- translation caches and the device runtime --------------------------------------------------

TEST(DeferredWrites, ATlbFilledBeforeAReleaseDoesNotReachTheFreedPages) {
  func::GlobalMemory g(kDeviceBytes);
  const uint64_t a = g.allocate(4096);
  func::GlobalMemory::Tlb tlb;
  EXPECT_NE(g.translate(a + 64, tlb), nullptr);
  EXPECT_NE(g.translate(a + 64), nullptr);
  g.release(a);
  EXPECT_EQ(g.translate(a + 64, tlb), nullptr);
  EXPECT_EQ(g.translate(a + 64), nullptr);
}

std::string readFile(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) throw InputError("cannot open " + path);
  std::string s;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) s.append(buf, n);
  std::fclose(f);
  return s;
}

const char* kFreeInCallee = R"(
.extern .func free(.param .b64 free_param_0);
.func release(.param .b64 p)
{
  .reg .b64 %rd<2>;
  ld.param.u64 %rd1, [p];
  {
  .param .b64 param0;
  st.param.b64 [param0+0], %rd1;
  call.uni free, (param0);
  }
  ret;
}
.visible .entry k(.param .u64 p)
{
  .reg .b64 %rd<2>;
  ld.param.u64 %rd1, [p];
  {
  .param .b64 param0;
  st.param.b64 [param0+0], %rd1;
  call.uni release, (param0);
  }
  ret;
}
)";

TEST(DeferredWrites, UsesDeviceRuntimeMarksPrintfMallocAndFree) {
  const std::string dir = std::string(GPUSC_SOURCE_DIR) + "/tests/data/";
  const std::string printfPtx = readFile(dir + "printf.ptx");
  const std::string mallocPtx = readFile(dir + "device_malloc.ptx");
  EXPECT_TRUE(Kernel(printfPtx, "k").prog->usesDeviceRuntime);
  EXPECT_TRUE(Kernel(mallocPtx, "hog").prog->usesDeviceRuntime);      // malloc
  EXPECT_TRUE(Kernel(mallocPtx, "release").prog->usesDeviceRuntime);  // free
  EXPECT_TRUE(Kernel(module(kFreeInCallee), "k").prog->usesDeviceRuntime);
  EXPECT_FALSE(Kernel(catalog::ptx("vecadd"), "vecadd").prog->usesDeviceRuntime);
  EXPECT_FALSE(Kernel(catalog::ptx("histogram"), "histogram").prog->usesDeviceRuntime);
  EXPECT_FALSE(Kernel(module(kMixed), "mixed").prog->usesDeviceRuntime);
}

}  // namespace
