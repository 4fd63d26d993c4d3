#include "shader/input_controller.hpp"

#include <cmath>

namespace gpusc::shader {

InputController::InputController(sc_core::sc_module_name name, const ShaderPlatformConfig& cfg,
                                 std::vector<ShaderPhase> phases, const TextureUnits& textures)
    : sc_module(name),
      tasks("tasks", cfg.cores),
      done("done", cfg.cores),
      cfg_(cfg),
      phases_(std::move(phases)),
      textures_(textures),
      period_(sc_core::sc_time(1e3 / cfg.clock_mhz, sc_core::SC_NS)),
      busy_(cfg.cores, false) {
  SC_HAS_PROCESS(InputController);
  SC_THREAD(run);
}

uint64_t InputController::now() const {
  return uint64_t(std::llround(sc_core::sc_time_stamp() / period_));
}

void InputController::waitCycles(uint64_t n) {
  if (n > 0) wait(period_ * double(n));
}

void InputController::collect() {
  for (size_t c = 0; c < done.size(); ++c)
    while (done[c]->num_available() > 0) {
      done[c]->read();
      busy_[c] = false;
    }
}

size_t InputController::idleCore() {
  while (true) {
    collect();
    for (size_t c = 0; c < busy_.size(); ++c)
      if (!busy_[c]) return c;
    sc_core::sc_event_or_list any;
    for (size_t c = 0; c < done.size(); ++c) any |= done[c]->data_written_event();
    wait(any);
  }
}

void InputController::waitAllIdle() {
  for (size_t c = 0; c < busy_.size(); ++c) {
    collect();
    while (busy_[c]) {
      wait(done[c]->data_written_event());
      collect();
    }
  }
}

void InputController::run() {
  // An error ends this thread and is kept for simulateDraw (see ShaderCore::run).
  try {
    runPhases();
  } catch (const std::exception&) {
    error_ = std::current_exception();
  }
}

void InputController::runPhases() {
  std::vector<InvocationRun> previous;
  for (ShaderPhase& ph : phases_) {
    waitAllIdle();
    PhaseResult r;
    r.startCycle = now();
    // The shared instruction/constant buffer takes the program's words and constants.
    r.loadCycles = (ph.program->instructionCount() + ph.program->constantCount) *
                   uint64_t(cfg_.controller.load_cycles_per_word);
    waitCycles(r.loadCycles);
    r.inputs = ph.invocations(previous);
    r.runs.resize(r.inputs.size());
    const uint64_t fill =
        uint64_t(inputEntries(*ph.program)) * cfg_.controller.fill_cycles_per_entry;
    for (size_t k = 0; k < r.inputs.size(); ++k) {
      const size_t core = idleCore();
      waitCycles(fill);
      r.fillCycles += fill;
      busy_[core] = true;
      tasks[core]->write(
          ShaderTask{ph.program, &r.inputs[k], &ph.constants, &textures_, &r.runs[k], false});
    }
    waitAllIdle();
    r.endCycle = now();
    previous = r.runs;
    results_.push_back(std::move(r));
  }
  cycles_ = now();
  finished_ = true;
  ShaderTask stop;
  stop.last = true;
  for (size_t c = 0; c < tasks.size(); ++c) tasks[c]->write(stop);
}

}  // namespace gpusc::shader
