// Experiment commands: each reproduces one seed paper's study on the kernel catalog, running the
// simulations in parallel child processes, and writes a CSV and a markdown table (with the
// paper's numbers beside ours) to the output folder.
#pragma once

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
};

// Returns the process exit code.
int runExperiment(const ExperimentOptions& o);

std::vector<std::string> experimentNames();
// Each experiment's name and a line saying what it studies and which paper it reproduces.
const std::vector<std::pair<std::string, std::string>>& experimentDescriptions();

}  // namespace gpusc::cli
