// Runs launches on the cycle-level model. SystemC elaborates a design once per simulation
// context, so the engine builds the Gpu top for a configuration and keeps it while Devices with
// that configuration come and go (each gets fresh caches and statistics); a Device with another
// configuration gets a new engine in a new SystemC context.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/host_thread_governor.hpp"
#include "common/platform_config.hpp"
#include "common/run_budget.hpp"
#include "func/executor.hpp"
#include "gpu/gpu.hpp"
#include "gpu/wave_sampler.hpp"
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
  // Set when the launch did not finish: a run limit or an interrupt stopped it at a cycle
  // boundary; every figure above covers the cycles it ran.
  std::optional<StopReason> stopped;
};

// How far a running launch has come, for progress displays.
struct LaunchProgress {
  std::string label;  // e.g. "kernel 3 (bfs_step)"
  uint32_t ctasDone = 0, ctasTotal = 0;
  uint64_t cycles = 0;     // timing mode: simulated cycles so far (0 in functional mode)
  double seconds = 0;      // host seconds since the launch started
  double etaSeconds = -1;  // estimated host seconds left (-1: no estimate yet)
};
using ProgressFn = std::function<void(const LaunchProgress&)>;
// Progress reports come every `kProgressPeriodSeconds` of host time, the first after one period.
constexpr double kProgressPeriodSeconds = 1.0;

class TimingEngine {
 public:
  static TimingEngine& get(const PlatformConfig& cfg);
  // Whether `e` is the engine get() last returned (a newer one replaces it, and its SystemC
  // context is no longer the current one).
  static bool isCurrent(const TimingEngine* e);

  // Runs one launch to completion; `label` names it in progress lines. With a `budget` whose
  // limits or interrupt say stop, the launch stops at a cycle boundary and the result says so
  // (TimingResult::stopped): its statistics cover the cycles it ran. The engine cannot run
  // another launch after that (nor after a fault); the next get() builds a fresh one.
  // With `waves` (sampling.mode wave) the sampler may stop further CTAs from starting: the
  // launch then ends when the started ones have (WaveSampler::ctasDetailed()), and the result
  // and `stats` cover those. With `starts`, it is told of each CTA before it starts, and the
  // SMs' cycles are evaluated on the simulation thread alone: the other host threads run the
  // launch's last CTAs in the functional engine meanwhile (FunctionalTail).
  TimingResult run(func::LaunchState& L, func::ExecStats& stats, const sm::CtaFootprint& footprint,
                   uint64_t codeBase, const std::string& label, const RunBudget* budget = nullptr,
                   const ProgressFn* progress = nullptr, WaveSampler* waves = nullptr,
                   CtaStartObserver* starts = nullptr);
  // Fresh caches, units and statistics: what a new Device sees.
  void reset();

  Gpu& gpu() { return *gpu_; }
  // Sees every SM's activity (after the energy model, when there is one).
  void setActivityObserver(sm::ActivityObserver* o);
  void setIssueObserver(sm::IssueObserver* o);
  // Host threads evaluating the SMs' and the mesh routers' cycles (1: the simulation thread
  // alone), and how they are used (ThreadPolicy). Results do not depend on either.
  void setThreads(unsigned n, ThreadPolicy policy = ThreadPolicy::Adaptive);
  unsigned threads() const;
  ThreadPolicy threadPolicy() const;
  // The adaptive policy's governor, with its epochs since setThreads (null: none).
  const HostThreadGovernor* threadGovernor() const;
  // Why the last launch evaluated its SMs on the simulation thread alone (empty: it used the
  // host threads), and the share of its evaluated cycles that ran on several threads.
  std::string serialReason() const;
  // Cycles of the last launch in which SMs were evaluated on several host threads.
  uint64_t parallelCycles() const;
  // Interconnect cycles, since the engine was built, in which the mesh's routers were evaluated
  // on several host threads.
  uint64_t routerParallelCycles() const;

 private:
  explicit TimingEngine(const PlatformConfig& cfg);
  // Advances the simulation by `t` (sc_start). An exception a process caught (an SM's fault) is
  // rethrown as it was thrown; any other error SystemC reports becomes an InternalError. Either
  // leaves the engine unusable.
  void advance(const sc_core::sc_time& t,
               sc_core::sc_starvation_policy p = sc_core::SC_RUN_TO_TIME);
  // Per SM, what every resident warp waits for; then the memory units with work in flight.
  std::string stateDump() const;
  std::string configKey_;
  bool poisoned_ = false;  // stopped mid-launch or faulted: SystemC state is not reusable
  // The SystemC context the engine was elaborated in: reused only while it is the current one
  // (a testbench that makes a context of its own, as a block-level test does, leaves the engine
  // behind: sc_start would run the new, empty context).
  sc_core::sc_simcontext* context_ = nullptr;
  // Runs until nothing is pending (the memory system is idle); InternalError if that takes
  // implausibly long. `label` names the launch in the message.
  void drain(const std::string& label);

  uint64_t commonEdgePeriod_;  // femtoseconds between instants where every clock has an edge
  std::unique_ptr<Gpu> gpu_;
};

}  // namespace gpusc::gpu
