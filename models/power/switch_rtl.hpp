// The hardware side of a power-gating switch with timeout idle detection, as the platform key
// rtl.power_switch plugs it into power::PowerGatingSwitch (docs/rtl-cosim.md): the switch's
// timing calls, which models/rtl implements with the verilated controller
// (models/rtl/verilog/power_gating_switch.sv) behind its transactor. The accounting (busy,
// idle, gated and waking cycles) stays in PowerGatingSwitch. Calls come in non-decreasing
// cycle order.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

namespace gpusc::rtl {
class RtlWaves;  // rtl/rtl_waves.hpp
}

namespace gpusc::power {

using Cycle = uint64_t;

// rtl.power_switch: the model alone, the RTL deciding (`verilated`), or both compared.
enum class SwitchRtlMode : uint8_t { Model, Verilated, Lockstep };
SwitchRtlMode parseSwitchRtlMode(const std::string& name);  // InputError for an unknown name

class SwitchRtl {
 public:
  virtual ~SwitchRtl() = default;
  // Reset: the block is on and idle from `c`.
  virtual void begin(Cycle c) = 0;
  // The `gated` output in cycle `c` (false once a request in `c` has started a wake-up).
  virtual bool gatedAt(Cycle c) = 0;
  // For a block not gated at `c`: the cycle from which it is usable (the end of a wake-up
  // under way or of a hold()).
  virtual Cycle usableFrom(Cycle c) = 0;
  // A request in `c`: the cycle from which the block is usable (starts a wake-up when gated).
  virtual Cycle acquire(Cycle c) = 0;
  // Busy over [from, until); hold() keeps the block on without using it (waiting for others).
  virtual void use(Cycle from, Cycle until) = 0;
  virtual void hold(Cycle from, Cycle until) = 0;
  // Open-ended use from `c` until endBusy().
  virtual void beginBusy(Cycle c) = 0;
  virtual void endBusy(Cycle c) = 0;
  // gpusc run --vcd: the controller's signals into `waves` under `scope`.
  virtual void trace(rtl::RtlWaves& waves, const std::string& scope, uint64_t periodFs) = 0;
};

// The verilated controller with these settings (models/rtl/power_gating_switch_rtl.cpp).
std::unique_ptr<SwitchRtl> makeSwitchRtl(uint32_t timeout, uint32_t wakeLatency);

}  // namespace gpusc::power
