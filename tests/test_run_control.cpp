// Stopping a run: kernel faults inside the cycle-level model reach the caller as they were
// thrown (type and message as in functional mode), run limits (cycles, warp instructions,
// wall-clock seconds) and the interrupt flag stop a run at a cycle boundary with its partial
// statistics, and a deadlock or a model that stops making progress reports what every warp
// waits for.
#include <atomic>
#include <chrono>
#include <thread>

#include <gtest/gtest.h>

#include "catalog.hpp"
#include "common/error.hpp"
#include "dram/dram_scheduler.hpp"
#include "gpu/device.hpp"
#include "gpu/policies.hpp"
#include "support/ptx_harness.hpp"

using namespace gpusc;
using namespace gpusc::test;

namespace {

// A kernel(out, n) whose threads add to a counter `n` times, then store it; with n = 0 the
// loop runs 2^32 times: a runaway kernel.
const char* kLoopKernel = R"(
.visible .entry k(.param .u64 out, .param .u32 n)
{
  .reg .b32 %r<8>;
  .reg .b64 %rd<4>;
  .reg .pred %p<2>;
  ld.param.u64 %rd1, [out];
  ld.param.u32 %r1, [n];
  mov.u32 %r2, 0;
LOOP:
  add.u32 %r2, %r2, 1;
  setp.ne.u32 %p1, %r2, %r1;
  @%p1 bra LOOP;
  mov.u32 %r3, %tid.x;
  mul.wide.u32 %rd2, %r3, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r2;
  ret;
}
)";

PlatformConfig withLimits(uint64_t cycles, uint64_t insts, double seconds) {
  PlatformConfig cfg = platform();
  cfg.limits.max_cycles = cycles;
  cfg.limits.max_warp_instructions = insts;
  cfg.limits.timeout_seconds = seconds;
  return cfg;
}

// Launches kLoopKernel with `n` iterations on `ctas` CTAs of `threads` threads.
void launchLoop(Device& dev, uint32_t n, uint32_t ctas = 4, uint32_t threads = 64) {
  Module& m = dev.loadModule(module(kLoopKernel), "loop.ptx");
  DevPtr out = dev.malloc(uint64_t(threads) * 4);
  dev.launch(m.kernel("k"), {ctas}, {threads}, 0, KernelArgs().ptr(out).u32(n));
}

StopReason stopOf(Device& dev, uint32_t n, uint32_t ctas = 4) {
  try {
    launchLoop(dev, n, ctas);
  } catch (const RunStopped& e) {
    EXPECT_EQ(dev.stopped(), e.reason());
    EXPECT_FALSE(dev.launches().empty());
    EXPECT_EQ(dev.launches().back().stopped, e.reason());
    return e.reason();
  }
  ADD_FAILURE() << "the run did not stop";
  return StopReason::Interrupted;
}

// ---- faults -----------------------------------------------------------------------------------

// Thread 5 reads a 4-byte word at an odd shared address.
const char* kMisalignedKernel = R"(
.visible .entry k(.param .u64 out, .param .u32 n)
{
  .reg .b32 %r<8>;
  .reg .pred %p<2>;
  .shared .align 4 .b8 s[256];
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, s;
  shl.b32 %r3, %r1, 2;
  setp.eq.u32 %p1, %r1, 5;
  @%p1 add.u32 %r3, %r3, 1;
  add.u32 %r2, %r2, %r3;
  ld.shared.u32 %r4, [%r2];
  ret;
}
)";

std::string faultMessage(ExecMode mode) {
  Device dev(platform(), mode);
  Module& m = dev.loadModule(module(kMisalignedKernel), "fault.ptx");
  try {
    dev.launch(m.kernel("k"), {2}, {64}, 0, KernelArgs().ptr(0).u32(0));
  } catch (const KernelFault& e) {
    return e.what();
  }
  ADD_FAILURE() << "no fault";
  return {};
}

TEST(RunControl, ATimingModeFaultReachesTheCallerAsInFunctionalMode) {
  // SystemC wraps an exception escaping a process in an sc_report; the SM keeps it and the
  // engine rethrows it unchanged, so both modes report the same fault the same way.
  const std::string functional = faultMessage(ExecMode::Functional);
  const std::string timing = faultMessage(ExecMode::Timing);
  EXPECT_NE(functional.find("misaligned"), std::string::npos) << functional;
  EXPECT_NE(functional.find("thread (5,0,0) of block (0,0,0)"), std::string::npos) << functional;
  EXPECT_NE(functional.find("fault.ptx:"), std::string::npos) << functional;
  EXPECT_EQ(timing, functional);
  EXPECT_EQ(timing.find("sc_report"), std::string::npos);
  EXPECT_EQ(timing.find("E549"), std::string::npos);
}

TEST(RunControl, AfterAFaultTheNextDeviceRunsFromAFreshModel) {
  const auto cycles = [] {
    Device dev(platform(), ExecMode::Timing);
    launchLoop(dev, 50);
    return dev.launches().back().timing->cycles;
  };
  const uint64_t before = cycles();
  faultMessage(ExecMode::Timing);
  EXPECT_EQ(cycles(), before);
}

// ---- run limits -------------------------------------------------------------------------------

TEST(RunControl, TheCycleLimitStopsAtExactlyThatCycle) {
  for (uint64_t limit : {1000ull, 12345ull, 50000ull}) {
    Device dev(withLimits(limit, 0, 0), ExecMode::Timing);
    EXPECT_EQ(stopOf(dev, 0), StopReason::MaxCycles);
    const LaunchRecord& l = dev.launches().back();
    ASSERT_TRUE(l.timing.has_value());
    EXPECT_EQ(l.timing->cycles, limit);
    EXPECT_EQ(l.timing->stopped, StopReason::MaxCycles);
    EXPECT_GT(l.stats.warpInsts, 0u);
    // The partial figures are consistent: energy for the cycles run.
    ASSERT_TRUE(l.timing->power.has_value());
    EXPECT_NEAR(l.timing->power->seconds, double(limit) / (platform().gpu.clocks.core_mhz * 1e6),
                1e-12);
    EXPECT_GT(l.timing->power->total.totalJ(), 0.0);
  }
}

TEST(RunControl, LimitsAboveWhatTheRunNeedsChangeNothing) {
  Device free(platform(), ExecMode::Timing);
  launchLoop(free, 300);
  const LaunchRecord& a = free.launches().back();
  // Limits force short simulation slices; the cycles must not depend on them.
  Device limited(withLimits(a.timing->cycles + 1, a.stats.warpInsts + 1, 3600), ExecMode::Timing);
  launchLoop(limited, 300);
  const LaunchRecord& b = limited.launches().back();
  EXPECT_FALSE(b.stopped);
  EXPECT_EQ(b.timing->cycles, a.timing->cycles);
  EXPECT_EQ(b.stats.warpInsts, a.stats.warpInsts);
}

TEST(RunControl, TheInstructionLimitIsExactInFunctionalMode) {
  // Every count up to 12 stops inside the kernel's first straight-line instructions (run in one
  // go, up to the limit) or at its first branches.
  for (uint64_t limit : {1ull, 2ull, 3ull, 4ull, 5ull, 6ull, 7ull, 8ull, 9ull, 10ull, 11ull, 12ull,
                         4096ull, 100001ull}) {
    Device dev(withLimits(0, limit, 0), ExecMode::Functional);
    EXPECT_EQ(stopOf(dev, 0), StopReason::MaxInstructions);
    EXPECT_EQ(dev.launches().back().stats.warpInsts, limit);
  }
}

TEST(RunControl, TheInstructionLimitStopsWithinOneCycleOfIssueInTimingMode) {
  const PlatformConfig p = platform();
  const uint64_t perCycle = uint64_t(p.gpu.num_sms) * p.sm.schedulers * p.sm.max_issue_per_warp;
  for (uint64_t limit : {500ull, 30000ull}) {
    Device dev(withLimits(0, limit, 0), ExecMode::Timing);
    EXPECT_EQ(stopOf(dev, 0, 30), StopReason::MaxInstructions);
    const uint64_t ran = dev.launches().back().stats.warpInsts;
    EXPECT_GE(ran, limit);
    EXPECT_LE(ran, limit + perCycle);
  }
}

TEST(RunControl, LimitsCoverEveryLaunchOfTheRun) {
  // Each launch: 4 CTAs x 2 warps x (3 x 100 loop + 8 others) warp instructions.
  Device probe(platform(), ExecMode::Functional);
  launchLoop(probe, 100);
  const uint64_t perLaunch = probe.launches().back().stats.warpInsts;
  Device dev(withLimits(0, perLaunch * 2 + perLaunch / 2, 0), ExecMode::Functional);
  launchLoop(dev, 100);
  launchLoop(dev, 100);
  EXPECT_EQ(stopOf(dev, 100), StopReason::MaxInstructions);
  ASSERT_EQ(dev.launches().size(), 3u);
  EXPECT_EQ(dev.launches()[2].stats.warpInsts, perLaunch / 2);
  // A stopped device refuses further launches with the same reason.
  EXPECT_THROW(launchLoop(dev, 1), RunStopped);
  EXPECT_EQ(dev.launches().size(), 3u);
}

TEST(RunControl, TheTimeLimitStopsARunawayKernelInBothModes) {
  for (ExecMode mode : {ExecMode::Functional, ExecMode::Timing}) {
    // The limit counts from the Device's creation (set-up is part of a run's time), so the clock
    // starts before it: on a loaded machine building the Device can take a good part of 0.3 s.
    const auto t0 = std::chrono::steady_clock::now();
    Device dev(withLimits(0, 0, 0.3), mode);
    EXPECT_EQ(stopOf(dev, 0), StopReason::Timeout);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_GE(s, 0.3);
    EXPECT_LT(s, 5.0);
  }
}

TEST(RunControl, TheInterruptFlagStopsTheRun) {
  for (ExecMode mode : {ExecMode::Functional, ExecMode::Timing}) {
    std::atomic<bool> flag{false};
    Device dev(platform(), mode);
    dev.setInterruptFlag(&flag);
    std::thread raiser([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      flag.store(true);
    });
    StopReason r = StopReason::MaxCycles;
    try {
      r = stopOf(dev, 0);
    } catch (...) {
      raiser.join();
      throw;
    }
    raiser.join();
    EXPECT_EQ(r, StopReason::Interrupted);
    EXPECT_GT(dev.launches().back().stats.warpInsts, 0u);
  }
}

// ---- deadlock ---------------------------------------------------------------------------------

TEST(RunControl, ATimingModeDeadlockNamesEveryWaitingWarp) {
  // Warp 1 of each CTA waits at barrier 1 for 64 threads; warp 0 exits.
  const char* deadlock = R"(
.visible .entry k(.param .u64 out, .param .u32 n)
{
  .reg .b32 %r<4>;
  .reg .pred %p<2>;
  mov.u32 %r1, %tid.x;
  setp.lt.u32 %p1, %r1, 32;
  @%p1 bra DONE;
  bar.sync 1, 64;
DONE:
  ret;
}
)";
  Device dev(platform(), ExecMode::Timing);
  Module& m = dev.loadModule(module(deadlock), "deadlock.ptx");
  try {
    dev.launch(m.kernel("k"), {3}, {64}, 0, KernelArgs().ptr(0).u32(0));
    FAIL() << "no deadlock reported";
  } catch (const KernelFault& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("deadlock"), std::string::npos) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << "the message is one line";
    // One line per waiting warp: which SM, CTA and warp, the barrier and the PTX line.
    size_t lines = 0;
    for (size_t p = 0; (p = e.detail().find("at barrier 1", p)) != std::string::npos; ++p) ++lines;
    EXPECT_EQ(lines, 3u) << e.detail();
    for (const char* cta : {"block (0,0,0) warp 1", "block (1,0,0) warp 1", "block (2,0,0) warp 1"})
      EXPECT_NE(e.detail().find(cta), std::string::npos) << e.detail();
    EXPECT_NE(e.detail().find("deadlock.ptx:"), std::string::npos) << e.detail();
  }
}

// ---- the no-progress watchdog -----------------------------------------------------------------

// A deliberately broken DRAM scheduler: it never issues a command, but asks to be evaluated again
// every DRAM cycle, so events stay pending and only the no-progress watchdog can tell that the
// launch will never end. (One that asks for no retry with requests queued is caught by the
// memory controller itself: "queued requests can never be served".)
class NeverIssues : public dram::DramSchedulingPolicy {
 public:
  dram::DramDecision decide(const dram::RequestQueue&, const dram::DramChannel&,
                            uint64_t now) override {
    dram::DramDecision d;
    d.retry = now + 1;
    return d;
  }
};

std::string brokenDramRun() {
  auto policies = std::make_shared<Policies>();
  policies->dramSchedulers.add("never-issues", "a broken scheduler that never issues",
                               [](const DramConfig&) { return std::make_unique<NeverIssues>(); });
  const PlatformConfig cfg = loadPlatform(
      "gtx480", {"memory.controller.scheduler=never-issues", "gpu.num_sms=2"}, policies);
  Device dev(cfg, ExecMode::Timing);
  auto w = catalog::find("vecadd").make(catalog::Size::Tiny);
  w->setup(dev);
  try {
    w->run(dev);
  } catch (const InternalError& e) {
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << "the message is one line";
    EXPECT_NE(e.detail().find("the oldest request waits in gpu.mc"), std::string::npos)
        << "the state dump names it too: " << e.detail();
    return e.what();
  }
  ADD_FAILURE() << "the launch finished with a scheduler that never issues";
  return "";
}

// Requests pile up in the controllers' queues while a controller wakes every cycle: the watchdog
// stops the launch after its two million cycles without an instruction or a finished CTA, and
// names the controller, whose queue holds the request that has waited longest anywhere (the L2
// slices and L1s behind it hold younger ones, backed up).
TEST(RunControl, TheNoProgressWatchdogNamesTheUnitHoldingTheOldestRequest) {
  const std::string what = brokenDramRun();
  EXPECT_NE(what.find("made no progress for 2000"), std::string::npos) << what;
  EXPECT_NE(what.find("the oldest request waits in gpu.mc"), std::string::npos) << what;
  EXPECT_NE(what.find("in the request queue"), std::string::npos) << what;
  EXPECT_NE(what.find("load of 0x"), std::string::npos) << what;
}

}  // namespace
