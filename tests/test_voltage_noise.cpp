// The power-delivery network in the timing model (seed 001): the Pdn steps exactly the currents
// the SMs draw (checked against an offline network driven by the same stream), observing the
// voltage does not change timing, and the smoothing mechanisms act: the global detector staggers
// SMs that start together by the configured delays; the power virus's worst droop is a burst of
// register writes that smoothing cannot see coming.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "catalog.hpp"
#include "common/error.hpp"
#include "common/file_io.hpp"
#include "common/strings.hpp"
#include "gpu/device.hpp"
#include "gpu/launch_files.hpp"
#include "gpu/report.hpp"
#include "pdn/pdn_network.hpp"
#include "pdn/voltage_files.hpp"
#include "power/energy_model.hpp"
#include "support/ptx_harness.hpp"

using namespace gpusc;

namespace {

// Each thread does `iters` rounds of dependent FP32 work on a value it loads, then stores it.
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
  ld.global.f32 %f1, [%rd1];
  mov.u32 %r4, 0;
LOOP:
  fma.rn.f32 %f1, %f1, 0f3F000000, 0f3F800000;
  fma.rn.f32 %f2, %f1, %f1, %f1;
  add.f32 %f1, %f1, %f2;
  add.s32 %r4, %r4, 1;
  setp.lt.u32 %p1, %r4, %r3;
  @%p1 bra LOOP;
  st.global.f32 [%rd2], %f1;
  ret;
}
)";

// Runs the kernel with `ctas` CTAs of 128 threads; `sink` (optional) sees every SM's current.
gpu::TimingResult runKernel(const std::vector<std::string>& sets, uint32_t ctas, uint32_t iters,
                            power::CurrentSink* sink = nullptr) {
  Device dev(loadPlatform("gtx480", sets), ExecMode::Timing);
  power::EnergyModel* e = dev.timingEngine()->gpu().energyModel();
  if (sink) e->addCurrentSink(sink);
  Module& m = dev.loadModule(test::module(kKernel), "voltage.ptx");
  DevPtr in = dev.upload(std::vector<float>(ctas * 128, 0.25f));
  DevPtr out = dev.malloc(ctas * 128 * 4);
  dev.launch(m.kernel("k"), {ctas}, {128}, 0, KernelArgs().u32(iters).ptr(in).ptr(out));
  if (sink) e->removeCurrentSink(sink);
  return *dev.launches().back().timing;
}

// The droop events of a launch (its droops.csv), each as column name -> text.
std::vector<std::map<std::string, std::string>> droopEvents(const gpu::TimingResult& t) {
  std::istringstream in(pdn::eventsCsv(*t.voltage));
  std::string line;
  std::getline(in, line);
  const std::vector<std::string> head = split(line, ',');
  std::vector<std::map<std::string, std::string>> events;
  while (std::getline(in, line)) {
    const std::vector<std::string> f = split(line, ',');
    EXPECT_EQ(f.size(), head.size()) << line;
    auto& e = events.emplace_back();
    for (size_t i = 0; i < head.size() && i < f.size(); ++i) e[head[i]] = f[i];
  }
  return events;
}

uint64_t stallsOf(const gpu::SmTiming& s, sm::Stall st) {
  uint64_t n = 0;
  for (const auto& sch : s.schedulers) n += sch[int(st)];
  return n;
}

}  // namespace

// The Pdn's voltages are the network's response to exactly the currents the energy model
// streams: an offline network stepped with the same per-cycle currents (idle stretches at the
// idle current, each SM's current averaged over pdn.current_spread_cycles) finds the same
// worst droop, minimum voltage and worst SM.
TEST(Pdn, StepsTheStreamedCurrentsOfEveryCycle) {
  struct Recorder : power::CurrentSink {
    std::map<uint64_t, std::vector<double>> amps;  // cycle -> per SM (reported cycles only)
    uint32_t sms = 0;
    void onSmCurrent(uint32_t sm, uint64_t first, uint64_t n, double a) override {
      for (uint64_t c = first; c < first + n; ++c) {
        auto& v = amps[c];
        if (v.empty()) v.assign(sms, -1.0);
        v[sm] = a;
      }
    }
  } rec;
  const PlatformConfig cfg = loadPlatform("gtx480");
  rec.sms = cfg.gpu.num_sms;
  const gpu::TimingResult t = runKernel({}, 30, 40, &rec);
  ASSERT_TRUE(t.voltage.has_value());

  const pdn::PdnNetwork net(cfg.pdn, cfg.gpu.clocks.core_mhz * 1e6, cfg.gpu.num_sms);
  const double idle = power::EnergyTable(cfg).smOnW() / cfg.power.supply_voltage;
  const uint32_t n = cfg.gpu.num_sms, spread = cfg.pdn.current_spread_cycles;
  std::vector<double> amps(n, idle), drop(n);
  std::vector<std::vector<double>> history(n, std::vector<double>(spread, idle));
  pdn::PdnState s = net.steadyState(amps.data(), 0.0);
  double worst = 0, minV = 1e9;
  uint32_t worstSm = 0;
  for (uint64_t c = t.startCycle + 1; c <= t.endCycle; ++c) {
    const auto it = rec.amps.find(c);
    for (uint32_t i = 0; i < n; ++i) {
      const double booked = it != rec.amps.end() && it->second[i] >= 0 ? it->second[i] : idle;
      history[i][c % spread] = booked;
      double sum = 0;
      for (double h : history[i]) sum += h;
      amps[i] = sum / spread;
    }
    net.step(s, amps.data(), 0.0, drop.data());
    for (uint32_t i = 0; i < n; ++i) {
      const double v = cfg.power.supply_voltage - drop[i];
      if (v < minV) {
        minV = v;
        worstSm = i;
      }
      worst = std::max(worst, drop[i] / cfg.power.supply_voltage * 100.0);
    }
  }
  EXPECT_NEAR(t.voltage->worstDroopPct, worst, 1e-9);
  EXPECT_NEAR(t.voltage->minVoltage, minV, 1e-12);
  EXPECT_EQ(t.voltage->worstSm, worstSm);
  EXPECT_GT(worst, 0.5);  // the kernel draws enough current to droop at all
}

// Watching the voltage adds no event to the simulation: cycles and every SM's issue counts are
// the same with and without the PDN.
TEST(Pdn, ObservingTheVoltageDoesNotChangeTiming) {
  const gpu::TimingResult on = runKernel({}, 45, 30);
  const gpu::TimingResult off = runKernel({"pdn.enabled=false"}, 45, 30);
  ASSERT_TRUE(on.voltage.has_value());
  EXPECT_FALSE(off.voltage.has_value());
  EXPECT_EQ(on.cycles, off.cycles);
  for (size_t i = 0; i < on.sms.size(); ++i)
    EXPECT_EQ(on.sms[i].counters.issued, off.sms[i].counters.issued) << "sm " << i;
}

// One CTA per SM, all starting in the kernel's first cycles: the global detector sees at least
// min_sms (9) SMs go from 0 to active warps within its window (SMs whose warps still wait for
// their first instructions count later) and holds the j-th of them, in SM order, for
// j x stagger_cycles (the first is not delayed).
TEST(Smoothing, GlobalDetectorStaggersSmsThatStartTogether) {
  const uint32_t stagger = 40;
  const gpu::TimingResult g = runKernel(
      {"smoothing.mode=global", "smoothing.global.stagger_cycles=" + std::to_string(stagger)}, 15,
      20);
  const gpu::TimingResult n = runKernel({}, 15, 20);
  ASSERT_TRUE(g.smoothing.contains("global"));
  EXPECT_FALSE(n.smoothing.contains("global"));
  EXPECT_EQ(g.smoothing["global"]["detections"].get<uint64_t>(), 1u);
  const uint64_t delayed = g.smoothing["global"]["delayed_sms"].get<uint64_t>();
  EXPECT_GE(delayed + 1, 9u);  // the detected set: at least min_sms SMs
  EXPECT_EQ(g.smoothing["global"]["delay_cycles"].get<uint64_t>(),
            stagger * (delayed * (delayed + 1) / 2));
  // Exactly the delayed SMs were held ("smoothing" scheduler outcomes), the longest for about
  // delayed x stagger cycles (per scheduler holding warps).
  uint64_t heldSms = 0, longest = 0;
  for (size_t i = 0; i < g.sms.size(); ++i) {
    EXPECT_EQ(stallsOf(n.sms[i], sm::Stall::Smoothing), 0u);
    uint64_t most = 0;
    for (const auto& sch : g.sms[i].schedulers)
      most = std::max(most, sch[int(sm::Stall::Smoothing)]);
    heldSms += most > 0;
    longest = std::max(longest, most);
  }
  EXPECT_EQ(heldSms, delayed);
  EXPECT_GE(longest + 10, delayed * stagger);
  EXPECT_LE(longest, delayed * stagger);
  EXPECT_GT(g.cycles, n.cycles);
}

// Seed 001's current model (power.sm.current_model: activity, GPUWattch-style: every unit's
// energy in the cycle of its accesses, the lanes' in the dispatch cycle) books exactly the energy
// of the staged one and only moves it in time: the same cycles, the same energy of every block,
// the same charge drawn by every SM; the lanes' energy arrives in fewer cycles, so the largest
// per-cycle current is higher.
TEST(Smoothing, ActivityCurrentIsTheStagedEnergyAtDispatch) {
  struct Charge : power::CurrentSink {
    std::vector<double> coulombCycles = std::vector<double>(15, 0.0);
    double peak = 0;
    void onSmCurrent(uint32_t sm, uint64_t, uint64_t cycles, double amps) override {
      coulombCycles.at(sm) += amps * double(cycles);
      peak = std::max(peak, amps);
    }
  };
  Charge staged, activity;
  const gpu::TimingResult a = runKernel({}, 30, 40, &staged);
  const gpu::TimingResult b = runKernel({"power.sm.current_model=activity"}, 30, 40, &activity);
  ASSERT_TRUE(a.power && b.power);
  EXPECT_EQ(a.cycles, b.cycles);
  EXPECT_EQ(power::toJson(a.power->total, a.power->seconds).dump(),
            power::toJson(b.power->total, b.power->seconds).dump());
  for (uint32_t sm = 0; sm < 15; ++sm) {
    EXPECT_GT(staged.coulombCycles[sm], 0.0);
    EXPECT_NEAR(activity.coulombCycles[sm], staged.coulombCycles[sm],
                1e-9 * staged.coulombCycles[sm])
        << "sm" << sm;
  }
  EXPECT_GT(activity.peak, staged.peak * 1.05);
}

// The power virus's droops (warps waiting at barriers, then bursting into FMAs together):
//  - the worst one follows a rise of its SM's estimated power in the predictor's lead window, so
//    it does not come out of a quiet SM. (A constant-cache fill that completed every waiting
//    load in one cycle once wrote dozens of registers at a kernel's start in a cycle nothing was
//    dispatched, every kernel's worst droop; the MSHRs now replay merged requests one per cycle.)
//  - drawing each instruction's lane energy over its execution stages instead of in its
//    dispatch cycle makes them smaller and rarer: a burst ramps the current up over the stages.
TEST(Smoothing, PowerVirusDroopsFollowRisesThePredictorSees) {
  struct Worst {
    double droop = 0, rises = 0;  // of the worst event
    uint64_t events = 0;
  };
  const auto run = [](const std::vector<std::string>& sets) {
    std::vector<std::string> all = {"pdn.monitor.thresholds_pct=[3,4,5]"};
    all.insert(all.end(), sets.begin(), sets.end());
    Device dev(loadPlatform("gtx480", all), ExecMode::Timing);
    auto wl = catalog::find("power_virus").make(catalog::Size::Tiny);
    wl->setup(dev);
    wl->run(dev);
    EXPECT_TRUE(wl->check(dev).pass);
    Worst w;
    for (const auto& l : dev.launches())
      for (auto& f : droopEvents(*l.timing)) {
        ++w.events;
        const double d = std::stod(f["droop_pct"]);
        if (d <= w.droop) continue;
        w.droop = d;
        w.rises = std::stod(f["rise2_w"]) + std::stod(f["rise3_w"]) + std::stod(f["rise4_w"]);
      }
    return w;
  };
  const Worst staged = run({});
  ASSERT_GT(staged.events, 0u);
  EXPECT_GT(staged.rises, 0.0);
  const Worst atDispatch =
      run({"power.sm.execute_stages.simd.delay=0", "power.sm.execute_stages.simd.cycles=1"});
  EXPECT_GT(atDispatch.droop, staged.droop);
  EXPECT_GT(atDispatch.events, staged.events);
}

// Global smoothing on waves of one-warp blocks that start together on every SM (seed 001
// Sec. 4.2, Fig. 16): the detector sees the SMs go from no active warp to some within its window
// and staggers them, which lowers the worst droop.
TEST(Smoothing, GlobalStaggeringLowersTheDroopOfAlignedCtaWaves) {
  const auto worst = [](const std::string& mode, uint64_t& detections) {
    Device dev(loadPlatform("gtx480", {"smoothing.mode=" + mode}), ExecMode::Timing);
    auto wl = catalog::find("cta_waves").make(catalog::Size::Tiny);
    wl->setup(dev);
    wl->run(dev);
    EXPECT_TRUE(wl->check(dev).pass);
    double w = 0;
    detections = 0;
    for (const auto& l : dev.launches()) {
      w = std::max(w, l.timing->voltage->worstDroopPct);
      if (l.timing->smoothing.contains("global"))
        detections += l.timing->smoothing["global"]["detections"].get<uint64_t>();
    }
    return w;
  };
  uint64_t none = 0, global = 0;
  const double before = worst("none", none), after = worst("global", global);
  EXPECT_EQ(none, 0u);
  EXPECT_GT(global, 0u);
  EXPECT_LT(after, before);
}

// Smoothing counters are per launch: a second identical launch reports what it did, not the
// total since the device was built.
TEST(Smoothing, CountersArePerLaunch) {
  Device dev(loadPlatform("gtx480", {"smoothing.mode=hierarchical"}), ExecMode::Timing);
  Module& m = dev.loadModule(test::module(kKernel), "voltage.ptx");
  DevPtr in = dev.upload(std::vector<float>(15 * 128, 0.25f));
  DevPtr out = dev.malloc(15 * 128 * 4);
  for (int i = 0; i < 2; ++i)
    dev.launch(m.kernel("k"), {15}, {128}, 0, KernelArgs().u32(20).ptr(in).ptr(out));
  const nlohmann::json& a = dev.launches()[0].timing->smoothing;
  const nlohmann::json& b = dev.launches()[1].timing->smoothing;
  ASSERT_TRUE(a.contains("global") && b.contains("global") && a.contains("local"));
  EXPECT_EQ(a["global"]["detections"].get<uint64_t>(), 1u);
  EXPECT_EQ(b["global"]["detections"].get<uint64_t>(), 1u);
  EXPECT_LE(b["local"]["triggers"].get<uint64_t>(), 2 * a["local"]["triggers"].get<uint64_t>());
  EXPECT_GT(b["local"]["triggers"].get<uint64_t>(), 0u);
}

// Attribution by superposition: with pdn.monitor.attribution the Pdn steps one network per SM;
// at every droop's worst cycle the SMs' contributions add up to the whole drop. (The self and
// cluster shares need not be ordered: a neighbour's earlier current step can leave an overshoot,
// a negative contribution, at the worst SM's node.)
TEST(Pdn, AttributionSharesAddUpToTheWholeDrop) {
  const gpu::TimingResult t =
      runKernel({"pdn.monitor.attribution=true", "pdn.monitor.thresholds_pct=[2,3,4]"}, 30, 40);
  ASSERT_TRUE(t.voltage.has_value());
  size_t events = 0;
  for (auto& f : droopEvents(t)) {
    const std::string line = f["worst_cycle"];
    ASSERT_FALSE(f["share_all"].empty()) << line;
    EXPECT_NEAR(std::stod(f["share_all"]), 1.0, 1e-9) << line;
    EXPECT_FALSE(f["share_self"].empty() || f["share_cluster"].empty()) << line;
    ++events;
  }
  EXPECT_GT(events, 0u);
}

namespace {

std::string readFile(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// The records' CSV tables of every launch in one, as gpusc run wrote them before they were
// streamed: a "launch" column first, one header.
std::string joinedCsv(const std::vector<LaunchRecord>& launches,
                      std::string (*table)(const pdn::VoltageReport&)) {
  std::string out;
  for (size_t i = 0; i < launches.size(); ++i) {
    std::istringstream in(table(*launches[i].timing->voltage));
    std::string line;
    for (bool first = true; std::getline(in, line); first = false) {
      if (first && out.empty()) out += "launch," + line + "\n";
      if (!first) out += std::to_string(i) + "," + line + "\n";
    }
  }
  return out;
}

// Three launches of different lengths; `sink` (optional) gets their voltage detail,
// `launchSink` (optional) their records.
std::vector<LaunchRecord> threeLaunches(pdn::VoltageSink* sink, LaunchSink* launchSink = nullptr) {
  Device dev(loadPlatform("gtx480", {"pdn.monitor.trace_every=10", "power.sample_cycles=50"}),
             ExecMode::Timing);
  dev.setVoltageSink(sink);
  dev.setLaunchSink(launchSink);
  Module& m = dev.loadModule(test::module(kKernel), "voltage.ptx");
  DevPtr in = dev.upload(std::vector<float>(60 * 128, 0.25f));
  DevPtr out = dev.malloc(60 * 128 * 4);
  for (uint32_t ctas : {30u, 60u, 15u})
    dev.launch(m.kernel("k"), {ctas}, {128}, 0, KernelArgs().u32(200).ptr(in).ptr(out));
  return dev.launches();
}

// Runs `work` in a child process forked from this one (a second Device in one process starts
// at later cycles, so a run to compare with is made from the same state there) and waits for
// it: whether it finished without an exception.
bool inChild(const std::function<void()>& work) {
  const pid_t child = ::fork();
  if (child < 0) return false;
  if (child == 0) {
    int rc = 1;
    try {
      work();
      rc = 0;
    } catch (...) {
    }
    std::_Exit(rc);
  }
  int status = 0;
  return ::waitpid(child, &status, 0) == child && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

}  // namespace

// gpusc run's droops.csv and voltage.csv, streamed through small buffers as the launches run,
// are byte for byte the tables the launch records hold without a sink; the records then keep
// no per-cycle data, and the sink keeps the worst launch's window. (The run without a sink is
// made in a child process, inChild, which writes what its records hold.)
TEST(Pdn, StreamedVoltageFilesEqualTheRecordsTables) {
  namespace fs = std::filesystem;
  const fs::path dir =
      fs::temp_directory_path() / fmt::format("gpusc-voltage-files-{}", ::getpid());
  fs::create_directories(dir);
  ASSERT_TRUE(inChild([&] {
    const std::vector<LaunchRecord> kept = threeLaunches(nullptr);
    size_t at = 0;
    const pdn::VoltageReport* k = worstVoltageLaunch(kept, &at);
    std::string summaries;
    for (const LaunchRecord& l : kept)
      summaries += l.timing->voltage->summary.dump() + "\n" + l.timing->voltage->histogramCsv;
    writeFileAtomically((dir / "kept-droops.csv").string(), joinedCsv(kept, &pdn::eventsCsv));
    writeFileAtomically((dir / "kept-voltage.csv").string(), joinedCsv(kept, &pdn::traceCsv));
    writeFileAtomically((dir / "kept-worst.csv").string(),
                        fmt::format("{}\n{}", at, k ? pdn::worstWindowCsv(*k) : ""));
    writeFileAtomically((dir / "kept-summaries.txt").string(), summaries);
  }));

  pdn::VoltageFiles files(dir, 15, 100);
  const std::vector<LaunchRecord> streamed = threeLaunches(&files);
  EXPECT_FALSE(fs::exists(dir / "droops.csv"));  // only when committed
  files.commit();
  const std::string droops = readFile(dir / "kept-droops.csv");
  EXPECT_GT(std::count(droops.begin(), droops.end(), '\n'), 10);  // events in several launches
  EXPECT_EQ(readFile(dir / "droops.csv"), droops);
  EXPECT_EQ(readFile(dir / "voltage.csv"), readFile(dir / "kept-voltage.csv"));
  size_t at = 9;
  const pdn::VoltageReport* w = files.worst(&at);
  ASSERT_TRUE(w);
  EXPECT_EQ(fmt::format("{}\n{}", at, pdn::worstWindowCsv(*w)), readFile(dir / "kept-worst.csv"));
  EXPECT_EQ(w->windowCycles.size(), w->windowVolts.at(w->worstSm).size());
  std::string summaries;
  for (const LaunchRecord& l : streamed) {
    const pdn::VoltageReport& v = *l.timing->voltage;
    EXPECT_TRUE(v.events.empty() && v.traceStart.empty() && v.traceMinVolts.empty() &&
                v.windowCycles.empty() && v.windowVolts.empty());
    summaries += v.summary.dump() + "\n" + v.histogramCsv;
  }
  EXPECT_EQ(summaries, readFile(dir / "kept-summaries.txt"));
  fs::remove_all(dir);
}

// A file that cannot be written is an InputError naming it.
TEST(Pdn, StreamedFileErrorsNameTheFile) {
  try {
    StreamedFile f("/nonexistent-folder/droops.csv");
    FAIL() << "opened";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("'/nonexistent-folder/droops.csv'"), std::string::npos)
        << e.what();
  }
  pdn::VoltageFiles none("/nonexistent-folder", 15);
  EXPECT_THROW(none.beginLaunch(0), InputError);
}

namespace {

// A record's statistics as stats.json has them, without the host's seconds.
std::string recordJson(const LaunchRecord& l) {
  nlohmann::json j = toJson(l);
  j.erase("host_seconds");
  return j.dump();
}

}  // namespace

// gpusc run's power.csv and cta_timeline.csv, streamed through small buffers as the launches
// run, are byte for byte what powerTimeSeriesCsv and ctaTimelineCsv make of the records kept
// without a sink, and stats.json's launches are the records' JSON; the records then keep neither
// series and their memory statistics' totals only, and nothing else of theirs changes.
TEST(Pdn, StreamedLaunchFilesEqualTheRecordsTables) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / fmt::format("gpusc-launch-files-{}", ::getpid());
  fs::create_directories(dir);
  ASSERT_TRUE(inChild([&] {
    const std::vector<LaunchRecord> kept = threeLaunches(nullptr);
    std::string records;
    for (const LaunchRecord& l : kept) records += recordJson(l) + "\n";
    writeFileAtomically((dir / "kept-power.csv").string(), powerTimeSeriesCsv(kept));
    writeFileAtomically((dir / "kept-timeline.csv").string(), ctaTimelineCsv(kept));
    writeFileAtomically((dir / "kept-records.txt").string(), records);
  }));

  LaunchFiles files(dir, StatsForm::Full, 100);
  const std::vector<LaunchRecord> streamed = threeLaunches(nullptr, &files);
  EXPECT_FALSE(fs::exists(dir / "power.csv"));  // only when committed
  EXPECT_TRUE(files.hasPower());
  files.commit();
  const std::string power = readFile(dir / "kept-power.csv");
  EXPECT_GT(std::count(power.begin(), power.end(), '\n'), 10);
  EXPECT_EQ(readFile(dir / "power.csv"), power);
  const std::string timeline = readFile(dir / "kept-timeline.csv");
  EXPECT_EQ(std::count(timeline.begin(), timeline.end(), '\n'), 1 + 30 + 60 + 15);
  EXPECT_EQ(readFile(dir / "cta_timeline.csv"), timeline);

  // stats.json: what dump(2) writes of the object with the records' JSON in "launches".
  files.writeStats(dir / "stats.json",
                   {{"a", 1}, {"launches", nlohmann::json::array()}, {"z", {{"b", 2.5}}}});
  const std::string text = readFile(dir / "stats.json");
  const nlohmann::json stats = nlohmann::json::parse(text);
  EXPECT_EQ(stats.dump(2) + "\n", text);
  ASSERT_EQ(stats.at("launches").size(), streamed.size());
  EXPECT_EQ(stats.at("z").at("b"), 2.5);
  std::string fromFile;
  for (size_t i = 0; i < streamed.size(); ++i) {
    const LaunchRecord& l = streamed[i];
    nlohmann::json j = stats["launches"][i];
    EXPECT_EQ(j.at("host_seconds").get<double>(), l.seconds);
    EXPECT_TRUE(l.timing->timeline.empty() && l.timing->power->samples.empty());
    EXPECT_EQ(l.timing->memory, memoryTotalsJson(j.at("timing").at("memory")));
    EXPECT_TRUE(l.timing->memory.at("l1d").contains("totals") &&
                !l.timing->memory.at("l1d").contains("per_sm"));
    j.erase("host_seconds");
    fromFile += j.dump() + "\n";
  }
  EXPECT_EQ(fromFile, readFile(dir / "kept-records.txt"));
  fs::remove_all(dir);
}

// LaunchFiles' files that cannot be written are InputErrors naming them; without a timing-mode
// launch, commit() writes cta_timeline.csv's header alone and no power.csv.
TEST(Pdn, LaunchFilesErrorsNameTheFile) {
  namespace fs = std::filesystem;
  LaunchRecord functional;
  LaunchFiles none("/nonexistent-folder");
  none.launchDone(0, functional);  // nothing to write: no file yet
  try {
    none.commit();
    FAIL() << "committed";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("'/nonexistent-folder/cta_timeline.csv'"),
              std::string::npos)
        << e.what();
  }
  LaunchRecord timed;
  timed.timing.emplace();
  LaunchFiles bad("/nonexistent-folder");
  EXPECT_THROW(bad.launchDone(0, timed), InputError);

  const fs::path dir = fs::temp_directory_path() / fmt::format("gpusc-launch-none-{}", ::getpid());
  fs::create_directories(dir);
  LaunchFiles empty(dir);
  empty.commit();
  EXPECT_EQ(readFile(dir / "cta_timeline.csv"), ctaTimelineCsv({}));
  EXPECT_FALSE(empty.hasPower() || fs::exists(dir / "power.csv"));
  const nlohmann::json stats = {{"launches", nlohmann::json::array()}};
  empty.writeStats(dir / "stats.json", stats);
  EXPECT_EQ(readFile(dir / "stats.json"), stats.dump(2) + "\n");
  EXPECT_THROW(empty.writeStats("/nonexistent-folder/stats.json", stats), InputError);
  fs::remove_all(dir);
}
