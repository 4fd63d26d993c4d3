// Errors that reach the user. Library code throws; only the command-line tool decides exit codes.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>

namespace gpusc {

// Bad input: a platform file, launch spec, PTX file or command-line value the user can fix.
// The message is one line and names the file, line and key where they are known.
class InputError : public std::runtime_error {
 public:
  explicit InputError(const std::string& what) : std::runtime_error(what) {}
};

// A launch the device refuses before running it, and why: a CUDA runtime maps the reason to
// its error code, so no caller needs to read the message.
class LaunchRefused : public InputError {
 public:
  enum class Reason : uint8_t {
    Configuration,        // grid, block or shared memory outside what the platform allows
    Resources,            // a block needs more registers than an SM has
    CooperativeTooLarge,  // a cooperative grid larger than the GPU holds at once
    Unsupported,          // a launch kind the platform's configuration cannot run
  };
  LaunchRefused(Reason reason, const std::string& what) : InputError(what), reason_(reason) {}
  Reason reason() const { return reason_; }

 private:
  Reason reason_;
};

// A kernel did something a GPU would fault on (illegal address, misaligned access, trap,
// deadlock). `detail` may hold a multi-line state dump (a deadlock's warps and what each waits
// for); the message stays one line.
class KernelFault : public std::runtime_error {
 public:
  explicit KernelFault(const std::string& what, std::string detail = {})
      : std::runtime_error(what), detail_(std::move(detail)) {}
  const std::string& detail() const { return detail_; }

 private:
  std::string detail_;
};

// A bug in gpusc itself (an invariant that must hold did not). `detail` as for KernelFault.
class InternalError : public std::logic_error {
 public:
  explicit InternalError(const std::string& what, std::string detail = {})
      : std::logic_error(what), detail_(std::move(detail)) {}
  const std::string& detail() const { return detail_; }

 private:
  std::string detail_;
};

// Why a run stopped before its work was done (see RunStopped).
enum class StopReason : uint8_t {
  MaxCycles,        // limits.max_cycles (--max-cycles)
  MaxInstructions,  // limits.max_warp_instructions (--max-instructions)
  Timeout,          // limits.timeout_seconds (--timeout): host wall-clock seconds
  Interrupted,      // the caller's interrupt flag (the command-line tool: SIGINT or SIGTERM)
};
// The name results use for it: "max-cycles", "max-instructions", "timeout", "interrupted".
inline const char* stopReasonName(StopReason r) {
  switch (r) {
    case StopReason::MaxCycles:
      return "max-cycles";
    case StopReason::MaxInstructions:
      return "max-instructions";
    case StopReason::Timeout:
      return "timeout";
    case StopReason::Interrupted:
      return "interrupted";
  }
  return "?";
}

// A run limit was reached or the run was interrupted. The launch that was running stopped at a
// cycle boundary (timing mode) or after a whole warp instruction (functional mode), and its
// partial statistics are in the Device's launch records, marked incomplete.
class RunStopped : public std::runtime_error {
 public:
  RunStopped(StopReason reason, const std::string& what)
      : std::runtime_error(what), reason_(reason) {}
  StopReason reason() const { return reason_; }

 private:
  StopReason reason_;
};

// RTL co-simulation in lockstep: a verilated block's outputs differed from its C++ model's in
// the same cycle. The message names the block, its instance (e.g. the SM), the cycle and both
// values.
class LockstepDivergence : public std::runtime_error {
 public:
  explicit LockstepDivergence(const std::string& what) : std::runtime_error(what) {}
};

}  // namespace gpusc
