// The verilated blocks' waveforms in the run's VCD (gpusc run --vcd; docs/rtl-cosim.md
// "Waveforms"): one file holds the model's voltages and, under scope rtl, the signals of the
// blocks of the traced SMs, their L1s, the L2 slices and the CTA scheduler, on the same time
// axis (femtoseconds, cycle c of a block's clock at c x its period). A pulse input shows for one
// cycle even where the transactor skipped the clocks after it.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "catalog.hpp"
#include "common/platform_config.hpp"
#include "gpu/device.hpp"
#include "gpu/gpu.hpp"

using namespace gpusc;
namespace fs = std::filesystem;

namespace {

// A VCD file read back: each variable's full dotted name, and each code's changes in time order.
struct Vcd {
  std::map<std::string, std::string> codeOf;  // "rtl.sm0.simd_issue_control....slice_end" -> code
  std::map<std::string, std::vector<std::pair<uint64_t, std::string>>> changes;  // code -> (t, v)

  explicit Vcd(const std::string& path) {
    std::ifstream in(path);
    std::string t;
    std::vector<std::string> scope;
    while (in >> t && t != "$enddefinitions") {
      if (t == "$scope") {
        std::string kind, name;
        in >> kind >> name >> t;
        scope.push_back(name);
      } else if (t == "$upscope") {
        in >> t;
        scope.pop_back();
      } else if (t == "$var") {
        std::string type, size, code, name;
        in >> type >> size >> code >> name;
        while (in >> t && t != "$end") {
        }
        std::string full;
        for (const std::string& s : scope) full += s + ".";
        codeOf.emplace(full + name, code);
      }
    }
    in >> t;  // $end
    uint64_t time = 0;
    while (in >> t) {
      if (t[0] == '#') {
        time = std::stoull(t.substr(1));
      } else if (t[0] == '$') {
      } else if (t[0] == 'b' || t[0] == 'r') {
        std::string code;
        in >> code;
        changes[code].emplace_back(time, t.substr(1));
      } else {
        changes[t.substr(1)].emplace_back(time, t.substr(0, 1));
      }
    }
  }
  // The code of the first variable under `prefix` named `name`.
  std::string find(const std::string& prefix, const std::string& name) const {
    for (const auto& [full, code] : codeOf)
      if (full.rfind(prefix, 0) == 0 && full.size() > name.size() &&
          full.compare(full.size() - name.size() - 1, name.size() + 1, "." + name) == 0)
        return code;
    return {};
  }
  bool hasScope(const std::string& prefix) const {
    for (const auto& [full, code] : codeOf)
      if (full.rfind(prefix + ".", 0) == 0) return true;
    return false;
  }
  // Times at which a one-bit variable goes to `v` ("1" or "0").
  std::vector<uint64_t> edges(const std::string& code, const std::string& v) const {
    std::vector<uint64_t> out;
    const auto it = changes.find(code);
    if (it == changes.end()) return out;
    std::string last = "x";
    for (const auto& [time, value] : it->second) {
      if (value == v && last != v) out.push_back(time);
      last = value;
    }
    return out;
  }
};

TEST(RtlWaves, TheRunsVcdHoldsTheBlocksSignalsOnTheModelsTimeAxis) {
  const fs::path dir =
      fs::temp_directory_path() / ("gpusc-rtl-waves-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string file = (dir / "voltage.vcd").string();
  const uint32_t slice = 100;
  PlatformConfig cfg = loadPlatform(
      "gtx480",
      {"pdn.enabled=true", "pdn.monitor.vcd_sms=[0,2]", "power.simd_issue.policy=utilisation",
       "power.simd_issue.slice_cycles=" + std::to_string(slice), "rtl.simd_issue=verilated",
       "power.l1d.drowsy.policy=timeout", "power.l1d.drowsy.timeout_cycles=64",
       "rtl.drowsy_controller=lockstep"});
  cfg.pdn.monitor.vcd_file = file;
  uint64_t periodFs = 0, start = 0;
  {
    Device dev(cfg, ExecMode::Timing);
    auto wl = catalog::find("vecadd").make(catalog::Size::Tiny);
    wl->setup(dev);
    wl->run(dev);
    ASSERT_TRUE(wl->check(dev).pass);
    ASSERT_EQ(dev.launches().size(), 1u);
    start = dev.launches()[0].timing->startCycle;
    gpu::Gpu& g = dev.timingEngine()->gpu();
    periodFs = uint64_t(std::llround(g.corePeriod().to_seconds() * 1e15));
    ASSERT_NE(g.rtlWaves(), nullptr);
    g.closeWaves();
  }
  const Vcd vcd(file);
  // The model's voltages and the blocks of the traced SMs only.
  EXPECT_FALSE(vcd.find("", "sm0_volts").empty());
  EXPECT_TRUE(vcd.hasScope("rtl.sm0.simd_issue_control"));
  EXPECT_TRUE(vcd.hasScope("rtl.sm2.simd_issue_control"));
  EXPECT_FALSE(vcd.hasScope("rtl.sm1"));
  EXPECT_TRUE(vcd.hasScope("rtl.sm0.l1d.drowsy_line_controller.bank0"));
  EXPECT_FALSE(vcd.hasScope("rtl.l2_0"));  // the L2's lines are not drowsy: no controller

  // The issue control is clocked at slice ends only: slice_end rises at the platform time of
  // each slice end (the kernel's start + 1 + k x slice_cycles) and falls one cycle later,
  // although the next clock comes a slice later.
  const std::string sliceEnd = vcd.find("rtl.sm0.simd_issue_control", "slice_end");
  ASSERT_FALSE(sliceEnd.empty());
  const std::vector<uint64_t> rises = vcd.edges(sliceEnd, "1"), falls = vcd.edges(sliceEnd, "0");
  ASSERT_FALSE(rises.empty());
  EXPECT_EQ(rises.front(), (start + 1 + slice) * periodFs);
  for (uint64_t r : rises) {
    EXPECT_EQ((r / periodFs - start - 1) % slice, 0u) << r;
    EXPECT_EQ(r % periodFs, 0u) << r;
    EXPECT_NE(std::find(falls.begin(), falls.end(), r + periodFs), falls.end()) << r;
  }
  // The clock rises half a period after each slice end.
  const std::string clk = vcd.find("rtl.sm0.simd_issue_control", "clk");
  const std::vector<uint64_t> clkRises = vcd.edges(clk, "1");
  EXPECT_NE(std::find(clkRises.begin(), clkRises.end(), rises.front() + periodFs / 2),
            clkRises.end());

  // The L1's drowsy-line controller: accesses, each a one-cycle pulse on the core clock's grid,
  // and the first one wakes its line.
  const std::string access = vcd.find("rtl.sm0.l1d.drowsy_line_controller.bank0", "access");
  const std::string wake = vcd.find("rtl.sm0.l1d.drowsy_line_controller.bank0", "wake");
  ASSERT_FALSE(access.empty());
  const std::vector<uint64_t> accesses = vcd.edges(access, "1");
  ASSERT_FALSE(accesses.empty());
  for (uint64_t a : accesses) EXPECT_EQ(a % periodFs, 0u) << a;
  const std::vector<uint64_t> wakes = vcd.edges(wake, "1");
  ASSERT_FALSE(wakes.empty());
  EXPECT_EQ(wakes.front(), accesses.front());
  fs::remove_all(dir);
}

}  // namespace
