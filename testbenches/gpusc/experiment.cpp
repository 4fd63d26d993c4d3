#include "experiment.hpp"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>

#include <fmt/format.h>

#include "catalog.hpp"
#include "common/error.hpp"
#include "common/strings.hpp"
#include "run_pool.hpp"

namespace gpusc::cli {

namespace fs = std::filesystem;

namespace {

double ipcOf(const nlohmann::json& stats) {
  uint64_t cycles = 0;
  for (const auto& l : stats.at("launches"))
    if (l.contains("timing")) cycles += l["timing"]["cycles"].get<uint64_t>();
  const uint64_t warp = stats.at("totals").at("warp_instructions").get<uint64_t>();
  return cycles ? double(warp) / double(cycles) : 0.0;
}

uint64_t cyclesOf(const nlohmann::json& stats) {
  uint64_t cycles = 0;
  for (const auto& l : stats.at("launches"))
    if (l.contains("timing")) cycles += l["timing"]["cycles"].get<uint64_t>();
  return cycles;
}

double mean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return v.empty() ? 0.0 : s / double(v.size());
}

double geomean(const std::vector<double>& ratios) {
  double s = 0;
  for (double x : ratios) s += std::log(x);
  return ratios.empty() ? 0.0 : std::exp(s / double(ratios.size()));
}

std::string pct(double ratio) { return fmt::format("{:+.1f}%", (ratio - 1.0) * 100.0); }

void writeText(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream out(p);
  if (!out || !(out << text)) throw InputError(fmt::format("cannot write '{}'", p.string()));
}

// ---- seed 003: scaling stream processors with on-chip caches ------------------------------------

struct Variant {
  std::string platform;  // stream-4x4 | stream-8x8 | stream-11x11
  bool l2 = true;
  uint32_t l2Kb = 256;
  uint32_t burst = 4;
  bool slowDram = false;  // GPU:DRAM clock 3:2 instead of 1:1

  std::string key() const {
    return fmt::format("{}-{}-bl{}-{}", platform,
                       l2 ? fmt::format("l2-{}k", l2Kb) : std::string("nol2"), burst,
                       slowDram ? "3to2" : "1to1");
  }
  std::vector<std::string> sets() const {
    std::vector<std::string> s;
    if (!l2) s.push_back("l2.slice.enabled=false");
    if (l2Kb != 256)
      s.push_back(fmt::format("l2.slice.sets={}", 512 * l2Kb / 256));  // 8 ways x 64 B
    if (burst != 4) {
      // The paper keeps the duration of a burst constant as the burst length grows.
      s.push_back(fmt::format("memory.dram.burst_length={}", burst));
      s.push_back(fmt::format("memory.dram.data_rate={}", burst / 2));
    }
    if (slowDram) s.push_back("gpu.clocks.dram_mhz=400");  // cores at 600 MHz
    return s;
  }
};

int seed003(const ExperimentOptions& o) {
  std::vector<std::string> kernels = o.kernels;
  if (kernels.empty()) {
    // Our analogues of the paper's BLK BIN BIT CON IMD LU MAT SCN SOB.
    kernels = {"blackscholes", "binomial_options", "bitonic_sort", "convsep",
               "srad",         "gaussian",         "sgemm",        "scan",
               "sobel"};
  } else if (kernels.size() == 1 && kernels[0] == "all") {
    kernels = catalog::names();
  }
  for (const auto& k : kernels) catalog::find(k);  // InputError for a misspelled name

  std::vector<Variant> variants;
  auto add = [&](Variant v) {
    for (const auto& x : variants)
      if (x.key() == v.key()) return;
    variants.push_back(v);
  };
  for (const char* p : {"stream-4x4", "stream-8x8", "stream-11x11"})
    for (bool l2 : {false, true}) add(Variant{p, l2});
  for (uint32_t kb : {512u, 1024u}) add(Variant{"stream-11x11", true, kb});
  for (uint32_t bl : {8u, 16u})
    for (bool l2 : {false, true}) add(Variant{"stream-8x8", l2, 256, bl});
  for (bool l2 : {false, true}) add(Variant{"stream-8x8", l2, 256, 4, true});

  std::vector<RunSpec> specs;
  for (const auto& k : kernels)
    for (const auto& v : variants) {
      RunSpec s;
      s.label = fmt::format("{} {}", k, v.key());
      s.outDir = (fs::path(o.work) / "seed003" / k / v.key()).string();
      s.args = {"--platform", v.platform, "--kernel", k, "--size", o.size, "--mode", "timing"};
      for (const auto& set : v.sets()) {
        s.args.push_back("--set");
        s.args.push_back(set);
      }
      specs.push_back(s);
    }
  std::vector<RunOutcome> results = runAll(selfExecutable(), specs, o.jobs);

  // ipc[kernel][variant key]
  std::map<std::string, std::map<std::string, double>> ipc;
  std::string csv =
      "kernel,platform,l2,l2_kb,burst_length,gpu_to_dram_clock,cycles,warp_instructions,ipc,"
      "status\n";
  int failures = 0;
  size_t r = 0;
  for (const auto& k : kernels)
    for (const auto& v : variants) {
      const RunOutcome& res = results[r++];
      if (!res.ok) {
        ++failures;
        csv += fmt::format("{},{},{},{},{},{},,,,\"{}\"\n", k, v.platform, v.l2, v.l2Kb, v.burst,
                           v.slowDram ? "3:2" : "1:1", res.error);
        continue;
      }
      const double i = ipcOf(res.stats);
      ipc[k][v.key()] = i;
      csv +=
          fmt::format("{},{},{},{},{},{},{},{},{:.4f},ok\n", k, v.platform, v.l2, v.l2 ? v.l2Kb : 0,
                      v.burst, v.slowDram ? "3:2" : "1:1", cyclesOf(res.stats),
                      res.stats["totals"]["warp_instructions"].get<uint64_t>(), i);
    }

  // Ratio of two variants over the kernels that ran in both.
  auto ratios = [&](const Variant& a, const Variant& b) {
    std::vector<double> out;
    for (const auto& k : kernels) {
      auto& m = ipc[k];
      if (m.count(a.key()) && m.count(b.key()) && m[b.key()] > 0)
        out.push_back(m[a.key()] / m[b.key()]);
    }
    return out;
  };
  auto summary = [&](const Variant& a, const Variant& b) {
    auto v = ratios(a, b);
    return fmt::format("{} (geomean {})", pct(mean(v)), pct(geomean(v)));
  };

  std::string md = fmt::format(
      "# Seed 003 study: results\n\n"
      "Generated by `gpusc experiment seed003 --size {}{}` (do not edit; see seed003.md for the "
      "discussion). Kernels at size `{}`; IPC = warp instructions per cycle over all launches. "
      "Means are the arithmetic mean of the per-kernel IPC ratios (geometric mean in "
      "brackets).\n\n",
      o.size, o.kernels.empty() ? "" : " --kernel " + join(o.kernels, " --kernel "), o.size);

  md += "## The L2 cache on 4x4, 8x8 and 11x11 meshes\n\n| kernel |";
  for (const char* p : {"4x4", "8x8", "11x11"})
    md += fmt::format(" {} no L2 | {} L2 | gain |", p, p);
  md += "\n|---|";
  for (int i = 0; i < 9; ++i) md += "---|";
  md += "\n";
  for (const auto& k : kernels) {
    md += "| `" + k + "` |";
    for (const char* p : {"stream-4x4", "stream-8x8", "stream-11x11"}) {
      auto& m = ipc[k];
      const std::string off = Variant{p, false}.key(), on = Variant{p, true}.key();
      if (m.count(off) && m.count(on)) {
        md += fmt::format(" {:.2f} | {:.2f} | {} |", m[off], m[on], pct(m[on] / m[off]));
      } else {
        md += " - | - | - |";
      }
    }
    md += "\n";
  }
  md += "\n| mesh | IPC gain from the L2 (ours) | paper |\n|---|---|---|\n";
  const char* paperL2[] = {"+14.5%", "+54.9%", "+82.3%"};
  int pi = 0;
  for (const char* p : {"stream-4x4", "stream-8x8", "stream-11x11"})
    md += fmt::format("| {} | {} | {} |\n", p, summary(Variant{p, true}, Variant{p, false}),
                      paperL2[pi++]);

  md +=
      "\n## L2 size on the 11x11 mesh\n\n| L2 per controller | IPC vs no L2 (ours) | paper "
      "|\n|---|---|---|\n";
  for (uint32_t kb : {256u, 512u, 1024u})
    md += fmt::format("| {} KB | {} | {} |\n", kb,
                      summary(Variant{"stream-11x11", true, kb}, Variant{"stream-11x11", false}),
                      kb == 256   ? "+82.3%"
                      : kb == 512 ? "large further gain (Fig. 8)"
                                  : "smaller further gain (Fig. 8)");

  md +=
      "\n## DRAM burst length on the 8x8 mesh (burst duration constant)\n\n"
      "| burst length | bytes per cycle | IPC vs burst 4, with L2 (ours) | paper | without L2 "
      "(ours) | paper |\n"
      "|---|---|---|---|---|---|\n";
  for (uint32_t bl : {8u, 16u}) {
    md += fmt::format("| {} | {} | {} | {} | {} | {} |\n", bl, bl * 2,
                      summary(Variant{"stream-8x8", true, 256, bl}, Variant{"stream-8x8", true}),
                      bl == 8 ? "+15.8%" : "+17.1%",
                      summary(Variant{"stream-8x8", false, 256, bl}, Variant{"stream-8x8", false}),
                      bl == 8 ? "+45.6%" : "+58%");
  }

  md +=
      "\n## GPU:DRAM clock ratio 3:2 instead of 1:1 on the 8x8 mesh\n\n"
      "| | IPC change (ours) | paper |\n|---|---|---|\n";
  md += fmt::format(
      "| without L2 | {} | -37% |\n",
      summary(Variant{"stream-8x8", false, 256, 4, true}, Variant{"stream-8x8", false}));
  md += fmt::format("| with L2 | {} | -21% |\n", summary(Variant{"stream-8x8", true, 256, 4, true},
                                                         Variant{"stream-8x8", true}));
  if (failures) md += fmt::format("\n{} runs failed; see the CSV's status column.\n", failures);

  writeText(fs::path(o.out) / "seed003.csv", csv);
  writeText(fs::path(o.out) / "seed003-results.md", md);
  std::cerr << fmt::format("gpusc: wrote {} and {}\n", (fs::path(o.out) / "seed003.csv").string(),
                           (fs::path(o.out) / "seed003-results.md").string());
  return failures ? 1 : 0;
}

}  // namespace

std::vector<std::string> experimentNames() { return {"seed003"}; }

int runExperiment(const ExperimentOptions& o) {
  catalog::parseSize(o.size);
  if (o.name == "seed003") return seed003(o);
  throw InputError(fmt::format("experiment {}: no such experiment{} (known: {})", o.name,
                               didYouMean(o.name, experimentNames()),
                               join(experimentNames(), ", ")));
}

}  // namespace gpusc::cli
