// The functional engine on several host threads (func/parallel_ctas.hpp): which kernels' blocks
// may run at once, and that those that do give the one-thread run's memory, statistics, faults,
// stops and access log; and a wave-sampled launch's last blocks run beside the cycle-level model
// (gpu/functional_tail.hpp).
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "catalog.hpp"
#include "common/error.hpp"
#include "common/host_workers.hpp"
#include "func/access_log.hpp"
#include "func/parallel_ctas.hpp"
#include "gpu/device.hpp"
#include "support/ptx_harness.hpp"

using namespace gpusc;
using namespace gpusc::test;

namespace {

// A kernel k(out) whose thread i of the grid stores i in out[i], after `body` (which may use
// %r2-%r7, %rd4-%rd7, %p1 and the shared array s, and may change the address %rd3).
std::string kernelWith(const std::string& body) {
  return module(R"(
.visible .entry k(.param .u64 out)
{
  .reg .b32 %r<8>;
  .reg .b64 %rd<8>;
  .reg .pred %p<2>;
  .shared .align 4 .b8 s[64];
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, %ctaid.x;
  mov.u32 %r3, %ntid.x;
  mad.lo.u32 %r1, %r2, %r3, %r1;
  mul.wide.u32 %rd2, %r1, 4;
  add.s64 %rd3, %rd1, %rd2;
  mov.u32 %r2, 0;
)" + body + R"(
  st.global.u32 [%rd3], %r1;
  ret;
}
)");
}

std::string reasonFor(const std::string& body) {
  Device dev(platform(), ExecMode::Functional);
  Module& m = dev.loadModule(kernelWith(body), "k.ptx");
  return func::serialCtasReason(*m.kernel("k").program);
}

}  // namespace

// Blocks run at once unless something in the kernel orders them: an atomic or a reduction on
// global (or generic) memory, a fence between blocks, a volatile global access, a clock read.
// The reason names the instruction and its line.
TEST(ParallelCtas, OnlyKernelsWhoseBlockOrderCannotMatterRunOnSeveralThreads) {
  EXPECT_EQ(reasonFor(""), "");
  EXPECT_EQ(reasonFor("atom.shared.add.u32 %r2, [s], 1;"), "");
  EXPECT_EQ(reasonFor("membar.cta;"), "");
  EXPECT_EQ(reasonFor("ld.volatile.shared.u32 %r2, [s];"), "");
  EXPECT_EQ(reasonFor("fence.proxy.async;"), "");
  const std::string atom = reasonFor("atom.global.add.u32 %r2, [%rd1], 1;");
  EXPECT_NE(atom.find("an atomic on global memory"), std::string::npos) << atom;
  EXPECT_NE(atom.find("k.ptx:"), std::string::npos) << atom;
  EXPECT_NE(atom.find("atom.global.add.u32"), std::string::npos) << atom;
  for (const char* body : {"atom.add.u32 %r2, [%rd1], 1;", "red.global.add.u32 [%rd1], 1;",
                           "membar.gl;", "fence.sc.gpu;", "ld.volatile.global.u32 %r2, [%rd1];",
                           "ld.relaxed.gpu.global.u32 %r2, [%rd1];", "mov.u32 %r2, %clock;",
                           "mov.u64 %rd4, %globaltimer;"})
    EXPECT_NE(reasonFor(body), "") << body;
}

// Each catalog kernel in the functional engine on two host threads: its check passes, and memory
// (every page), the statistics and the kernels run on one thread are those of a one-thread run.
class ParallelCatalog : public ::testing::TestWithParam<std::string> {};

TEST_P(ParallelCatalog, GivesTheOneThreadRunsMemoryAndStatistics) {
  struct Run {
    func::GlobalMemory::Snapshot memory;
    std::vector<func::ExecStats> stats;
    std::map<std::string, std::string> serial;
  };
  auto run = [&](unsigned threads) {
    Device dev(platform(), ExecMode::Functional);
    dev.setHostThreads(threads);
    auto wl = catalog::find(GetParam()).make(catalog::Size::Small);
    wl->setup(dev);
    wl->run(dev);
    const catalog::CheckResult r = wl->check(dev);
    EXPECT_TRUE(r.pass) << threads << " threads: " << r.message;
    Run out{dev.memory().snapshot(), {}, dev.serialKernels()};
    for (const LaunchRecord& l : dev.launches()) out.stats.push_back(l.stats);
    return out;
  };
  const Run one = run(1), two = run(2);
  EXPECT_TRUE(one.serial.empty());  // one thread: nothing to say
  ASSERT_EQ(one.stats.size(), two.stats.size());
  for (size_t i = 0; i < one.stats.size(); ++i) {
    const func::ExecStats &a = one.stats[i], &b = two.stats[i];
    EXPECT_EQ(a.warpInsts, b.warpInsts) << "launch " << i;
    EXPECT_EQ(a.threadInsts, b.threadInsts) << "launch " << i;
    EXPECT_EQ(a.ctas, b.ctas) << "launch " << i;
    EXPECT_EQ(a.divergentBranches, b.divergentBranches) << "launch " << i;
    EXPECT_EQ(a.barrierWaits, b.barrierWaits) << "launch " << i;
    EXPECT_TRUE(std::equal(std::begin(a.byClass), std::end(a.byClass), std::begin(b.byClass)));
  }
  // The same pages (the threads may have touched them first in another order), the same bytes.
  auto byPage = [](const func::GlobalMemory::Snapshot& s) {
    std::map<uint64_t, const uint8_t*> m;
    for (const auto& [page, bytes] : s.pages) m[page] = bytes.get();
    return m;
  };
  const auto a = byPage(one.memory), b = byPage(two.memory);
  ASSERT_EQ(a.size(), b.size());
  for (auto i = a.begin(), j = b.begin(); i != a.end(); ++i, ++j) {
    ASSERT_EQ(i->first, j->first);
    EXPECT_EQ(0, std::memcmp(i->second, j->second, func::GlobalMemory::kPageSize))
        << "page " << i->first;
  }
  // The kernels with global atomics ran on one thread, and said why.
  for (const auto& [kernel, why] : two.serial)
    EXPECT_NE(why.find("atomic"), std::string::npos) << kernel << ": " << why;
  const bool atomics =
      GetParam() == "histogram" || GetParam() == "kmeans" || GetParam() == "reduce_shfl";
  EXPECT_EQ(!two.serial.empty(), atomics) << GetParam();
}

INSTANTIATE_TEST_SUITE_P(Functional, ParallelCatalog, ::testing::ValuesIn(catalog::names()),
                         [](const auto& info) { return info.param; });

// Blocks 3 and up store outside every allocation. On two threads several of them may fault at once;
// the run reports block 3's fault, as the one-thread run does, and stops taking blocks.
TEST(ParallelCtas, AFaultIsTheLowestFaultingBlocksAsOnOneThread) {
  const std::string ptx = kernelWith(R"(
  mov.u32 %r2, %ctaid.x;
  setp.ge.u32 %p1, %r2, 3;
  @%p1 mov.u64 %rd3, 64;
)");
  auto faultOn = [&](unsigned threads) -> std::string {
    Device dev(platform(), ExecMode::Functional);
    dev.setHostThreads(threads);
    Module& m = dev.loadModule(ptx, "fault.ptx");
    DevPtr out = dev.malloc(400 * 64 * 4);
    try {
      dev.launch(m.kernel("k"), {400}, {64}, 0, KernelArgs().ptr(out));
    } catch (const KernelFault& e) {
      return e.what();
    }
    ADD_FAILURE() << "no fault on " << threads << " threads";
    return {};
  };
  const std::string one = faultOn(1);
  EXPECT_NE(one.find("of block (3,0,0)"), std::string::npos) << one;
  for (int i = 0; i < 5; ++i) EXPECT_EQ(faultOn(2), one);
}

// A time limit stops runaway blocks on every thread, with the launch's statistics.
TEST(ParallelCtas, TheTimeLimitStopsRunawayBlocksOnEveryThread) {
  const std::string ptx = kernelWith(R"(
LOOP:
  add.u32 %r2, %r2, 1;
  setp.ne.u32 %p1, %r2, 0;
  @%p1 bra LOOP;
)");
  const auto t0 = std::chrono::steady_clock::now();
  PlatformConfig cfg = platform();
  cfg.limits.timeout_seconds = 0.3;
  Device dev(cfg, ExecMode::Functional);
  dev.setHostThreads(2);
  Module& m = dev.loadModule(ptx, "loop.ptx");
  DevPtr out = dev.malloc(8 * 64 * 4);
  try {
    dev.launch(m.kernel("k"), {8}, {64}, 0, KernelArgs().ptr(out));
    ADD_FAILURE() << "the run did not stop";
  } catch (const RunStopped& e) {
    EXPECT_EQ(e.reason(), StopReason::Timeout);
    EXPECT_NE(std::string(e.what()).find("warp instructions"), std::string::npos) << e.what();
  }
  ASSERT_EQ(dev.launches().size(), 1u);
  EXPECT_EQ(dev.launches().back().stopped, StopReason::Timeout);
  EXPECT_GT(dev.launches().back().stats.warpInsts, 0u);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 5.0);
}

// Logs of the threads, each holding its blocks in ascending order, merge into what one log keeps
// of the blocks in order: the latest entries of the latest blocks, each block's in its order.
TEST(AccessLog, ThreadsLogsMergeIntoTheOneThreadLogInBlockOrder) {
  auto recordOf = [](uint64_t addr) {
    func::MemRecord r;
    r.space = func::MemSpace::Global;
    r.bytes = 4;
    r.mask = 0x1;
    r.addr[0] = addr;
    return r;
  };
  // Block b logs b + 1 entries, lines 100 b + i.
  auto logBlock = [&](func::AccessLog& log, uint32_t b) {
    log.setCta(b);
    for (uint32_t i = 0; i <= b; ++i) log.record(recordOf((100ull * b + i) << 7));
  };
  const size_t capacity = 9;
  func::AccessLog one(capacity), even(capacity), odd(capacity), merged(capacity);
  for (uint32_t b = 0; b < 8; ++b) {
    logBlock(one, b);
    logBlock(b % 2 ? odd : even, b);
  }
  merged.mergeByCta({&even, &odd});
  std::vector<uint64_t> want, got;
  one.forEach([&](const func::AccessLog::Entry& e) { want.push_back(e.line); });
  merged.forEach([&](const func::AccessLog::Entry& e) { got.push_back(e.line); });
  ASSERT_EQ(want.size(), capacity);
  // Block 7's eight entries and the last of block 6.
  EXPECT_EQ(want.front(), 606u);
  EXPECT_EQ(got, want);
  func::AccessLog small(capacity - 1);
  EXPECT_THROW(merged.mergeByCta({&small}), InternalError);
}

namespace {

// k(in, out): thread i of the grid copies in[i] to out[i]; with `faults`, the threads of block 3
// and of blocks 290 and up store outside every allocation. Decoded and run without a Device.
struct CopyKernel : test::DecodedKernel {
  explicit CopyKernel(bool faults) : DecodedKernel(text(faults), "k") {}
  static std::string text(bool faults) {
    return module(std::string(R"(
.visible .entry k(.param .u64 in, .param .u64 out)
{
  .reg .b32 %r<6>;
  .reg .b64 %rd<8>;
  .reg .pred %p<3>;
  ld.param.u64 %rd1, [in];
  ld.param.u64 %rd2, [out];
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, %ctaid.x;
  mov.u32 %r3, %ntid.x;
  mad.lo.u32 %r4, %r2, %r3, %r1;
  mul.wide.u32 %rd3, %r4, 4;
  add.s64 %rd4, %rd1, %rd3;
  add.s64 %rd5, %rd2, %rd3;
  ld.global.u32 %r5, [%rd4];
)") +
                  (faults ? R"(
  setp.eq.u32 %p1, %r2, 3;
  setp.ge.u32 %p2, %r2, 290;
  or.pred %p1, %p1, %p2;
  @%p1 mov.u64 %rd5, 64;
)"
                          : "") +
                  R"(
  st.global.u32 [%rd5], %r5;
  ret;
}
)");
  }
};

struct CopyRun {
  func::GlobalMemory g{uint64_t(1) << 30};
  uint64_t in = 0, out = 0;
  func::LaunchState L;
  CopyRun(const CopyKernel& k, uint32_t ctas) {
    const uint64_t bytes = uint64_t(ctas) * 64 * 4;
    in = g.allocate(bytes);
    out = g.allocate(bytes);
    std::vector<uint32_t> v(ctas * 64);
    for (size_t i = 0; i < v.size(); ++i) v[i] = uint32_t(i * 7 + 1);
    g.write(in, v.data(), bytes);
    L = test::launchOf(k, g, {ctas, 1, 1}, {64, 1, 1}, {in, out}, 15);
  }
  std::vector<uint32_t> output(uint32_t ctas) {
    std::vector<uint32_t> v(ctas * 64);
    g.read(out, v.data(), v.size() * 4);
    return v;
  }
};

struct Logged {
  uint64_t line;
  uint8_t sectors;
  bool write;
  bool operator==(const Logged& o) const {
    return line == o.line && sectors == o.sectors && write == o.write;
  }
};
std::vector<Logged> entries(const func::AccessLog& log) {
  std::vector<Logged> v;
  log.forEach([&](const func::AccessLog::Entry& e) { v.push_back({e.line, e.sectors, e.write}); });
  return v;
}

}  // namespace

// CTAs whose order cannot matter, logged for the L2 by their last CTAs alone, on one thread and
// on two, leave the log, memory and statistics of every CTA run in order with logging: with a log
// that keeps fewer entries than the CTAs make (each CTA of two warps logs a load and a store per
// warp: 4 entries) and with one that keeps them all.
TEST(ParallelCtas, LoggingOnlyTheLastBlocksLeavesTheLogOfEveryBlockInOrder) {
  const CopyKernel k(false);
  constexpr uint32_t kCtas = 300;
  for (size_t capacity : {size_t(50), size_t(4 * kCtas + 10)}) {
    CopyRun ref(k, kCtas);
    func::AccessLog all(capacity);
    ref.L.accessLog = &all;
    func::ExecStats want;
    {
      func::Executor ex(ref.L);
      func::Cta cta;
      for (uint64_t id = 0; id < kCtas; ++id) {
        ex.initCta(cta, ref.L.grid.ctaOf(id), id, uint32_t(id % 15));
        all.setCta(uint32_t(id));
        ex.runCta(cta, want);
      }
    }
    ASSERT_EQ(all.logged(), 4u * kCtas);
    HostWorkers two(2);
    for (HostWorkers* team : {static_cast<HostWorkers*>(nullptr), &two}) {
      CopyRun run(k, kCtas);
      func::AccessLog tail(capacity);
      run.L.accessLog = &tail;
      func::ExecStats got;
      func::runCtasLoggingTheLast(team, run.L, 0, kCtas, got, nullptr, {}, 1.0);
      const std::string what = (team ? "two threads" : "one thread") + std::string(", capacity ") +
                               std::to_string(capacity);
      EXPECT_TRUE(entries(tail) == entries(all)) << what;
      EXPECT_EQ(tail.size(), std::min<size_t>(capacity, 4 * kCtas)) << what;
      EXPECT_EQ(got.warpInsts, want.warpInsts) << what;
      EXPECT_EQ(got.ctas, uint64_t(kCtas)) << what;
      EXPECT_EQ(run.output(kCtas), ref.output(kCtas)) << what;
      // The CTAs that logged: only a few more than the 13 whose 52 entries cover 50.
      if (capacity == 50) {
        EXPECT_LT(tail.logged(), 4u * 32) << what;
      }
    }
  }
}

// Blocks 3 and 290 up fault: the last blocks, run first, fault, yet the fault given is block
// 3's, as in order.
TEST(ParallelCtas, LoggingOnlyTheLastBlocksStillGivesTheLowestBlocksFault) {
  const CopyKernel k(true);
  HostWorkers two(2);
  for (HostWorkers* team : {static_cast<HostWorkers*>(nullptr), &two}) {
    CopyRun run(k, 300);
    func::AccessLog log(50);
    run.L.accessLog = &log;
    func::ExecStats st;
    try {
      func::runCtasLoggingTheLast(team, run.L, 0, 300, st, nullptr, {}, 1.0);
      ADD_FAILURE() << "no fault";
    } catch (const KernelFault& e) {
      EXPECT_NE(std::string(e.what()).find("of block (3,0,0)"), std::string::npos) << e.what();
    }
  }
}

namespace {

// Waits (up to a minute) until `tail` has finished `n` CTAs.
void waitForTail(gpu::FunctionalTail& tail, uint64_t n) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::minutes(1);
  while (tail.ctasDone() < n && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  ASSERT_GE(tail.ctasDone(), n) << "the tail did not get going";
}

}  // namespace

// A wave-sampled launch's last CTAs run on other host threads, from the last down, on a copy of
// memory while the cycle-level model runs the first (here: CTAs [0, 40) run in order on the
// launch's memory, as the model would). Once the model is done, the rest run on the calling
// thread until they meet the tail's, and the memory, statistics and access log are those of every
// CTA run in order: on one tail thread and two, with a log that keeps fewer entries than the CTAs
// make and one that keeps them all, and whether the tail ran most of the rest or little of it.
TEST(ParallelCtas, ATailOfTheLastBlocksRunMeanwhileLeavesTheInOrderResults) {
  const CopyKernel k(false);
  constexpr uint32_t kCtas = 300, kModel = 40;
  for (size_t capacity : {size_t(50), size_t(4 * kCtas + 10)}) {
    CopyRun ref(k, kCtas);
    func::AccessLog all(capacity);
    ref.L.accessLog = &all;
    func::ExecStats want;
    func::runCtasInOrder(ref.L, 0, kCtas, want, nullptr, {}, 1.0);
    for (unsigned threads : {1u, 2u}) {
      for (uint64_t waitFor : {uint64_t(0), uint64_t(120)}) {
        const std::string what = std::to_string(threads) + " tail threads, capacity " +
                                 std::to_string(capacity) + ", waited for " +
                                 std::to_string(waitFor);
        CopyRun run(k, kCtas);
        func::AccessLog log(capacity);
        gpu::FunctionalTail::Params p;
        p.threads = threads;
        p.margin = 16;
        p.logCapacity = capacity;
        gpu::FunctionalTail tail(run.L, run.g, p);
        // The model starts its CTAs (the tail keeps to the upper half of the 260 after them: it
        // may take 130) and runs them on the launch's memory, logged as the model does not (the
        // log is emptied before the rest, as Device empties it).
        for (uint64_t id = 0; id < kModel; ++id) tail.ctaStarting(id);
        tail.start();
        func::ExecStats got;
        {
          run.L.accessLog = &log;
          func::Executor ex(run.L);
          func::Cta cta;
          for (uint64_t id = 0; id < kModel; ++id) {
            ex.initCta(cta, run.L.grid.ctaOf(id), id, uint32_t(id % 15));
            ex.runCta(cta, got);
          }
          log.clear();
        }
        if (waitFor > 0) waitForTail(tail, waitFor);
        ASSERT_TRUE(tail.finish(run.L, kModel, got, nullptr, {}, 1.0)) << what;
        EXPECT_GE(tail.ctasRun(), waitFor) << what;
        EXPECT_EQ(run.output(kCtas), ref.output(kCtas)) << what;
        EXPECT_EQ(got.warpInsts, want.warpInsts) << what;
        EXPECT_EQ(got.ctas, uint64_t(kCtas)) << what;
        // The log of CTAs [40, 300) in order: with the small log, its last 50 entries, which the
        // run of all 300 keeps too; with the large one, every entry after the first 40 CTAs'.
        std::vector<Logged> tailEnd = entries(log), refEnd = entries(all);
        ASSERT_LE(tailEnd.size(), refEnd.size()) << what;
        refEnd.erase(refEnd.begin(), refEnd.end() - tailEnd.size());
        EXPECT_EQ(tailEnd.size(), std::min<size_t>(capacity, 4 * (kCtas - kModel))) << what;
        EXPECT_TRUE(tailEnd == refEnd) << what;
      }
    }
  }
}

// When the model starts a CTA the tail has taken (its rate never settled), the tail is dropped:
// finish() runs nothing and says so, and nothing the tail ran reaches the launch's memory.
TEST(ParallelCtas, ATailTheModelRunsIntoIsDroppedUntouched) {
  const CopyKernel k(false);
  constexpr uint32_t kCtas = 300;
  CopyRun run(k, kCtas);
  gpu::FunctionalTail::Params p;
  p.margin = 16;
  gpu::FunctionalTail tail(run.L, run.g, p);
  tail.ctaStarting(0);
  tail.start();
  waitForTail(tail, 100);  // CTAs 299 down to 200 at least (it may go down to 150)
  for (uint64_t id = 1; id < kCtas; ++id) tail.ctaStarting(id);  // started, not run
  func::ExecStats st;
  EXPECT_FALSE(tail.finish(run.L, kCtas, st, nullptr, {}, 1.0));
  EXPECT_EQ(st.ctas, 0u);
  EXPECT_EQ(run.output(kCtas), std::vector<uint32_t>(kCtas * 64, 0));
}

// Blocks 3 and 290 up fault. The model ran blocks [0, 40) (started only, here); the tail's first
// block, 299, faults; the rest on the calling thread reach block 290 first, the lowest of the
// faults after the model's part, which is the one given, as in order.
TEST(ParallelCtas, ATailStillGivesTheLowestBlocksFault) {
  const CopyKernel k(true);
  CopyRun run(k, 300);
  gpu::FunctionalTail::Params p;
  p.margin = 16;
  gpu::FunctionalTail tail(run.L, run.g, p);
  for (uint64_t id = 0; id < 40; ++id) tail.ctaStarting(id);
  tail.start();
  func::ExecStats st;
  try {
    tail.finish(run.L, 40, st, nullptr, {}, 1.0);
    ADD_FAILURE() << "no fault";
  } catch (const KernelFault& e) {
    EXPECT_NE(std::string(e.what()).find("of block (290,0,0)"), std::string::npos) << e.what();
  }
}
