// Runs many `gpusc run` (or `gpusc shader run`) invocations in parallel child processes (each
// simulation isolated in its own process) and collects their stats.json. Used by the experiment
// commands (runAll) and the sweep engine (RunPool).
#pragma once

#include <sys/types.h>

#include <map>
#include <optional>
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
  std::string error;       // the child's last stderr line when it failed
  std::string firstError;  // its first stderr line when it failed
  nlohmann::json stats;    // its stats.json when it wrote one (also a stopped or failed check)
  std::string statsPath;   // that file; empty when the run wrote none
  double seconds = 0;      // wall-clock seconds from start to end
};

// Child processes started one by one, reaped as they end. Each child runs in its own process
// group (a Ctrl-C at the terminal reaches only the parent, which decides what to forward) and
// gets SIGTERM when the parent dies, so a killed parent leaves no simulation running.
class RunPool {
 public:
  // readStats: parse each run's stats.json into RunOutcome::stats (false: only statsPath).
  explicit RunPool(std::string self, bool readStats = true)
      : self_(std::move(self)), readStats_(readStats) {}
  // Children still running get SIGTERM and are reaped.
  ~RunPool();
  RunPool(const RunPool&) = delete;
  RunPool& operator=(const RunPool&) = delete;

  // Starts `spec` (its outDir created; stderr to outDir/stderr.txt), remembered as `id`.
  void start(size_t id, const RunSpec& spec);
  size_t running() const { return running_.size(); }

  struct Finished {
    size_t id;
    RunOutcome outcome;
  };
  // The next child that ended, waiting up to `timeoutMs` (a signal may end the wait early).
  std::optional<Finished> wait(int timeoutMs);
  // SIGTERM to every running child, once (a running `gpusc run` stops cleanly and exits 6).
  void terminateAll();

 private:
  struct Child {
    size_t id;
    RunSpec spec;
    double started;
    bool terminated = false;
  };
  std::string self_;
  bool readStats_;
  std::map<pid_t, Child> running_;
};

// Runs every spec with up to `jobs` children at a time; `self` is the gpusc executable.
// Prints a progress line per finished run on standard error.
std::vector<RunOutcome> runAll(const std::string& self, const std::vector<RunSpec>& specs,
                               unsigned jobs);

// The path of the running executable (/proc/self/exe).
std::string selfExecutable();

}  // namespace gpusc::cli
