#include "gpu/timing_engine.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <numeric>

#include <fmt/format.h>

#include "common/error.hpp"

namespace gpusc::gpu {

namespace {

// The memory side's leakage current (L2 slices with every line ON, routers, controllers), for a
// core rail it shares (pdn.uncore_rail shared). DRAM has its own supply; constant power is not
// placed on any rail.
double uncoreStaticAmps(Gpu& g) {
  const power::EnergyModel* e = g.energyModel();
  power::UncoreEnergyInputs in = g.uncoreEnergyInputs();
  for (auto& l2 : in.l2) l2 = power::CacheEnergyInputs{l2.frames, l2.subwordsPerLine};
  in.routerFlits = in.linkFlits = in.controllerRequests = 0;
  in.activates = in.precharges = in.readBursts = in.writeBursts = in.refreshes = 0;
  const uint64_t cyclesPerSecond = uint64_t(g.config().gpu.clocks.core_mhz * 1e6);
  const power::EnergyBreakdown b = power::uncoreEnergy(e->table(), in, cyclesPerSecond);
  double w = 0;
  for (power::Block k : {power::Block::L2, power::Block::Noc, power::Block::MemoryControllers})
    w += b[k].staticJ;
  return w / e->table().supplyVoltage;
}
constexpr int kDrainSlices = 100;  // of kDrainSliceCycles: the most a drain may take
constexpr uint64_t kDrainSliceCycles = 20000;
// Common edges are used while they come at most every 0.1 s of simulated time and stay below
// 10^19 fs (sc_time's limit is 1.8 x 10^19): room for 10^5 Devices in one process.
constexpr uint64_t kCommonEdgeLimit = 100000000000000ull;
constexpr uint64_t kLatestCommonEdge = 10000000000000000000ull;

// The least common multiple of the clock periods (femtoseconds), or 0 when it exceeds
// `limit`: every clock has an edge at each multiple of it.
uint64_t commonEdgePeriod(const ClockConfig& c, uint64_t limit) {
  uint64_t l = 1;
  for (double mhz : {c.core_mhz, c.interconnect_mhz, c.l2_mhz, c.dram_mhz}) {
    const uint64_t p = Clock(mhz).periodValue();
    const uint64_t q = l / std::gcd(l, p);
    if (q > limit / p) return 0;
    l = q * p;
  }
  return l;
}
}  // namespace

// What identifies an engine: the configuration and the policies it names, but not the run
// limits, which the Device applies per run. A platform's Policies stay alive as long as an
// engine built from them (its Gpu holds the configuration), so their address is not reused by
// another testbench's Policies while that engine exists.
static std::string engineKey(const PlatformConfig& cfg) {
  PlatformConfig c = cfg;
  c.limits = LimitsConfig{};
  return config::toJson(c).dump() +
         fmt::format(" policies@{}", static_cast<const void*>(cfg.policies.get()));
}

namespace {
TimingEngine*& currentEngine() {
  static TimingEngine* engine = nullptr;
  return engine;
}
}  // namespace

bool TimingEngine::isCurrent(const TimingEngine* e) {
  return e != nullptr && e == currentEngine() && e->context_ == sc_core::sc_curr_simcontext;
}

TimingEngine& TimingEngine::get(const PlatformConfig& cfg) {
  // One engine at a time. SystemC elaborates a design once per simulation context, so a
  // different configuration gets a new context; the old engine and context are left alive
  // (SystemC objects cannot be destroyed once their context is no longer current, nor during
  // static destruction), which costs the memory of one finished platform per switch. An engine
  // that stopped mid-launch (a fault, a run limit) is replaced the same way, and so is one
  // whose context is no longer the current one (a testbench made a context of its own).
  TimingEngine*& engine = currentEngine();
  const std::string key = engineKey(cfg);
  if (engine != nullptr && engine->configKey_ == key && !engine->poisoned_ &&
      engine->context_ == sc_core::sc_curr_simcontext)
    return *engine;
  if (engine != nullptr) {
    sc_core::sc_curr_simcontext = new sc_core::sc_simcontext;
    sc_core::sc_default_global_context = sc_core::sc_curr_simcontext;
  }
  engine = new TimingEngine(cfg);
  return *engine;
}

TimingEngine::TimingEngine(const PlatformConfig& cfg)
    : configKey_(engineKey(cfg)),
      commonEdgePeriod_(commonEdgePeriod(cfg.gpu.clocks, kCommonEdgeLimit)) {
  // No SystemC banner on stdout: gpusc prints its own report.
  setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 1);
  sc_core::sc_set_time_resolution(1, sc_core::SC_FS);
  context_ = sc_core::sc_curr_simcontext;
  gpu_ = std::make_unique<Gpu>("gpu", cfg);
  if (gpu_->energyModel())
    for (sm::Sm* s : gpu_->sms()) s->setActivityObserver(gpu_->energyModel());
}

void TimingEngine::reset() {
  drain("the previous launch");  // normally done already, unless that launch failed
  // Start where every clock domain has an edge, as at time zero: a launch's cycles then do not
  // depend on what ran before it in this process. Nothing is scheduled, so the jump is free.
  const uint64_t now = sc_core::sc_time_stamp().value();
  if (commonEdgePeriod_ > 0 && now % commonEdgePeriod_ != 0) {
    const uint64_t next = (now / commonEdgePeriod_ + 1) * commonEdgePeriod_;
    if (next > now && next < kLatestCommonEdge) advance(sc_core::sc_time::from_value(next - now));
  }
  for (sm::Sm* s : gpu_->sms()) {
    s->resetState();
    s->resetStats();
  }
  gpu_->coreClockDomain().reset();
  gpu_->ctaScheduler().powerOnSwitches();
  gpu_->resetMemoryState();
  gpu_->resetMemoryStats();
}

void TimingEngine::advance(const sc_core::sc_time& t, sc_core::sc_starvation_policy p) {
  if (poisoned_) throw InternalError("the timing engine stopped mid-launch and cannot run again");
  try {
    sc_core::sc_start(t, p);
  } catch (const sc_core::sc_report& r) {
    poisoned_ = true;
    for (sm::Sm* s : gpu_->sms())
      if (s->fault()) std::rethrow_exception(s->fault());
    // A report from outside any process (a trace file's write, an sc_start of the kernel) has
    // no process name: a null pointer fmt refuses ("string pointer is null"), losing the message.
    const char* msg = r.get_msg();
    const char* process = r.get_process_name();
    throw InternalError(fmt::format("SystemC: {}{}", msg && *msg ? msg : r.what(),
                                    process && *process ? fmt::format(" in {}", process) : ""));
  }
  for (sm::Sm* s : gpu_->sms())
    if (s->fault()) {
      poisoned_ = true;
      std::rethrow_exception(s->fault());
    }
}

std::string TimingEngine::stateDump() const {
  std::string out;
  for (sm::Sm* s : gpu_->sms()) out += s->describeState();
  const std::string busy = gpu_->memoryUnitsInFlight();
  out += busy.empty() ? "memory system idle\n" : fmt::format("memory units with work: {}\n", busy);
  return out;
}

void TimingEngine::setActivityObserver(sm::ActivityObserver* o) {
  if (power::EnergyModel* e = gpu_->energyModel()) {
    e->setDownstream(o);
    return;
  }
  for (sm::Sm* s : gpu_->sms()) s->setActivityObserver(o);
}

void TimingEngine::setIssueObserver(sm::IssueObserver* o) {
  for (sm::Sm* s : gpu_->sms()) s->setIssueObserver(o);
}

void TimingEngine::setThreads(unsigned n, ThreadPolicy policy) { gpu_->setHostThreads(n, policy); }
ThreadPolicy TimingEngine::threadPolicy() const { return gpu_->coreClockDomain().threadPolicy(); }
const HostThreadGovernor* TimingEngine::threadGovernor() const {
  return gpu_->coreClockDomain().governor();
}
unsigned TimingEngine::threads() const { return gpu_->coreClockDomain().threads(); }
std::string TimingEngine::serialReason() const { return gpu_->coreClockDomain().serialReason(); }
uint64_t TimingEngine::parallelCycles() const { return gpu_->coreClockDomain().parallelCycles(); }
uint64_t TimingEngine::routerParallelCycles() const {
  return gpu_->hierarchy() ? gpu_->interconnect().parallelCycles() : 0;
}

void TimingEngine::drain(const std::string& label) {
  const sc_core::sc_time slice = gpu_->corePeriod() * double(kDrainSliceCycles);
  for (int i = 0; sc_core::sc_pending_activity(); ++i) {
    if (i == kDrainSlices)
      throw InternalError(
          fmt::format("{}: the memory system still has work {} cycles after the "
                      "kernel ended",
                      label, uint64_t(kDrainSlices) * kDrainSliceCycles));
    advance(slice, sc_core::SC_EXIT_ON_STARVATION);  // stops when all is quiet
  }
}

namespace {

// The longest one request may legitimately stay in one memory unit, in core cycles: a unit's
// latencies in its own clock, scaled by the clock ratio. gpu.clocks.l2_mhz 1 with the core at
// 10000 MHz makes an L2 hit of l2.slice.hit_latency 300 take 3 million core cycles, which the
// no-progress watchdog's fixed 2 million took for a deadlock ("internal error: ... made no
// progress", exit 4) on a configuration that runs.
uint64_t longestMemoryStep(const PlatformConfig& c) {
  const double core = c.gpu.clocks.core_mhz;
  const auto in = [core](double cycles, double mhz) { return uint64_t(cycles * core / mhz) + 1; };
  const auto& d = c.memory.dram;
  const double dramCycles = double(d.tRFC) + d.tRC + d.tRCD + d.tCL + d.tWL + d.tWR + d.tRP +
                            d.tCDLR + d.read_write_turnaround + d.burst_length / d.data_rate + 1;
  const auto& n = c.noc;
  const double hop = double(n.routing_delay) + n.vc_alloc_delay + n.switch_alloc_delay +
                     n.credit_delay + n.link_latency + 1;
  const double hops = n.topology == "mesh" ? 2.0 * (n.mesh_columns + n.mesh_rows + 16) : 2.0;
  const uint64_t dram = c.memory.controller.latency + in(dramCycles, c.gpu.clocks.dram_mhz);
  const uint64_t l2 =
      in(double(c.l2.slice.hit_latency) + c.power.l2.drowsy.wake_latency + 1, c.gpu.clocks.l2_mhz);
  const uint64_t network = in(hop * hops, c.gpu.clocks.interconnect_mhz);
  const uint64_t l1 = uint64_t(c.sm.l1d.hit_latency) + c.power.l1d.drowsy.wake_latency + 1;
  const uint64_t fetch = std::max(c.sm.icache.hit_latency, c.sm.const_cache.hit_latency) + 1ull;
  return std::max({uint64_t(c.memory.fixed_latency), dram, l2, network, l1, fetch});
}

// RTL co-simulation in lockstep: a block that diverged paused the simulation (docs/rtl-cosim.md).
// The engine is then mid-launch and cannot run again (`poisoned`).
void throwOnDivergence(Gpu& g, const std::vector<sm::Sm*>& sms, bool& poisoned) {
  std::string d;
  for (const sm::Sm* s : sms)
    if (d.empty()) d = s->rtlDivergence();
  const CtaScheduler& cs = g.ctaScheduler();
  if (d.empty() && cs.droopDetector()) d = cs.droopDetector()->divergence();
  if (g.hierarchy()) {  // the fixed-latency memory has no caches
    for (uint32_t i = 0; i < sms.size() && d.empty(); ++i) d = g.l1(i).drowsyDivergence();
    for (uint32_t i = 0; i < g.l2Slices() && d.empty(); ++i) d = g.l2(i).drowsyDivergence();
  }
  if (d.empty()) return;
  poisoned = true;
  throw LockstepDivergence(d);
}

}  // namespace

TimingResult TimingEngine::run(func::LaunchState& L, func::ExecStats& stats,
                               const sm::CtaFootprint& footprint, uint64_t codeBase,
                               const std::string& label, const RunBudget* budget,
                               const ProgressFn* progress, WaveSampler* waves,
                               CtaStartObserver* starts) {
  Gpu& g = *gpu_;
  std::vector<sm::Sm*> sms = g.sms();
  for (sm::Sm* s : sms) s->resetStats();
  g.resetMemoryStats();
  g.beginPowerWindow();

  func::Executor ex(L);
  // The adaptive thread policy times the launch, not what the testbench does between launches.
  g.coreClockDomain().resumeTiming();
  struct PauseTiming {
    CoreClockDomain& d;
    ~PauseTiming() { d.pauseTiming(); }
  } pauseTiming{g.coreClockDomain()};
  // Device printf and malloc/free change state every SM shares, in the order the SMs call them.
  g.coreClockDomain().resetCounts();
  g.coreClockDomain().setLaunchSerialReason(
      L.prog->usesDeviceRuntime ? "the kernel calls device printf, malloc, free or launches kernels"
      : starts != nullptr
          ? "the other host threads run the launch's last CTAs in the functional engine"
          : "");
  CtaScheduler& cs = g.ctaScheduler();
  // A unified L1 lends the launch's carve-out to shared memory (the fixed-latency memory has no
  // L1 to shrink; the carve-out still bounds the launch's shared memory).
  const uint32_t shared = sm::sharedCarveout(g.config().sm, footprint);
  if (g.hierarchy())
    for (uint32_t i = 0; i < sms.size(); ++i) {
      if (g.config().sm.invalidate_l1d_at_launch) g.l1(i).invalidateLines();
      if (g.config().sm.unified_l1) g.l1(i).setSharedCarveout(shared);
    }
  sm::KernelContext k{&ex, codeBase, &cs, cs.reportsEvaluations(), shared};
  for (sm::Sm* s : sms) s->beginKernel(k);
  if (waves)
    waves->watchL2([&g](double growth) {
      const cache::L2Slice::LineCensus c = g.l2Census(growth);
      return WaveSampler::L2Census{c.touched, c.pending};
    });
  cs.setWaveSampler(waves);
  cs.setStartObserver(starts);
  struct ForgetWaves {
    CtaScheduler& c;
    ~ForgetWaves() {
      c.setWaveSampler(nullptr);
      c.setStartObserver(nullptr);
    }
  } forgetWaves{cs};
  cs.startKernel(KernelGrid{L.grid, footprint});
  power::EnergyModel* energy = g.energyModel();
  // SM accounting covers cycles startCycle + 1 .. endCycle (the launch's `cycles`).
  if (energy) energy->beginLaunch(cs.startCycle() + 1);
  pdn::Pdn* pdn = g.pdn();
  if (pdn) pdn->beginLaunch(cs.startCycle() + 1, uncoreStaticAmps(g));
  // A launch that throws leaves: the host threads must not step its cycles afterwards (into a
  // voltage sink the caller may destroy while handling the error).
  struct AbandonPdn {
    pdn::Pdn* p;
    ~AbandonPdn() {
      if (p) p->abandonLaunch();
    }
  } abandonPdn{pdn};

  // Run in slices so a long run can report progress, ending a slice at every sample boundary
  // of the power time series.
  const auto t0 = std::chrono::steady_clock::now();
  auto lastReport = t0;
  const uint64_t period = g.corePeriod().value();
  const auto coreCycle = [&] { return sc_core::sc_time_stamp().value() / period; };
  uint64_t nextSample = energy ? energy->nextSampleCycle(cs.startCycle() + 1) : ~0ull;
  const bool limited = budget != nullptr && budget->active();
  // The most warp instructions all SMs can issue in one cycle: a slice that ends before the
  // instruction limit may be that many per cycle long.
  const uint64_t issuePerCycle = uint64_t(sms.size()) * g.config().sm.schedulers *
                                 std::max(1u, g.config().sm.max_issue_per_warp);
  // Cycles of the launch complete at time stamp `t` (cycles startCycle + 1 .. t / period - 1).
  const auto ranAt = [&](uint64_t t) {
    const uint64_t c = t / period;
    return c > cs.startCycle() + 1 ? c - cs.startCycle() - 1 : 0;
  };
  // No-progress watchdog: a launch whose SMs issue nothing and finish no CTA for this many
  // cycles while events are still pending cannot finish: 2 million, or 64 times the longest a
  // request may stay in one memory unit when the platform's latencies and clocks make that long
  // (no memory access takes this long).
  const uint64_t kNoProgressCycles =
      std::max<uint64_t>(2000000, 64 * longestMemoryStep(g.config()));
  uint64_t lastInsts = 0, lastProgressCycle = cs.startCycle();
  uint32_t lastCtasDone = 0;
  std::optional<StopReason> stopped;
  // A launch that cannot finish: warps wait at barriers that cannot complete (a KernelFault),
  // or, when memory requests are held, requests wait for something that will never happen
  // (our bug). Either way with a dump of what every warp waits for.
  const auto stuck = [&](const std::string& how) {
    const std::string dump = stateDump();
    poisoned_ = true;
    for (sm::Sm* s : sms) s->endKernel();
    const std::string busy = g.memoryUnitsInFlight();
    const uint64_t left = cs.ctasTotal() - cs.ctasFinished();
    if (!busy.empty())
      throw InternalError(fmt::format("kernel {} {} with {} of {} CTAs unfinished and requests "
                                      "held in {}",
                                      L.prog->name, how, left, cs.ctasTotal(), busy),
                          dump);
    throw KernelFault(fmt::format("deadlock in kernel {}: {} of {} CTAs never finish (warps wait "
                                  "at barriers that cannot complete)",
                                  L.prog->name, left, cs.ctasTotal()),
                      dump);
  };
  // A kernel fault ends the launch here: its record keeps the statistics up to the fault, as
  // the functional engine's does (docs/cuda-programs.md, "Results").
  try {
    while (!cs.kernelDone()) {
      if (!sc_core::sc_pending_activity()) stuck("stalled");
      // Runs up to one slice; the CTA scheduler pauses the simulation when the kernel ends.
      const uint64_t now = sc_core::sc_time_stamp().value();
      uint64_t sliceEnd = now + 20000 * period;
      if (limited) {
        // End the slice where a limit may be reached: the cycle limit exactly (the launch's
        // cycles are those before the stop), the instruction limit within one cycle's issue.
        const uint64_t cyclesLeft = budget->cyclesLeft(ranAt(now));
        if (cyclesLeft != RunBudget::kUnlimited)
          sliceEnd = std::min(sliceEnd, now + std::max<uint64_t>(cyclesLeft, 1) * period);
        const uint64_t instsLeft = budget->instructionsLeft(cs.warpInstsIssued());
        if (instsLeft != RunBudget::kUnlimited)
          sliceEnd =
              std::min(sliceEnd, now + std::max<uint64_t>(instsLeft / issuePerCycle, 1) * period);
      }
      const uint64_t until =
          nextSample < sliceEnd / period ? std::min(sliceEnd, nextSample * period) : sliceEnd;
      advance(sc_core::sc_time::from_value(until > now ? until - now : period));
      throwOnDivergence(g, sms, poisoned_);
      if (energy && !cs.kernelDone() && coreCycle() >= nextSample) {
        energy->sample(nextSample, g.l1EnergyInputs(), g.uncoreEnergyInputs());
        nextSample = energy->nextSampleCycle(coreCycle());
      }
      if (cs.kernelDone()) break;
      const uint64_t insts = cs.warpInstsIssued();
      if (limited) {
        // Cycles before the current time stamp are complete: the launch has run
        // startCycle + 1 .. coreCycle() - 1.
        if ((stopped = budget->check(ranAt(sc_core::sc_time_stamp().value()), insts))) break;
      }
      // An SM asleep until a cycle of its own choosing (a unit it waits for frees, a result is
      // written back) is making progress: a matrix instruction done by slow multiply-adds holds a
      // unit for up to passes x initiation cycles (1.3 million with an initiation of 10,000). Only
      // SMs that wait every cycle, or for nothing of their own, leave the window running.
      const sm::Cycle nextSm = g.coreClockDomain().nextEvaluation();
      if (insts != lastInsts || cs.ctasFinished() != lastCtasDone ||
          (nextSm != sm::kNever && nextSm > coreCycle() + 1)) {
        lastInsts = insts;
        lastCtasDone = cs.ctasFinished();
        lastProgressCycle = coreCycle();
      } else if (coreCycle() - lastProgressCycle > kNoProgressCycles) {
        // Events are pending (periodic processes, or requests that circulate without end) but
        // nothing has issued for two million cycles.
        stuck(fmt::format("made no progress for {} cycles", coreCycle() - lastProgressCycle));
      }
      const auto wall = std::chrono::steady_clock::now();
      if (progress && *progress &&
          std::chrono::duration<double>(wall - lastReport).count() >= kProgressPeriodSeconds) {
        LaunchProgress p;
        p.label = label;
        p.ctasDone = cs.ctasFinished();
        p.ctasTotal = cs.ctasTotal();
        p.cycles = coreCycle() - cs.startCycle();
        p.seconds = std::chrono::duration<double>(wall - t0).count();
        if (p.ctasDone > 0) p.etaSeconds = p.seconds * (p.ctasTotal - p.ctasDone) / p.ctasDone;
        (*progress)(p);
        lastReport = wall;
      }
    }
  } catch (const KernelFault&) {
    for (sm::Sm* s : sms) stats.add(s->execStats());
    throw;
  }
  // A stopped launch ends with the last complete cycle; a finished one where the CTA scheduler
  // saw its last CTA end.
  const uint64_t endCycle = stopped ? coreCycle() - 1 : cs.endCycle();
  if (stopped) cs.stopKernel(endCycle);

  if (pdn) pdn->endLaunchAt(endCycle + 1);
  // The launch is over when its memory traffic is (stores acknowledged): the next launch starts
  // from a quiet memory system, and the protocol checkers can tell unanswered requests. A
  // stopped launch leaves its traffic where it is: the engine is not used again.
  if (stopped)
    poisoned_ = true;
  else
    drain(label);
  throwOnDivergence(g, sms, poisoned_);
  std::optional<pdn::VoltageReport> voltage;
  // The SMs that sleep through the launch's last cycles still draw the late stages of what they
  // dispatched: hand them to the PDN before it finishes.
  if (energy) {
    energy->completeBefore(endCycle + 1);
    if (stopped) energy->dropBookedFrom(endCycle + 1);
  }
  if (pdn) {
    voltage = pdn->finishLaunch();
    if (pdn->lateReports() != 0)
      throw InternalError(
          fmt::format("{}: {} SM current reports came after the PDN stepped their cycle", label,
                      pdn->lateReports()));
  }
  g.closePowerWindow();  // the caches' line power states, drain included
  if (g.config().gpu.check_protocol && !stopped) {
    const std::vector<std::string> v = g.protocolViolations();
    if (!v.empty())
      throw InternalError(fmt::format("{}: {} TLM protocol violation(s); the first: {}", label,
                                      v.size(), v.front()));
  }

  TimingResult r;
  r.stopped = stopped;
  r.startCycle = cs.startCycle();
  r.endCycle = endCycle;
  r.cycles = r.endCycle - r.startCycle;
  r.coreMhz = g.config().gpu.clocks.core_mhz;
  r.memory = g.memoryStatsJson();
  r.placement = cs.placementDecision();
  for (sm::Sm* s : sms) {
    s->flushAccounting(r.endCycle + 1);
    s->finishPowerWindow(r.endCycle + 1);
    s->endKernel();
    SmTiming t;
    t.id = s->id();
    t.counters = s->counters();
    t.peakCtas = s->peakResidentCtas();
    t.gating = s->gatingStats();
    t.smSwitch = s->powerSwitch().counters();
    for (uint32_t i = 0; i < s->numSchedulers(); ++i) {
      std::array<uint64_t, sm::kNumStalls> o{};
      for (int k2 = 0; k2 < sm::kNumStalls; ++k2)
        o[k2] = s->schedulerOutcomes(i, static_cast<sm::Stall>(k2));
      t.schedulers.push_back(o);
    }
    r.sms.push_back(std::move(t));
    r.timeline.insert(r.timeline.end(), s->ctaTimeline().begin(), s->ctaTimeline().end());
    stats.add(s->execStats());
  }
  if (energy) {
    const std::vector<power::CacheEnergyInputs> l1 = g.l1EnergyInputs();
    std::vector<power::SmEnergyInputs> in(sms.size());
    for (size_t i = 0; i < sms.size(); ++i) {
      in[i].counters = sms[i]->counters();
      in[i].l1 = l1[i];
      const power::SwitchCounters& sw = r.sms[i].smSwitch;
      if (sw.windowCycles() != r.cycles)
        throw InternalError(fmt::format("{}: the power switch of sm{} accounted {} cycles of {}",
                                        label, i, sw.windowCycles(), r.cycles));
      const sm::SmGatingStats& gs = r.sms[i].gating;
      in[i].gating.smGatedCycles = sw.gatedCycles;
      in[i].gating.smGatings = sw.gatings;
      in[i].gating.unitGatedCycles = gs.simdUnits.gatedCycles;
      in[i].gating.unitGatings = gs.simdUnits.gatings;
      in[i].gating.laneGatedCycles = gs.lanes.gatedCycles;
      in[i].gating.laneGatings = gs.lanes.gatings;
    }
    r.power = energy->finishLaunch(r.endCycle + 1, in, g.uncoreEnergyInputs());
  }
  r.voltage = std::move(voltage);
  if (g.config().smoothing.mode != "none") {
    r.smoothing["mode"] = g.config().smoothing.mode;
    if (sms.front()->droopPredictor()) {
      uint64_t predictions = 0, triggers = 0, throttled = 0;
      for (sm::Sm* s : sms) {
        const sm::DroopPredictorUnit& p = *s->droopPredictor();
        predictions += p.predictions();
        triggers += p.triggers();
        throttled += p.throttledCycles(r.endCycle + 1);
      }
      r.smoothing["local"] = {
          {"predictions", predictions}, {"triggers", triggers}, {"throttled_sm_cycles", throttled}};
    }
    if (const pdn::GlobalDroopDetector* d = cs.droopDetector())
      r.smoothing["global"] = {{"detections", d->detections()},
                               {"delay_cycles", d->delayCycles()},
                               {"delayed_sms", d->delayedSms()}};
  }
  return r;
}

}  // namespace gpusc::gpu
