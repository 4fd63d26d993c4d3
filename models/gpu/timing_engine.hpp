// Runs launches on the cycle-level model. SystemC elaborates a design once per simulation
// context, so the engine builds the Gpu top for a configuration and keeps it while Devices with
// that configuration come and go (each gets fresh caches and statistics); a Device with another
// configuration gets a new engine in a new SystemC context.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/platform_config.hpp"
#include "func/executor.hpp"
#include "gpu/gpu.hpp"
#include "power/energy_model.hpp"
#include "sm/activity.hpp"
#include "sm/gating_stats.hpp"

namespace gpusc::gpu {

struct SmTiming {
  uint32_t id = 0;
  sm::SmCounters counters;
  std::vector<std::array<uint64_t, sm::kNumStalls>> schedulers;  // outcomes per scheduler
  uint32_t peakCtas = 0;
  sm::SmGatingStats gating;        // SIMD units and lanes (seed 002)
  power::SwitchCounters smSwitch;  // the SM's own switch
};

struct TimingResult {
  uint64_t cycles = 0;
  uint64_t startCycle = 0, endCycle = 0;
  std::vector<SmTiming> sms;
  std::vector<sm::CtaRecord> timeline;
  double coreMhz = 0;
  nlohmann::json memory;                    // the memory system's statistics (Gpu::memoryStatsJson)
  std::optional<power::PowerReport> power;  // energy and power (power.enabled)
  std::optional<pdn::VoltageReport> voltage;  // supply voltage and droops (pdn.enabled)
  nlohmann::json smoothing;     // what voltage smoothing did (null with smoothing.mode none)
  PlacementDecision placement;  // the CTA placement policy's choice
};

class TimingEngine {
 public:
  static TimingEngine& get(const PlatformConfig& cfg);

  // Runs one launch to completion; `label` names it in progress lines.
  TimingResult run(func::LaunchState& L, func::ExecStats& stats, const sm::CtaFootprint& footprint,
                   uint64_t codeBase, const std::string& label);
  // Fresh caches, units and statistics: what a new Device sees.
  void reset();

  Gpu& gpu() { return *gpu_; }
  // Sees every SM's activity (after the energy model, when there is one).
  void setActivityObserver(sm::ActivityObserver* o);
  void setIssueObserver(sm::IssueObserver* o);

 private:
  explicit TimingEngine(const PlatformConfig& cfg);
  std::string configKey_;
  // Runs until nothing is pending (the memory system is idle); InternalError if that takes
  // implausibly long. `label` names the launch in the message.
  void drain(const std::string& label);

  uint64_t commonEdgePeriod_;  // femtoseconds between instants where every clock has an edge
  std::unique_ptr<Gpu> gpu_;
};

}  // namespace gpusc::gpu
