// The HTML report of a sweep (`gpusc report SPEC.yaml`): the points' table, and plots chosen by
// the sweep's shape:
// - a numeric axis: each headline metric against it, one line per kernel (and variant, and the
//   values of the other axes);
// - several variants: each metric normalised to the first variant, bars per kernel and the
//   geometric mean;
// - two numeric axes: a heatmap of IPC (or, without timing, warp instructions) over both, per
//   kernel and variant.
// The page is self-contained (html_page.hpp); points link to their stats.json.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace gpusc::cli {

struct SweepReportInput {
  std::string name;                   // the sweep's name
  std::string specFile;               // as given on the command line
  std::vector<std::string> axisKeys;  // in spec order
  std::vector<std::string> variants;  // in spec order; the first is the baseline
  std::vector<nlohmann::json> rows;   // the results database's rows (sweep_db.hpp columns)
  std::string statsBase;              // the folder rows' stats_path are relative to
  std::string reportDir;              // the page's folder: stats.json links are relative to it
};

std::string sweepReportHtml(const SweepReportInput& in);

}  // namespace gpusc::cli
