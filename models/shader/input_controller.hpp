// InputController: the shader cluster's control (You and Wang, Sec. 3, Fig. 3). It takes a draw
// as a list of phases (the vertex program's invocations, then the fragment program's, made from
// the vertex outputs), and for each phase
//   - waits until every core is idle and loads the program and its constants into the shared
//     instruction/constant buffer (`controller.load_cycles_per_word` per instruction word and
//     per constant register);
//   - for each invocation, waits for an idle core, fills its input buffer with the invocation's
//     inputs (`controller.fill_cycles_per_entry` per input entry; the controller fills one core
//     at a time) and starts it;
//   - when all invocations have finished (each core writes its outputs out before it reports),
//     goes on to the next phase.
// When the last phase ends it stops every core and records the draw's length.
#pragma once

#include <exception>
#include <functional>
#include <vector>

#include <systemc>

#include "shader/shader_core.hpp"

namespace gpusc::shader {

struct ShaderPhase {
  const Program* program = nullptr;  // allocated and bundled
  std::vector<Vec4> constants;       // the constant file (constantFile)
  // The phase's invocations, made from the previous phase's results (empty for the first).
  std::function<std::vector<Invocation>(const std::vector<InvocationRun>& previous)> invocations;
};

struct PhaseResult {
  std::vector<Invocation> inputs;
  std::vector<InvocationRun> runs;  // by invocation
  uint64_t startCycle = 0, endCycle = 0;
  uint64_t loadCycles = 0, fillCycles = 0;  // the controller's work in this phase
};

class InputController : public sc_core::sc_module {
 public:
  sc_core::sc_vector<sc_core::sc_fifo_out<ShaderTask>> tasks;  // one per core
  sc_core::sc_vector<sc_core::sc_fifo_in<bool>> done;          // one per core

  InputController(sc_core::sc_module_name name, const ShaderPlatformConfig& cfg,
                  std::vector<ShaderPhase> phases, const TextureUnits& textures);

  const std::vector<PhaseResult>& results() const { return results_; }
  uint64_t cycles() const { return cycles_; }  // from the start to the last core's report
  bool finished() const { return finished_; }
  // What stopped the controller's thread early (an InputError from making a phase's
  // invocations), or null.
  std::exception_ptr error() const { return error_; }

 private:
  void run();
  void runPhases();
  void collect();     // reads every report that has arrived
  size_t idleCore();  // waits for one
  void waitAllIdle();
  void waitCycles(uint64_t n);
  uint64_t now() const;  // in cycles

  const ShaderPlatformConfig& cfg_;
  std::vector<ShaderPhase> phases_;
  const TextureUnits& textures_;
  sc_core::sc_time period_;
  std::vector<bool> busy_;
  std::vector<PhaseResult> results_;
  uint64_t cycles_ = 0;
  bool finished_ = false;
  std::exception_ptr error_;
};

}  // namespace gpusc::shader
