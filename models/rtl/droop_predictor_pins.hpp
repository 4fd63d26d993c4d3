// The pin-level interface of a droop-predictor block (the contract of
// models/rtl/verilog/droop_predictor.sv) and the built-in verilated blocks that implement it.
// Free of SystemC: the verilated classes are instantiated in droop_predictor_blocks.cpp, which
// must not see SystemC's headers (Verilator's headers then assume its --sc mode).
#pragma once

#include <cstdint>
#include <string>

#include "common/registry.hpp"

namespace gpusc::rtl {

class RtlWaves;

// Watts in the RTL's fixed point (kPowerFracBits fractional bits, rounded to nearest,
// saturating at the 32-bit maximum).
constexpr int kPowerFracBits = 16;
uint32_t toFixedWatts(double watts);

// The block's pins (the interface contract of droop_predictor.sv). A verilated block is
// adapted to it by VerilatedPins<V> (rtl/verilated_pins.hpp).
struct DroopPredictorPins {
  virtual ~DroopPredictorPins() = default;
  // Inputs
  bool rst = false, clear = false, push = false, predictEn = false;
  uint32_t power = 0, thr2 = 0, thr3 = 0, thr4 = 0, throttleCycles = 0;
  // Outputs (valid after clock())
  bool predict = false, throttle = false;
  uint32_t remaining = 0;
  // One rising clock edge with the inputs above; updates the outputs.
  virtual void clock() = 0;
  // The platform cycle of the next clock (the waveform's time; see verilated_pins.hpp).
  uint64_t cycle = 0;
  // Dumps every clock from now on into a stream of `waves` named `scope` (gpusc run --vcd).
  virtual void trace(RtlWaves& waves, const std::string& scope, uint64_t periodFs) = 0;
};

// The droop-predictor blocks that are built in, by name (rtl.droop_predictor_block).
const Registry<DroopPredictorPins>& droopPredictorBlocks();

}  // namespace gpusc::rtl
