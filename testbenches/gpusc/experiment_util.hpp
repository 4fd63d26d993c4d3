// Helpers shared by the experiment commands (experiment*.cpp).
#pragma once

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/error.hpp"
#include "common/file_io.hpp"
#include "experiment.hpp"
#include "run_pool.hpp"
#include "sweep_spec.hpp"

namespace gpusc::cli {

namespace fs = std::filesystem;

inline double ipcOf(const nlohmann::json& stats) {
  uint64_t cycles = 0;
  for (const auto& l : stats.at("launches"))
    if (l.contains("timing")) cycles += l["timing"]["cycles"].get<uint64_t>();
  const uint64_t warp = stats.at("totals").at("warp_instructions").get<uint64_t>();
  return cycles ? double(warp) / double(cycles) : 0.0;
}

inline uint64_t cyclesOf(const nlohmann::json& stats) {
  uint64_t cycles = 0;
  for (const auto& l : stats.at("launches"))
    if (l.contains("timing")) cycles += l["timing"]["cycles"].get<uint64_t>();
  return cycles;
}

inline double mean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return v.empty() ? 0.0 : s / double(v.size());
}

inline double geomean(const std::vector<double>& ratios) {
  double s = 0;
  for (double x : ratios) s += std::log(x);
  return ratios.empty() ? 0.0 : std::exp(s / double(ratios.size()));
}

inline std::string pct(double ratio) { return fmt::format("{:+.1f}%", (ratio - 1.0) * 100.0); }

// The mean of per-kernel ratios as a change in percent, "-" when no kernel gave one.
inline std::string meanPct(const std::vector<double>& ratios) {
  return ratios.empty() ? std::string("-") : pct(mean(ratios));
}
// The mean with `digits` decimals, "-" when empty.
inline std::string meanText(const std::vector<double>& v, int digits = 3) {
  return v.empty() ? std::string("-") : fmt::format("{:.{}f}", mean(v), digits);
}

inline void writeText(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  writeFileAtomically(p.string(), text);
}

// The kernels of an experiment: its default set, every catalog kernel ("all"), or the user's
// (InputError for a misspelled name).
std::vector<std::string> experimentKernels(const ExperimentOptions& o,
                                           const std::vector<std::string>& defaults);

// One configuration of a study: a name for its labels (its sweep variant), a platform, --set
// overrides.
struct VariantRun {
  std::string key;
  std::string platform;
  std::vector<std::string> sets;
};

// ---- Experiments run through the sweep engine (docs/sweeps.md, "Seed experiments") ----------

// The experiment's sweep spec compiled into gpusc (stimuli/sweeps/NAME.yaml), with its kernels
// replaced by --kernel's (when given) at --size.
SweepSpec experimentSpec(const ExperimentOptions& o, const std::string& name);
// The spec's kernel names, in spec order.
std::vector<std::string> specKernels(const SweepSpec& spec);
// InternalError unless the spec's variants are exactly these configurations: the same names in
// the same order, each on its platform with the same overrides.
void checkVariants(const SweepSpec& spec, const std::vector<VariantRun>& variants);
// Runs the spec's points the database in <o.work>/<spec name> does not hold as done (none, when
// an earlier experiment or `gpusc sweep SPEC --out <o.work>/<spec name>` ran them all) with
// o.jobs children, then fills `rows` with every point's row in spec order. Returns 0, or the
// sweep's exit code when it did not finish (interrupted); failed points are rows.
int runExperimentSweep(const ExperimentOptions& o, const SweepSpec& spec,
                       std::vector<nlohmann::json>& rows);
// The experiment `name`'s spec (experimentSpec) checked against `variants` and run
// (runExperimentSweep), its points as runAll's outcomes would be: kernel-major over `kernels`
// (set to the spec's) and `variants`, each ok one with its full stats.json, each failed one with
// its error (and statsPath: its stats.json, beside the point's other files). Returns 0, or the
// sweep's exit code when it did not finish.
int runExperimentRuns(const ExperimentOptions& o, const std::string& name,
                      const std::vector<VariantRun>& variants, std::vector<std::string>& kernels,
                      std::vector<RunOutcome>& results);
// The same for a spec the experiment built (a pass whose points depend on an earlier pass).
int runExperimentRuns(const ExperimentOptions& o, const SweepSpec& spec,
                      const std::vector<VariantRun>& variants, std::vector<std::string>& kernels,
                      std::vector<RunOutcome>& results);
// Rows by (kernel, variant).
std::map<std::pair<std::string, std::string>, nlohmann::json> rowsByPoint(
    const std::vector<nlohmann::json>& rows);
inline bool rowOk(const nlohmann::json& row) { return row.value("status", "") == "ok"; }
// A failed point's first error line (or its status when it has none).
std::string rowError(const nlohmann::json& row);
// A point's full stats.json (its row's stats_path, under <o.work>/<spec name>).
nlohmann::json rowStats(const ExperimentOptions& o, const SweepSpec& spec,
                        const nlohmann::json& row);

// The experiments.
int seed000(const ExperimentOptions& o);
int seed001(const ExperimentOptions& o);
int seed001Train(const ExperimentOptions& o);
int seed002(const ExperimentOptions& o);
int seed004(const ExperimentOptions& o);  // shader benchmarks (kernels: their names)

}  // namespace gpusc::cli
