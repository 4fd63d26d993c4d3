// The pin-level interface of the drowsy-line controller of a cache bank
// (models/rtl/verilog/drowsy_line_controller.sv). Free of SystemC, like droop_predictor_pins.hpp.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

namespace gpusc::rtl {

class RtlWaves;

struct DrowsyLineControllerPins {
  virtual ~DrowsyLineControllerPins() = default;
  // Inputs
  bool rst = false, access = false, early = false, timeoutPolicy = false;
  uint32_t frame = 0, timeout = 0, wakeLatency = 0, lookahead = 0;
  // Outputs. wake and waitCycles answer this cycle's access (read before the clock edge);
  // quiet is the state after the edge.
  bool wake = false, quiet = false;
  uint32_t waitCycles = 0;
  // One rising clock edge with the inputs above; updates the outputs.
  virtual void clock() = 0;
  // The platform cycle of the next clock (the waveform's time; see verilated_pins.hpp).
  uint64_t cycle = 0;
  // Dumps every clock from now on into a stream of `waves` named `scope` (gpusc run --vcd).
  virtual void trace(RtlWaves& waves, const std::string& scope, uint64_t periodFs) = 0;
  // The `drowsy` output of frame `f` (the state after the last clock).
  virtual bool drowsy(uint32_t f) const = 0;
  // The frames the block holds (its FRAMES parameter).
  virtual uint32_t frames() const = 0;
};

// The verilated drowsy_line_controller.sv for the smallest FRAMES (128, 512 or 1024) that holds
// `frames`; nullptr if none does.
std::unique_ptr<DrowsyLineControllerPins> makeDrowsyLineControllerBlock(uint32_t frames);
// The broken variant drowsy_line_controller_late.sv (128 frames; a timeout one cycle late), for
// the lockstep tests.
std::unique_ptr<DrowsyLineControllerPins> makeLateDrowsyLineControllerBlock();

}  // namespace gpusc::rtl
