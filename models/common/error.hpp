// Errors that reach the user. Library code throws; only the command-line tool decides exit codes.
#pragma once

#include <stdexcept>
#include <string>

namespace gpusc {

// Bad input: a platform file, launch spec, PTX file or command-line value the user can fix.
// The message is one line and names the file, line and key where they are known.
class InputError : public std::runtime_error {
 public:
  explicit InputError(const std::string& what) : std::runtime_error(what) {}
};

// A kernel did something a GPU would fault on (illegal address, misaligned access, trap).
class KernelFault : public std::runtime_error {
 public:
  explicit KernelFault(const std::string& what) : std::runtime_error(what) {}
};

// A bug in gpusc itself (an invariant that must hold did not).
class InternalError : public std::logic_error {
 public:
  explicit InternalError(const std::string& what) : std::logic_error(what) {}
};

// RTL co-simulation in lockstep: a verilated block's outputs differed from its C++ model's in
// the same cycle. The message names the block, its instance (e.g. the SM), the cycle and both
// values.
class LockstepDivergence : public std::runtime_error {
 public:
  explicit LockstepDivergence(const std::string& what) : std::runtime_error(what) {}
};

}  // namespace gpusc
