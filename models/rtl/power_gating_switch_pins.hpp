// The pin-level interface of the power-gating switch controller
// (models/rtl/verilog/power_gating_switch.sv). Free of SystemC, like droop_predictor_pins.hpp.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

namespace gpusc::rtl {

class RtlWaves;

struct PowerGatingSwitchPins {
  virtual ~PowerGatingSwitchPins() = default;
  // Inputs
  bool rst = false, use = false, acquire = false;
  uint32_t timeout = 0, wakeLatency = 0;
  // Outputs (valid after clock())
  bool gated = false, waking = false;
  uint32_t waitCycles = 0;
  virtual void clock() = 0;
  // The platform cycle of the next clock (the waveform's time; see verilated_pins.hpp).
  uint64_t cycle = 0;
  // Dumps every clock from now on into a stream of `waves` named `scope` (gpusc run --vcd).
  virtual void trace(RtlWaves& waves, const std::string& scope, uint64_t periodFs) = 0;
};

// The verilated power_gating_switch.sv.
std::unique_ptr<PowerGatingSwitchPins> makePowerGatingSwitchBlock();

}  // namespace gpusc::rtl
