// Seed 001: GPU voltage noise and hierarchical droop smoothing, on gtx480 (15 SMs at 700 MHz,
// the default PDN: first-order resonance near 100 MHz, second-order near 1 MHz).
//
//   gpusc experiment seed001        none / local / global / hierarchical smoothing per kernel:
//                                   worst droop, runtime, emergencies, droop types; the supply
//                                   the smoothed worst case allows and the energy it saves.
//   gpusc experiment seed001-train  the local predictor's thresholds: every droop event of the
//                                   kernels (smoothing off) with the largest power rises the
//                                   predictor saw before it; a sweep of the three thresholds;
//                                   the false-negative / false-positive Pareto front.
#include <algorithm>
#include <iostream>
#include <map>
#include <set>
#include <sstream>

#include "catalog.hpp"
#include "common/strings.hpp"
#include "experiment_util.hpp"

namespace gpusc::cli {

namespace {

constexpr const char* kPlatform = "gtx480";
const char* const kModes[] = {"none", "local", "global", "hierarchical"};

struct Run001 {
  uint64_t cycles = 0;
  double worstPct = 0, minVolts = 0;
  uint64_t emergencies = 0;
  uint64_t large = 0, largeByClass[3] = {0, 0, 0}, largeLocal = 0;
  // Events above the second threshold (5%: seed 001 Sec. 3.5 finds it also separates the
  // typical from the rare droops).
  uint64_t above5 = 0;
  uint64_t events = 0;  // above the lowest threshold
  double coreJ = 0, chipJ = 0;
  double supplyV = 0;
  uint64_t localTriggers = 0, globalDetections = 0;
  // From droops.csv: the worst droop the predictor saw a power rise before; the droops above 5%
  // that came out of a quiet SM, and the others by type.
  double worstSeenPct = 0;
  uint64_t quietAbove5 = 0, seenAbove5 = 0, seenByClass5[3] = {0, 0, 0}, seenLocal5 = 0;
};

Run001 parse001(const nlohmann::json& stats) {
  Run001 r;
  r.minVolts = 1e9;
  for (const auto& l : stats.at("launches")) {
    if (!l.contains("timing")) continue;
    const auto& t = l.at("timing");
    r.cycles += t.at("cycles").get<uint64_t>();
    if (t.contains("voltage")) {
      const auto& v = t.at("voltage");
      r.worstPct = std::max(r.worstPct, v.at("worst").at("droop_pct").get<double>());
      r.supplyV = v.at("supply_v").get<double>();
      r.minVolts = std::min(r.minVolts, v.at("min_voltage_v").get<double>());
      r.emergencies += v.at("emergencies").at("events").get<uint64_t>();
      r.events += v.at("thresholds").at(0).at("events").get<uint64_t>();
      const auto& lg = v.at("large");
      r.large += lg.at("events").get<uint64_t>();
      r.largeLocal += lg.at("local").get<uint64_t>();
      const char* names[3] = {"first-order", "second-order", "balanced"};
      for (int c = 0; c < 3; ++c)
        r.largeByClass[c] += lg.at("classes").at(names[c]).at("count").get<uint64_t>();
      if (v.at("thresholds").size() > 1) {
        const auto& t5 = v.at("thresholds").at(1);
        r.above5 += t5.at("events").get<uint64_t>();
      }
    }
    if (t.contains("power")) {
      const auto& p = t.at("power");
      r.chipJ += p.at("energy_j").get<double>();
      for (const auto& sm : p.at("per_sm"))
        for (const auto& [name, b] : sm.at("blocks").items())
          r.coreJ += b.at("dynamic_j").get<double>() + b.at("static_j").get<double>();
    }
    if (t.contains("smoothing")) {
      const auto& s = t.at("smoothing");
      if (s.contains("local")) r.localTriggers += s["local"]["triggers"].get<uint64_t>();
      if (s.contains("global")) r.globalDetections += s["global"]["detections"].get<uint64_t>();
    }
  }
  if (r.minVolts > 1e8) r.minVolts = 0;
  return r;
}

// One droop event as the training sees it: its droop, its first-order part and the largest
// rises of the worst SM's estimated power (over 2, 3 and 4 cycles) in the cycles before its worst
// cycle.
struct TrainingEvent {
  double droopPct = 0, firstOrderPct = 0;
  double rise[3] = {0, 0, 0};
  int cls = 2;  // 0 first-order, 1 second-order, 2 balanced
  bool local = false;
  // The predictor saw some rise before it (else the droop came out of a quiet SM).
  bool seen() const { return rise[0] > 0 || rise[1] > 0 || rise[2] > 0; }
};

std::vector<TrainingEvent> readEvents(const fs::path& csvPath) {
  std::ifstream in(csvPath);
  if (!in) throw InputError(fmt::format("cannot read '{}'", csvPath.string()));
  std::string line;
  std::getline(in, line);
  const std::vector<std::string> head = split(line, ',');
  const auto col = [&](const char* name) {
    for (size_t i = 0; i < head.size(); ++i)
      if (head[i] == name) return i;
    throw InputError(fmt::format("'{}': no column {}", csvPath.string(), name));
  };
  const size_t dp = col("droop_pct"), fo = col("first_order_pct"), r2 = col("rise2_w"),
               r3 = col("rise3_w"), r4 = col("rise4_w"), cl = col("class"), sc = col("scope");
  std::vector<TrainingEvent> out;
  while (std::getline(in, line)) {
    const std::vector<std::string> f = split(line, ',');
    if (f.size() < head.size()) continue;
    TrainingEvent e;
    e.droopPct = std::stod(f[dp]);
    e.firstOrderPct = std::stod(f[fo]);
    e.rise[0] = std::stod(f[r2]);
    e.rise[1] = std::stod(f[r3]);
    e.rise[2] = std::stod(f[r4]);
    e.cls = f[cl] == "first-order" ? 0 : f[cl] == "second-order" ? 1 : 2;
    e.local = f[sc] == "local";
    out.push_back(e);
  }
  return out;
}

std::string sizeArgs(const ExperimentOptions& o) {
  return fmt::format("--size {}{}", o.size,
                     o.kernels.empty() ? "" : " --kernel " + join(o.kernels, " --kernel "));
}

}  // namespace

int seed001(const ExperimentOptions& o) {
  // The first pass's kernels are in the shipped spec, stimuli/sweeps/seed001.yaml.
  std::vector<VariantRun> variants;
  for (const char* m : kModes)
    variants.push_back({m, kPlatform, {fmt::format("smoothing.mode={}", m)}});
  const SweepSpec spec = experimentSpec(o, "seed001");
  std::vector<std::string> kernels;
  std::vector<RunOutcome> results;
  if (const int rc = runExperimentRuns(o, spec, variants, kernels, results)) return rc;

  std::map<std::string, std::map<std::string, Run001>> runs;
  std::string csv =
      "kernel,variant,supply_v,cycles,worst_droop_pct,min_voltage_v,emergencies,events,large,"
      "large_first_order,large_second_order,large_balanced,large_local,core_j,chip_j,"
      "local_triggers,global_detections,worst_seen_droop_pct,quiet_droops_above_5,status\n";
  int failures = 0;
  const auto row = [&](const std::string& k, const std::string& v, double supply,
                       const RunOutcome& res) {
    if (!res.ok) {
      ++failures;
      csv += fmt::format("{},{},{},,,,,,,,,,,,,,,,,\"{}\"\n", k, v, supply, res.error);
      return;
    }
    Run001 r = parse001(res.stats);
    const fs::path droops = fs::path(res.statsPath).parent_path() / "droops.csv";
    if (fs::exists(droops))
      for (const TrainingEvent& e : readEvents(droops)) {
        if (e.seen()) r.worstSeenPct = std::max(r.worstSeenPct, e.droopPct);
        if (e.droopPct <= 5.0) continue;
        if (!e.seen()) {
          ++r.quietAbove5;
        } else {
          ++r.seenAbove5;
          ++r.seenByClass5[e.cls];
          r.seenLocal5 += e.local;
        }
      }
    runs[k][v] = r;
    csv += fmt::format(
        "{},{},{:.4f},{},{:.4f},{:.5f},{},{},{},{},{},{},{},{:.6g},{:.6g},{},{},{:.4f},{},ok\n", k,
        v, supply, r.cycles, r.worstPct, r.minVolts, r.emergencies, r.events, r.large,
        r.largeByClass[0], r.largeByClass[1], r.largeByClass[2], r.largeLocal, r.coreJ, r.chipJ,
        r.localTriggers, r.globalDetections, r.worstSeenPct, r.quietAbove5);
  };
  size_t i = 0;
  for (const auto& k : kernels)
    for (const char* m : kModes) {
      row(k, m, 1.0, results[i]);
      ++i;
    }

  // The guardband: the baseline's worst case sets the lowest voltage the chip must tolerate;
  // with smoothing the worst droop is smaller, so the supply can drop until the smoothed worst
  // case reaches that same voltage: V = Vnom x (1 - Wbase) / (1 - Wsmoothed).
  double wBase = 0, wSmooth = 0;
  for (const auto& k : kernels) {
    if (!runs[k].count("none") || !runs[k].count("hierarchical")) continue;
    wBase = std::max(wBase, runs[k]["none"].worstPct);
    wSmooth = std::max(wSmooth, runs[k]["hierarchical"].worstPct);
  }
  // The platform's supply, as the runs without smoothing report it.
  double vNom = 0;
  for (const auto& k : kernels)
    if (runs[k].count("none") && runs[k]["none"].supplyV > 0) vNom = runs[k]["none"].supplyV;
  if (vNom <= 0) throw InputError("seed001: no run without smoothing reported its supply");
  const double vLow = vNom * (1.0 - wBase / 100.0) / (1.0 - wSmooth / 100.0);
  // The second pass: a sweep spec of its own (seed001-lowered), written into the work folder so
  // that it can also run with `gpusc sweep` (e.g. on Slurm). Its points' hashes follow from the
  // first pass's results, so a stopped experiment resumes either pass.
  const std::vector<VariantRun> lowered = {
      {"hierarchical-lowered",
       kPlatform,
       {"smoothing.mode=hierarchical", fmt::format("power.supply_voltage={:.4f}", vLow)}}};
  std::string yaml = fmt::format(
      "# Generated by gpusc experiment seed001 from the first pass's worst droops (do not "
      "edit).\nname: seed001-lowered\nplatform: {}\nsizes: [{}]\nkernels: [{}]\nvariants:\n  - "
      "name: {}\n    set: [",
      kPlatform, o.size, join(kernels, ", "), lowered[0].key);
  for (size_t s = 0; s < lowered[0].sets.size(); ++s)
    yaml += fmt::format("{}\"{}\"", s ? ", " : "", lowered[0].sets[s]);
  yaml += "]\n";
  const fs::path loweredFile = fs::path(o.work) / "seed001-lowered.yaml";
  writeText(loweredFile, yaml);
  const SweepSpec loweredSpec =
      parseSweepSpec(yaml, loweredFile.string(), fs::current_path().string());
  std::vector<std::string> loweredKernels;
  if (const int rc = runExperimentRuns(o, loweredSpec, lowered, loweredKernels, results)) return rc;
  i = 0;
  for (const auto& k : kernels) row(k, "hierarchical-lowered", vLow, results[i++]);

  const auto have = [&](const std::string& k, std::initializer_list<const char*> vs) {
    for (const char* v : vs)
      if (!runs[k].count(v)) return false;
    return true;
  };
  std::string md = fmt::format(
      "# Seed 001 study: results\n\n"
      "Generated by `gpusc experiment seed001 {}` on `{}` (do not edit; seed001.md discusses "
      "them). Worst droop: the largest drop below the supply at any SM's node, in % of the "
      "supply, over every launch. Runtime: cycles summed over launches, relative to no "
      "smoothing.\n\n",
      sizeArgs(o), kPlatform);
  md +=
      "## Worst-case droop and runtime per smoothing mode (paper Fig. 19)\n\n"
      "| kernel | worst droop: none | local | global | hierarchical | runtime: local | global | "
      "hierarchical | emergencies: none | hierarchical |\n"
      "|---|---|---|---|---|---|---|---|---|---|\n";
  std::map<std::string, std::vector<double>> droopRatio, timeRatio;
  uint64_t emNone = 0, emHier = 0;
  for (const auto& k : kernels) {
    if (!have(k, {"none", "local", "global", "hierarchical"})) continue;
    const Run001& n = runs[k]["none"];
    md += fmt::format("| `{}` | {:.2f}% |", k, n.worstPct);
    for (const char* m : {"local", "global", "hierarchical"}) {
      const double d = n.worstPct > 0 ? runs[k][m].worstPct / n.worstPct : 1.0;
      droopRatio[m].push_back(d);
      md += fmt::format(" {:.2f}% ({}) |", runs[k][m].worstPct, pct(d));
    }
    for (const char* m : {"local", "global", "hierarchical"}) {
      const double t = double(runs[k][m].cycles) / double(n.cycles);
      timeRatio[m].push_back(t);
      md += fmt::format(" {} |", pct(t));
    }
    emNone += n.emergencies;
    emHier += runs[k]["hierarchical"].emergencies;
    md += fmt::format(" {} | {} |\n", n.emergencies, runs[k]["hierarchical"].emergencies);
  }
  const auto g = [&](const char* m, std::map<std::string, std::vector<double>>& v) {
    return v[m].empty() ? std::string("-") : pct(geomean(v[m]));
  };
  md +=
      fmt::format("| geomean | | {} | {} | {} | {} | {} | {} | {} | {} |\n", g("local", droopRatio),
                  g("global", droopRatio), g("hierarchical", droopRatio), g("local", timeRatio),
                  g("global", timeRatio), g("hierarchical", timeRatio), emNone, emHier);
  double bestCut = 1.0;
  for (double d : droopRatio["hierarchical"]) bestCut = std::min(bestCut, d);

  const uint32_t lead = loadPlatform(kPlatform).pdn.monitor.lead_cycles;
  md += fmt::format(
      "\n## Droops the local predictor saw coming\n\n"
      "The worst droop among those whose worst SM's estimated power (its dispatches and register "
      "accesses) rose in the {} cycles before it (`pdn.monitor.lead_cycles`), the droops a "
      "predictor can act on. The others come out of a quiet SM, for instance a burst of register "
      "writes when a memory fill completes many loads at once while nothing was dispatched.\n\n"
      "| kernel | seen coming: none | local | global | hierarchical |\n|---|---|---|---|---|\n",
      lead);
  std::map<std::string, std::vector<double>> seenRatio;
  for (const auto& k : kernels) {
    if (!have(k, {"none", "local", "global", "hierarchical"})) continue;
    const Run001& n = runs[k]["none"];
    md += fmt::format("| `{}` | {:.2f}% |", k, n.worstSeenPct);
    for (const char* m : {"local", "global", "hierarchical"}) {
      const Run001& r = runs[k][m];
      if (n.worstSeenPct <= 0 || r.worstSeenPct <= 0) {  // no droop event at all (below 4 %)
        md += r.worstSeenPct > 0 ? fmt::format(" {:.2f}% |", r.worstSeenPct)
                                 : std::string(" none > 4% |");
        continue;
      }
      const double d = r.worstSeenPct / n.worstSeenPct;
      seenRatio[m].push_back(d);
      md += fmt::format(" {:.2f}% ({}) |", r.worstSeenPct, pct(d));
    }
    md += "\n";
  }
  md += fmt::format("| geomean (kernels with a droop event in both runs) | | {} | {} | {} |\n",
                    g("local", seenRatio), g("global", seenRatio), g("hierarchical", seenRatio));

  md +=
      "\n## Droop types without smoothing (paper Figs. 6 and 8)\n\n"
      "Droops above 5% (seed 001 Sec. 3.5: 5% also separates the rare droops from the typical "
      "ones; the last column counts those from the paper's 8%): how many came out of a quiet SM "
      "(no rise of its estimated power before them, above), and the others by temporal type "
      "(first-order: the first-order part is over 60% of the droop; second-order: the "
      "low-passed part is; else balanced) and by spatial scope (local: the SMs that see it fit "
      "one SM or a 2x2 cluster; global: more).\n\n"
      "| kernel | events > 4% | events > 5% | out of a quiet SM | seen coming: first-order | "
      "second-order | balanced | local | global | large (>= 8%) |\n"
      "|---|---|---|---|---|---|---|---|---|---|\n";
  for (const auto& k : kernels) {
    if (!have(k, {"none"})) continue;
    const Run001& n = runs[k]["none"];
    const auto share = [&](uint64_t c) {
      return n.seenAbove5 ? fmt::format("{:.0f}%", 100.0 * double(c) / double(n.seenAbove5))
                          : std::string("-");
    };
    md += fmt::format("| `{}` | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n", k, n.events,
                      n.above5, n.quietAbove5, share(n.seenByClass5[0]), share(n.seenByClass5[1]),
                      share(n.seenByClass5[2]), share(n.seenLocal5),
                      share(n.seenAbove5 - n.seenLocal5), n.large);
  }

  // Energy: the core (every SM block) runs at the lowered supply; the memory side keeps its own
  // supply (pdn.uncore_rail separate, as in the paper), so its energy is the nominal run's.
  std::vector<double> coreRatio, chipRatio;
  double vMinLowered = 1e9;
  for (const auto& k : kernels) {
    if (!have(k, {"none", "hierarchical", "hierarchical-lowered"})) continue;
    const Run001 &n = runs[k]["none"], &h = runs[k]["hierarchical"],
                 &lo = runs[k]["hierarchical-lowered"];
    coreRatio.push_back(lo.coreJ / n.coreJ);
    chipRatio.push_back((lo.coreJ + (h.chipJ - h.coreJ)) / n.chipJ);
    vMinLowered = std::min(vMinLowered, lo.minVolts);
  }
  md += fmt::format(
      "\n## Guardband and energy (paper Sec. 6, Fig. 20)\n\n"
      "- Worst droop over all kernels: {:.2f}% without smoothing, {:.2f}% with hierarchical "
      "smoothing (the largest per-kernel cut: {}).\n"
      "- Supply lowered from {:.2f} V to {:.4f} V = {:.2f} x (1 - {:.4f}) / (1 - {:.4f}), so the "
      "smoothed worst case reaches the same lowest voltage as the baseline's "
      "({:.4f} V); lowest voltage measured at the lowered supply: {:.4f} V.\n"
      "- Emergencies (below the `pdn.monitor.emergency_margin_pct` margin) removed by "
      "hierarchical smoothing: {}.\n"
      "- Energy with hierarchical smoothing at the lowered supply, relative to no smoothing at "
      "{:.2f} V (mean over kernels): core {}, chip {} (the memory side stays at its own "
      "supply).\n",
      wBase, wSmooth, pct(bestCut), vNom, vLow, vNom, wBase / 100, wSmooth / 100,
      vNom * (1 - wBase / 100), vMinLowered > 1e8 ? 0.0 : vMinLowered,
      emNone ? fmt::format("{:.0f}%", 100.0 * (1.0 - double(emHier) / double(emNone)))
             : std::string("- (no emergencies without smoothing)"),
      vNom, meanPct(coreRatio), meanPct(chipRatio));
  md += fmt::format(
      "\n## Beside the paper\n\n"
      "| | ours | paper |\n|---|---|---|\n"
      "| worst-case droop, hierarchical (geomean) | {} | -27% |\n"
      "| largest cut | {} | -31% |\n"
      "| runtime: local / global / hierarchical (geomean) | {} / {} / {} | +1.2% / +2.3% / "
      "+3.5% |\n"
      "| worst droop without smoothing | {:.1f}% | 12% (BLS) |\n"
      "| supply | {:.2f} V -> {:.3f} V | 1 V -> 0.96 V |\n"
      "| core energy | {} | -11.8% |\n"
      "| chip energy | {} | -7.8% |\n"
      "| emergencies removed | {} | 99% |\n",
      g("hierarchical", droopRatio), pct(bestCut), g("local", timeRatio), g("global", timeRatio),
      g("hierarchical", timeRatio), wBase, vNom, vLow, meanPct(coreRatio), meanPct(chipRatio),
      emNone ? fmt::format("{:.0f}%", 100.0 * (1.0 - double(emHier) / double(emNone)))
             : std::string("-"));
  if (failures) md += fmt::format("\n{} runs failed; see the CSV's status column.\n", failures);
  writeText(fs::path(o.out) / "seed001.csv", csv);
  writeText(fs::path(o.out) / "seed001-results.md", md);
  std::cerr << fmt::format("gpusc: wrote {} and {}\n", (fs::path(o.out) / "seed001.csv").string(),
                           (fs::path(o.out) / "seed001-results.md").string());
  return failures ? 1 : 0;
}

namespace {

struct Point {
  double th[3];
  double fn, fp;
};

}  // namespace

int seed001Train(const ExperimentOptions& o) {
  // Smoothing off; events from 2% on, so that small droops are there to be told apart. The
  // kernels are in the shipped spec, stimuli/sweeps/seed001-train.yaml.
  const std::vector<VariantRun> variants = {
      {"train", kPlatform, {"smoothing.mode=none", "pdn.monitor.thresholds_pct=[2,4,8]"}}};
  std::vector<std::string> kernels;
  std::vector<RunOutcome> results;
  if (const int rc = runExperimentRuns(o, "seed001-train", variants, kernels, results)) return rc;
  std::vector<TrainingEvent> events;
  int failures = 0;
  for (size_t i = 0; i < results.size(); ++i) {
    if (!results[i].ok) {
      ++failures;
      std::cerr << fmt::format("gpusc: {} failed: {}\n", kernels[i], results[i].error);
      continue;
    }
    const fs::path csv = fs::path(results[i].statsPath).parent_path() / "droops.csv";
    if (!fs::exists(csv)) continue;  // no droop above 2%
    for (const TrainingEvent& e : readEvents(csv)) events.push_back(e);
  }
  // Large: a first-order part of at least the monitor's large-droop level (8%, as the paper)
  // when enough events reach it, else the largest tenth of first-order parts. Small: below half
  // of that level (the paper's "randomly chosen small droops"; the borderline ones are left out).
  std::vector<double> parts;
  for (const auto& e : events) parts.push_back(e.firstOrderPct);
  std::sort(parts.begin(), parts.end());
  double large = 8.0;
  std::string largeRule = "first-order part >= 8% (the paper's level)";
  const auto atLeast = [&](double v) {
    return size_t(parts.end() - std::lower_bound(parts.begin(), parts.end(), v));
  };
  if (parts.size() >= 20 && atLeast(large) < 20) {
    large = parts[parts.size() * 9 / 10];
    largeRule = fmt::format(
        "first-order part >= {:.2f}% (the largest tenth: fewer than 20 events reach 8%)", large);
  }
  std::vector<const TrainingEvent*> pos, neg;
  for (const auto& e : events) {
    if (e.firstOrderPct >= large)
      pos.push_back(&e);
    else if (e.firstOrderPct < large / 2)
      neg.push_back(&e);
  }
  if (pos.empty() || neg.empty())
    throw InputError(fmt::format(
        "seed001-train: {} large and {} small droop events: too few to train on (try more "
        "kernels or a larger --size)",
        pos.size(), neg.size()));
  // Candidate thresholds per rise: the quantiles of that rise over every event, and "off".
  std::vector<double> cand[3];
  for (int k = 0; k < 3; ++k) {
    std::vector<double> v;
    for (const auto& e : events) v.push_back(e.rise[k]);
    std::sort(v.begin(), v.end());
    std::set<double> q;
    for (int p = 0; p <= 40; ++p) q.insert(std::max(0.01, v[(v.size() - 1) * p / 40]));
    cand[k].assign(q.begin(), q.end());
    cand[k].push_back(1e30);
  }
  std::vector<Point> pts;
  for (double a : cand[0])
    for (double b : cand[1])
      for (double c : cand[2]) {
        const double th[3] = {a, b, c};
        const auto fires = [&](const TrainingEvent* e) {
          for (int k = 0; k < 3; ++k)
            if (e->rise[k] > th[k]) return true;
          return false;
        };
        size_t fn = 0, fp = 0;
        for (const auto* e : pos) fn += !fires(e);
        for (const auto* e : neg) fp += fires(e);
        pts.push_back(
            {{a, b, c}, double(fn) / double(pos.size()), double(fp) / double(neg.size())});
      }
  std::sort(pts.begin(), pts.end(), [](const Point& x, const Point& y) {
    return x.fn != y.fn ? x.fn < y.fn : x.fp < y.fp;
  });
  std::vector<Point> front;
  for (const Point& p : pts)
    if (front.empty() || p.fp < front.back().fp) front.push_back(p);
  const Point* best = &front.front();
  for (const Point& p : front)
    if (p.fn + p.fp < best->fn + best->fp) best = &p;

  // A threshold no rise reaches is written as the key's largest value (1e6 W), so the chosen set
  // can be passed to --set as it is.
  const auto thText = [](const Point& p) {
    std::string t;
    for (int k = 0; k < 3; ++k)
      t += fmt::format("{}{}", k ? "," : "",
                       p.th[k] > 1e29 ? std::string("1e6") : fmt::format("{:.3g}", p.th[k]));
    return "[" + t + "]";
  };
  std::string csv = "rise2_w,rise3_w,rise4_w,false_negative,false_positive\n";
  std::string md = fmt::format(
      "# Seed 001: training the local droop predictor\n\n"
      "Generated by `gpusc experiment seed001-train {}` on `{}` (do not edit). Every droop "
      "event above 2% of the supply without smoothing, over {} kernels: {} events; {} large "
      "({}), {} small (first-order part below {:.2f}%). The features of an event are the largest "
      "rises of the worst SM's estimated power over 2, 3 and 4 cycles that the predictor saw in "
      "the `pdn.monitor.lead_cycles` cycles before the droop's worst cycle. A threshold set "
      "predicts an event when any rise exceeds its threshold; false negatives are large events "
      "it misses, false positives small events it flags.\n\n"
      "## Pareto front (paper Fig. 18b)\n\nEvery point of the front is in seed001-training.csv; "
      "the table shows some of them.\n\n| thresholds (W, over 2/3/4 cycles) | false "
      "negatives | false positives |\n|---|---|---|\n",
      sizeArgs(o), kPlatform, kernels.size(), events.size(), pos.size(), largeRule, neg.size(),
      large / 2);
  // The whole front goes to the CSV; the table shows about 24 points spread along it.
  const size_t every = std::max<size_t>(1, front.size() / 24);
  for (size_t k = 0; k < front.size(); ++k) {
    const Point& p = front[k];
    csv +=
        fmt::format("{:.6g},{:.6g},{:.6g},{:.4f},{:.4f}\n", p.th[0], p.th[1], p.th[2], p.fn, p.fp);
    if (k % every == 0 || &p == best || k + 1 == front.size())
      md += fmt::format("| {} | {:.1f}% | {:.1f}% |{}\n", thText(p), 100 * p.fn, 100 * p.fp,
                        &p == best ? " **chosen**" : "");
  }
  md += fmt::format(
      "\nChosen (the smallest sum of both rates): thresholds {} W with {:.1f}% false negatives "
      "and {:.1f}% false positives (the paper chose 7% and 9%). Use them with `--set "
      "smoothing.local.thresholds_w={}`.\n",
      thText(*best), 100 * best->fn, 100 * best->fp, thText(*best));
  if (failures) md += fmt::format("\n{} runs failed.\n", failures);
  writeText(fs::path(o.out) / "seed001-training.csv", csv);
  writeText(fs::path(o.out) / "seed001-training.md", md);
  fmt::print("chosen thresholds {} W: false negatives {:.1f}%, false positives {:.1f}%\n",
             thText(*best), 100 * best->fn, 100 * best->fp);
  std::cerr << fmt::format("gpusc: wrote {} and {}\n",
                           (fs::path(o.out) / "seed001-training.csv").string(),
                           (fs::path(o.out) / "seed001-training.md").string());
  return failures ? 1 : 0;
}

}  // namespace gpusc::cli
