// `gpusc exec`: an unmodified CUDA program run with every kernel launch simulated. The program
// runs as a child process against libgpusc_cudart (testbenches/cudart), which asks this process
// to do each runtime call on the Device (models/cudart/server).
#pragma once

#include <sys/types.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/error.hpp"
#include "gpu/device.hpp"

namespace gpusc::cli {

struct ProgramRun {
  int exitCode = 0;                   // what gpusc exec exits with: the program's status
  std::string status;                 // "exited with status 0", "killed by signal 11 (SIGSEGV)"
  std::optional<RunStopped> stopped;  // a run limit or an interrupt stopped a launch
  nlohmann::json work;                // stats.json's "workload"
};

// A program started and not yet served: it runs its host code meanwhile (reading its inputs,
// say) while the simulator builds its Device, and its first runtime call waits for serveProgram.
// Destroyed unserved (the run failed before it began), the program is killed.
class StartedProgram {
 public:
  StartedProgram(pid_t pid, int fd, std::vector<std::string> argv)
      : pid_(pid), fd_(fd), argv_(std::move(argv)) {}
  ~StartedProgram();
  StartedProgram(const StartedProgram&) = delete;
  StartedProgram& operator=(const StartedProgram&) = delete;

 private:
  friend ProgramRun serveProgram(Device& dev, StartedProgram& program,
                                 const std::string& resultsFolder);
  pid_t pid_;
  int fd_;
  std::vector<std::string> argv_;
};

// An environment variable for the program: `value` empty removes it.
struct EnvSetting {
  std::string name, value;
};

// Starts `argv` (argv[0] found on PATH) with libgpusc_cudart first on its library path and
// `settings` in its environment (the run's settings as GPUSC_* variables, for a simulator a
// process it starts may start). Throws InputError when the program cannot be started, or links
// CUDA's runtime statically.
std::unique_ptr<StartedProgram> startProgram(const std::vector<std::string>& argv,
                                             const std::vector<EnvSetting>& settings = {});

// Serves the program's runtime calls on `dev` until it exits. `resultsFolder`: where this run
// writes (the program's runtime library hands it down, GPUSC_PARENT_OUT).
ProgramRun serveProgram(Device& dev, StartedProgram& program, const std::string& resultsFolder);

// Serves a program that started its own simulator (libgpusc_cudart outside `gpusc exec`): the
// connected socket `fd`, until the program ends.
ProgramRun serveProgram(Device& dev, int fd, const std::string& programName,
                        const std::string& resultsFolder);

// The folder holding libcudart.so.13 (libgpusc_cudart) for programs this gpusc runs: beside the
// executable in a build tree (cudart/), or lib/gpusc/ of an installation. Throws InputError when
// there is none.
std::string cudartLibraryDir();

}  // namespace gpusc::cli
