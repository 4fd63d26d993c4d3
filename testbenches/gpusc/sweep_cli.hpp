// gpusc sweep SPEC.yaml | gpusc sweep status SPEC.yaml | gpusc results SPEC.yaml: the
// design-space sweep engine's commands (docs/sweeps.md).
#pragma once

#include <atomic>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sweep_spec.hpp"

namespace gpusc::cli {

struct SweepOptions {
  std::vector<std::string> args;  // SPEC, or status SPEC
  std::string out;                // default results/sweeps/<name>
  unsigned jobs = 0;              // 0: one per core
  bool quiet = false;
  bool retryFailed = false;
  bool dryRun = false;
  // --backend slurm: one sbatch job array (docs/sweeps.md).
  std::string backend = "local";
  std::string partition, time, mem;  // sbatch --partition, --time, --mem
  unsigned arrayThrottle = 0;        // at most this many tasks at once (0: no limit)
  unsigned tasks = 0;                // array tasks (0: one per point, at most 1000)
  // One task of the array (the job script's command): its slice of the points in `todo`.
  bool worker = false;
  unsigned task = 0;
  std::string todo;
};

// Runs the points of a sweep that the database does not hold as done (or prints them, with
// dryRun; or the counts by status, with `status SPEC`). `interrupt`: raised by SIGINT/SIGTERM.
int cmdSweep(const SweepOptions& o, const std::atomic<bool>* interrupt);
// The same for a spec already loaded (and perhaps changed; a seed experiment's, with its
// --size and --kernel): o.args names only `status` or nothing else than the spec.
int runSweep(SweepSpec spec, const SweepOptions& o, const std::atomic<bool>* interrupt);

// Every point of the spec in spec order with its row in the database of the sweep's folder
// `out` (empty: results/sweeps/<name>); a point without a row for its configuration is
// "pending". InputError when the folder holds no database.
std::vector<nlohmann::json> sweepTable(SweepSpec spec, const std::string& out);

struct ResultsOptions {
  std::string spec;
  std::string out;     // the sweep's folder, as for gpusc sweep
  std::string output;  // -o FILE; empty: standard output
  bool csv = false;
  bool json = false;
};

// The sweep's table from its database, as CSV or JSON.
int cmdResults(const ResultsOptions& o);

struct SweepReportOptions {
  std::string spec;
  std::string out;     // the sweep's folder, as for gpusc sweep
  std::string output;  // the page; empty: report.html in the sweep's folder
};

// `gpusc report SPEC.yaml`: the sweep's HTML report (sweep_report.hpp) from its database.
int cmdSweepReport(const SweepReportOptions& o);

}  // namespace gpusc::cli
