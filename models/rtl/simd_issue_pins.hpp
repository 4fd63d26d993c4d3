// The pin-level interface of the SIMD issue-control state machine
// (models/rtl/verilog/simd_issue_control.sv). Free of SystemC, like droop_predictor_pins.hpp.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

namespace gpusc::rtl {

class RtlWaves;

// Utilisation and thresholds in the RTL's fixed point: 0 .. 1.0 with this many fractional bits.
constexpr int kUtilFracBits = 16;

struct SimdIssuePins {
  virtual ~SimdIssuePins() = default;
  // Inputs
  bool rst = false, sliceEnd = false;
  uint32_t util = 0;
  uint32_t down[3] = {0, 0, 0};  // cfg_down1..3: leave states 1..3 downwards
  uint32_t up[3] = {0, 0, 0};    // cfg_up2..4: leave states 2..4 upwards
  // Outputs (valid after clock())
  uint32_t state = 1;
  virtual void clock() = 0;
  // The platform cycle of the next clock (the waveform's time; see verilated_pins.hpp).
  uint64_t cycle = 0;
  // Dumps every clock from now on into a stream of `waves` named `scope` (gpusc run --vcd).
  virtual void trace(RtlWaves& waves, const std::string& scope, uint64_t periodFs) = 0;
};

// The verilated simd_issue_control.sv.
std::unique_ptr<SimdIssuePins> makeSimdIssueBlock();

}  // namespace gpusc::rtl
