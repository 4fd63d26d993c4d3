#include "gpu/report.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <map>

#include <fmt/format.h>

namespace gpusc {

nlohmann::json toJson(const Dim3& d) { return nlohmann::json::array({d.x, d.y, d.z}); }

double averageActiveLanes(const func::ExecStats& s) {
  return s.warpInsts ? double(s.threadInsts) / double(s.warpInsts) : 0.0;
}

nlohmann::json toJson(const func::ExecStats& s) {
  nlohmann::json j;
  j["warp_instructions"] = s.warpInsts;
  j["thread_instructions"] = s.threadInsts;
  j["ctas"] = s.ctas;
  j["branches"] = s.branches;
  j["divergent_branches"] = s.divergentBranches;
  j["spin_yields"] = s.spinYields;
  j["barrier_waits"] = s.barrierWaits;
  j["average_active_lanes"] = averageActiveLanes(s);
  nlohmann::json cls = nlohmann::json::object();
  for (int i = 0; i < func::kNumInstClasses; ++i)
    if (s.byClass[i]) cls[func::instClassName(static_cast<func::InstClass>(i))] = s.byClass[i];
  j["warp_instructions_by_class"] = cls;
  nlohmann::json hist = nlohmann::json::array();
  for (int i = 0; i <= func::kWarpSize; ++i) hist.push_back(s.activeLanes[i]);
  j["active_lanes_histogram"] = hist;  // index: active threads per warp instruction
  return j;
}

std::array<uint64_t, sm::kNumStalls> stallTotals(const gpu::TimingResult& t) {
  std::array<uint64_t, sm::kNumStalls> out{};
  for (const auto& s : t.sms)
    for (const auto& sch : s.schedulers)
      for (int i = 0; i < sm::kNumStalls; ++i) out[i] += sch[i];
  return out;
}

namespace {

nlohmann::json countersJson(const sm::SmCounters& c, uint64_t cycles) {
  nlohmann::json j;
  j["warp_instructions_issued"] = c.issued;
  nlohmann::json cls = nlohmann::json::object();
  for (int i = 0; i < func::kNumInstClasses; ++i)
    if (c.issuedByClass[i])
      cls[func::instClassName(static_cast<func::InstClass>(i))] = c.issuedByClass[i];
  j["issued_by_class"] = cls;
  nlohmann::json units = nlohmann::json::object();
  for (int i = 0; i < sm::kNumUnits; ++i) {
    // Tensor cores are listed where they ran (most platforms have none).
    if (static_cast<sm::Unit>(i) == sm::Unit::None ||
        (static_cast<sm::Unit>(i) == sm::Unit::Tensor && c.dispatched[i] == 0))
      continue;
    units[sm::unitName(static_cast<sm::Unit>(i))] = {{"dispatched", c.dispatched[i]},
                                                     {"busy_cycles", c.unitBusy[i]}};
  }
  j["units"] = units;
  j["lane_operations"] = c.laneOps;
  j["register_file"] = {
      {"reads", c.rfReads}, {"writes", c.rfWrites}, {"bank_conflicts", c.rfBankConflicts}};
  j["operand_collector_busy_cycles"] = c.collectorsBusy;
  j["shared_memory"] = {{"accesses", c.sharedAccesses},
                        {"bank_conflict_cycles", c.sharedBankConflicts}};
  j["icache"] = {{"accesses", c.icacheAccesses}, {"misses", c.icacheMisses}};
  j["const_cache"] = {{"accesses", c.constAccesses}, {"misses", c.constMisses}};
  j["memory_requests"] = c.memRequests;
  j["average_resident_warps"] = cycles ? double(c.warpCycles) / double(cycles) : 0.0;
  j["evaluated_cycles"] = c.evaluatedCycles;  // the rest were skipped as idle
  return j;
}

nlohmann::json stallsJson(const std::array<uint64_t, sm::kNumStalls>& o) {
  nlohmann::json j = nlohmann::json::object();
  for (int i = 0; i < sm::kNumStalls; ++i) j[sm::stallName(static_cast<sm::Stall>(i))] = o[i];
  return j;
}

}  // namespace

sm::SmCounters counterTotals(const gpu::TimingResult& t) {
  sm::SmCounters total;
  for (const auto& s : t.sms) total += s.counters;
  return total;
}

namespace {

// The timing figures; rates per cycle (IPC, utilisations) over `simulated` cycles: the cycles the
// cycle-level model ran (t.cycles, or fewer for a launch whose waves were sampled).
nlohmann::json timingJson(const gpu::TimingResult& t, uint64_t simulated) {
  nlohmann::json j;
  const sm::SmCounters total = counterTotals(t);
  j["cycles"] = t.cycles;
  j["start_cycle"] = t.startCycle;
  j["end_cycle"] = t.endCycle;
  j["core_mhz"] = t.coreMhz;
  j["simulated_seconds"] = t.coreMhz > 0 ? double(t.cycles) / (t.coreMhz * 1e6) : 0.0;
  j["ipc"] = simulated ? double(total.issued) / double(simulated) : 0.0;
  j["memory"] = t.memory;
  j["scheduler_outcomes"] = stallsJson(stallTotals(t));  // summed over every scheduler of every SM
  j["totals"] = countersJson(total, simulated);
  nlohmann::json sms = nlohmann::json::array();
  for (const auto& s : t.sms) {
    nlohmann::json js = countersJson(s.counters, simulated);
    js["sm"] = s.id;
    js["peak_resident_ctas"] = s.peakCtas;
    js["ipc"] = simulated ? double(s.counters.issued) / double(simulated) : 0.0;
    nlohmann::json sch = nlohmann::json::array();
    for (const auto& o : s.schedulers) sch.push_back(stallsJson(o));
    js["schedulers"] = std::move(sch);
    js["power_gating"] = sm::toJson(s.gating);
    js["power_gating"]["sm_switch"] = power::toJson(s.smSwitch);
    sms.push_back(std::move(js));
  }
  j["sms"] = std::move(sms);
  if (t.power) j["power"] = power::toJson(*t.power);
  if (t.voltage) j["voltage"] = pdn::toJson(*t.voltage);
  if (!t.smoothing.is_null()) j["smoothing"] = t.smoothing;
  j["cta_placement"] = gpu::toJson(t.placement);
  // Gating over every SM: the SMs' own switches, SIMD units and lanes.
  sm::SmGatingStats g;
  power::SwitchCounters smSwitches;
  for (const auto& s : t.sms) {
    g += s.gating;
    smSwitches += s.smSwitch;
  }
  j["power_gating"] = sm::toJson(g);
  j["power_gating"]["sm_switches"] = power::toJson(smSwitches);
  return j;
}

}  // namespace

nlohmann::json toJson(const gpu::TimingResult& t) { return timingJson(t, t.cycles); }

std::string powerCsvHeader(const power::PowerReport& p) {
  std::string out = "launch,kernel,start_cycle,cycles";
  for (size_t s = 0; s < p.perSm.size(); ++s) out += fmt::format(",sm{}_w", s);
  for (int b = power::kNumSmBlocks; b < power::kNumBlocks; ++b)
    out += fmt::format(",{}_w", power::blockName(static_cast<power::Block>(b)));
  out += ",total_w\n";
  return out;
}

void appendPowerCsvRow(std::string& out, size_t launch, const std::string& kernel,
                       const power::PowerSample& s) {
  auto it = std::back_inserter(out);
  fmt::format_to(it, "{},{},{},{}", launch, kernel, s.startCycle, s.cycles);
  for (double w : s.smW) fmt::format_to(it, ",{:.6g}", w);
  for (int b = power::kNumSmBlocks; b < power::kNumBlocks; ++b)
    fmt::format_to(it, ",{:.6g}", s.blockW[b]);
  fmt::format_to(it, ",{:.6g}\n", s.totalW);
}

std::string powerTimeSeriesCsv(const std::vector<LaunchRecord>& launches) {
  std::string out;
  for (size_t i = 0; i < launches.size(); ++i) {
    if (!launches[i].timing || !launches[i].timing->power) continue;
    const power::PowerReport& p = *launches[i].timing->power;
    if (out.empty()) out = powerCsvHeader(p);
    for (const auto& s : p.samples) appendPowerCsvRow(out, i, launches[i].kernel, s);
  }
  return out;
}

const char* const kCtaTimelineCsvHeader = "launch,kernel,sm,cta,x,y,z,start_cycle,end_cycle\n";

std::vector<sm::CtaRecord> ctaTimelineRows(const gpu::TimingResult& t) {
  std::vector<sm::CtaRecord> rows = t.timeline;
  std::sort(rows.begin(), rows.end(),
            [](const auto& a, const auto& b) { return a.linearId < b.linearId; });
  return rows;
}

void appendCtaTimelineCsvRow(std::string& out, size_t launch, const std::string& kernel,
                             const sm::CtaRecord& r) {
  fmt::format_to(std::back_inserter(out), "{},{},{},{},{},{},{},{},{}\n", launch, kernel, r.sm,
                 r.linearId, r.ctaid.x, r.ctaid.y, r.ctaid.z, r.start, r.end);
}

std::string ctaTimelineCsv(const std::vector<LaunchRecord>& launches) {
  std::string out = kCtaTimelineCsvHeader;
  for (size_t i = 0; i < launches.size(); ++i) {
    if (!launches[i].timing) continue;
    for (const auto& r : ctaTimelineRows(*launches[i].timing))
      appendCtaTimelineCsvRow(out, i, launches[i].kernel, r);
  }
  return out;
}

nlohmann::json toJson(const LaunchRecord& l) {
  nlohmann::json j;
  j["kernel"] = l.kernel;
  j["grid"] = toJson(l.grid);
  j["block"] = toJson(l.block);
  j["dynamic_shared_bytes"] = l.dynamicShared;
  if (l.cooperative) j["cooperative"] = true;
  if (l.launchedBy) j["launched_by"] = *l.launchedBy;
  j["shared_bytes_per_cta"] = l.sharedPerCta;
  j["registers_per_thread"] = l.regsPerThread;
  j["registers_from"] = l.regsFromPtxas ? "ptxas" : "estimate";
  j["ptx_registers"] = l.ptxRegisters;
  j["host_register_rows"] = l.registerRows;
  j["host_warp_rows"] = l.warpSlots;
  j["host_constant_rows"] = l.constantRows;
  j["host_seconds"] = l.seconds;
  j["complete"] = l.complete();
  if (l.stopped) j["stopped_by"] = stopReasonName(*l.stopped);
  if (!l.fault.empty()) {
    j["stopped_by"] = "kernel-fault";
    j["fault"] = l.fault;
  }
  j["stats"] = toJson(l.stats);
  if (l.sampled && !l.sampled->detail && l.timing) {
    // Extrapolated (sampled simulation): the estimates and what they rest on.
    const gpu::TimingResult& t = *l.timing;
    nlohmann::json e;
    e["estimated"] = true;
    e["cycles"] = t.cycles;
    e["core_mhz"] = t.coreMhz;
    e["simulated_seconds"] = t.coreMhz > 0 ? double(t.cycles) / (t.coreMhz * 1e6) : 0.0;
    e["ipc"] = t.cycles ? double(l.stats.warpInsts) / double(t.cycles) : 0.0;
    if (t.power) {
      nlohmann::json p = power::toJson(*t.power);
      p.erase("per_sm");
      e["power"] = std::move(p);
    }
    j["timing"] = std::move(e);
  } else if (l.timing && l.sampled && l.sampled->waves) {
    // Waves sampled: estimated cycles and energy; the rest covers the detailed CTAs.
    const WaveSample& w = *l.sampled->waves;
    nlohmann::json t = timingJson(*l.timing, w.detailedCycles);
    t["estimated"] = true;
    t["detailed_cycles"] = w.detailedCycles;
    t["ipc"] = l.timing->cycles ? double(l.stats.warpInsts) / double(l.timing->cycles) : 0.0;
    j["timing"] = std::move(t);
  } else if (l.timing) {
    j["timing"] = toJson(*l.timing);
  }
  if (l.sampled) {
    const SampledLaunch& s = *l.sampled;
    nlohmann::json js;
    if (s.grouped) js["group"] = s.group;
    js["detail"] = s.detail;
    if (s.notSampled) js["not_sampled"] = s.notSampled;
    if (s.checkErrorPct) js["borrow_check_error_pct"] = *s.checkErrorPct;
    if (s.waves) {
      const WaveSample& w = *s.waves;
      js["waves"] = {{"ctas_detailed", w.ctasDetailed},
                     {"ctas_total", w.ctasTotal},
                     {"ctas_per_wave", w.ctasPerWave},
                     {"detailed_cycles", w.detailedCycles},
                     {"detailed_warp_instructions", w.detailedInsts},
                     {"extrapolated_cycles", w.extrapolatedCycles},
                     {"extrapolated_ipc", w.ipc},
                     {"waves_compared", w.wavesCompared},
                     {"drift_pct", w.driftPct},
                     {"wave_ipc", w.waveIpc},
                     {"warmup_waves", w.warmupWaves},
                     {"cycles_bound_pct", w.boundPct}};
    }
    if (!s.detail) {
      js["extrapolated_from"] = s.detailedFrom;
      if (s.lender) js["borrowed_from_group"] = *s.lender;
      js["cycles_per_warp_instruction"] = s.cpi;
      js["cycles_bound_pct"] = s.boundPct ? nlohmann::json(*s.boundPct) : nlohmann::json(nullptr);
      js["bound_from"] = gpu::KernelSampler::boundFromName(s.boundFrom);
    }
    j["sampling"] = std::move(js);
  }
  return j;
}

nlohmann::json takeJson(LaunchRecord& l) {
  if (!l.timing) return toJson(l);
  nlohmann::json memory = std::move(l.timing->memory);
  l.timing->memory = nullptr;
  nlohmann::json j = toJson(l);
  if (!memory.is_null()) j["timing"]["memory"] = std::move(memory);  // extrapolated: none
  return j;
}

nlohmann::json memoryTotalsJson(const nlohmann::json& memory) {
  if (!memory.is_object()) return memory;
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [part, v] : memory.items()) {
    if (!v.is_object()) {
      out[part] = v;
      continue;
    }
    nlohmann::json& o = out[part] = nlohmann::json::object();
    for (const auto& [key, x] : v.items())
      if (key == "totals" || !x.is_structured()) o[key] = x;
  }
  return out;
}

StatsForm parseStatsForm(const std::string& name) {
  if (name == "auto") return StatsForm::Auto;
  if (name == "full") return StatsForm::Full;
  if (name == "summary") return StatsForm::Summary;
  throw InputError(fmt::format("--stats {}: expected auto, full or summary", name));
}

const char* statsFormName(StatsForm f) {
  switch (f) {
    case StatsForm::Auto:
      return "auto";
    case StatsForm::Full:
      return "full";
    case StatsForm::Summary:
      return "summary";
  }
  return "?";
}

nlohmann::json launchSummaryJson(nlohmann::json full) {
  if (!full.contains("timing")) return full;  // functional mode: no detail to leave out
  nlohmann::json& t = full["timing"];
  t.erase("sms");
  if (t.contains("memory")) t["memory"] = memoryTotalsJson(t["memory"]);
  if (t.contains("power") && t["power"].is_object()) t["power"].erase("per_sm");
  if (t.contains("voltage") && t["voltage"].is_object()) t["voltage"].erase("network");
  return full;
}

RunEnergy runEnergy(const std::vector<LaunchRecord>& launches) {
  RunEnergy r;
  for (const auto& l : launches) {
    if (!l.timing || !l.timing->power) continue;
    r.any = true;
    r.total += l.timing->power->total;
    r.seconds += l.timing->power->seconds;
    r.supplyVoltage = l.timing->power->supplyVoltage;
  }
  return r;
}

const pdn::VoltageReport* worstVoltageLaunch(const std::vector<LaunchRecord>& launches,
                                             size_t* index) {
  const pdn::VoltageReport* worst = nullptr;
  for (size_t i = 0; i < launches.size(); ++i) {
    if (!launches[i].timing || !launches[i].timing->voltage) continue;
    const pdn::VoltageReport& v = *launches[i].timing->voltage;
    if (!worst || v.worstDroopPct > worst->worstDroopPct) {
      worst = &v;
      if (index) *index = i;
    }
  }
  return worst;
}

nlohmann::json runTotalsJson(const std::vector<LaunchRecord>& launches, const PlatformConfig& cfg,
                             bool timingRun) {
  nlohmann::json j;
  func::ExecStats total;
  bool complete = true;
  for (const auto& l : launches) {
    total.add(l.stats);
    complete = complete && l.complete();
  }
  j["launches"] = launches.size();
  j["complete"] = complete;
  j["warp_instructions"] = total.warpInsts;
  j["thread_instructions"] = total.threadInsts;
  j["ctas"] = total.ctas;
  uint64_t cycles = 0;
  bool timing = timingRun;
  for (const auto& l : launches)
    if (l.timing) {
      timing = true;
      cycles += l.timing->cycles;
    }
  if (!timing) return j;
  j["cycles"] = cycles;
  j["simulated_seconds"] = double(cycles) / (cfg.gpu.clocks.core_mhz * 1e6);
  if (cfg.sampling.enabled()) {
    // Sampled simulation: which launches ran in detail, and the extrapolated cycles' error
    // bound from every detailed launch of the run (a launch's own bound is what its group knew
    // when it ran): KernelSampler::bound per extrapolated launch, the launches' bounds added
    // (a group's launches share its error). A launch whose waves were sampled adds its
    // functionally run CTAs' cycles to the extrapolated ones, and its bound.
    nlohmann::json s;
    s["mode"] = cfg.sampling.mode;
    uint64_t detailed = 0, extrapolated = 0, cyclesDetailed = 0, cyclesEstimated = 0, unbounded = 0;
    uint64_t waveSampled = 0, ctasDetailed = 0, ctasFunctional = 0, borrowed = 0, notSampled = 0;
    std::vector<std::vector<double>> cpis;  // per group, its detailed launches' in order
    for (const auto& l : launches) {
      // Only grouped launches: a launch of no group (wave sampling alone, or one sampling left
      // alone) has group 0 by default and is not one of group 0's members.
      if (!l.timing || !l.sampled || !l.sampled->detail || !l.sampled->grouped) continue;
      if (cpis.size() <= l.sampled->group) cpis.resize(l.sampled->group + 1);
      cpis[l.sampled->group].push_back(
          l.stats.warpInsts ? double(l.timing->cycles) / double(l.stats.warpInsts) : 0.0);
    }
    double bound = 0;
    size_t groups = 0;
    for (const auto& l : launches) {
      if (!l.timing || !l.sampled) continue;
      if (l.sampled->grouped) groups = std::max(groups, l.sampled->group + 1);
      if (l.sampled->notSampled) {  // device runtime or cooperative: in full detail
        ++detailed;
        ++notSampled;
        cyclesDetailed += l.timing->cycles;
        continue;
      }
      if (l.sampled->detail && l.sampled->waves) {
        const WaveSample& w = *l.sampled->waves;
        ++detailed;
        ++waveSampled;
        ctasDetailed += w.ctasDetailed;
        ctasFunctional += w.ctasTotal - w.ctasDetailed;
        cyclesDetailed += w.detailedCycles;
        cyclesEstimated += l.timing->cycles - w.detailedCycles;
        bound += w.boundPct / 100.0 * double(l.timing->cycles);
        continue;
      }
      if (l.sampled->detail) {
        ++detailed;
        cyclesDetailed += l.timing->cycles;
        continue;
      }
      ++extrapolated;
      cyclesEstimated += l.timing->cycles;
      // A borrowed estimate keeps the bound the checks gave when it ran.
      gpu::KernelSampler::Bound b;
      if (l.sampled->lender) {
        ++borrowed;
        b.pct = l.sampled->boundPct;
      } else if (l.sampled->group < cpis.size()) {
        b = gpu::KernelSampler::bound(cpis, l.sampled->group);
      }
      if (b.pct)
        bound += *b.pct / 100.0 * double(l.timing->cycles);
      else
        ++unbounded;
    }
    if (cfg.sampling.kernels()) s["groups"] = groups;
    s["launches_detailed"] = detailed;
    s["launches_extrapolated"] = extrapolated;
    s["launches_not_sampled"] = notSampled;  // among launches_detailed
    if (cfg.sampling.kernels() && cfg.sampling.borrow_pct > 0) s["launches_borrowed"] = borrowed;
    if (cfg.sampling.waves()) {
      s["launches_waves_sampled"] = waveSampled;
      s["ctas_detailed_in_them"] = ctasDetailed;
      s["ctas_run_functionally"] = ctasFunctional;
    }
    s["cycles_detailed"] = cyclesDetailed;
    s["cycles_extrapolated"] = cyclesEstimated;
    s["cycles_bound"] = unbounded ? nlohmann::json(nullptr) : nlohmann::json(bound);
    s["cycles_bound_pct"] = unbounded || cycles == 0
                                ? nlohmann::json(nullptr)
                                : nlohmann::json(100.0 * bound / double(cycles));
    s["launches_without_bound"] = unbounded;
    s["note"] =
        "extrapolated launches have estimated cycles and energy only; per-cycle outputs (power "
        "time series, CTA timeline, voltage and droops) cover the detailed launches, and in a "
        "launch whose waves were sampled its detailed CTAs";
    j["sampling"] = std::move(s);
  }
  j["ipc"] = cycles ? double(total.warpInsts) / double(cycles) : 0.0;

  const RunEnergy energy = runEnergy(launches);
  if (energy.any) {
    const power::EnergyBreakdown& t = energy.total;
    nlohmann::json e;
    e["total_j"] = t.totalJ();
    e["dynamic_j"] = t.dynamicJ();
    e["static_j"] = t.staticJ();
    e["sm_j"] = t.smJ();
    nlohmann::json by = nlohmann::json::object();
    for (int b = 0; b < power::kNumBlocks; ++b)
      if (power::listed(static_cast<power::Block>(b), t.blocks[b]))
        by[power::blockName(static_cast<power::Block>(b))] = t.blocks[b].total();
    e["by_block_j"] = by;
    j["energy"] = e;
    j["average_power_w"] = energy.seconds > 0 ? t.totalJ() / energy.seconds : 0.0;
  }

  // Voltage: the worst droop of any launch, events added.
  size_t worstLaunch = 0;
  const pdn::VoltageReport* worst = worstVoltageLaunch(launches, &worstLaunch);
  std::vector<uint64_t> events;
  uint64_t emergencies = 0;
  for (const auto& l : launches) {
    if (!l.timing || !l.timing->voltage) continue;
    const pdn::VoltageReport& v = *l.timing->voltage;
    events.resize(std::max(events.size(), v.eventsAbove.size()), 0);
    for (size_t k = 0; k < v.eventsAbove.size(); ++k) events[k] += v.eventsAbove[k];
    emergencies += v.emergencies;
  }
  if (worst) {
    nlohmann::json v;
    v["worst_droop_pct"] = worst->worstDroopPct;
    v["worst_sm"] = worst->worstSm;
    v["worst_cycle"] = worst->worstCycle;
    v["worst_launch"] = worstLaunch;
    v["min_voltage"] = worst->minVoltage;
    v["beyond_linear_model"] = worst->beyondModel();
    v["emergencies"] = emergencies;
    nlohmann::json ev = nlohmann::json::object();
    const auto& th = cfg.pdn.monitor.thresholds_pct;
    for (size_t k = 0; k < events.size() && k < th.size(); ++k)
      ev[fmt::format("{:g}", th[k])] = events[k];
    v["droop_events_above_pct"] = ev;
    j["voltage"] = v;
  }

  // Power gating: the share of each level's cycles gated.
  uint64_t smCycles = 0, smGated = 0, smGatings = 0;
  sm::SmGatingStats g;
  for (const auto& l : launches) {
    if (!l.timing) continue;
    for (const auto& s : l.timing->sms) {
      smCycles += l.timing->cycles;
      smGated += s.smSwitch.gatedCycles;
      smGatings += s.smSwitch.gatings;
      g += s.gating;
    }
  }
  const auto share = [](double a, uint64_t b) { return b ? a / double(b) : 0.0; };
  j["power_gating"] = {
      {"sm_gated_share", share(double(smGated), smCycles)},
      {"sm_gatings", smGatings},
      {"simd_unit_gated_share", share(double(g.simdUnits.gatedCycles), g.simdUnits.windowCycles())},
      {"simd_unit_gatings", g.simdUnits.gatings},
      {"lane_gated_share", share(double(g.lanes.gatedCycles), g.laneCycles)},
      {"lane_net_gated_share", share(g.laneNetGatedCycles, g.laneCycles)},
      {"lane_gatings", g.lanes.gatings},
      {"wake_stall_cycles", g.wakeStallCycles}};
  return j;
}

}  // namespace gpusc
