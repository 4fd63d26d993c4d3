// Helpers shared by the experiment commands (experiment*.cpp).
#pragma once

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/error.hpp"
#include "common/file_io.hpp"
#include "experiment.hpp"
#include "run_pool.hpp"

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

// One configuration of a study: a name for its folder and labels, a platform, --set overrides.
struct VariantRun {
  std::string key;
  std::string platform;
  std::vector<std::string> sets;
};
// One timing-mode `gpusc run` per kernel and variant, kernel-major (results come back in this
// order), each writing to <o.work>/<study>/<kernel>/<variant key>.
std::vector<RunSpec> runSpecs(const ExperimentOptions& o, const std::string& study,
                              const std::vector<std::string>& kernels,
                              const std::vector<VariantRun>& variants);

// The experiments.
int seed000(const ExperimentOptions& o);
int seed001(const ExperimentOptions& o);
int seed001Train(const ExperimentOptions& o);
int seed002(const ExperimentOptions& o);
int seed004(const ExperimentOptions& o);  // shader benchmarks (kernels: their names)

}  // namespace gpusc::cli
