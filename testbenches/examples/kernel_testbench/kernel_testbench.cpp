// Example 1: a GoogleTest testbench for a user's own kernel.
//
// It builds a platform from the user's YAML file, uploads buffers, launches the user's PTX
// kernel (saxpy.ptx) in functional and in timing mode, and checks
//   - the values against a host reference (bit-exact: the kernel uses one fused multiply-add);
//   - the cycle count against bounds derived from the platform (no faster than the SMs can
//     issue the kernel's warp instructions) and against the user's own performance budget;
//   - the energy: reported, consistent (blocks sum to the total), and growing with the work.
//
// Linked with gpusc::gtest_main (not GTest::gtest_main), so a run that selects no test fails.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <vector>

#include <gtest/gtest.h>

#include "common/platform_config.hpp"
#include "gpu/device.hpp"

namespace {

using gpusc::Device;
using gpusc::ExecMode;
using gpusc::KernelArgs;

constexpr float kA = 2.5f;
constexpr uint32_t kBlock = 128;

// The user's platform and kernel, from files next to this source (see CMakeLists.txt).
gpusc::PlatformConfig platform() {
  return gpusc::loadPlatform(GPUSC_EXAMPLE_DIR "/small_gpu.yaml");
}

struct Inputs {
  std::vector<float> x, y;
};
Inputs inputs(uint32_t n) {
  Inputs in;
  for (uint32_t i = 0; i < n; ++i) {
    in.x.push_back(0.25f * float(i % 97) - 3.0f);
    in.y.push_back(1.0f / float(1 + i % 13));
  }
  return in;
}

// Runs saxpy on n elements on a fresh device; returns y and the device's launch record.
struct SaxpyRun {
  std::vector<float> y;
  gpusc::LaunchRecord launch;
};
SaxpyRun runSaxpy(ExecMode mode, uint32_t n) {
  Device dev(platform(), mode);
  auto& mod = dev.loadModuleFile(GPUSC_EXAMPLE_DIR "/saxpy.ptx");
  const Inputs in = inputs(n);
  const gpusc::DevPtr x = dev.upload(in.x), y = dev.upload(in.y);
  dev.launch(mod.kernel("saxpy"), {(n + kBlock - 1) / kBlock}, {kBlock}, 0,
             KernelArgs().f32(kA).ptr(x).ptr(y).u32(n));
  return {dev.download<float>(y, n), dev.launches().back()};
}

std::vector<float> reference(uint32_t n) {
  const Inputs in = inputs(n);
  std::vector<float> y(n);
  for (uint32_t i = 0; i < n; ++i) y[i] = std::fma(kA, in.x[i], in.y[i]);
  return y;
}

TEST(Saxpy, FunctionalModeMatchesTheHostReference) {
  const uint32_t n = 1000;  // not a multiple of the block: the last CTA has idle threads
  const SaxpyRun r = runSaxpy(ExecMode::Functional, n);
  EXPECT_EQ(r.y, reference(n));
  EXPECT_EQ(r.launch.stats.ctas, (n + kBlock - 1) / kBlock);
  EXPECT_FALSE(r.launch.timing.has_value());  // functional mode: no cycles
}

TEST(Saxpy, TimingModeGivesTheSameValuesWithinItsCycleBounds) {
  const uint32_t n = 4096;
  const gpusc::PlatformConfig cfg = platform();
  const SaxpyRun r = runSaxpy(ExecMode::Timing, n);
  EXPECT_EQ(r.y, reference(n));
  ASSERT_TRUE(r.launch.timing.has_value());
  const uint64_t cycles = r.launch.timing->cycles;
  std::printf("saxpy on %u elements: %llu cycles, %llu warp instructions\n", n,
              static_cast<unsigned long long>(cycles),
              static_cast<unsigned long long>(r.launch.stats.warpInsts));
  // Lower bound from the platform: every SM issues at most one instruction per warp scheduler
  // per cycle (max_issue_per_warp per warp), so the kernel's warp instructions need at least
  // this many cycles spread over all SMs.
  const uint64_t issuePerCycle =
      uint64_t(cfg.gpu.num_sms) * cfg.sm.schedulers * cfg.sm.max_issue_per_warp;
  EXPECT_GE(cycles, r.launch.stats.warpInsts / issuePerCycle);
  // The user's performance budget for this kernel on this platform: at most one core cycle per
  // two elements (the model takes 953 cycles for these 4096 elements: the line printed above).
  EXPECT_LE(cycles, n / 2);
}

TEST(Saxpy, EnergyIsReportedAndGrowsWithTheWork) {
  const SaxpyRun small = runSaxpy(ExecMode::Timing, 2048), large = runSaxpy(ExecMode::Timing, 8192);
  ASSERT_TRUE(small.launch.timing && small.launch.timing->power);
  ASSERT_TRUE(large.launch.timing && large.launch.timing->power);
  const auto& e = small.launch.timing->power->total;
  double blocks = 0;
  for (const auto& b : e.blocks) blocks += b.total();
  EXPECT_GT(e.dynamicJ(), 0.0);
  EXPECT_GT(e.staticJ(), 0.0);
  EXPECT_NEAR(blocks, e.totalJ(), 1e-9 * e.totalJ());
  // Four times the elements: more dynamic energy (more instructions and memory traffic).
  EXPECT_GT(large.launch.timing->power->total.dynamicJ(), 2 * e.dynamicJ());
}

}  // namespace
