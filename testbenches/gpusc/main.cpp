// gpusc: the command-line tool.
//
//   gpusc run [--platform P] [--kernel K | --launch SPEC] [--size S] [--set key=value]...
//   gpusc list platforms | kernels | keys | shaders | shader-keys | ptx [--markdown]
//   gpusc list keys | shader-keys --json [--platform P] [--set K=V]...
//   gpusc shader compile <shader> [--stage S] [--emit asm|cfg] [--input-motion V] ...
//   gpusc shader run [--shader NAME | --draw FILE] [--platform P] [--set key=value]...
//   gpusc bench [--kernel K]... [--size S] [--repeat N] [--json FILE]
//   gpusc pdn impedance [--platform P] [--set key=value]... [--out DIR]
//   gpusc sweep SPEC.yaml [--jobs N] [--out DIR] [--retry-failed] | gpusc sweep status SPEC.yaml
//   gpusc results SPEC.yaml --csv|--json [-o FILE]
//
// Exit codes: 0 success; 1 a catalog kernel's result check failed; 2 bad input (platform,
// launch spec, PTX, command line); 3 the kernel faulted; 4 internal error; 5 a run limit
// stopped the run (limits.*, --max-cycles, --max-instructions, --timeout); 6 SIGINT or SIGTERM
// stopped it. 5 and 6 write the partial results, marked incomplete. 7 an RTL block in lockstep
// diverged from its C++ model (docs/rtl-cosim.md).
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <systemc>

#include "catalog.hpp"
#include "cli_options.hpp"
#include "common/error.hpp"
#include "common/file_io.hpp"
#include "common/host_thread_governor.hpp"
#include "common/host_workers.hpp"
#include "common/platform_config.hpp"
#include "common/strings.hpp"
#include "cudart/wire.hpp"
#include "exec_cli.hpp"
#include "experiment.hpp"
#include "experiment_util.hpp"
#include "func/ptx_support.hpp"
#include "gpu/device.hpp"
#include "gpu/gpu.hpp"
#include "gpu/launch_files.hpp"
#include "gpu/launch_spec.hpp"
#include "gpu/report.hpp"
#include "noc/mesh.hpp"
#include "pdn/pdn.hpp"
#include "results_folder.hpp"
#include "rtl_cli.hpp"
#include "run_report.hpp"
#include "shader/shader_config.hpp"
#include "shader_cli.hpp"
#include "sm/activity.hpp"
#include "sweep_cli.hpp"
#include "voltage_cli.hpp"

#ifndef GPUSC_VERSION
#define GPUSC_VERSION "0.0.0"
#endif

namespace fs = std::filesystem;
using namespace gpusc;
using cli::writeFile;

namespace {

constexpr int kExitCheckFailed = 1;
constexpr int kExitBadInput = 2;
constexpr int kExitKernelFault = 3;
constexpr int kExitInternal = 4;
constexpr int kExitLockstep = 7;
constexpr int kExitRunLimit = 5;
constexpr int kExitInterrupted = 6;

int exitCodeOf(StopReason r) {
  return r == StopReason::Interrupted ? kExitInterrupted : kExitRunLimit;
}

// `text` as a whole number from `lo` to `hi` (decimal digits only), or none: an option's and an
// environment variable's counts are read the same way.
std::optional<uint64_t> wholeNumber(const std::string& text, uint64_t lo, uint64_t hi) {
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos) return {};
  errno = 0;
  const unsigned long long n = std::strtoull(text.c_str(), nullptr, 10);
  if (errno == ERANGE || n < lo || n > hi) return {};
  return uint64_t(n);
}

// `text` as seconds of a time limit, 0 (no limit) to 1e9, or none: --timeout and GPUSC_TIMEOUT
// are read the same way. strtod's ERANGE refuses a positive value too small for a double, which
// would read as 0, no limit.
std::optional<double> timeoutSeconds(const std::string& text) {
  errno = 0;
  char* end = nullptr;
  const double t = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || errno == ERANGE || !(t >= 0) ||
      !(t <= 1e9))
    return {};
  return t;
}

// A markdown table cell: a '|' in the text escaped, so it does not end the cell.
std::string markdownCell(const std::string& text) {
  std::string c;
  for (char ch : text) c += ch == '|' ? std::string("\\|") : std::string(1, ch);
  return c;
}

// SIGINT and SIGTERM raise this flag; the run stops at its next check (a simulation slice
// boundary, or a few thousand warp instructions in functional mode) and writes its partial
// results. A second signal ends the process at once (the default action), unless it comes within
// kSameRequestNs of the first: coreutils' `timeout` (and a terminal's Ctrl-C to a process
// group) signals both gpusc and its group, so one request may arrive twice at once.
// The only process-wide state of gpusc, and it lives in the command-line tool: a signal handler
// can reach nothing else.
std::atomic<bool> interruptRequested{false};
std::atomic<int64_t> firstInterruptNs{0};  // CLOCK_MONOTONIC of the first signal
static_assert(std::atomic<bool>::is_always_lock_free, "the signal handler needs a lock-free flag");
static_assert(std::atomic<int64_t>::is_always_lock_free,
              "the signal handler needs a lock-free time");
constexpr int64_t kSameRequestNs = 100'000'000;

extern "C" void onInterrupt(int sig) {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);  // async-signal-safe
  const int64_t now = int64_t(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
  int64_t first = 0;
  if (firstInterruptNs.compare_exchange_strong(first, now)) {
    interruptRequested.store(true);
    return;
  }
  if (now - first < kSameRequestNs) return;  // the same request, delivered twice
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  sigaction(sig, &dfl, nullptr);
  raise(sig);
}

void installInterruptHandlers() {
  struct sigaction sa {};
  sa.sa_handler = onInterrupt;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

constexpr const char* kDefaultKernel = "sgemm";

struct RunOptions {
  std::string platform = kDefaultPlatform;
  std::string kernel;
  std::string launch;
  std::string size = "default";
  std::string mode = "timing";
  std::string out;
  std::vector<std::string> sets;
  std::vector<std::string> envSets;  // those of sets that GPUSC_SET gave (for messages)
  bool quiet = false;
  bool force = false;
  bool vcd = false;
  bool report = false;                        // report.html beside the results
  std::string vcdSms, vcdSignals, vcdCycles;  // the VCD's filter (each implies --vcd)
  std::string sample;                         // --sample: sampling.mode
  std::optional<uint64_t> maxCycles, maxInstructions;
  std::optional<double> timeout;
  std::optional<unsigned> threads;  // host threads for the SMs (default: the cores available)
  std::string threadPolicy = "adaptive";
  std::string stats = "auto";  // stats.json's launches: auto, full or summary
  // gpusc exec: the program and its arguments, or (a program that started its own simulator) the
  // socket to serve and the program's name.
  bool exec = false;
  std::vector<std::string> program;
  std::optional<int> attachFd;
  std::string programName;
};

ThreadPolicy parseThreadPolicy(const std::string& p) {
  if (p == "adaptive") return ThreadPolicy::Adaptive;
  if (p == "fixed") return ThreadPolicy::Fixed;
  throw InputError(fmt::format("--thread-policy {}: expected adaptive or fixed{}", p,
                               didYouMean(p, {"adaptive", "fixed"})));
}

ExecMode parseMode(const std::string& m) {
  if (m == "functional") return ExecMode::Functional;
  if (m == "timing") return ExecMode::Timing;
  throw InputError(fmt::format("--mode {}: expected functional or timing{}", m,
                               didYouMean(m, {"functional", "timing"})));
}

std::string humanCount(double v) {
  if (v >= 1e9) return fmt::format("{:.2f} G", v / 1e9);
  if (v >= 1e6) return fmt::format("{:.2f} M", v / 1e6);
  if (v >= 1e3) return fmt::format("{:.2f} k", v / 1e3);
  return fmt::format("{:.0f} ", v);
}

// The memory system over all launches: cache hit rates, DRAM traffic and the interconnect.
void appendMemorySummary(std::string& out, const std::vector<LaunchRecord>& launches) {
  uint64_t l1a = 0, l1h = 0, l2a = 0, l2h = 0, reads = 0, writes = 0, rowHits = 0, rowAll = 0,
           packets = 0, stalls = 0;
  double latencySum = 0, busy = 0, elapsed = 0;
  bool hierarchy = false;
  for (const auto& l : launches) {
    if (!l.timing || !l.timing->memory.contains("l1d")) continue;
    hierarchy = true;
    const auto& m = l.timing->memory;
    const auto& l1 = m["l1d"]["totals"];
    const auto& l2 = m["l2"]["totals"];
    const auto& d = m["dram"]["totals"];
    l1a += l1.value("accesses", uint64_t(0));
    l1h += l1.value("hits", uint64_t(0));
    l2a += l2.value("accesses", uint64_t(0));
    l2h += l2.value("hits", uint64_t(0));
    reads += d.value("reads", uint64_t(0));
    writes += d.value("writes", uint64_t(0));
    rowHits += d.value("row_hits", uint64_t(0));
    rowAll += d.value("row_hits", uint64_t(0)) + d.value("row_misses", uint64_t(0)) +
              d.value("row_conflicts", uint64_t(0));
    // Mean utilisation of the channels, weighted by each launch's length.
    const double e = d.value("elapsed_dram_cycles", 0.0);
    busy += e * d.value("bus_utilisation", 0.0);
    elapsed += e;
    const auto& n = m["interconnect"];
    const uint64_t p = n.value("packets", uint64_t(0));
    packets += p;
    latencySum += double(p) * n.value("average_latency", 0.0);
    stalls += n.value("injection_stall_cycles_total", uint64_t(0));
  }
  if (!hierarchy) return;
  auto rate = [](uint64_t a, uint64_t b) { return b ? 100.0 * double(a) / double(b) : 0.0; };
  fmt::format_to(std::back_inserter(out), "  L1D / L2 hits      {:.1f}% of {} / {:.1f}% of {}\n",
                 rate(l1h, l1a), l1a, rate(l2h, l2a), l2a);
  fmt::format_to(
      std::back_inserter(out),
      "  DRAM               {} reads, {} writes, row-buffer hits {:.1f}%, data bus busy {:.1f}%\n",
      reads, writes, rate(rowHits, rowAll), elapsed > 0 ? 100.0 * busy / elapsed : 0.0);
  fmt::format_to(
      std::back_inserter(out),
      "  interconnect       {} packets, {:.1f} cycles average latency, {} injection stall cycles\n",
      packets, packets ? latencySum / double(packets) : 0.0, stalls);
}

// Energy and average power over all launches, with the breakdown by block.
void appendPowerSummary(std::string& out, const std::vector<LaunchRecord>& launches,
                        const nlohmann::json& run) {
  const RunEnergy energy = runEnergy(launches);
  const power::EnergyBreakdown& total = energy.total;
  const double seconds = energy.seconds, volts = energy.supplyVoltage;
  if (!energy.any || seconds <= 0) return;
  const auto w = [&](double j) { return j / seconds; };
  fmt::format_to(
      std::back_inserter(out),
      "  energy             {:.4g} mJ at {:g} V: {:.1f} W average ({:.1f} W dynamic, {:.1f} W "
      "static)\n",
      total.totalJ() * 1e3, volts, w(total.totalJ()), w(total.dynamicJ()), w(total.staticJ()));
  std::vector<std::pair<double, int>> parts;
  for (int b = 0; b < power::kNumBlocks; ++b) parts.push_back({total.blocks[b].total(), b});
  std::sort(parts.rbegin(), parts.rend());
  std::string text;
  int shown = 0;
  for (const auto& [j, b] : parts) {
    if (j <= 0 || shown == 8) break;
    text += fmt::format("{}{} {:.1f} W", shown ? ", " : "",
                        power::blockName(static_cast<power::Block>(b)), w(j));
    ++shown;
  }
  fmt::format_to(std::back_inserter(out), "  power by block     {}\n", text);
  // Power gating (when any switch gated): the share of SM, SIMD-unit and lane cycles gated and
  // seed 002's net saving of the lanes, from the run's totals.
  const nlohmann::json& pg = run["power_gating"];
  const double smShare = pg["sm_gated_share"], unitShare = pg["simd_unit_gated_share"],
               laneShare = pg["lane_gated_share"], laneNet = pg["lane_net_gated_share"];
  if (smShare + unitShare + laneShare > 0)
    fmt::format_to(
        std::back_inserter(out),
        "  power gating       SMs {:.1f}%, SIMD units {:.1f}%, lanes {:.1f}% of their cycles gated "
        "(lanes net {:.1f}%{}), {} wake-stall cycles\n",
        100 * smShare, 100 * unitShare, 100 * laneShare, 100 * laneNet,
        laneNet < 0 ? ": gating lost energy, its break-even cost above the cycles gated" : "",
        pg["wake_stall_cycles"].get<uint64_t>());
  fmt::format_to(std::back_inserter(out), "  SMs / memory side  {:.1f} W / {:.1f} W\n",
                 w(total.smJ()), w(total.totalJ() - total.smJ()));
}

// Cycles, IPC, occupancy and the warp schedulers' stall breakdown over all launches.
void appendTimingSummary(std::string& out, const std::vector<LaunchRecord>& launches,
                         const PlatformConfig& cfg, const nlohmann::json& run) {
  uint64_t cycles = 0, issued = 0, warpCycles = 0, rfConflicts = 0, smemConflicts = 0, icMiss = 0,
           icAcc = 0;
  std::array<uint64_t, sm::kNumStalls> outcomes{};
  uint64_t detailedCycles = 0;  // occupancy: over the launches the timing model ran
  for (const auto& l : launches) {
    if (!l.timing) continue;
    cycles += l.timing->cycles;
    if (l.sampled && !l.sampled->detail) {  // extrapolated: its instructions, estimated cycles
      issued += l.stats.warpInsts;
      continue;
    }
    const sm::SmCounters c = counterTotals(*l.timing);
    if (l.sampled && l.sampled->waves) {  // waves sampled: all its CTAs' instructions
      issued += l.stats.warpInsts;
      detailedCycles += l.sampled->waves->detailedCycles;
    } else {
      issued += c.issued;
      detailedCycles += l.timing->cycles;
    }
    warpCycles += c.warpCycles;
    rfConflicts += c.rfBankConflicts;
    smemConflicts += c.sharedBankConflicts;
    icMiss += c.icacheMisses;
    icAcc += c.icacheAccesses;
    auto o = stallTotals(*l.timing);
    for (int i = 0; i < sm::kNumStalls; ++i) outcomes[i] += o[i];
  }
  const double mhz = cfg.gpu.clocks.core_mhz;
  fmt::format_to(std::back_inserter(out), "  cycles             {} ({:.1f} us at {:g} MHz)\n",
                 cycles, cycles / mhz, mhz);
  fmt::format_to(std::back_inserter(out),
                 "  IPC                {:.2f} warp instructions per cycle ({} SMs)\n",
                 cycles ? double(issued) / cycles : 0.0, cfg.gpu.num_sms);
  fmt::format_to(std::back_inserter(out),
                 "  occupancy          {:.1f} of {} warps per SM on average\n",
                 detailedCycles ? double(warpCycles) / detailedCycles / cfg.gpu.num_sms : 0.0,
                 cfg.sm.max_warps);
  if (run.contains("sampling")) {
    const nlohmann::json& s = run["sampling"];
    const uint64_t ext = s.value("launches_extrapolated", uint64_t(0));
    const uint64_t detailed = s.value("launches_detailed", uint64_t(0));
    std::string bound = "no error bound (a group with one detailed launch and no other to pool)";
    if (s.contains("cycles_bound_pct") && s["cycles_bound_pct"].is_number())
      bound = fmt::format("+- {:.0f} cycles ({:.2f}%)", s["cycles_bound"].get<double>(),
                          s["cycles_bound_pct"].get<double>());
    std::string how;
    if (s.contains("groups"))
      how = fmt::format("{} of {} launches in detail ({} groups); {} extrapolated{}", detailed,
                        detailed + ext, s["groups"].get<uint64_t>(), ext,
                        s.contains("launches_borrowed")
                            ? fmt::format(" ({} with a neighbour group's CPI)",
                                          s["launches_borrowed"].get<uint64_t>())
                            : std::string());
    if (s.contains("launches_waves_sampled")) {
      const uint64_t ctas = s["ctas_detailed_in_them"].get<uint64_t>();
      const uint64_t cut = s["launches_waves_sampled"].get<uint64_t>();
      how += fmt::format("{}{} launch{} with waves sampled ({} of {} CTAs in detail)",
                         how.empty() ? "" : "; ", cut, cut == 1 ? "" : "es", ctas,
                         ctas + s["ctas_run_functionally"].get<uint64_t>());
    }
    // Launches sampling leaves alone (device runtime, cooperative) ran in full.
    const uint64_t unsampled = s.value("launches_not_sampled", uint64_t(0));
    if (unsampled != 0)
      how += fmt::format("; {} launch{} not sampled (device runtime or cooperative: in full)",
                         unsampled, unsampled == 1 ? "" : "es");
    fmt::format_to(std::back_inserter(out),
                   "  sampled            {}; extrapolated cycles {} {}; per-cycle figures below "
                   "cover the detailed part\n",
                   how, s.value("cycles_extrapolated", uint64_t(0)), bound);
  }
  uint64_t all = 0;
  for (uint64_t v : outcomes) all += v;
  std::string text;
  for (int i = 0; i < sm::kNumStalls; ++i) {
    if (!outcomes[i]) continue;
    text += fmt::format("{}{} {:.1f}%", text.empty() ? "" : ", ",
                        sm::stallName(static_cast<sm::Stall>(i)),
                        100.0 * outcomes[i] / std::max<uint64_t>(1, all));
  }
  fmt::format_to(std::back_inserter(out), "  scheduler cycles   {}\n", text);
  fmt::format_to(
      std::back_inserter(out),
      "  conflicts          {} register-bank, {} shared-memory cycles; I-cache {} misses of {}\n",
      rfConflicts, smemConflicts, icMiss, icAcc);
  appendMemorySummary(out, launches);
  appendPowerSummary(out, launches, run);
  cli::appendVoltageSummary(out, launches);
}

// "0,3-5,7" -> "[0,3,4,5,7]" (a YAML list for pdn.monitor.vcd_sms).
std::string parseSmList(const std::string& text) {
  std::vector<std::string> ids;
  std::set<unsigned long> seen;
  const auto bad = [&] {
    return InputError(
        fmt::format("--vcd-sms {}: expected SM numbers and ranges, e.g. 0,3-5,7", text));
  };
  for (const std::string& part : split(text, ',')) {
    const size_t dash = part.find('-');
    try {
      size_t used = 0;
      const unsigned long a = std::stoul(part.substr(0, dash), &used);
      if (used != (dash == std::string::npos ? part.size() : dash)) throw bad();
      unsigned long b = a;
      if (dash != std::string::npos) {
        const std::string hi = part.substr(dash + 1);
        b = std::stoul(hi, &used);
        if (used != hi.size() || b < a || b - a > 4096) throw bad();
      }
      for (unsigned long i = a; i <= b; ++i) {
        if (!seen.insert(i).second)
          throw InputError(fmt::format("--vcd-sms {}: SM {} is named twice", text, i));
        ids.push_back(std::to_string(i));
      }
    } catch (const std::logic_error&) {
      throw bad();
    }
  }
  return "[" + join(ids, ",") + "]";
}

// "START:END" (END empty: to the end of the run) -> cycles.
std::pair<uint64_t, uint64_t> parseCycleWindow(const std::string& text) {
  const size_t colon = text.find(':');
  const auto bad = [&] {
    return InputError(fmt::format(
        "--vcd-cycles {}: expected START:END core cycles (END may be empty: to the end)", text));
  };
  if (colon == std::string::npos) throw bad();
  try {
    size_t used = 0;
    const std::string a = text.substr(0, colon), b = text.substr(colon + 1);
    const uint64_t from = a.empty() ? 0 : std::stoull(a, &used);
    if (!a.empty() && used != a.size()) throw bad();
    const uint64_t to = b.empty() ? 0 : std::stoull(b, &used);
    if (!b.empty() && (used != b.size() || to <= from)) throw bad();
    return {from, to};
  } catch (const std::logic_error&) {
    throw bad();
  }
}

// loadPlatform with --sample given as the first of `sets` (sampling.mode=...): an error in it
// names the option the user typed.
PlatformConfig loadSampledPlatform(const std::string& platform,
                                   const std::vector<std::string>& sets,
                                   const std::string& sample) {
  try {
    return loadPlatform(platform, sets);
  } catch (const InputError& e) {
    const std::string set = "--set sampling.mode=" + sample + ":";
    const std::string what = e.what();
    if (sample.empty() || what.rfind(set, 0) != 0) throw;
    throw InputError("--sample " + sample + ":" + what.substr(set.size()));
  }
}

int cmdRun(const RunOptions& o) {
  installInterruptHandlers();
  if (!o.kernel.empty() && !o.launch.empty())
    throw InputError("--kernel and --launch: give one, not both");
  const ExecMode mode = parseMode(o.mode);
  const ThreadPolicy threadPolicy = parseThreadPolicy(o.threadPolicy);
  const StatsForm statsForm = parseStatsForm(o.stats);
  try {
    cli::refuseRepeatedSets(o.sets);
  } catch (const InputError& e) {
    // GPUSC_SET gives the overrides only when no --set does (applyEnvironment).
    if (o.envSets.empty()) throw;
    throw InputError(fmt::format("environment variable GPUSC_SET: {}", e.what()));
  }
  const auto refuseBoth = [&](bool given, const char* option, const std::string& key) {
    cli::refuseOptionAndSet(given, option, key, o.sets);
  };
  refuseBoth(o.maxCycles.has_value(), "--max-cycles", "limits.max_cycles");
  refuseBoth(o.maxInstructions.has_value(), "--max-instructions", "limits.max_warp_instructions");
  refuseBoth(o.timeout.has_value(), "--timeout", "limits.timeout_seconds");
  refuseBoth(!o.sample.empty(), "--sample", "sampling.mode");
  refuseBoth(!o.vcdSms.empty(), "--vcd-sms", "pdn.monitor.vcd_sms");
  refuseBoth(!o.vcdSignals.empty(), "--vcd-signals", "pdn.monitor.vcd_signals");
  refuseBoth(!o.vcdCycles.empty(), "--vcd-cycles", "pdn.monitor.vcd_start_cycle");
  refuseBoth(!o.vcdCycles.empty(), "--vcd-cycles", "pdn.monitor.vcd_end_cycle");
  // The limit options are the `limits` keys: the resolved configuration records them.
  std::vector<std::string> sets = o.sets;
  if (o.maxCycles) sets.push_back(fmt::format("limits.max_cycles={}", *o.maxCycles));
  if (o.maxInstructions)
    sets.push_back(fmt::format("limits.max_warp_instructions={}", *o.maxInstructions));
  if (o.timeout) sets.push_back(fmt::format("limits.timeout_seconds={}", *o.timeout));
  // --sample is the sampling.mode key (checked there, with the values it takes).
  if (!o.sample.empty()) sets.insert(sets.begin(), "sampling.mode=" + o.sample);
  // The VCD filter options are pdn.monitor.vcd_* keys.
  if (!o.vcdSms.empty()) sets.push_back("pdn.monitor.vcd_sms=" + parseSmList(o.vcdSms));
  if (!o.vcdSignals.empty()) sets.push_back("pdn.monitor.vcd_signals=" + o.vcdSignals);
  if (!o.vcdCycles.empty()) {
    const auto [from, to] = parseCycleWindow(o.vcdCycles);
    sets.push_back(fmt::format("pdn.monitor.vcd_start_cycle={}", from));
    sets.push_back(fmt::format("pdn.monitor.vcd_end_cycle={}", to));
  }
  const bool vcd = o.vcd || !o.vcdSms.empty() || !o.vcdSignals.empty() || !o.vcdCycles.empty();
  PlatformConfig cfg;
  try {
    cfg = loadSampledPlatform(o.platform, sets, o.sample);
  } catch (const InputError& e) {
    // An override GPUSC_SET gave: named as the variable, not as an option never typed.
    const std::string what = e.what();
    for (const std::string& s : o.envSets)
      if (what.rfind("--set " + s + ":", 0) == 0)
        throw InputError(fmt::format("environment variable GPUSC_SET ({}):{}", s,
                                     what.substr(6 + s.size() + 1)));
    throw;
  }
  if (cfg.limits.max_cycles && mode == ExecMode::Functional)
    throw InputError(
        "limits.max_cycles (--max-cycles): functional mode has no cycles; use "
        "--max-instructions or --timeout, or --mode timing");
  if (cfg.sampling.enabled() && mode == ExecMode::Functional) {
    // Named as the user gave it: --sample, or where the key was set (the platform file's line,
    // or --set).
    const std::string why =
        "functional mode runs every launch in the functional engine already; sampling chooses "
        "what the timing model simulates: use --mode timing";
    throw InputError(!o.sample.empty() ? "sampling.mode (--sample): " + why
                                       : cfg.locate("sampling.mode: " + why));
  }
  const std::string kernel =
      o.exec || !o.launch.empty() ? "" : (o.kernel.empty() ? kDefaultKernel : o.kernel);
  const catalog::Size size = catalog::parseSize(o.size);
  const catalog::CatalogEntry* entry = kernel.empty() ? nullptr : &catalog::find(kernel);
  std::string workName = entry ? entry->name : fs::path(o.launch).stem().string();
  if (o.exec) {
    if (o.attachFd) {
      workName = o.programName.empty() ? "program" : o.programName;
    } else {
      if (o.program.empty())
        throw InputError("gpusc exec: no program given (gpusc exec [options] -- PROGRAM ARGS...)");
      workName = fs::path(o.program[0]).filename().string();
    }
  }
  std::string out = o.out;
  if (o.attachFd) {
    // Started by the runtime library of a process whose ancestor has a simulator: its results go
    // in a folder inside that one's, named after the program and its process (the library's
    // process started this one), not over them.
    if (const char* parent = std::getenv(cudart::wire::kParentOutEnv); parent && *parent) {
      const fs::path base = fs::path(parent) / fmt::format("{}-{}", workName, ::getppid());
      fs::path dir = base;
      std::error_code ec;
      for (int n = 2; fs::exists(dir, ec); ++n) dir = fmt::format("{}-{}", base.string(), n);
      out = dir.string();
    }
  }
  cli::RemoveIfEmpty createdFolders;
  const fs::path outDir =
      cli::resultsFolder(out, workName, cfg.name, o.force, &createdFolders.folders);
  std::error_code absoluteError;
  // As a program's runtime library passes it on (GPUSC_PARENT_OUT): valid in any working folder.
  const std::string outFolder = fs::absolute(outDir, absoluteError).string();
  if (vcd) {
    if (!cfg.pdn.enabled || mode != ExecMode::Timing)
      throw InputError("--vcd: the voltage trace needs timing mode and pdn.enabled");
    cfg.pdn.monitor.vcd_file = (outDir / "voltage.vcd").string();
  }
  if (!o.quiet) {
    // A first line at once, then each launch's progress every second (stderr: stdout keeps the
    // report).
    std::cerr << fmt::format("gpusc: running {} on {} ({} mode), results in {}/\n", workName,
                             cfg.name, o.mode, outDir.string());
  }
  // voltage.csv and droops.csv, power.csv and cta_timeline.csv are written as the launches run,
  // and their stats.json entries set aside (declared before the Device, which holds them, so
  // that they outlive it).
  // A program starts now, and runs its host code while the Device is built.
  std::unique_ptr<cli::StartedProgram> started;
  if (o.exec && !o.attachFd) {
    // This run's settings, for a simulator that a process the program starts may start (a CUDA
    // program that runs another): the same platform and options; its results go inside this
    // run's folder (GPUSC_PARENT_OUT, set by the program's runtime library).
    std::vector<std::string> inherited;
    for (const std::string& s : sets)
      if (s.rfind("pdn.monitor.vcd", 0) != 0) inherited.push_back(s);
    std::error_code ec;
    const std::string platform =
        fs::is_regular_file(o.platform, ec) ? fs::absolute(o.platform, ec).string() : o.platform;
    const std::vector<cli::EnvSetting> settings = {
        {"GPUSC_PLATFORM", platform},
        {"GPUSC_MODE", o.mode},
        {"GPUSC_SET", join(inherited, ";")},  // with the limits and --sample, as keys
        {"GPUSC_MAX_CYCLES", ""},
        {"GPUSC_MAX_INSTRUCTIONS", ""},
        {"GPUSC_TIMEOUT", ""},
        {"GPUSC_THREADS", o.threads ? std::to_string(*o.threads) : ""},
        {"GPUSC_THREAD_POLICY", o.threadPolicy},
        {"GPUSC_STATS", o.stats},
        {"GPUSC_QUIET", o.quiet ? "1" : "0"},
        {"GPUSC_REPORT", o.report ? "1" : "0"},
        {"GPUSC_FORCE", ""},
        {"GPUSC_OUT", ""},
        // A program that finds the simulator in use by another of the script's programs
        // starts its own, whose results go inside this run's folder too.
        {cudart::wire::kParentOutEnv, outFolder},
    };
    started = cli::startProgram(o.program, settings);
  }
  pdn::VoltageFiles voltageFiles(outDir, cfg.gpu.num_sms);
  LaunchFiles launchFiles(outDir, statsForm);
  Device dev(cfg, mode);
  dev.setVoltageSink(&voltageFiles);
  dev.setLaunchSink(&launchFiles);
  dev.setHostThreads(o.threads.value_or(0), threadPolicy);
  dev.setInterruptFlag(&interruptRequested);
  if (!o.quiet)
    dev.setProgress([](const gpu::LaunchProgress& p) {
      std::string line = fmt::format("gpusc: {}: {:.0f}% of {} CTAs", p.label,
                                     100.0 * p.ctasDone / std::max(1u, p.ctasTotal), p.ctasTotal);
      if (p.cycles) line += fmt::format(", {} cycles", p.cycles);
      line += fmt::format(", {:.0f} s", p.seconds);
      if (p.etaSeconds >= 0) line += fmt::format(", about {:.0f} s left", p.etaSeconds);
      std::cerr << line << "\n";
    });
  nlohmann::json work;
  catalog::CheckResult check;
  bool hasCheck = entry != nullptr;  // a catalog kernel, or a launch spec with `expect`
  std::optional<RunStopped> stop;
  // A kernel fault ends the run as a limit does: the results so far are written, marked
  // incomplete, and the faulted launch's record says where it stopped.
  std::optional<std::string> fault;
  std::optional<cli::ProgramRun> program;  // gpusc exec
  auto t0 = std::chrono::steady_clock::now();
  // A fault's state dump (a deadlock's warps) goes beside the results; the message names it.
  const auto withDump = [&](const std::string& what, const std::string& detail) {
    if (detail.empty()) return what;
    writeFile(outDir / "state_dump.txt", detail);
    return fmt::format("{} (state dump: {})", what, (outDir / "state_dump.txt").string());
  };
  // The verilated blocks' waves join voltage.vcd when the run ends (docs/rtl-cosim.md).
  const auto closeWaves = [&] {
    if (vcd && dev.timingEngine()) dev.timingEngine()->gpu().closeWaves();
  };
  try {
    if (o.exec) {
      program = o.attachFd ? cli::serveProgram(dev, *o.attachFd, workName, outFolder)
                           : cli::serveProgram(dev, *started, outFolder);
      work = program->work;
      stop = program->stopped;
      // Ctrl-C between launches ends the program (its process group got the signal too): the
      // run was interrupted all the same.
      if (!stop && interruptRequested)
        stop = RunStopped(StopReason::Interrupted, "interrupted: the program ended on a signal");
    } else if (entry) {
      auto wl = entry->make(size);
      work["kernel"] = entry->name;
      work["size"] = catalog::sizeName(size);
      wl->setup(dev);  // before describe(): some workloads size themselves to the platform
      work["problem"] = wl->describe();
      try {
        wl->run(dev);
        check = wl->check(dev);
        work["check"] = {{"pass", check.pass}, {"message", check.message}};
      } catch (const RunStopped& e) {
        stop = e;
        work["check"] = {{"pass", nullptr}, {"message", "not checked: the run stopped early"}};
      }
    } else {
      LaunchSpec spec = loadLaunchSpec(o.launch);
      work["launch_spec"] = o.launch;
      work["ptx"] = spec.ptxPath;
      try {
        auto res = runLaunchSpec(dev, spec, outDir.string());
        work["dumped"] = res.dumped;
        if (!res.checks.empty()) {
          // The spec's `expect` section: the same PASS / FAIL as a catalog kernel's check.
          hasCheck = true;
          check.pass = res.pass();
          std::vector<std::string> msgs;
          for (const auto& c : res.checks)
            if (check.pass || !c.pass) msgs.push_back(c.message);  // failures first-hand
          check.message = join(msgs, "; ");
          work["check"] = {{"pass", check.pass}, {"message", check.message}};
        }
      } catch (const RunStopped& e) {
        stop = e;
        work["dumped"] = nlohmann::json::array();
      }
    }
  } catch (const LockstepDivergence&) {
    closeWaves();  // the waves up to the divergence, for a look at it
    throw;
  } catch (const KernelFault& e) {
    fault = withDump(e.what(), e.detail());
    if (!o.exec && !entry) work["dumped"] = nlohmann::json::array();
    if (entry) work["check"] = {{"pass", nullptr}, {"message", "not checked: a kernel faulted"}};
  } catch (const InternalError& e) {
    throw InternalError(withDump(e.what(), e.detail()));
  }
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  closeWaves();

  const func::ExecStats total = dev.totalStats();
  double simSeconds = 0;
  for (const auto& l : dev.launches()) simSeconds += l.seconds;

  nlohmann::json j;
  j["gpusc_version"] = GPUSC_VERSION;
  j["platform"] = cfg.name;
  j["mode"] = o.mode;
  j["workload"] = work;
  // A run that a limit or a signal stopped has partial figures: say so before anything else.
  j["complete"] = !stop && !fault;
  if (stop) {
    j["stopped_by"] = stopReasonName(stop->reason());
    j["stop_message"] = stop->what();
  } else if (fault) {
    j["stopped_by"] = "kernel-fault";
    j["stop_message"] = *fault;
  }
  j["run"] = runTotalsJson(dev.launches(), cfg, mode == ExecMode::Timing);
  j["totals"] = toJson(total);
  // The launches' entries: every one's detail, or their summaries (a run of many launches).
  j["stats_form"] = statsFormName(launchFiles.form());
  j["launches"] = nlohmann::json::array();  // filled by LaunchFiles::writeStats
  j["simulation"] = {
      {"host_seconds", simSeconds},
      {"wall_seconds", wall},
      {"warp_instructions_per_second", simSeconds > 0 ? total.warpInsts / simSeconds : 0.0},
      {"thread_instructions_per_second", simSeconds > 0 ? total.threadInsts / simSeconds : 0.0}};
  if (gpu::TimingEngine* t = dev.timingEngine()) {
    // How the SMs were evaluated (host facts, like the seconds: the results do not depend on it).
    j["simulation"]["host_threads"] = t->threads();
    if (t->threads() > 1) j["simulation"]["thread_policy"] = toString(t->threadPolicy());
    if (const HostThreadGovernor* g = t->threadGovernor(); g != nullptr && g->engagedShare())
      j["simulation"]["threads_engaged_share"] = *g->engagedShare();
    if (const std::string why = t->serialReason(); !why.empty() && t->threads() > 1)
      j["simulation"]["serial_because"] = why;
    // The share of the PDN's cycles the host threads stepped in the background.
    if (const pdn::Pdn* p = t->gpu().pdn(); p != nullptr && p->steppedByWorkers())
      j["simulation"]["pdn_worker_share"] =
          p->cyclesStepped() > 0 ? double(p->cyclesSteppedByWorkers()) / p->cyclesStepped() : 0.0;
  }
  // The functional engine's threads (functional mode, and sampled simulation's fast-forward):
  // the kernels whose CTAs it ran on one, and why.
  if (mode == ExecMode::Functional) j["simulation"]["host_threads"] = dev.hostThreads();
  if (mode == ExecMode::Timing && cfg.sampling.enabled()) {
    j["simulation"]["functional_seconds"] = dev.functionalSeconds();
    // Wave-sampled launches' last CTAs run on the other host threads during the detailed part.
    if (dev.hostThreads() > 1) j["simulation"]["functional_tail_ctas"] = dev.functionalTailCtas();
  }
  if (dev.hostThreads() > 1 && !dev.serialKernels().empty())
    j["simulation"]["functional_serial_because"] = dev.serialKernels();
  j["config"] = config::toJson(cfg);
  // Keys whose 0 in config.yaml means "derived", with the values this run used.
  nlohmann::json derived = nlohmann::json::object();
  if (cfg.memory.model == "hierarchy" && cfg.noc.topology == "mesh") {  // the mesh exists
    const noc::MeshLayout m = noc::meshLayout(cfg);
    derived["noc.mesh_columns"] = m.columns;
    derived["noc.mesh_rows"] = m.rows;
  }
  const auto [gridRows, gridCols] = cfg.pdn.grid.resolvedShape(cfg.gpu.num_sms);
  derived["pdn.grid.rows"] = gridRows;
  derived["pdn.grid.cols"] = gridCols;
  j["derived"] = derived;
  std::string extra;
  if (mode == ExecMode::Timing) {
    launchFiles.commit();  // cta_timeline.csv, and power.csv with power.enabled
    for (const std::string& f : cli::writeVoltageResults(dev.launches(), voltageFiles, outDir))
      extra += ", " + f;
    if (vcd && fs::exists(outDir / "voltage.vcd")) extra += ", voltage.vcd";
  }
  if (!dev.printfOutput().empty()) {  // device printf
    writeFile(outDir / "printf.log", dev.printfOutput());
    extra += ", printf.log";
  }
  launchFiles.writeStats(outDir / "stats.json", j);
  writeFile(outDir / "config.yaml", cli::configYaml(config::toYaml(cfg)));

  // The summary: printed, and kept as summary.txt for the HTML report and for later reading.
  std::string summary;
  {
    auto out = std::back_inserter(summary);
    fmt::format_to(out, "gpusc {} | platform {} | mode {}\n", GPUSC_VERSION, cfg.name, o.mode);
    if (program) {
      fmt::format_to(out, "program {} ({})\n",
                     join(work["program"].get<std::vector<std::string>>(), " "), program->status);
    } else if (entry) {
      fmt::format_to(out, "kernel {} ({}, {})\n", entry->name, work["problem"].get<std::string>(),
                     catalog::sizeName(size));
    } else {
      fmt::format_to(out, "launch spec {} ({})\n", o.launch, work["ptx"].get<std::string>());
    }
    const auto fromDevice = std::count_if(dev.launches().begin(), dev.launches().end(),
                                          [](const LaunchRecord& l) { return l.launchedBy; });
    fmt::format_to(
        out, "  launches           {}{}\n", dev.launches().size(),
        fromDevice ? fmt::format(" ({} of them made by device code)", fromDevice) : std::string());
    for (size_t i = 0; i < dev.launches().size(); ++i)
      if (const LaunchRecord& l = dev.launches()[i]; !l.fault.empty())
        fmt::format_to(out, "  faulted            launch {} ({}), its figures incomplete: {}\n",
                       i + 1, l.kernel, l.fault);
    fmt::format_to(out, "  warp instructions  {}\n", humanCount(double(total.warpInsts)));
    fmt::format_to(out, "  thread instructions {}\n", humanCount(double(total.threadInsts)));
    fmt::format_to(out, "  SIMD utilisation   {:.1f} of 32 lanes per warp instruction\n",
                   averageActiveLanes(total));
    fmt::format_to(out, "  divergent branches {} of {}\n", total.divergentBranches, total.branches);
    std::vector<std::pair<uint64_t, int>> mix;
    for (int i = 0; i < func::kNumInstClasses; ++i)
      if (total.byClass[i]) mix.push_back({total.byClass[i], i});
    std::sort(mix.rbegin(), mix.rend());
    std::string mixText;
    for (size_t i = 0; i < std::min<size_t>(6, mix.size()); ++i)
      mixText += fmt::format("{}{} {:.1f}%", i ? ", " : "",
                             func::instClassName(static_cast<func::InstClass>(mix[i].second)),
                             100.0 * mix[i].first / std::max<uint64_t>(1, total.warpInsts));
    fmt::format_to(out, "  instruction mix    {}\n", mixText);
    fmt::format_to(out, "  simulation         {:.3f} s, {}thread-inst/s, {}warp-inst/s\n",
                   simSeconds, humanCount(simSeconds > 0 ? total.threadInsts / simSeconds : 0),
                   humanCount(simSeconds > 0 ? total.warpInsts / simSeconds : 0));
    if (mode == ExecMode::Timing) appendTimingSummary(summary, dev.launches(), cfg, j["run"]);
    if (hasCheck && !stop && !fault)
      fmt::format_to(out, "check: {} ({})\n", check.pass ? "PASS" : "FAIL", check.message);
  }
  writeFile(outDir / "summary.txt", summary);
  std::string report;
  if (o.report) {
    writeFile(outDir / "report.html", cli::runReportHtml(outDir));
    report = ", report.html";
  }
  if (!o.quiet) {
    fmt::print("{}", summary);
    fmt::print("results: {}/ (stats.json, config.yaml, summary.txt{}{}{}{})\n", outDir.string(),
               mode == ExecMode::Timing ? ", cta_timeline.csv" : "",
               launchFiles.hasPower() ? ", power.csv" : "", extra, report);
  }
  if (stop) {
    std::fflush(stdout);
    std::cerr << "gpusc: " << stop->what() << " (" << (outDir / "stats.json").string() << ")\n";
    return exitCodeOf(stop->reason());
  }
  if (fault) {
    std::fflush(stdout);
    std::cerr << "gpusc: kernel fault: " << *fault << "; partial results are marked incomplete ("
              << (outDir / "stats.json").string() << ")\n";
    return kExitKernelFault;
  }
  if (program) return program->exitCode;  // the program's own verdict
  return hasCheck && !check.pass ? kExitCheckFailed : 0;
}

// `gpusc report PATH`: the HTML page of a results folder.
int cmdReport(const std::string& path, const std::string& out) {
  if (!fs::is_directory(path))
    throw InputError(fmt::format(
        "report {}: expected a results folder written by gpusc run, or a sweep spec", path));
  const fs::path page = out.empty() ? fs::path(path) / "report.html" : fs::path(out);
  writeFile(page, cli::runReportHtml(path));
  fmt::print("gpusc: wrote {}\n", page.string());
  return 0;
}

void printKeys(const std::vector<config::KeyInfo>& keys, bool markdown) {
  if (markdown) {
    fmt::print("| key | type | default | allowed | description |\n|---|---|---|---|---|\n");
    for (const auto& k : keys)
      fmt::print("| `{}` | {} | `{}` | {} | {} |\n", k.path, k.type, k.defaultValue,
                 markdownCell(k.constraint), markdownCell(k.doc));
  } else {
    // Columns as wide as their longest entry, two spaces apart, under a header.
    size_t wPath = 3, wType = 4, wDefault = 7;
    for (const auto& k : keys) {
      wPath = std::max(wPath, k.path.size());
      wType = std::max(wType, k.type.size());
      wDefault = std::max(wDefault, k.defaultValue.size());
    }
    const auto row = [&](const std::string& a, const std::string& b, const std::string& c,
                         const std::string& d) {
      fmt::print("{:<{}}  {:<{}}  {:<{}}  {}\n", a, wPath, b, wType, c, wDefault, d);
    };
    row("key", "type", "default", "description [allowed values]");
    for (const auto& k : keys)
      row(k.path, k.type, k.defaultValue.empty() ? "\"\"" : k.defaultValue,
          k.doc + (k.constraint.empty() ? "" : " [" + k.constraint + "]"));
  }
}

// Every key as a JSON array: path, type, the platform's value, its constraint as text and field by
// field (lo, hi, power_of_two, choices), and its description.
void printKeysJson(const std::vector<config::KeyInfo>& keys) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& k : keys) {
    nlohmann::json j{{"key", k.path},
                     {"type", k.type},
                     {"value", k.defaultValue},
                     {"constraint", k.constraint},
                     {"power_of_two", k.powerOfTwo},
                     {"description", k.doc}};
    if (!k.lo.empty()) j["lo"] = k.lo;
    if (!k.hi.empty()) j["hi"] = k.hi;
    if (!k.choices.empty()) j["choices"] = k.choices;
    out.push_back(std::move(j));
  }
  fmt::print("{}\n", out.dump(1));
}

struct ListOptions {
  bool markdown = false, json = false;
  std::string platform;  // keys: the values of this platform (default: the built-in defaults)
  std::vector<std::string> sets;
};

int cmdList(const std::string& what, const ListOptions& o) {
  cli::refuseRepeatedSets(o.sets);
  const bool markdown = o.markdown;
  if ((!o.platform.empty() || !o.sets.empty()) && what != "keys" && what != "shader-keys")
    throw InputError(
        fmt::format("list {}: --platform and --set apply to keys and shader-keys", what));
  if (o.json && what != "keys" && what != "shader-keys")
    throw InputError(fmt::format("list {}: --json applies to keys and shader-keys", what));
  if (o.json && o.markdown) throw InputError("list: --json and --markdown exclude each other");
  if (o.markdown && what == "shaders")
    throw InputError(
        "list shaders: --markdown applies to platforms, kernels, keys, shader-keys, experiments "
        "and ptx");
  if (what == "platforms") {
    if (markdown) fmt::print("| platform | description |\n|---|---|\n");
    const auto line = [&](const std::string& n, const std::string& d) {
      markdown ? fmt::print("| `{}` | {} |\n", n, markdownCell(d))
               : fmt::print("{:<16} {}\n", n, d);
    };
    for (const auto& n : builtinPlatformNames()) line(n, loadPlatform(n).description);
    for (const auto& n : builtinPlatformNames(PlatformKind::ShaderCluster))
      line(n, shader::loadShaderPlatform(n).description + " (gpusc shader)");
    if (!markdown)
      fmt::print(
          "\nSeed 000 to 004 are the papers gpusc reproduces; `gpusc list experiments` names "
          "each and its study.\n");
  } else if (what == "kernels") {
    if (markdown) fmt::print("| kernel | description | behaviour | sizes |\n|---|---|---|---|\n");
    for (const auto& e : catalog::all())
      markdown
          ? fmt::print("| `{}` | {} | {} | {} |\n", e.name, markdownCell(e.description),
                       markdownCell(e.behaviour), e.large ? "tiny to large" : "tiny to default")
          : fmt::print("{:<20} {} [{}]{}\n", e.name, e.description, e.behaviour,
                       e.large ? " (sizes up to large)" : "");
  } else if (what == "keys") {
    const auto keys = o.platform.empty() && o.sets.empty()
                          ? config::listKeys<PlatformConfig>()
                          : config::listKeys(loadPlatform(
                                o.platform.empty() ? kDefaultPlatform : o.platform, o.sets));
    o.json ? printKeysJson(keys) : printKeys(keys, markdown);
  } else if (what == "shader-keys") {
    const auto keys =
        o.platform.empty() && o.sets.empty()
            ? config::listKeys<shader::ShaderPlatformConfig>()
            : config::listKeys(shader::loadShaderPlatform(
                  o.platform.empty() ? std::string("shader-cluster") : o.platform, o.sets));
    o.json ? printKeysJson(keys) : printKeys(keys, markdown);
  } else if (what == "shaders") {
    cli::listShaders();
  } else if (what == "experiments") {
    if (markdown) fmt::print("| experiment | study |\n|---|---|\n");
    for (const auto& [name, d] : cli::experimentDescriptions())
      markdown ? fmt::print("| `{}` | {} |\n", name, markdownCell(d))
               : fmt::print("{:<16} {}\n", name, d);
  } else if (what == "ptx") {
    if (markdown) {
      fmt::print("{}", func::ptxSupportMarkdown());
    } else {
      for (const auto& e : func::ptxOpcodes())
        fmt::print("{:<12} {:<16} {} {}\n", e.opcode, e.group, e.modifiers, e.types);
    }
  } else {
    const std::vector<std::string> known{"platforms",   "kernels",     "keys", "shaders",
                                         "shader-keys", "experiments", "ptx"};
    throw InputError(
        fmt::format("list {}: expected {}{}", what, join(known, ", "), didYouMean(what, known)));
  }
  return 0;
}

struct BenchOptions {
  std::string mode = "functional";
  std::vector<std::string> kernels;
  std::string size = "default";
  std::string platform = kDefaultPlatform;
  unsigned repeat = 3;
  std::string json = "gpusc-bench.json";
  std::vector<std::string> sets;
  // Host-thread counts to measure, as given (comma-separated lists; default: the cores available).
  std::vector<std::string> threads;
  std::string threadPolicy = "adaptive";
  std::string sample;  // timing mode: also a sampled run per kernel, against the full one
};

struct BenchRun {
  double seconds = 0;  // simulated launches only, the fastest of the repeats
  func::ExecStats stats;
  uint64_t cycles = 0;
  bool pass = true;
  std::optional<double> engagedShare;  // the adaptive policy's (HostThreadGovernor)
  nlohmann::json sampling;             // sampled runs: the run totals' sampling block
};

BenchRun benchOnce(const catalog::CatalogEntry& entry, const PlatformConfig& cfg,
                   catalog::Size size, ExecMode mode, unsigned repeat, unsigned threads = 1,
                   ThreadPolicy policy = ThreadPolicy::Adaptive) {
  BenchRun best;
  for (unsigned r = 0; r < std::max(1u, repeat); ++r) {
    Device dev(cfg, mode);
    dev.setHostThreads(threads, policy);
    auto wl = entry.make(size);
    wl->setup(dev);
    wl->run(dev);
    best.pass = best.pass && wl->check(dev).pass;
    double secs = 0;
    uint64_t cycles = 0;
    for (const auto& l : dev.launches()) {
      secs += l.seconds;
      if (l.timing) cycles += l.timing->cycles;
    }
    if (r == 0 || secs < best.seconds) {
      best.seconds = secs;
      const gpu::TimingEngine* t = dev.timingEngine();
      const HostThreadGovernor* g = t != nullptr ? t->threadGovernor() : nullptr;
      best.engagedShare = g != nullptr ? g->engagedShare() : std::nullopt;
    }
    best.stats = dev.totalStats();
    best.cycles = cycles;
    if (cfg.sampling.enabled()) best.sampling = runTotalsJson(dev.launches(), cfg)["sampling"];
  }
  return best;
}

// What a benchmark's kernels give together, per host-thread count: the geometric mean of the
// timing over functional host time, the slowest kernel by that ratio and by warp instructions per
// second, and the sum of the host seconds. The ratios are the kernels' own (each kernel's seconds
// with that thread count over its functional seconds); a kernel that measured no time (0 s) is
// left out of the ratios and counted in "kernels_without_time".
nlohmann::json benchSummaryOf(const nlohmann::json& kernels, bool timing, unsigned threads,
                              bool firstCount) {
  double totalSeconds = 0;
  size_t unmeasured = 0;
  std::vector<double> slowdowns;
  std::optional<std::pair<double, std::string>> maxSlowdown, minRate;
  for (const auto& k : kernels) {
    double seconds = k.at("seconds").get<double>();
    if (!firstCount)
      for (const auto& t : k.at("threads"))
        if (t.at("threads").get<unsigned>() == threads) seconds = t.at("seconds").get<double>();
    const std::string name = k.at("kernel").get<std::string>();
    totalSeconds += seconds;
    const double fs = timing ? k.at("functional_seconds").get<double>() : 0.0;
    if (seconds <= 0 || (timing && fs <= 0)) {
      ++unmeasured;
      continue;
    }
    const double rate = k.at("warp_instructions").get<double>() / seconds;
    if (!minRate || rate < minRate->first) minRate = std::make_pair(rate, name);
    if (timing) {
      const double slowdown = seconds / fs;
      slowdowns.push_back(slowdown);
      if (!maxSlowdown || slowdown > maxSlowdown->first)
        maxSlowdown = std::make_pair(slowdown, name);
    }
  }
  nlohmann::json s = {{"kernels", kernels.size()},
                      {"kernels_without_time", unmeasured},
                      {"seconds_total", totalSeconds}};
  s["threads"] = threads;
  if (minRate) {
    s["warp_instructions_per_second_min"] = minRate->first;
    s["warp_instructions_per_second_min_kernel"] = minRate->second;
  }
  if (timing && !slowdowns.empty()) {
    s["slowdown_vs_functional_geomean"] = cli::geomean(slowdowns);
    s["slowdown_vs_functional_max"] = maxSlowdown->first;
    s["slowdown_vs_functional_max_kernel"] = maxSlowdown->second;
  }
  return s;
}

nlohmann::json benchSummary(const nlohmann::json& kernels, bool timing,
                            const std::vector<unsigned>& counts) {
  nlohmann::json out = nlohmann::json::array();
  // With several counts each was measured; otherwise only the first ran.
  const bool several = counts.size() > 1;
  for (size_t i = 0; i < (several ? counts.size() : 1); ++i)
    out.push_back(benchSummaryOf(kernels, timing, counts[i], i == 0));
  return out;
}

void printBenchSummary(const nlohmann::json& summary) {
  for (const auto& s : summary) {
    std::string line;
    if (s.contains("threads"))
      line = fmt::format("{} thread{}: ", s["threads"].get<unsigned>(),
                         s["threads"].get<unsigned>() == 1 ? "" : "s");
    line += fmt::format("{:.2f} s in all", s["seconds_total"].get<double>());
    if (s.contains("slowdown_vs_functional_geomean"))
      line += fmt::format(", timing / functional {:.1f}x geomean, {:.1f}x at most ({})",
                          s["slowdown_vs_functional_geomean"].get<double>(),
                          s["slowdown_vs_functional_max"].get<double>(),
                          s["slowdown_vs_functional_max_kernel"].get<std::string>());
    if (s.contains("warp_instructions_per_second_min"))
      line += fmt::format(", slowest {:.0f} warp-inst/s ({})",
                          s["warp_instructions_per_second_min"].get<double>(),
                          s["warp_instructions_per_second_min_kernel"].get<std::string>());
    fmt::print("{}\n", line);
  }
}

// Simulation speed of each catalog kernel: the simulated launches' host time (set-up and
// reference checks excluded), the best of `repeat` runs. Timing mode also measures the
// functional mode, for the ratio.
int cmdBench(const BenchOptions& o) {
  cli::refuseRepeatedSets(o.sets);
  cli::refuseRepeatedValues(o.kernels, "--kernel");
  const std::vector<unsigned> threads = cli::parseThreadCounts(o.threads, "--threads");
  const ExecMode mode = parseMode(o.mode);
  const ThreadPolicy policy = parseThreadPolicy(o.threadPolicy);
  // With --sample, --set sampling.* keys tune the sampled runs only.
  std::vector<std::string> fullSets;
  for (const std::string& s : o.sets)
    if (o.sample.empty() || s.rfind("sampling.", 0) != 0) fullSets.push_back(s);
  PlatformConfig cfg = loadPlatform(o.platform, fullSets);
  if (cfg.limits.max_cycles && mode == ExecMode::Functional)
    throw InputError(cfg.locate(
        "limits.max_cycles: functional mode has no cycles; use limits.max_warp_instructions or "
        "limits.timeout_seconds, or --mode timing"));
  const catalog::Size size = catalog::parseSize(o.size);
  // --sample: the platform sampled, for a second run of each kernel (a bad method fails here).
  std::optional<PlatformConfig> sampledCfg;
  if (cfg.sampling.enabled() && mode != ExecMode::Timing)
    throw InputError(cfg.locate(
        "sampling.mode: sampling chooses what the timing model simulates: use --mode timing"));
  if (!o.sample.empty()) {
    if (mode != ExecMode::Timing)
      throw InputError(
          "--sample: sampling chooses what the timing model simulates: use --mode timing");
    if (cfg.sampling.enabled())
      throw InputError("--sample with sampling.mode set: the full runs would be sampled too");
    for (const std::string& s : o.sets)
      if (s.rfind("sampling.mode=", 0) == 0)
        throw InputError("--sample " + o.sample + " and --set " + s +
                         " both choose the sampled runs' method: give one");
    std::vector<std::string> sets = {"sampling.mode=" + o.sample};
    sets.insert(sets.end(), o.sets.begin(), o.sets.end());
    sampledCfg = loadSampledPlatform(o.platform, sets, o.sample);
    if (!sampledCfg->sampling.enabled())
      throw InputError("--sample " + o.sample +
                       ": the sampled runs would not be sampled; leave --sample out to measure "
                       "full runs only");
  }
  cli::checkWritable(o.json, "--json");
  // Without -k: every kernel, or at --size large the kernels that have one.
  std::vector<std::string> names = !o.kernels.empty()             ? o.kernels
                                   : size == catalog::Size::Large ? catalog::largeNames()
                                                                  : catalog::names();
  nlohmann::json results = nlohmann::json::array();
  const bool timing = mode == ExecMode::Timing;
  fmt::print("{:<20} {:>11} {:>13} {:>9} {:>13} {:>14}{}\n", "kernel", "warp-insts", "thread-insts",
             "seconds", "warp-inst/s", "thread-inst/s", timing ? "      cycles  slowdown" : "");
  // Host threads: the first count is the one measured (and the speedups' baseline).
  const std::vector<unsigned> counts =
      threads.empty() ? std::vector<unsigned>{HostWorkers::available()} : threads;
  bool allPass = true;
  // Without -k, a kernel the platform cannot launch (a block larger than its SMs allow, say) is
  // left out and listed, and the others are measured; one named with -k is an error.
  nlohmann::json refused = nlohmann::json::array();
  for (const auto& name : names) {
    const auto& entry = catalog::find(name);
    BenchRun run;
    try {
      run = benchOnce(entry, cfg, size, mode, o.repeat, counts.front(), policy);
    } catch (const LaunchRefused& e) {
      if (!o.kernels.empty()) throw;
      fmt::print("{:<20} refused by the platform: {}\n", name, e.what());
      refused.push_back({{"kernel", name}, {"reason", e.what()}});
      continue;
    }
    const double wps = run.seconds > 0 ? run.stats.warpInsts / run.seconds : 0;
    const double tps = run.seconds > 0 ? run.stats.threadInsts / run.seconds : 0;
    nlohmann::json j = {{"kernel", name},
                        {"size", catalog::sizeName(size)},
                        {"warp_instructions", run.stats.warpInsts},
                        {"thread_instructions", run.stats.threadInsts},
                        {"seconds", run.seconds},
                        {"warp_instructions_per_second", wps},
                        {"thread_instructions_per_second", tps},
                        {"check_passed", run.pass}};
    std::string extra;
    if (timing) {
      BenchRun f = benchOnce(entry, cfg, size, ExecMode::Functional, o.repeat);
      // How many times longer the cycle-level simulation takes than the functional one.
      const double slowdown = f.seconds > 0 ? run.seconds / f.seconds : 0;
      j["cycles"] = run.cycles;
      j["functional_seconds"] = f.seconds;
      j["timing_slowdown_vs_functional"] = slowdown;
      j["simulated_cycles_per_second"] = run.seconds > 0 ? run.cycles / run.seconds : 0;
      extra = fmt::format(" {:>11} {:>8.1f}x", run.cycles, slowdown);
      run.pass = run.pass && f.pass;
      j["host_threads"] = counts.front();
      j["thread_policy"] = toString(policy);
      if (sampledCfg) {
        // The same kernel sampled: its cycle error against the full run, whether its error bound
        // covers that, and how much less host time it takes.
        const BenchRun sr =
            benchOnce(entry, *sampledCfg, size, mode, o.repeat, counts.front(), policy);
        const double err =
            run.cycles ? (double(sr.cycles) - double(run.cycles)) / double(run.cycles) : 0.0;
        nlohmann::json js = sr.sampling;
        js["cycles"] = sr.cycles;
        js["seconds"] = sr.seconds;
        js["cycle_error_pct"] = 100.0 * err;
        js["speedup"] = sr.seconds > 0 ? run.seconds / sr.seconds : 0.0;
        js["check_passed"] = sr.pass;
        const bool bounded = js.contains("cycles_bound") && js["cycles_bound"].is_number();
        js["bound_covers"] =
            bounded ? nlohmann::json(std::abs(double(sr.cycles) - double(run.cycles)) <=
                                     js["cycles_bound"].get<double>() + 0.5)
                    : nlohmann::json(nullptr);
        extra +=
            fmt::format("  sampled {:+.2f}% {:.1f}x", 100.0 * err, js["speedup"].get<double>());
        run.pass = run.pass && sr.pass;
        j["sampled"] = std::move(js);
      }
    }
    if (!timing) j["host_threads"] = counts.front();
    if (counts.size() > 1) {
      // The same simulation on other thread counts: its time, and that it gave the same run.
      nlohmann::json t = nlohmann::json::array();
      for (unsigned c : counts) {
        const BenchRun r =
            c == counts.front() ? run : benchOnce(entry, cfg, size, mode, o.repeat, c, policy);
        const bool same = r.cycles == run.cycles && r.stats.warpInsts == run.stats.warpInsts &&
                          r.stats.threadInsts == run.stats.threadInsts;
        const double speedup = r.seconds > 0 ? run.seconds / r.seconds : 0;
        t.push_back({{"threads", c},
                     {"seconds", r.seconds},
                     {"cycles", r.cycles},
                     {"warp_instructions", r.stats.warpInsts},
                     {"speedup", speedup},
                     {"same_results", same}});
        if (r.engagedShare) t.back()["threads_engaged_share"] = *r.engagedShare;
        if (c != counts.front()) extra += fmt::format("  x{}: {:.2f}x", c, speedup);
        run.pass = run.pass && r.pass && same;
      }
      j["threads"] = t;
    }
    allPass = allPass && run.pass;
    fmt::print("{:<20} {:>11} {:>13} {:>9.4f} {:>13.0f} {:>14.0f}{}{}\n", name, run.stats.warpInsts,
               run.stats.threadInsts, run.seconds, wps, tps, extra,
               run.pass ? "" : "  (CHECK FAILED)");
    results.push_back(j);
  }
  nlohmann::json j;
  j["benchmark"] = o.mode;
  j["gpusc_version"] = GPUSC_VERSION;
  j["platform"] = cfg.name;
  j["repeat"] = o.repeat;
  j["sets"] = o.sets;
  std::string command =
      fmt::format("gpusc bench --mode {} --size {} --repeat {}", o.mode, o.size, o.repeat);
  if (o.platform != kDefaultPlatform) command += " --platform " + o.platform;
  for (const auto& k : o.kernels) command += " -k " + k;
  for (const auto& s : o.sets) command += " --set " + s;
  if (!threads.empty()) command += fmt::format(" --threads {}", fmt::join(threads, ","));
  if (policy != ThreadPolicy::Adaptive)
    command += fmt::format(" --thread-policy {}", toString(policy));
  if (!o.sample.empty()) command += " --sample " + o.sample;
  j["command"] = command;
  j["kernels"] = results;
  if (!refused.empty()) j["refused"] = refused;
  j["summary"] = benchSummary(results, timing, counts);
  printBenchSummary(j["summary"]);
  if (!o.sample.empty()) {
    // Sampling against the full runs: the cycle errors (geomean over the kernels with a
    // nonzero error, and the largest), how often the bound covers the error, the speed-ups.
    std::vector<double> errs, speedups;
    double worst = 0;
    std::string worstKernel;
    size_t bounded = 0, covered = 0, sampledKernels = 0;
    for (const auto& k : results) {
      if (!k.contains("sampled")) continue;
      const auto& sm = k["sampled"];
      const double e = std::abs(sm["cycle_error_pct"].get<double>());
      ++sampledKernels;
      if (e > 0) errs.push_back(e);
      if (e >= worst) {
        worst = e;
        worstKernel = k["kernel"].get<std::string>();
      }
      if (sm["speedup"].get<double>() > 0) speedups.push_back(sm["speedup"].get<double>());
      if (sm["launches_extrapolated"].get<uint64_t>() > 0 ||
          sm.value("launches_waves_sampled", uint64_t(0)) > 0) {
        ++bounded;
        covered += sm["bound_covers"].is_boolean() && sm["bound_covers"].get<bool>();
      }
    }
    nlohmann::json ss;
    ss["method"] = o.sample;
    ss["kernels"] = sampledKernels;
    ss["kernels_with_error"] = errs.size();
    ss["cycle_error_pct_geomean_nonzero"] = errs.empty() ? 0.0 : cli::geomean(errs);
    ss["cycle_error_pct_max"] = worst;
    ss["cycle_error_pct_max_kernel"] = worstKernel;
    ss["kernels_extrapolated"] = bounded;  // with launches or waves extrapolated
    ss["bound_covers"] = covered;
    ss["speedup_geomean"] = speedups.empty() ? 0.0 : cli::geomean(speedups);
    j["sampling_summary"] = ss;
    fmt::print(
        "sampled ({}): cycle error {:.2f}% geomean over the {} kernels with one, {:.2f}% at most "
        "({}); the bound covers {} of {} kernels with extrapolated launches or waves; {:.2f}x "
        "faster "
        "(geomean)\n",
        o.sample, ss["cycle_error_pct_geomean_nonzero"].get<double>(), errs.size(), worst,
        worstKernel, covered, bounded, ss["speedup_geomean"].get<double>());
  }
  writeFile(o.json, j.dump(2) + "\n");
  fmt::print("wrote {}\n", o.json);
  return allPass ? 0 : kExitCheckFailed;
}

void addThreadPolicyOption(CLI::App* cmd, std::string& policy) {
  cmd->add_option("--thread-policy", policy,
                  "How the host threads are used: adaptive (while they pay, as measured) or fixed "
                  "(in every cycle with several SMs to evaluate); the results are the same")
      ->capture_default_str();
}

}  // namespace

// libsystemc defines main() and calls sc_main(); gpusc has its own main() (it parses its own
// command line and only elaborates SystemC modules in timing mode), but the library still
// needs the symbol.
// An option whose value names something (a file, folder, kernel, method, list): an empty value
// is refused rather than taken as the option's absence.
CLI::Validator nonEmpty() {
  return CLI::Validator(
      [](std::string& v) -> std::string { return v.empty() ? "an empty value" : ""; }, "TEXT");
}

// The options `gpusc run` and `gpusc exec` share: platform, mode, results, limits, threads, VCD.
void addRunOptions(CLI::App* cmd, RunOptions& r) {
  cmd->add_option("--platform,-p", r.platform, "Built-in platform name or platform YAML file")
      ->capture_default_str()
      ->check(nonEmpty());
  cmd->add_option("--mode", r.mode, "functional or timing")->capture_default_str();
  cmd->add_option("--set", r.sets, "Override a platform key: --set sm.l1d.sets=64 (repeatable)");
  cmd->add_option("--out,-o", r.out, "Results folder (default gpusc-results/<kernel>-<platform>)")
      ->check(nonEmpty());
  cmd->add_flag("--quiet,-q", r.quiet, "Print nothing on success");
  cmd->add_flag("--force", r.force,
                "Write into a non-empty --out folder, replacing an earlier run's files");
  // A count of 1 to 2^64 - 1, written in decimal digits (CLI11 alone would take a larger number
  // as the largest, and a negative one wrapped).
  const CLI::Validator count64(
      [](std::string& v) -> std::string {
        return wholeNumber(v, 1, UINT64_MAX)
                   ? ""
                   : "expected a whole number from 1 to 18446744073709551615, got '" + v + "'";
      },
      "COUNT");
  cmd->add_option("--max-cycles", r.maxCycles,
                  "Stop the run after this many core cycles (limits.max_cycles; timing mode)")
      ->check(count64);
  cmd->add_option("--max-instructions", r.maxInstructions,
                  "Stop the run after this many warp instructions (limits.max_warp_instructions)")
      ->check(count64);
  cmd->add_option("--timeout", r.timeout,
                  "Stop the run after this many wall-clock seconds (limits.timeout_seconds)")
      ->check(CLI::Validator(
          [](std::string& v) -> std::string {
            return timeoutSeconds(v) ? ""
                                     : "expected seconds from 0 (no limit) to 1e9, got '" + v + "'";
          },
          "SECONDS"));
  cmd->add_option("--threads", r.threads,
                  "Host threads (default: the cores available): they evaluate the SMs in "
                  "timing mode, and run a launch's blocks at once in the functional engine "
                  "where their order cannot change the result; the results are the same for "
                  "any count")
      ->check(CLI::Range(1u, 1024u));
  addThreadPolicyOption(cmd, r.threadPolicy);
  cmd->add_option("--vcd-sms", r.vcdSms,
                  "Only these SMs in voltage.vcd, e.g. 0,3-5 (implies --vcd)")
      ->check(nonEmpty());
  cmd->add_option("--vcd-signals", r.vcdSignals,
                  "Only these signals in voltage.vcd: volts, amps or both (implies --vcd)")
      ->check(nonEmpty());
  cmd->add_option("--vcd-cycles", r.vcdCycles,
                  "Only these core cycles in voltage.vcd: START:END, END may be empty "
                  "(implies --vcd)")
      ->check(nonEmpty());
  cmd->add_option("--stats", r.stats,
                  "stats.json's launches: full (every launch's detail per SM, slice, "
                  "partition and link), summary (each launch's headline figures and totals) "
                  "or auto (full up to 16 launches, summary beyond)")
      ->capture_default_str();
  cmd->add_option("--sample", r.sample,
                  "Sampled simulation in timing mode (sampling.mode): kernel (launches like an "
                  "earlier detailed one run in the functional engine, their cycles and energy "
                  "extrapolated), wave (a launch's CTA waves in detail until its rate is stable, "
                  "the rest in the functional engine), kernel+wave (both; docs/sampling.md) or "
                  "none")
      ->check(nonEmpty());
  cmd->add_flag("--report", r.report,
                "Also write report.html: the run's summary and plots on one self-contained page");
  cmd->add_flag("--vcd", r.vcd,
                "Trace every SM's supply voltage and current into voltage.vcd (sc_trace)");
}

// gpusc exec's settings from the environment, for programs started by scripts (the CUDA runtime
// library starts `gpusc exec --attach-fd` with the program's environment): each variable stands
// for its option when the command line does not give it.
void applyEnvironment(CLI::App* cmd, RunOptions& r) {
  const auto given = [&](const char* name, const char* option) -> const char* {
    const char* v = std::getenv(name);
    return v != nullptr && *v != '\0' && cmd->count(option) == 0 ? v : nullptr;
  };
  const auto bad = [](const char* name, const char* v, const char* expected) {
    return InputError(fmt::format("environment variable {}={}: expected {}", name, v, expected));
  };
  const auto count = [&](const char* name, const char* v, uint64_t lo, uint64_t hi) {
    if (const auto n = wholeNumber(v, lo, hi)) return *n;
    throw bad(name, v, fmt::format("a whole number from {} to {}", lo, hi).c_str());
  };
  const auto flag = [&](const char* name, const char* v) {
    const std::string t = v;
    if (t == "1" || t == "true" || t == "yes") return true;
    if (t == "0" || t == "false" || t == "no") return false;
    throw bad(name, v, "1 or 0 (true or false)");
  };
  if (const char* v = given("GPUSC_PLATFORM", "--platform")) r.platform = v;
  if (const char* v = given("GPUSC_MODE", "--mode")) {
    if (std::string(v) != "timing" && std::string(v) != "functional")
      throw bad("GPUSC_MODE", v, "timing or functional");
    r.mode = v;
  }
  if (const char* v = given("GPUSC_SET", "--set"))
    for (const std::string& part : split(v, ';'))
      if (!trim(part).empty()) {
        r.sets.emplace_back(trim(part));
        r.envSets.emplace_back(trim(part));
      }
  if (const char* v = given("GPUSC_OUT", "--out")) r.out = v;
  if (const char* v = given("GPUSC_THREAD_POLICY", "--thread-policy")) {
    try {
      parseThreadPolicy(v);  // the policies --thread-policy takes
    } catch (const InputError&) {
      throw bad("GPUSC_THREAD_POLICY", v, "adaptive or fixed");
    }
    r.threadPolicy = v;
  }
  if (const char* v = given("GPUSC_STATS", "--stats")) {
    try {
      parseStatsForm(v);  // the forms --stats takes
    } catch (const InputError&) {
      throw bad("GPUSC_STATS", v, "auto, full or summary");
    }
    r.stats = v;
  }
  if (const char* v = given("GPUSC_MAX_CYCLES", "--max-cycles"))
    r.maxCycles = count("GPUSC_MAX_CYCLES", v, 1, UINT64_MAX);
  if (const char* v = given("GPUSC_MAX_INSTRUCTIONS", "--max-instructions"))
    r.maxInstructions = count("GPUSC_MAX_INSTRUCTIONS", v, 1, UINT64_MAX);
  if (const char* v = given("GPUSC_THREADS", "--threads"))
    r.threads = unsigned(count("GPUSC_THREADS", v, 1, 1024));
  if (const char* v = given("GPUSC_TIMEOUT", "--timeout")) {
    r.timeout = timeoutSeconds(v);
    if (!r.timeout) throw bad("GPUSC_TIMEOUT", v, "seconds from 0 (no limit) to 1e9");
  }
  if (const char* v = given("GPUSC_QUIET", "--quiet")) r.quiet = flag("GPUSC_QUIET", v);
  if (const char* v = given("GPUSC_FORCE", "--force")) r.force = flag("GPUSC_FORCE", v);
  if (const char* v = given("GPUSC_REPORT", "--report")) r.report = flag("GPUSC_REPORT", v);
}

int sc_main(int, char*[]) { return 0; }

int main(int argc, char** argv) {
  // The voltage monitor sets its VCD's time unit on purpose: SystemC's note that it did
  // ("Info: (I703) tracing timescale unit set") is not for gpusc's users, quiet or not.
  sc_core::sc_report_handler::set_actions("tracing timescale unit set", sc_core::SC_DO_NOTHING);
  CLI::App app{
      "gpusc: a SystemC/TLM-2.0 model of a GPGPU for power, performance and voltage-noise studies"};
  app.set_version_flag("--version", std::string("gpusc ") + GPUSC_VERSION);
  app.require_subcommand(1);

  RunOptions run;
  auto* runCmd =
      app.add_subcommand("run", "Run a catalog kernel or a launch spec and write results");
  runCmd
      ->add_option("--kernel,-k", run.kernel,
                   std::string("Catalog kernel (default ") + kDefaultKernel + ")")
      ->check(nonEmpty());
  auto* launchOpt = runCmd->add_option("--launch,-l", run.launch,
                                       "Launch spec (YAML) naming a PTX file and its launches");
  launchOpt->check(nonEmpty());
  // A launch spec gives its own inputs: a catalog size would be silently ignored.
  runCmd
      ->add_option("--size", run.size,
                   "Catalog problem size: tiny, small, default or large (some kernels)")
      ->capture_default_str()
      ->excludes(launchOpt);
  addRunOptions(runCmd, run);

  auto* execCmd = app.add_subcommand(
      "exec",
      "Run a CUDA program (built with nvcc -cudart shared) with every kernel launch simulated, "
      "and write results as run does");
  addRunOptions(execCmd, run);
  execCmd->add_option("program", run.program, "The program and its arguments, after --");
  execCmd
      ->add_option("--attach-fd", run.attachFd,
                   "Serve the program connected on this descriptor (started by the CUDA "
                   "runtime library itself)")
      ->group("");
  execCmd->add_option("--program", run.programName, "The attached program's name")->group("");

  std::string listWhat;
  ListOptions listOpts;
  auto* listCmd = app.add_subcommand(
      "list",
      "List built-in platforms, catalog kernels, shader benchmarks, platform keys, the seed "
      "experiments or the supported PTX instructions");
  listCmd
      ->add_option("what", listWhat,
                   "platforms | kernels | keys | shaders | shader-keys | experiments | ptx")
      ->required();
  listCmd->add_flag("--json", listOpts.json,
                    "Keys as JSON: each key's type, value, range, power-of-two and choices");
  listCmd->add_option("--platform,-p", listOpts.platform,
                      "Keys: give this platform's values instead of the built-in defaults");
  listCmd->add_option("--set", listOpts.sets, "Keys: override a key first, as gpusc run --set");
  listCmd->add_flag("--markdown", listOpts.markdown,
                    "A markdown table (all but shaders; docs/configuration.md and "
                    "docs/ptx-support.md hold the keys' and the PTX instructions')");

  auto* shaderCmd = app.add_subcommand(
      "shader", "The shader-cluster platform: compile shaders, run a draw on the cluster");
  shaderCmd->require_subcommand(1);
  auto platformOptions = [](CLI::App* c, cli::ShaderPlatformOptions& o) {
    c->add_option("--platform,-p", o.platform, "Built-in shader platform or platform YAML file")
        ->capture_default_str();
    c->add_option("--set", o.sets, "Override a platform key: --set gating.input=immediate");
    c->add_option("--input-motion", o.inputMotion,
                  "Code motion of input-buffer accesses: none, local, global, naive "
                  "(default: compiler.input_motion)");
    c->add_option("--output-motion", o.outputMotion,
                  "Code motion of output-buffer accesses (default: compiler.output_motion)");
  };
  cli::ShaderCompileOptions shaderCompile;
  auto* compileCmd = shaderCmd->add_subcommand(
      "compile", "Compile a shader and print every compiler pass's result");
  compileCmd
      ->add_option("shader", shaderCompile.shader,
                   "A benchmark (gpusc list shaders) or a .vert/.frag (GLSL ES 1.00), .spv or .s "
                   "file")
      ->required();
  compileCmd->add_option("--stage", shaderCompile.stage,
                         "vertex or fragment (default: both programs of a benchmark)");
  compileCmd->add_option("--emit", shaderCompile.emit, "asm (assembly) or cfg (Graphviz)")
      ->capture_default_str();
  compileCmd->add_flag("--final", shaderCompile.finalOnly, "Only the compiled program");
  platformOptions(compileCmd, shaderCompile.platform);
  cli::ShaderRunOptions shaderRun;
  auto* shaderRunCmd =
      shaderCmd->add_subcommand("run", "Run a shader benchmark's draw on the shader cluster");
  shaderRunCmd->add_option("--shader,-s", shaderRun.shader,
                           std::string("Shader benchmark (default ") + cli::kDefaultShader + ")");
  shaderRunCmd->add_option("--draw,-d", shaderRun.draw,
                           "Draw file (YAML) naming its vertex and fragment programs");
  shaderRunCmd
      ->add_option("--out,-o", shaderRun.out,
                   "Results folder (default gpusc-results/<shader>-<platform>)")
      ->check(nonEmpty());
  shaderRunCmd->add_flag("--quiet,-q", shaderRun.quiet, "Print nothing on success");
  shaderRunCmd->add_flag("--force", shaderRun.force,
                         "Write into a non-empty --out folder, replacing an earlier run's files");
  platformOptions(shaderRunCmd, shaderRun.platform);

  BenchOptions bench;
  auto* benchCmd = app.add_subcommand("bench", "Measure simulation speed per catalog kernel");
  benchCmd
      ->add_option("--mode", bench.mode,
                   "functional or timing (timing also measures functional, for the ratio)")
      ->capture_default_str();
  benchCmd->add_option("--kernel,-k", bench.kernels,
                       "Kernels to measure (default: all; repeatable)");
  benchCmd->add_option("--size", bench.size, "Problem size")->capture_default_str();
  benchCmd->add_option("--platform,-p", bench.platform, "Platform")->capture_default_str();
  benchCmd->add_option("--repeat", bench.repeat, "Runs per kernel; the fastest counts")
      ->check(CLI::Range(1u, 1000u))
      ->capture_default_str();
  benchCmd->add_option("--json", bench.json, "Output file")
      ->capture_default_str()
      ->check(nonEmpty());
  benchCmd->add_option("--set", bench.sets,
                       "Override a platform key: key.path=value (repeatable; with --sample, "
                       "sampling.* keys set the sampled runs only)");
  benchCmd
      ->add_option("--sample", bench.sample,
                   "Timing mode: also run each kernel sampled (sampling.mode, e.g. kernel) and "
                   "report its cycle error against the full run, whether its error bound "
                   "covers it, and its speed-up")
      ->check(nonEmpty());
  benchCmd->add_option(
      "--threads", bench.threads,
      "Host-thread counts to measure, e.g. 1,2 (default: the cores available); the "
      "first is the baseline of the speedups");
  addThreadPolicyOption(benchCmd, bench.threadPolicy);

  cli::ExperimentOptions experiment;
  auto* expCmd = app.add_subcommand("experiment",
                                    "Reproduce a seed paper's study on the kernel catalog "
                                    "(seed004: on the shader benchmarks)");
  expCmd
      ->add_option("name", experiment.name,
                   "seed000 | seed001 | seed001-train | seed002 | seed003 | seed004 (gpusc list "
                   "experiments says what each studies)")
      ->required();
  expCmd->add_option("--size", experiment.size, "Catalog problem size")->capture_default_str();
  expCmd->add_option("--kernel,-k", experiment.kernels,
                     "Kernels (seed004: shader benchmarks) (default: the experiment's set; 'all': "
                     "every one; repeatable)");
  expCmd->add_option("--jobs,-j", experiment.jobs, "Simulations run in parallel")
      ->check(CLI::Range(1u, 256u))
      ->capture_default_str();
  expCmd->add_option("--out,-o", experiment.out, "Folder for the CSV and markdown results")
      ->capture_default_str();
  expCmd->add_option("--work", experiment.work, "Folder for each run's results")
      ->capture_default_str();

  cli::RtlAreaOptions rtlArea;
  auto* rtlCmd = app.add_subcommand("rtl", "The RTL blocks of co-simulation (docs/rtl-cosim.md)");
  rtlCmd->require_subcommand(1);
  auto* rtlAreaCmd = rtlCmd->add_subcommand(
      "area", "Synthesize each RTL block with yosys and print its cell counts");
  rtlAreaCmd->add_option("blocks", rtlArea.blocks, "Blocks (default: all)");
  rtlAreaCmd->add_option("--yosys", rtlArea.yosys, "The yosys executable")->capture_default_str();
  rtlAreaCmd->add_option("--work", rtlArea.work,
                         "Keep the Verilog, the scripts and yosys's logs in this folder");

  cli::PdnOptions pdnOpts;
  pdnOpts.platform = kDefaultPlatform;
  auto* pdnCmd = app.add_subcommand(
      "pdn", "Power-delivery network: print and plot the impedance profile |Z(f)|");
  pdnCmd->add_option("what", pdnOpts.what, "impedance")->required();
  pdnCmd->add_option("--platform,-p", pdnOpts.platform, "Platform")->capture_default_str();
  pdnCmd->add_option("--set", pdnOpts.sets, "Override a platform key (repeatable)");
  pdnCmd->add_option("--out,-o", pdnOpts.out, "Results folder")
      ->capture_default_str()
      ->check(nonEmpty());
  pdnCmd->add_option("--min-hz", pdnOpts.minHz, "Lowest frequency")->capture_default_str();
  pdnCmd->add_option("--max-hz", pdnOpts.maxHz, "Highest frequency")->capture_default_str();
  pdnCmd->add_option("--points-per-decade", pdnOpts.pointsPerDecade, "Frequency points")
      ->check(CLI::Range(1u, 10000u))
      ->capture_default_str();

  std::string reportPath, reportOut;
  std::string reportSweepOut;
  auto* reportCmd = app.add_subcommand(
      "report",
      "Write the HTML report of a results folder (gpusc run) or of a sweep (gpusc sweep)");
  reportCmd->add_option("path", reportPath, "A results folder (holding stats.json) or a sweep spec")
      ->required();
  reportCmd->add_option("--output,-o", reportOut,
                        "Page to write (default report.html in the results or sweep folder)");
  reportCmd
      ->add_option("--out", reportSweepOut,
                   "A sweep's folder (as for gpusc sweep; default results/sweeps/<name>)")
      ->check(nonEmpty());

  cli::SweepOptions sweep;
  auto* sweepCmd = app.add_subcommand(
      "sweep",
      "Run a design-space sweep (docs/sweeps.md): every point of SPEC.yaml not yet done, results "
      "in an SQLite database; `sweep status SPEC.yaml` counts the points by status");
  sweepCmd->add_option("spec", sweep.args, "SPEC.yaml, or: status SPEC.yaml")
      ->required()
      ->expected(1, 2);
  sweepCmd
      ->add_option("--out,-o", sweep.out,
                   "The sweep's folder: results.sqlite and points/ (default "
                   "results/sweeps/<name>)")
      ->check(nonEmpty());
  sweepCmd->add_option("--jobs,-j", sweep.jobs, "Points run in parallel (default: one per core)")
      ->check(CLI::Range(1u, 1024u));
  sweepCmd->add_flag("--quiet,-q", sweep.quiet, "No progress line");
  sweepCmd->add_flag("--retry-failed", sweep.retryFailed,
                     "Run again the points whose earlier run failed");
  sweepCmd->add_flag("--dry-run", sweep.dryRun,
                     "Print each point's hash, status and gpusc run command; run nothing");
  sweepCmd
      ->add_option("--backend", sweep.backend,
                   "local (a process pool) or slurm (one sbatch job array)")
      ->capture_default_str();
  sweepCmd->add_option("--partition", sweep.partition, "Slurm partition (sbatch --partition)");
  sweepCmd->add_option("--time", sweep.time, "Slurm time limit of each task (sbatch --time)");
  sweepCmd->add_option("--mem", sweep.mem, "Slurm memory of each task (sbatch --mem)");
  sweepCmd->add_option("--array-throttle", sweep.arrayThrottle,
                       "At most this many Slurm array tasks at once");
  sweepCmd
      ->add_option("--tasks", sweep.tasks,
                   "Slurm array tasks (default: one per point, at most 1000)")
      ->check(CLI::Range(1u, 1000000u));
  auto* workerGroup = sweepCmd->add_option_group("worker");  // the job script's options
  workerGroup->add_flag("--worker", sweep.worker, "Run one task of a Slurm array");
  workerGroup->add_option("--task", sweep.task, "The task's index (SLURM_ARRAY_TASK_ID)");
  workerGroup->add_option("--todo", sweep.todo, "The submitted points' hashes");

  cli::ResultsOptions results;
  auto* resultsCmd = app.add_subcommand("results", "Export a sweep's results table as CSV or JSON");
  resultsCmd->add_option("spec", results.spec, "The sweep spec (SPEC.yaml)")->required();
  resultsCmd->add_flag("--csv", results.csv, "CSV: one row per point, one column per axis");
  resultsCmd->add_flag("--json", results.json, "JSON: a list of rows");
  resultsCmd->add_option("--output,-o", results.output, "Write to FILE (default: standard output)");
  resultsCmd
      ->add_option("--out", results.out,
                   "The sweep's folder (as for gpusc sweep; default results/sweeps/<name>)")
      ->check(nonEmpty());

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : kExitBadInput;
  }

  try {
    if (runCmd->parsed()) return cmdRun(run);
    if (execCmd->parsed()) {
      applyEnvironment(execCmd, run);
      run.exec = true;
      return cmdRun(run);
    }
    if (listCmd->parsed()) return cmdList(listWhat, listOpts);
    if (compileCmd->parsed()) return cli::cmdShaderCompile(shaderCompile);
    if (shaderRunCmd->parsed()) return cli::cmdShaderRun(shaderRun);
    if (benchCmd->parsed()) return cmdBench(bench);
    if (expCmd->parsed()) {
      if (cli::experimentIsSweep(experiment.name)) {
        installInterruptHandlers();
        experiment.interrupt = &interruptRequested;
      }
      return cli::runExperiment(experiment);
    }
    if (pdnCmd->parsed()) return cli::cmdPdn(pdnOpts);
    if (reportCmd->parsed()) {
      if (fs::is_regular_file(reportPath))
        return cli::cmdSweepReport({reportPath, reportSweepOut, reportOut});
      if (!reportSweepOut.empty())
        throw InputError("report: --out names a sweep's folder; give a sweep spec with it");
      return cmdReport(reportPath, reportOut);
    }

    if (sweepCmd->parsed()) {
      installInterruptHandlers();
      return cli::cmdSweep(sweep, &interruptRequested);
    }
    if (resultsCmd->parsed()) return cli::cmdResults(results);
    if (rtlAreaCmd->parsed()) return cli::cmdRtlArea(rtlArea);
  } catch (const InputError& e) {
    std::cerr << "gpusc: error: " << e.what() << "\n";
    return kExitBadInput;
  } catch (const KernelFault& e) {
    std::cerr << "gpusc: kernel fault: " << e.what() << "\n";
    return kExitKernelFault;
  } catch (const RunStopped& e) {
    std::cerr << "gpusc: " << e.what() << "\n";
    return exitCodeOf(e.reason());
  } catch (const LockstepDivergence& e) {
    std::cerr << "gpusc: " << e.what() << "\n";
    return kExitLockstep;
  } catch (const std::exception& e) {
    std::cerr << "gpusc: internal error: " << e.what() << "\n";
    return kExitInternal;
  }
  return 0;
}
