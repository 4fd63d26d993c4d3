// Seed 000: drowsy and divided-word-line (DWL) L1 and L2 caches on the Fermi-like 16-SM mesh
// platform (fermi16-mesh). For each kernel:
//   base    no drowsy lines, full word lines
//   drowsy  every line drowsy right after each access (0.4 V retention, wake-up 1 cycle, the L1
//           wake hidden by the scheduler's look-ahead)
//   dwl     divided word lines (4-byte sub-word-lines enabled by the active threads)
//   both    drowsy and DWL
//   wake1 / wake2   drowsy lines whose 1- or 2-cycle wake-up nothing hides (runtime study)
// and reports the paper's Fig. 6 (static, dynamic and total L1 and L2 power relative to base),
// Fig. 7 (runtime with 1- and 2-cycle wake-ups), Table 1 (block utilisation of L1 and L2
// accesses) and the access statistics behind Figs. 3 and 4.
#include <iostream>
#include <map>

#include "catalog.hpp"
#include "common/strings.hpp"
#include "experiment_util.hpp"
#include "run_pool.hpp"

namespace gpusc::cli {

namespace {

struct Variant000 {
  const char* key;
  std::vector<std::string> sets;
};

const std::vector<Variant000>& variants000() {
  static const std::vector<Variant000> v = {
      {"base", {}},
      {"drowsy",
       {"power.l1d.drowsy.policy=drowsy-after-access", "power.l2.drowsy.policy=drowsy-after-access",
        "power.l1d.drowsy.wake_latency=1", "power.l2.drowsy.wake_latency=1",
        "power.l1d.drowsy.lookahead=true", "power.l1d.drowsy.lookahead_cycles=1"}},
      {"dwl", {"power.l1d.dwl=true", "power.l2.dwl=true"}},
      {"both",
       {"power.l1d.drowsy.policy=drowsy-after-access", "power.l2.drowsy.policy=drowsy-after-access",
        "power.l1d.drowsy.wake_latency=1", "power.l2.drowsy.wake_latency=1",
        "power.l1d.drowsy.lookahead=true", "power.l1d.drowsy.lookahead_cycles=1",
        "power.l1d.dwl=true", "power.l2.dwl=true"}},
      {"wake1",
       {"power.l1d.drowsy.policy=drowsy-after-access", "power.l2.drowsy.policy=drowsy-after-access",
        "power.l1d.drowsy.wake_latency=1", "power.l2.drowsy.wake_latency=1"}},
      {"wake2",
       {"power.l1d.drowsy.policy=drowsy-after-access", "power.l2.drowsy.policy=drowsy-after-access",
        "power.l1d.drowsy.wake_latency=2", "power.l2.drowsy.wake_latency=2"}},
  };
  return v;
}

// One cache level over a run (every launch).
struct CacheRun {
  double dynamicJ = 0, staticJ = 0;
  uint64_t reads = 0, writes = 0, subwords = 0, subwordsPerLine = 0;
  uint64_t frames = 0, framesBelow16 = 0, framesUnused = 0;
  uint64_t touches = 0, gapsAtLeast64 = 0, gapsAtLeast128 = 0;
  uint64_t wakeups = 0;
  uint64_t warpRequests = 0, activeThreads = 0;
  // Seed 000 Table 1: active threads of the warps whose requests reach the cache.
  double threadUtilisation() const {
    return warpRequests ? double(activeThreads) / (32.0 * double(warpRequests)) : 0.0;
  }
  // Bytes: enabled sub-word-lines over the sub-word-lines of the lines read or written.
  double utilisation() const {
    const double lines = double(reads + writes) * double(subwordsPerLine);
    return lines > 0 ? double(subwords) / lines : 0.0;
  }
};

struct Run000 {
  uint64_t cycles = 0;
  double seconds = 0;
  CacheRun l1, l2;
};

// From a launch's cache totals, which both forms of stats.json keep (a summary has no per-unit
// detail).
void addCache(CacheRun& c, const nlohmann::json& power, const nlohmann::json& totals) {
  c.dynamicJ += power.at("dynamic_j").get<double>();
  c.staticJ += power.at("static_j").get<double>();
  const auto& p = totals.at("power_states");
  c.reads += p.at("reads").get<uint64_t>();
  c.writes += p.at("writes").get<uint64_t>();
  c.subwords += p.at("read_subwords").get<uint64_t>() + p.at("write_subwords").get<uint64_t>();
  c.subwordsPerLine = p.at("subwords_per_line").get<uint64_t>();
  c.wakeups += p.at("wakeups").get<uint64_t>();
  c.warpRequests += p.at("warp_requests").get<uint64_t>();
  c.activeThreads += p.at("active_threads").get<uint64_t>();
  for (const auto& [name, v] : p.at("access_count_histogram").items()) {
    const uint64_t n = v.get<uint64_t>();
    c.frames += n;
    // Buckets A0, A1, A2, A4, A8 hold frames with fewer than 16 accesses.
    if (name == "A0" || name == "A1" || name == "A2" || name == "A4" || name == "A8")
      c.framesBelow16 += n;
    if (name == "A0") c.framesUnused += n;
  }
  for (const auto& [name, v] : p.at("inter_access_histogram").items()) {
    const uint64_t n = v.get<uint64_t>();
    c.touches += n;
    // Bucket names are "lo-hi" or "lo+".
    const uint64_t lo = std::stoull(name.substr(0, name.find_first_of("-+")));
    if (lo >= 64) c.gapsAtLeast64 += n;
    if (lo >= 128) c.gapsAtLeast128 += n;
  }
}

Run000 parse000(const nlohmann::json& stats) {
  Run000 r;
  for (const auto& l : stats.at("launches")) {
    if (!l.contains("timing")) continue;
    const auto& t = l.at("timing");
    r.cycles += t.at("cycles").get<uint64_t>();
    const auto& p = t.at("power");
    r.seconds += p.at("seconds").get<double>();
    const auto& m = t.at("memory");
    addCache(r.l1, p.at("blocks").at("l1d"), m.at("l1d").at("totals"));
    addCache(r.l2, p.at("blocks").at("l2"), m.at("l2").at("totals"));
  }
  return r;
}

}  // namespace

int seed000(const ExperimentOptions& o) {
  // The kernels (analogues of the paper's BNL CON HIS NBD BPR GSS HSP MYC SRD STC) are in the
  // shipped spec, stimuli/sweeps/seed000.yaml.
  const char* platform = "fermi16-mesh";
  std::vector<VariantRun> variants;
  for (const auto& v : variants000()) variants.push_back({v.key, platform, v.sets});
  std::vector<std::string> kernels;
  std::vector<RunOutcome> results;
  if (const int rc = runExperimentRuns(o, "seed000", variants, kernels, results)) return rc;

  std::map<std::string, std::map<std::string, Run000>> runs;  // [kernel][variant]
  std::string csv =
      "kernel,variant,cycles,seconds,l1_dynamic_j,l1_static_j,l2_dynamic_j,l2_static_j,"
      "l1_thread_utilisation,l1_byte_utilisation,l2_thread_utilisation,l2_byte_utilisation,"
      "l1_wakeups,l2_wakeups,status\n";
  int failures = 0;
  size_t i = 0;
  for (const auto& k : kernels)
    for (const auto& v : variants000()) {
      const RunOutcome& res = results[i++];
      if (!res.ok) {
        ++failures;
        csv += fmt::format("{},{},,,,,,,,,,,,,\"{}\"\n", k, v.key, res.error);
        continue;
      }
      const Run000 r = parse000(res.stats);
      runs[k][v.key] = r;
      csv += fmt::format(
          "{},{},{},{:.9g},{:.6g},{:.6g},{:.6g},{:.6g},{:.4f},{:.4f},{:.4f},{:.4f},{},{},ok\n", k,
          v.key, r.cycles, r.seconds, r.l1.dynamicJ, r.l1.staticJ, r.l2.dynamicJ, r.l2.staticJ,
          r.l1.threadUtilisation(), r.l1.utilisation(), r.l2.threadUtilisation(),
          r.l2.utilisation(), r.l1.wakeups, r.l2.wakeups);
    }
  const auto have = [&](const std::string& k, std::initializer_list<const char*> vs) {
    for (const char* v : vs)
      if (!runs[k].count(v)) return false;
    return true;
  };

  std::string md = fmt::format(
      "# Seed 000 study: results\n\n"
      "Generated by `gpusc experiment seed000 --size {}{}` on `{}` (do not edit; see seed000.md "
      "for the discussion). Power is energy over the run's simulated time, summed over every "
      "launch; ratios are relative to `base`. Means are arithmetic means of the per-kernel "
      "ratios.\n\n",
      o.size, o.kernels.empty() ? "" : " --kernel " + join(o.kernels, " --kernel "), platform);

  // Fig. 6: static, dynamic and total power relative to the baseline.
  struct Col {
    std::vector<double> v;
  };
  std::map<std::string, Col> cols;  // l1s l1d l1t l2s l2d l2t: static, dynamic, total
  md += "## Cache power relative to the baseline (paper Fig. 6)\n\n";
  md +=
      "| kernel | L1 static (drowsy) | L1 dynamic (DWL) | L1 total (both) | L2 static (drowsy) | "
      "L2 "
      "dynamic (DWL) | L2 total (both) |\n|---|---|---|---|---|---|---|\n";
  for (const auto& k : kernels) {
    if (!have(k, {"base", "drowsy", "dwl", "both"})) {
      md += "| `" + k + "` | - | - | - | - | - | - |\n";
      continue;
    }
    const Run000 &b = runs[k]["base"], &d = runs[k]["drowsy"], &w = runs[k]["dwl"],
                 &x = runs[k]["both"];
    const auto p = [](double j, double s) { return s > 0 ? j / s : 0.0; };
    md += "| `" + k + "` |";
    for (int lvl = 0; lvl < 2; ++lvl) {
      const CacheRun& cb = lvl ? b.l2 : b.l1;
      const CacheRun& cd = lvl ? d.l2 : d.l1;
      const CacheRun& cw = lvl ? w.l2 : w.l1;
      const CacheRun& cx = lvl ? x.l2 : x.l1;
      const double st = p(cd.staticJ, d.seconds) / p(cb.staticJ, b.seconds);
      const double dy = p(cw.dynamicJ, w.seconds) / p(cb.dynamicJ, b.seconds);
      const double to =
          p(cx.staticJ + cx.dynamicJ, x.seconds) / p(cb.staticJ + cb.dynamicJ, b.seconds);
      const std::string tag = lvl ? "l2" : "l1";
      cols[tag + "s"].v.push_back(st);
      if (cb.dynamicJ > 0) cols[tag + "d"].v.push_back(dy);
      cols[tag + "t"].v.push_back(to);
      md += fmt::format(" {:.3f} | {} | {:.3f} |", st,
                        cb.dynamicJ > 0 ? fmt::format("{:.3f}", dy) : "-", to);
    }
    md += "\n";
  }
  md += fmt::format("| mean | {} | {} | {} | {} | {} | {} |\n", meanText(cols["l1s"].v),
                    meanText(cols["l1d"].v), meanText(cols["l1t"].v), meanText(cols["l2s"].v),
                    meanText(cols["l2d"].v), meanText(cols["l2t"].v));
  md += "\n| | ours (mean) | paper |\n|---|---|---|\n" +
        fmt::format("| L1 dynamic power with DWL | {} | -7% |\n", meanPct(cols["l1d"].v)) +
        fmt::format("| L2 dynamic power with DWL | {} | -24% |\n", meanPct(cols["l2d"].v)) +
        fmt::format("| L1 total power, drowsy + DWL | {} | -90% |\n", meanPct(cols["l1t"].v)) +
        fmt::format("| L2 total power, drowsy + DWL | {} | -96% |\n", meanPct(cols["l2t"].v)) +
        fmt::format("| L1 static power, drowsy | {} | (Fig. 6, most of the total saving) |\n",
                    meanPct(cols["l1s"].v)) +
        fmt::format("| L2 static power, drowsy | {} | (Fig. 6) |\n", meanPct(cols["l2s"].v));

  // Fig. 7: runtime with wake-up latencies nothing hides.
  md +=
      "\n## Runtime with drowsy lines (paper Fig. 7)\n\n| kernel | base cycles | wake-up 1 | "
      "wake-up 2 | look-ahead (wake-up 1, L1 hidden) |\n|---|---|---|---|---|\n";
  std::vector<double> w1, w2, la;
  for (const auto& k : kernels) {
    if (!have(k, {"base", "wake1", "wake2", "drowsy"})) continue;
    const double b = double(runs[k]["base"].cycles);
    const double r1 = runs[k]["wake1"].cycles / b, r2 = runs[k]["wake2"].cycles / b,
                 rl = runs[k]["drowsy"].cycles / b;
    w1.push_back(r1);
    w2.push_back(r2);
    la.push_back(rl);
    md += fmt::format("| `{}` | {} | {} | {} | {} |\n", k, runs[k]["base"].cycles, pct(r1), pct(r2),
                      pct(rl));
  }
  md += fmt::format("| mean | | {} | {} | {} |\n", meanPct(w1), meanPct(w2), meanPct(la));
  md += "\nPaper: performance changes by less than 0.3% on average with 1 and 2 cycles.\n";

  // Table 1 and Figs. 3 and 4.
  const std::map<std::string, std::pair<int, int>> paperUtil = {
      {"binomial_options", {99, 98}}, {"convsep", {100, 81}}, {"histogram", {100, 94}},
      {"nbody", {100, 14}},           {"backprop", {91, 81}}, {"gaussian", {65, 37}},
      {"hotspot", {100, 96}},         {"myocyte", {4, 2}},    {"srad", {99, 99}},
      {"sgemm", {100, 100}}};
  md +=
      "\n## Utilisation of cache accesses (paper Table 1) and access statistics (Figs. 3, 4)\n\n"
      "Threads: active threads of the warps whose loads, stores and atomics reach the cache, per "
      "request (an L1 miss's fetch carries its warp's count), the paper's measure. Bytes: "
      "enabled 4-byte "
      "sub-word-lines over the sub-word-lines of the lines read or written, what our DWL "
      "switches. Frames < 16: share of line frames accessed fewer than 16 times in a launch "
      "(unused: never). Gaps: share of consecutive touches of a frame at least 128 (L1) or 64 "
      "(L2) cycles apart.\n\n"
      "| kernel | L1 threads | bytes | paper | L2 threads | bytes | paper | L1 frames < 16 "
      "(unused) | L2 frames < 16 (unused) | L1 gaps >= 128 | L2 gaps >= 64 |\n"
      "|---|---|---|---|---|---|---|---|---|---|---|\n";
  const auto share = [](uint64_t a, uint64_t b) {
    return b ? fmt::format("{:.0f}%", 100.0 * double(a) / double(b)) : std::string("-");
  };
  const auto util = [](uint64_t n, double u) {
    return n ? fmt::format("{:.0f}%", 100 * u) : std::string("-");
  };
  for (const auto& k : kernels) {
    if (!runs[k].count("base")) continue;
    const Run000& b = runs[k]["base"];
    const auto pu = paperUtil.find(k);
    md += fmt::format("| `{}` | {} | {} | {} | {} | {} | {} | {} ({}) | {} ({}) | {} | {} |\n", k,
                      util(b.l1.warpRequests, b.l1.threadUtilisation()),
                      util(b.l1.reads + b.l1.writes, b.l1.utilisation()),
                      pu == paperUtil.end() ? "-" : fmt::format("{}%", pu->second.first),
                      util(b.l2.warpRequests, b.l2.threadUtilisation()),
                      util(b.l2.reads + b.l2.writes, b.l2.utilisation()),
                      pu == paperUtil.end() ? "-" : fmt::format("{}%", pu->second.second),
                      share(b.l1.framesBelow16, b.l1.frames), share(b.l1.framesUnused, b.l1.frames),
                      share(b.l2.framesBelow16, b.l2.frames), share(b.l2.framesUnused, b.l2.frames),
                      share(b.l1.gapsAtLeast128, b.l1.touches),
                      share(b.l2.gapsAtLeast64, b.l2.touches));
  }
  md +=
      "\nPaper: in L1 50% of blocks are accessed 16 times or less, in L2 8 or less; more than 50% "
      "of L1 blocks have inter-access gaps of 128 cycles or more, of L2 blocks 64 or more.\n";
  if (failures) md += fmt::format("\n{} runs failed; see the CSV's status column.\n", failures);

  writeText(fs::path(o.out) / "seed000.csv", csv);
  writeText(fs::path(o.out) / "seed000-results.md", md);
  std::cerr << fmt::format("gpusc: wrote {} and {}\n", (fs::path(o.out) / "seed000.csv").string(),
                           (fs::path(o.out) / "seed000-results.md").string());
  return failures ? 1 : 0;
}

}  // namespace gpusc::cli
