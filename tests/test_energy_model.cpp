// The energy model: energy follows from the counted events and the configured energies, leakage
// from power x time, the supply voltage scales both by their laws, and the streams (per-cycle
// current, power time series) add up to the totals and follow the stages of the instructions.
// Expectations are computed here from the platform's parameters and the run's own event counts,
// not copied from a run.
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "gpu/device.hpp"
#include "power/energy_model.hpp"
#include "power/gating_params.hpp"
#include "power/voltage_scaling.hpp"
#include "support/ptx_harness.hpp"
#include "support/tlm_harness.hpp"

using namespace gpusc;
using power::Block;

namespace {

// A kernel with integer and FP32 work, loads and stores: each thread sums a[i] * 1.5 over
// `iters` iterations and stores it.
const char* kKernel = R"(
.visible .entry k(.param .u32 iters, .param .u64 in, .param .u64 out)
{
  .reg .b32 %r<8>;
  .reg .f32 %f<8>;
  .reg .b64 %rd<8>;
  .reg .pred %p<2>;
  mov.u32 %r0, %tid.x;
  mov.u32 %r1, %ctaid.x;
  mov.u32 %r2, %ntid.x;
  mad.lo.s32 %r0, %r1, %r2, %r0;
  ld.param.u64 %rd1, [in];
  ld.param.u64 %rd2, [out];
  mul.wide.u32 %rd3, %r0, 4;
  add.s64 %rd1, %rd1, %rd3;
  add.s64 %rd2, %rd2, %rd3;
  ld.param.u32 %r3, [iters];
  mov.u32 %r4, 0;
  mov.f32 %f1, 0f00000000;
L:
  ld.global.f32 %f2, [%rd1];
  fma.rn.f32 %f1, %f2, 0f3FC00000, %f1;
  add.u32 %r4, %r4, 1;
  setp.lt.u32 %p1, %r4, %r3;
  @%p1 bra L;
  st.global.f32 [%rd2], %f1;
  ret;
}
)";

struct Run {
  gpu::TimingResult timing;
};

gpu::TimingResult runKernel(const PlatformConfig& cfg, uint32_t ctas = 30, uint32_t iters = 8) {
  Device dev(cfg, ExecMode::Timing);
  Module& m = dev.loadModule(test::module(kKernel), "energy.ptx");
  const uint32_t n = ctas * 128;
  DevPtr in = dev.upload(std::vector<float>(n, 2.0f));
  DevPtr out = dev.malloc(n * 4);
  dev.launch(m.kernel("k"), {ctas}, {128}, 0, KernelArgs().u32(iters).ptr(in).ptr(out));
  const auto res = dev.download<float>(out, n);
  EXPECT_FLOAT_EQ(res[0], 2.0f * 1.5f * float(iters));
  EXPECT_EQ(dev.launches().back().stats.ctas, ctas);  // timing mode counts CTAs too
  return *dev.launches().back().timing;
}

PlatformConfig platform(std::vector<std::string> sets = {}) { return loadPlatform("gtx480", sets); }

void expectNear(double got, double want, const char* what) {
  EXPECT_NEAR(got, want, 1e-9 * std::max(1e-30, std::fabs(want))) << what;
}

// Adds the dynamic energy (pJ, at the nominal supply) of one cycle `c` of SM activity `a` to
// `perCycle` where the configuration says it is drawn: every event in cycle c, each kind of lane
// operation evenly over its unit's execute stages (power.sm.execute_stages), computed here from
// the configured energies.
void addStaged(const PlatformConfig& cfg, const sm::SmActivity& a, uint64_t c,
               std::map<uint64_t, double>& perCycle) {
  const SmPowerConfig& e = cfg.power.sm;
  using sm::LaneKind;
  using sm::Unit;
  const double events = a.issued * (e.fetch_decode_pj + e.scheduler_pj) +
                        a.icacheAccesses * e.icache_access_pj + a.rfReads * e.rf_read_pj +
                        a.rfWrites * e.rf_write_pj +
                        (a.dispatched[int(Unit::Sp)] + a.dispatched[int(Unit::Sfu)] +
                         a.dispatched[int(Unit::Dp)] + a.dispatched[int(Unit::Ldst)]) *
                            e.collector_pj +
                        a.dispatched[int(Unit::Ldst)] * e.ldst_pj +
                        a.sharedAccesses * e.shared_access_pj + a.constAccesses * e.const_access_pj;
  if (events > 0) perCycle[c] += events;
  const struct {
    LaneKind kind;
    double pj;
    const ExecuteStageConfig& stage;
  } lanes[] = {{LaneKind::Int, e.int_lane_pj, e.execute_stages.simd},
               {LaneKind::Fp, e.fp_lane_pj, e.execute_stages.simd},
               {LaneKind::Dp, e.dp_lane_pj, e.execute_stages.dp},
               {LaneKind::Sfu, e.sfu_lane_pj, e.execute_stages.sfu}};
  for (const auto& l : lanes) {
    const uint32_t ops = a.laneOpsByKind[int(l.kind)];
    if (ops == 0) continue;
    for (uint32_t i = 0; i < l.stage.cycles; ++i)
      perCycle[c + l.stage.delay + i] += ops * l.pj / l.stage.cycles;
  }
}

}  // namespace

// Every SM block's energy is its events x the configured energies plus its leakage x time.
TEST(EnergyModel, SmBlocksAreEventsTimesEnergiesPlusLeakageTimesTime) {
  const PlatformConfig cfg = platform({"memory.model=fixed-latency"});
  const gpu::TimingResult t = runKernel(cfg);
  ASSERT_TRUE(t.power.has_value());
  const power::PowerReport& p = *t.power;
  const SmPowerConfig& e = cfg.power.sm;
  const double pj = 1e-12, secs = double(t.cycles) / (cfg.gpu.clocks.core_mhz * 1e6);
  EXPECT_EQ(p.cycles, t.cycles);
  ASSERT_EQ(p.perSm.size(), t.sms.size());
  for (size_t i = 0; i < t.sms.size(); ++i) {
    const sm::SmCounters& n = t.sms[i].counters;
    const power::EnergyBreakdown& b = p.perSm[i];
    ASSERT_GT(n.issued, 0u);
    expectNear(b[Block::RegisterFile].dynamicJ,
               (n.rfReads * e.rf_read_pj + n.rfWrites * e.rf_write_pj) * pj, "rf dynamic");
    expectNear(b[Block::RegisterFile].staticJ, e.rf_leakage_w * secs, "rf static");
    expectNear(b[Block::FrontEnd].dynamicJ,
               (n.issued * e.fetch_decode_pj + n.icacheAccesses * e.icache_access_pj) * pj,
               "front end");
    expectNear(b[Block::Schedulers].dynamicJ, n.issued * e.scheduler_pj * pj, "schedulers");
    const double lanes = n.laneOpsByKind[int(sm::LaneKind::Int)] * e.int_lane_pj +
                         n.laneOpsByKind[int(sm::LaneKind::Fp)] * e.fp_lane_pj;
    EXPECT_GT(n.laneOpsByKind[int(sm::LaneKind::Fp)], 0u);
    expectNear(b[Block::SimdLanes].dynamicJ, lanes * pj, "lanes");
    const double laneLeak =
        cfg.sm.simd_units * (e.simd_unit_leakage_w + cfg.sm.simd_lanes * e.lane_leakage_w);
    expectNear(b[Block::SimdLanes].staticJ, laneLeak * secs, "lane leakage");
    expectNear(b[Block::Ldst].dynamicJ, n.dispatched[int(sm::Unit::Ldst)] * e.ldst_pj * pj, "ldst");
    expectNear(b[Block::SmClock].dynamicJ, e.clock_w * secs, "clock");
    expectNear(b[Block::L1d].staticJ, cfg.power.l1d.leakage_w * secs, "l1d static");
  }
  // The chip's constant power and the sum over blocks.
  expectNear(p.total[Block::Constant].staticJ, cfg.power.constant_w * secs, "constant");
  double sum = 0;
  for (const auto& s : p.perSm) sum += s.smJ();
  expectNear(p.total.smJ(), sum, "SM total");
}

// DRAM, memory controllers and interconnect follow from the memory system's own counts.
TEST(EnergyModel, MemorySideFollowsItsEventCounts) {
  const PlatformConfig cfg = platform();
  const gpu::TimingResult t = runKernel(cfg, 30, 4);
  const power::PowerReport& p = *t.power;
  const DramPowerConfig& d = cfg.power.dram;
  const double pj = 1e-12, secs = double(t.cycles) / (cfg.gpu.clocks.core_mhz * 1e6);
  uint64_t act = 0, pre = 0, rd = 0, wr = 0, ref = 0, req = 0;
  for (const auto& mc : t.memory["dram"]["per_partition"]) {
    act += mc["activates"].get<uint64_t>();
    pre += mc["precharges"].get<uint64_t>();
    rd += mc["read_bursts"].get<uint64_t>();
    wr += mc["write_bursts"].get<uint64_t>();
    ref += mc["refreshes"].get<uint64_t>();
    req += mc["reads"].get<uint64_t>() + mc["writes"].get<uint64_t>();
  }
  ASSERT_GT(rd, 0u);  // (the stores stay in the write-back L2: wr may be 0)
  const uint64_t channels = cfg.memory.partitions;
  expectNear(p.total[Block::Dram].dynamicJ,
             (act * d.activate_pj + pre * d.precharge_pj + rd * d.read_burst_pj +
              wr * d.write_burst_pj + ref * d.refresh_pj) *
                 pj,
             "dram dynamic");
  expectNear(p.total[Block::Dram].staticJ, d.background_w * channels * secs, "dram background");
  expectNear(p.total[Block::MemoryControllers].dynamicJ, req * d.controller_request_pj * pj,
             "controllers");
  uint64_t linkFlits = 0;
  for (const auto& l : t.memory["interconnect"]["links"]) linkFlits += l["flits"].get<uint64_t>();
  ASSERT_GT(linkFlits, 0u);
  EXPECT_GE(p.total[Block::Noc].dynamicJ, linkFlits * cfg.power.noc.link_flit_pj * pj);
}

// Lower supply: dynamic energy scales with V^2 and leakage with the configured law, for the same
// events (the supply does not change timing).
TEST(EnergyModel, SupplyVoltageScalesDynamicAndLeakage) {
  const auto base = runKernel(platform({"memory.model=fixed-latency"}));
  for (const char* law : {"linear", "cubic", "exponential"}) {
    const PlatformConfig cfg = platform({"memory.model=fixed-latency", "power.supply_voltage=0.9",
                                         std::string("power.leakage_law=") + law});
    const auto low = runKernel(cfg);
    ASSERT_EQ(low.cycles, base.cycles);
    const double v = 0.9;
    const double leak = std::string(law) == "linear" ? v
                        : std::string(law) == "cubic"
                            ? v * v * v
                            : v * std::exp(cfg.power.leakage_exponent * (v - 1.0));
    for (Block b : {Block::RegisterFile, Block::SimdLanes, Block::FrontEnd}) {
      expectNear(low.power->total[b].dynamicJ, base.power->total[b].dynamicJ * v * v, law);
      expectNear(low.power->total[b].staticJ, base.power->total[b].staticJ * leak, law);
    }
    // The chip's constant power is not on the scaled rail.
    expectNear(low.power->total[Block::Constant].staticJ,
               base.power->total[Block::Constant].staticJ, "constant");
  }
}

// The power time series adds up to the launch's energy, for every SM and in total.
TEST(EnergyModel, TimeSeriesAddsUpToTheTotals) {
  const PlatformConfig cfg = platform({"power.sample_cycles=100"});
  const gpu::TimingResult t = runKernel(cfg, 30, 4);
  const power::PowerReport& p = *t.power;
  ASSERT_EQ(p.samples.size(), (t.cycles + 99) / 100);
  const double cs = 1e-6 / cfg.gpu.clocks.core_mhz;
  double total = 0;
  std::vector<double> perSm(p.perSm.size(), 0.0);
  uint64_t cycles = 0;
  for (const auto& s : p.samples) {
    EXPECT_EQ(s.startCycle, t.startCycle + 1 + cycles);
    cycles += s.cycles;
    total += s.totalW * double(s.cycles) * cs;
    for (size_t i = 0; i < perSm.size(); ++i) perSm[i] += s.smW[i] * double(s.cycles) * cs;
  }
  EXPECT_EQ(cycles, t.cycles);
  EXPECT_NEAR(total, p.total.totalJ(), 1e-9 * p.total.totalJ());
  for (size_t i = 0; i < perSm.size(); ++i)
    EXPECT_NEAR(perSm[i], p.perSm[i].smJ(), 1e-9 * p.perSm[i].smJ());
}

// The per-cycle current of each SM integrates to its energy (without L1D accesses, which the
// stream does not carry): I x V x cycle time, summed, is the SM's dynamic and static energy.
TEST(EnergyModel, PerCycleCurrentIntegratesToTheSmEnergy) {
  struct Sink : power::CurrentSink {
    std::vector<double> joules;
    std::vector<uint64_t> cycles;
    double volts = 0, cs = 0;
    void onSmCurrent(uint32_t sm, uint64_t, uint64_t n, double amps) override {
      joules[sm] += amps * volts * cs * double(n);
      cycles[sm] += n;
    }
  } sink;
  const PlatformConfig cfg = platform({"memory.model=fixed-latency", "power.supply_voltage=0.95"});
  sink.joules.assign(cfg.gpu.num_sms, 0.0);
  sink.cycles.assign(cfg.gpu.num_sms, 0);
  sink.volts = 0.95;
  sink.cs = 1e-6 / cfg.gpu.clocks.core_mhz;
  Device dev(cfg, ExecMode::Timing);
  dev.timingEngine()->gpu().energyModel()->addCurrentSink(&sink);
  Module& m = dev.loadModule(test::module(kKernel), "energy.ptx");
  DevPtr in = dev.upload(std::vector<float>(30 * 128, 1.0f));
  DevPtr out = dev.malloc(30 * 128 * 4);
  dev.launch(m.kernel("k"), {30}, {128}, 0, KernelArgs().u32(4).ptr(in).ptr(out));
  dev.timingEngine()->gpu().energyModel()->removeCurrentSink(&sink);
  const gpu::TimingResult& t = *dev.launches().back().timing;
  for (size_t i = 0; i < t.sms.size(); ++i) {
    EXPECT_EQ(sink.cycles[i], t.cycles) << "sm " << i;
    const power::EnergyBreakdown& b = t.power->perSm[i];
    const double want = b.smJ() - b[Block::L1d].dynamicJ;
    EXPECT_NEAR(sink.joules[i], want, 1e-9 * want) << "sm " << i;
  }
}

// The issue's single instruction: an FP32 warp instruction, reported to the energy model as an
// SM reports it (issue; operand reads and dispatch; then the SM sleeps through the execution
// while another SM's reports move time on; the writeback). Its current above the idle current
// adds up to its energy; the lanes' share starts execute_stages.simd.delay cycles after the
// dispatch and lasts .cycles cycles, and reaches the sinks before any report of a later cycle
// although the SM reported nothing in those cycles. Every other part comes in its event's cycle.
TEST(EnergyModel, StageCurrentOfOneInstructionAddsUpAndStartsAfterDispatch) {
  struct Recorder : power::CurrentSink {
    std::map<uint64_t, double> amps;  // SM 0: cycle -> current
    std::map<uint64_t, int> reports;  // SM 0: cycle -> times reported
    // Position in the report sequence of SM 0's report of a cycle, and of SM 1's.
    std::map<uint64_t, size_t> at0, at1;
    size_t seq = 0;
    void onSmCurrent(uint32_t sm, uint64_t first, uint64_t n, double a) override {
      for (uint64_t c = first; c < first + n; ++c) {
        if (sm == 0) {
          amps[c] = a;
          reports[c] += 1;
          at0[c] = seq;
        } else {
          at1[c] = seq;
        }
      }
      ++seq;
    }
  };
  const std::vector<std::vector<std::string>> variants = {
      {}, {"power.sm.execute_stages.simd.delay=3", "power.sm.execute_stages.simd.cycles=5"}};
  for (const auto& sets : variants) {
    const PlatformConfig cfg = platform(sets);
    const SmPowerConfig& e = cfg.power.sm;
    const ExecuteStageConfig& stage = e.execute_stages.simd;
    sc_core::sc_simcontext* saved = sc_core::sc_curr_simcontext;
    test::newSimulation();  // the model is an sc_module: build it in a context of its own
    Recorder rec;
    double idle = 0;
    const uint64_t issue = 100, dispatch = 101, wb = dispatch + cfg.sm.latency.fp_mad.latency;
    {
      power::EnergyModel model("energy", cfg);
      model.addCurrentSink(&rec);
      idle = model.idleSmAmps();
      model.beginLaunch(issue);
      sm::SmActivity issued, dispatched, written, nothing;
      issued.issued = 1;
      dispatched.rfReads = 3;
      dispatched.dispatched[int(sm::Unit::Sp)] = 1;
      dispatched.laneOps = 32;
      dispatched.laneOpsByKind[int(sm::LaneKind::Fp)] = 32;
      written.rfWrites = 1;
      model.onActivity(0, issue, 1, issued);
      model.onActivity(1, issue, 1, nothing);
      model.onActivity(0, dispatch, 1, dispatched);
      model.onActivity(1, dispatch, 1, nothing);
      for (uint64_t c = dispatch + 1; c < wb; ++c) model.onActivity(1, c, 1, nothing);
      // SM 0 wakes for the writeback and reports the cycles it slept through first.
      model.onActivity(0, dispatch + 1, wb - dispatch - 1, nothing);
      model.onActivity(0, wb, 1, written);
      model.onActivity(1, wb, 1, nothing);
      model.completeBefore(wb + 1);
    }
    sc_core::sc_curr_simcontext = saved;
    sc_core::sc_default_global_context = saved;

    const double toPj = cfg.power.supply_voltage * 1e-6 / cfg.gpu.clocks.core_mhz * 1e12;
    const double lanePj = 32 * e.fp_lane_pj / stage.cycles;
    double total = 0;
    for (uint64_t c = issue; c <= wb; ++c) {
      ASSERT_EQ(rec.reports[c], 1) << "cycle " << c;
      const double pj = (rec.amps[c] - idle) * toPj;
      total += pj;
      double want = 0;
      if (c == issue) want = e.fetch_decode_pj + e.scheduler_pj;
      if (c == dispatch) want = 3 * e.rf_read_pj + e.collector_pj;
      if (c >= dispatch + stage.delay && c < dispatch + stage.delay + stage.cycles) {
        want += lanePj;
        // Handed on while SM 0 slept: before SM 1's report of the next cycle.
        if (c > dispatch) {
          EXPECT_LT(rec.at0[c], rec.at1[c + 1]) << "cycle " << c;
        }
      }
      if (c == wb) want = e.rf_write_pj;
      EXPECT_NEAR(pj, want, 1e-9 * (e.fp_lane_pj * 32)) << "cycle " << c;
    }
    const double instruction = e.fetch_decode_pj + e.scheduler_pj + 3 * e.rf_read_pj +
                               e.collector_pj + 32 * e.fp_lane_pj + e.rf_write_pj;
    EXPECT_NEAR(total, instruction, 1e-9 * instruction);
    // The first cycle with lane current is the configured delay after the dispatch.
    uint64_t first = 0;
    for (uint64_t c = dispatch + 1; c <= wb && first == 0; ++c)
      if ((rec.amps[c] - idle) * toPj > lanePj / 2) first = c;
    EXPECT_EQ(first, dispatch + stage.delay);
  }
}

// A tensor core draws its energy evenly over the instruction's occupancy, from its dispatch on.
TEST(EnergyModel, TensorCurrentSpreadsOverTheOccupancy) {
  struct Recorder : power::CurrentSink {
    std::map<uint64_t, double> amps;
    void onSmCurrent(uint32_t sm, uint64_t first, uint64_t n, double a) override {
      for (uint64_t c = first; c < first + n; ++c)
        if (sm == 0) amps[c] = a;
    }
  };
  const PlatformConfig cfg = platform({"power.sm.tensor_cycle_pj=300", "gpu.num_sms=1"});
  const SmPowerConfig& e = cfg.power.sm;
  sc_core::sc_simcontext* saved = sc_core::sc_curr_simcontext;
  test::newSimulation();
  Recorder rec;
  double idle = 0;
  const uint64_t dispatch = 100, occupancy = 32;
  {
    power::EnergyModel model("energy", cfg);
    model.addCurrentSink(&rec);
    idle = model.idleSmAmps();
    model.beginLaunch(dispatch);
    sm::SmActivity a, nothing;
    a.dispatched[int(sm::Unit::Tensor)] = 1;
    a.unitBusy[int(sm::Unit::Tensor)] = occupancy;
    model.onActivity(0, dispatch, 1, a);
    model.onActivity(0, dispatch + 1, 2 * occupancy, nothing);  // a stretch the SM slept through
    model.completeBefore(dispatch + 2 * occupancy + 1);
  }
  sc_core::sc_curr_simcontext = saved;
  sc_core::sc_default_global_context = saved;
  const double toPj = cfg.power.supply_voltage * 1e-6 / cfg.gpu.clocks.core_mhz * 1e12;
  double total = 0;
  for (uint64_t c = dispatch; c <= dispatch + 2 * occupancy; ++c) {
    const double pj = (rec.amps.at(c) - idle) * toPj;
    total += pj;
    const double want =
        (c < dispatch + occupancy ? 300.0 : 0.0) + (c == dispatch ? e.collector_pj : 0.0);
    EXPECT_NEAR(pj, want, 1e-6) << "cycle " << c;
  }
  EXPECT_NEAR(total, occupancy * 300.0 + e.collector_pj, 1e-6);
}

// A whole run: every SM's streamed current, cycle by cycle, is its activity's energy drawn where
// its stages draw it (the activity stream seen by a downstream observer, staged here from the
// configuration), for the cycles the SM evaluated and those it slept through alike; each cycle
// of each SM comes once, and no current above the idle one arrives after a report of a later
// cycle (what the power-delivery network relies on).
TEST(EnergyModel, StreamedCurrentFollowsTheStagesOfEveryCycle) {
  struct Observer : sm::ActivityObserver {
    const PlatformConfig* cfg = nullptr;
    std::vector<std::map<uint64_t, double>> pj;  // per SM: cycle -> staged energy
    std::vector<std::set<uint64_t>> evaluated;   // per SM: cycles reported alone
    void onActivity(uint32_t sm, uint64_t first, uint64_t cycles,
                    const sm::SmActivity& a) override {
      for (uint64_t c = first; c < first + cycles; ++c) addStaged(*cfg, a, c, pj[sm]);
      if (cycles == 1) evaluated[sm].insert(first);
    }
  } obs;
  struct Sink : power::CurrentSink {
    double idle = 0;
    std::vector<std::map<uint64_t, double>> amps;  // per SM: cycle -> current
    std::vector<std::map<uint64_t, int>> reports;
    uint64_t latest = 0, late = 0;
    void onSmCurrent(uint32_t sm, uint64_t first, uint64_t n, double a) override {
      if (a > idle * (1 + 1e-12) && first < latest) ++late;
      latest = std::max(latest, first);
      for (uint64_t c = first; c < first + n; ++c) {
        amps[sm][c] = a;
        reports[sm][c] += 1;
      }
    }
  } sink;
  const PlatformConfig cfg = platform();
  const uint32_t n = cfg.gpu.num_sms;
  obs.cfg = &cfg;
  obs.pj.resize(n);
  obs.evaluated.resize(n);
  sink.amps.resize(n);
  sink.reports.resize(n);
  Device dev(cfg, ExecMode::Timing);
  power::EnergyModel& model = *dev.timingEngine()->gpu().energyModel();
  sink.idle = model.idleSmAmps();
  model.addCurrentSink(&sink);
  dev.timingEngine()->setActivityObserver(&obs);
  Module& m = dev.loadModule(test::module(kKernel), "energy.ptx");
  DevPtr in = dev.upload(std::vector<float>(30 * 128, 1.0f));
  DevPtr out = dev.malloc(30 * 128 * 4);
  dev.launch(m.kernel("k"), {30}, {128}, 0, KernelArgs().u32(4).ptr(in).ptr(out));
  dev.timingEngine()->setActivityObserver(nullptr);
  model.removeCurrentSink(&sink);
  const gpu::TimingResult& t = *dev.launches().back().timing;

  const double toPj = cfg.power.supply_voltage * 1e-6 / cfg.gpu.clocks.core_mhz * 1e12;
  uint64_t sleeping = 0;  // cycles with stage current that the SM did not evaluate
  for (uint32_t s = 0; s < n; ++s) {
    for (uint64_t c = t.startCycle + 1; c <= t.endCycle; ++c) {
      ASSERT_EQ(sink.reports[s][c], 1) << "sm " << s << " cycle " << c;
      const double got = (sink.amps[s][c] - sink.idle) * toPj;
      const auto it = obs.pj[s].find(c);
      const double want = it == obs.pj[s].end() ? 0.0 : it->second;
      ASSERT_NEAR(got, want, 1e-6) << "sm " << s << " cycle " << c;
      if (want > 0 && !obs.evaluated[s].count(c)) ++sleeping;
    }
    // Nothing staged beyond the launch.
    EXPECT_TRUE(obs.pj[s].empty() || obs.pj[s].rbegin()->first <= t.endCycle) << "sm " << s;
  }
  EXPECT_GT(sleeping, 0u);  // the run exercises SMs that sleep while their lanes still draw
  EXPECT_EQ(sink.late, 0u);
}

// Unit level: one cycle of activity costs its events' energies.
TEST(EnergyModel, ActivityEnergyOfOneCycle) {
  const PlatformConfig cfg = platform();
  const power::EnergyTable table(cfg);
  sm::SmActivity a;
  a.issued = 2;
  a.rfReads = 3;
  a.rfWrites = 1;
  a.icacheAccesses = 1;
  a.dispatched[int(sm::Unit::Sp)] = 1;
  a.dispatched[int(sm::Unit::Ldst)] = 1;
  a.laneOpsByKind[int(sm::LaneKind::Fp)] = 32;
  a.laneOpsByKind[int(sm::LaneKind::Sfu)] = 4;
  a.sharedAccesses = 1;
  const SmPowerConfig& e = cfg.power.sm;
  const double want = (2 * (e.fetch_decode_pj + e.scheduler_pj) + 3 * e.rf_read_pj + e.rf_write_pj +
                       e.icache_access_pj + 2 * e.collector_pj + e.ldst_pj + 32 * e.fp_lane_pj +
                       4 * e.sfu_lane_pj + e.shared_access_pj) *
                      1e-12;
  expectNear(table.activityJ(a), want, "one cycle");
}

// A tensor core's energy is its busy cycles at tensor_cycle_pj, in the cycle it starts and in the
// totals alike; its instruction passes an operand collector like any other.
TEST(EnergyModel, TensorCoreEnergyIsItsBusyCycles) {
  const PlatformConfig cfg = platform({"power.sm.tensor_cycle_pj=300"});
  const power::EnergyTable table(cfg);
  sm::SmActivity a;
  a.dispatched[int(sm::Unit::Tensor)] = 1;
  a.unitBusy[int(sm::Unit::Tensor)] = 32;
  const SmPowerConfig& e = cfg.power.sm;
  expectNear(table.activityJ(a), (e.collector_pj + 32 * 300) * 1e-12, "one cycle");
  power::SmEnergyInputs in;
  in.counters.add(a, 3);
  const power::EnergyBreakdown b = power::smEnergy(table, in, 1000);
  expectNear(b[Block::Tensor].dynamicJ, 3 * 32 * 300e-12, "tensor");
  expectNear(b[Block::OperandCollectors].dynamicJ, 3 * e.collector_pj * 1e-12, "collectors");
  EXPECT_TRUE(power::listed(Block::Tensor, b[Block::Tensor]));
  EXPECT_FALSE(power::listed(Block::Tensor, power::BlockEnergy{}));
  EXPECT_TRUE(power::listed(Block::SfuDp, power::BlockEnergy{}));
}

// A gated SM leaks only its residue, pays no clock, and its switch costs its switching energy.
TEST(EnergyModel, GatedSmCyclesSaveLeakageAndClock) {
  const PlatformConfig cfg = platform({"power.gating.sm.gated_leakage_fraction=0.1"});
  const power::EnergyTable t(cfg);
  power::SmEnergyInputs on, half;
  half.gating.smGatedCycles = 500;
  half.gating.smGatings = 2;
  const uint64_t cycles = 1000;
  const auto a = power::smEnergy(t, on, cycles), b = power::smEnergy(t, half, cycles);
  const double cs = t.cycleSeconds;
  expectNear(b[Block::RegisterFile].staticJ, t.rfW * cs * (500 + 0.1 * 500), "rf");
  expectNear(a[Block::RegisterFile].staticJ, t.rfW * cs * 1000, "rf on");
  expectNear(b[Block::SmClock].dynamicJ, t.smClockW * cs * 500 + 2 * t.smSwitch, "clock");
}

// A unified L1's array holds shared memory: its leakage is the L1's, and the lines lent to shared
// memory (ON, whatever the drowsy policy) are shared memory's share of it; drowsy lines save on
// the rest. shared_leakage_w has no effect there.
TEST(EnergyModel, AUnifiedL1sLentLinesAreSharedMemorysLeakage) {
  const PlatformConfig cfg = loadPlatform(
      "rtx3070", {"power.l1d.drowsy.policy=timeout", "power.l1d.drowsy.leakage_fraction=0.25"});
  ASSERT_TRUE(cfg.sm.unified_l1);
  const power::EnergyTable t(cfg);
  EXPECT_EQ(t.sharedW, 0.0);
  const uint64_t cycles = 1000;
  power::SmEnergyInputs in;
  in.l1.lineCycles = 1000 * cycles;
  in.l1.lentLineCycles = 250 * cycles;    // a quarter of the lines lent
  in.l1.drowsyLineCycles = 300 * cycles;  // 40 % of the rest drowsy
  const auto e = power::smEnergy(t, in, cycles);
  const double array = t.l1.leakageW * t.cycleSeconds * cycles;
  const double ls = t.l1.lineShare;
  expectNear(e[Block::SharedMemory].staticJ, 0.25 * array, "shared: the lent quarter");
  expectNear(e[Block::L1d].staticJ + e[Block::SharedMemory].staticJ,
             array * ((1 - ls) + ls * (0.7 + 0.3 * 0.25)), "the array");
  // The whole SM's leakage (a switch's break-even) counts the array once.
  const SmPowerConfig& p = cfg.power.sm;
  EXPECT_NEAR(
      power::smLeakageNominalW(cfg),
      p.frontend_leakage_w + p.rf_leakage_w + p.sfu_leakage_w + p.ldst_leakage_w +
          cfg.sm.simd_units * (p.simd_unit_leakage_w + cfg.sm.simd_lanes * p.lane_leakage_w) +
          cfg.power.l1d.leakage_w,
      1e-12);
  EXPECT_THROW(loadPlatform("rtx3070", {"power.sm.shared_leakage_w=0.1"}), InputError);
  // Without a unified L1 shared memory leaks on its own.
  EXPECT_GT(power::EnergyTable(platform()).sharedW, 0.0);
}

// Gated lanes save their leakage; each gating costs the switch energy.
TEST(EnergyModel, GatedLaneCyclesSaveLaneLeakage) {
  const PlatformConfig cfg = platform();
  const power::EnergyTable t(cfg);
  power::SmEnergyInputs in;
  in.gating.laneGatedCycles = 3200;
  in.gating.laneGatings = 4;
  const uint64_t cycles = 1000;
  const auto e = power::smEnergy(t, in, cycles);
  const double cs = t.cycleSeconds;
  expectNear(e[Block::SimdLanes].staticJ,
             t.laneW * cs * (t.lanesPerSm * 1000.0 - 3200) + t.unitW * cs * t.unitsPerSm * 1000.0,
             "lanes");
  expectNear(e[Block::SimdLanes].dynamicJ, 4 * t.laneSwitch, "switching");
}

// The time series bins dynamic energy where it is drawn: with no L1D (fixed-latency memory), an
// SM's energy in a sample minus its core activity's energy drawn in that sample (counted here,
// independently, from the activity stream, the configured energies and the stages that draw
// them) is its static share, the same per cycle in every sample.
TEST(EnergyModel, TimeSeriesBinsActivityWhereItHappens) {
  struct Binner : sm::ActivityObserver {
    const PlatformConfig* cfg = nullptr;
    uint64_t start = 0, period = 0;
    std::map<std::pair<uint32_t, uint64_t>, double> joules;  // (sm, sample) -> J
    void onActivity(uint32_t sm, uint64_t first, uint64_t cycles,
                    const sm::SmActivity& a) override {
      std::map<uint64_t, double> pj;
      for (uint64_t c = first; c < first + cycles; ++c) addStaged(*cfg, a, c, pj);
      for (const auto& [c, e] : pj) joules[{sm, (c - start) / period}] += e * 1e-12;
    }
  } binner;
  const PlatformConfig cfg = platform({"memory.model=fixed-latency", "power.sample_cycles=50"});
  binner.cfg = &cfg;
  binner.period = 50;
  Device dev(cfg, ExecMode::Timing);
  dev.timingEngine()->setActivityObserver(&binner);
  Module& m = dev.loadModule(test::module(kKernel), "energy.ptx");
  DevPtr in = dev.upload(std::vector<float>(30 * 128, 1.0f));
  DevPtr out = dev.malloc(30 * 128 * 4);
  binner.start = dev.timingEngine()->gpu().ctaScheduler().endCycle() + 1;  // this launch's start
  dev.launch(m.kernel("k"), {30}, {128}, 0, KernelArgs().u32(8).ptr(in).ptr(out));
  dev.timingEngine()->setActivityObserver(nullptr);
  const gpu::TimingResult& t = *dev.launches().back().timing;
  ASSERT_EQ(binner.start, t.startCycle + 1);
  const power::PowerReport& p = *t.power;
  const double cs = 1e-6 / cfg.gpu.clocks.core_mhz;
  ASSERT_GT(p.samples.size(), 4u);
  for (size_t i = 0; i < t.sms.size(); ++i) {
    const double staticW = (p.perSm[i].smJ() - p.perSm[i].dynamicJ()) / p.seconds +
                           cfg.power.sm.clock_w;  // leakage and clock, spread evenly
    for (size_t b = 0; b < p.samples.size(); ++b) {
      const auto& s = p.samples[b];
      const double secs = double(s.cycles) * cs;
      const auto it = binner.joules.find({uint32_t(i), b});
      const double activity = it == binner.joules.end() ? 0.0 : it->second;
      EXPECT_NEAR(s.smW[i] * secs - activity, staticW * secs, 1e-9 * s.smW[i] * secs)
          << "sm " << i << " sample " << b;
    }
  }
}

// A cache's energy: DWL scales the data-array part of reads and writes with the enabled
// sub-word-lines (a half-active warp's read costs about half), drowsy lines leak the drowsy
// fraction, wake-ups cost their energy.
TEST(EnergyModel, CacheEnergyFollowsDwlAndDrowsyLines) {
  PlatformConfig cfg = platform(
      {"power.l1d.dwl=true", "power.l1d.drowsy.policy=timeout", "power.l1d.drowsy.wake_pj=3"});
  const power::EnergyTable t(cfg);
  const CachePowerConfig& c = cfg.power.l1d;
  power::CacheEnergyInputs full, half;
  full.subwordsPerLine = half.subwordsPerLine = 32;
  full.reads = half.reads = 10;
  full.readSubwords = 10 * 32;
  half.readSubwords = 10 * 16;
  const double eFull = power::cacheEnergy(t.l1, full, 0.0, 1.0).dynamicJ;
  const double eHalf = power::cacheEnergy(t.l1, half, 0.0, 1.0).dynamicJ;
  expectNear(eFull, 10 * c.read_pj * 1e-12, "full read");
  expectNear(eHalf, 10 * c.read_pj * 1e-12 * ((1 - c.data_share) + c.data_share * 0.5),
             "half read");
  EXPECT_LT(eHalf, 0.6 * eFull);  // about half
  // Without DWL every read costs the whole line.
  const power::EnergyTable plain(platform());
  expectNear(power::cacheEnergy(plain.l1, half, 0.0, 1.0).dynamicJ, eFull, "no dwl");
  // Drowsy: 3/4 of the line-cycles drowsy; wake-ups cost wake_pj.
  power::CacheEnergyInputs drowsy;
  drowsy.lineCycles = 4000;
  drowsy.drowsyLineCycles = 3000;
  drowsy.wakeups = 7;
  const power::BlockEnergy d = power::cacheEnergy(t.l1, drowsy, 1e-3, 1.0);
  const double lines = 0.25 + 0.75 * c.drowsy.leakage_fraction;
  expectNear(d.staticJ, c.leakage_w * 1e-3 * ((1 - c.line_share) + c.line_share * lines),
             "drowsy static");
  expectNear(d.dynamicJ, 7 * 3e-12, "wake-ups");
}

// On the crossbar every flit crosses the switch once and two links (into and out of it): the
// interconnect's energy follows from its flit count.
TEST(EnergyModel, CrossbarEnergyFollowsItsFlits) {
  const PlatformConfig cfg = platform();
  ASSERT_EQ(cfg.noc.topology, "crossbar");
  const gpu::TimingResult t = runKernel(cfg, 30, 4);
  const uint64_t flits = t.memory["interconnect"]["flits"].get<uint64_t>();
  ASSERT_GT(flits, 0u);
  const NocPowerConfig& n = cfg.power.noc;
  expectNear(t.power->total[Block::Noc].dynamicJ,
             double(flits) * (n.router_flit_pj + 2 * n.link_flit_pj) * 1e-12, "noc");
}
