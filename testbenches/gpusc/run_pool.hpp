// Runs many `gpusc run` (or `gpusc shader run`) invocations in parallel child processes (each
// simulation isolated in its own process) and collects their stats.json. Used by the experiment
// commands.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace gpusc::cli {

struct RunSpec {
  std::string label;                        // for progress lines and error messages
  std::vector<std::string> command{"run"};  // the gpusc subcommand
  std::vector<std::string> args;            // arguments after it
  std::string outDir;                       // passed as --out; stats.json is read from it
};

struct RunOutcome {
  bool ok = false;
  int exitCode = 0;
  std::string error;     // the child's last stderr line when it failed
  nlohmann::json stats;  // its stats.json when it succeeded
};

// Runs every spec with up to `jobs` children at a time; `self` is the gpusc executable.
// Prints a progress line per finished run on standard error.
std::vector<RunOutcome> runAll(const std::string& self, const std::vector<RunSpec>& specs,
                               unsigned jobs);

// The path of the running executable (/proc/self/exe).
std::string selfExecutable();

}  // namespace gpusc::cli
