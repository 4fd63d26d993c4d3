// Experiment commands: each reproduces one seed paper's study on the kernel catalog, running the
// simulations in parallel child processes, and writes a CSV and a markdown table (with the
// paper's numbers beside ours) to the output folder.
#pragma once

#include <atomic>
#include <string>
#include <utility>
#include <vector>

namespace gpusc::cli {

struct ExperimentOptions {
  std::string name;                  // seed003, ...
  std::string size = "small";        // catalog problem size
  std::vector<std::string> kernels;  // empty: the experiment's default set; "all": every kernel
  unsigned jobs = 2;
  std::string out = "docs/validation";
  std::string work = "gpusc-experiments";  // per-run result folders
  // Raised by SIGINT/SIGTERM: an experiment run through the sweep engine stops cleanly (its
  // running points are marked interrupted) and exits with 6. Null: not watched.
  const std::atomic<bool>* interrupt = nullptr;
};

// Whether the experiment runs through the sweep engine (a spec in stimuli/sweeps/): it stops
// cleanly on `interrupt` and resumes. The others run their own pool.
bool experimentIsSweep(const std::string& name);

// Returns the process exit code.
int runExperiment(const ExperimentOptions& o);

std::vector<std::string> experimentNames();
// Each experiment's name and a line saying what it studies and which paper it reproduces.
const std::vector<std::pair<std::string, std::string>>& experimentDescriptions();

}  // namespace gpusc::cli
