// RTL co-simulation in lockstep (docs/rtl-cosim.md): the report of the first cycle where a
// block's verilated RTL and its C++ model produce different outputs. Shared by every block.
#pragma once

#include <cstdint>
#include <string>

namespace gpusc {

// The first divergence of one block instance (empty: none so far).
class LockstepMonitor {
 public:
  // Compares one output read in `cycle`; records the first difference as
  //   rtl lockstep: block <block> of <instance> diverged at cycle <cycle>: <signal> is <model>
  //   in the model, <rtl> in the RTL
  // Outside a simulation it throws LockstepDivergence; inside one (SystemC turns an exception
  // that leaves a process into a generic report) it pauses the simulation, and the timing
  // engine throws it when sc_start returns. Returns whether the two agreed.
  bool check(const char* block, const std::string& instance, uint64_t cycle, const char* signal,
             uint64_t model, uint64_t rtl) {
    if (model == rtl) return true;
    diverged(block, instance, cycle, signal, model, rtl);
    return false;
  }
  const std::string& divergence() const { return divergence_; }

 private:
  void diverged(const char* block, const std::string& instance, uint64_t cycle, const char* signal,
                uint64_t model, uint64_t rtl);

  std::string divergence_;
};

}  // namespace gpusc
