// The pin-level interface of the global droop detector
// (models/rtl/verilog/global_droop_detector.sv). Free of SystemC, like droop_predictor_pins.hpp.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

namespace gpusc::rtl {

class RtlWaves;

struct GlobalDroopDetectorPins {
  static constexpr uint32_t kMaxSms = 128;  // the block's parameter N
  virtual ~GlobalDroopDetectorPins() = default;
  // Inputs
  bool rst = false, report = false;
  uint32_t active[kMaxSms / 32] = {};  // bit i: SM i has an active warp
  uint32_t minSms = 0, window = 0, stagger = 0, holdoff = 0;
  // Outputs (valid after clock())
  bool detect = false, quiet = true;
  uint32_t delay[kMaxSms] = {};
  uint32_t holdLeft = 0;
  virtual void clock() = 0;
  // The platform cycle of the next clock (the waveform's time; see verilated_pins.hpp).
  uint64_t cycle = 0;
  // Dumps every clock from now on into a stream of `waves` named `scope` (gpusc run --vcd).
  virtual void trace(RtlWaves& waves, const std::string& scope, uint64_t periodFs) = 0;
};

// The verilated global_droop_detector.sv.
std::unique_ptr<GlobalDroopDetectorPins> makeGlobalDroopDetectorBlock();

}  // namespace gpusc::rtl
