// The transactor of the verilated power-gating switch controller
// (models/rtl/verilog/power_gating_switch.sv): the timing calls of power::PowerGatingSwitch
// with timeout idle detection (acquire, gatedAt, use, beginBusy/endBusy) turned into the
// block's per-cycle `use` and `acquire` pins, clocked lazily up to the cycle of each call.
// Stretches in which no register can change (a busy block, a gated block) are skipped.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <utility>

#include "rtl/power_gating_switch_pins.hpp"

namespace gpusc::rtl {

class PowerGatingSwitchTransactor {
 public:
  PowerGatingSwitchTransactor(uint32_t timeout, uint32_t wakeLatency);

  // The block is on and idle from cycle `c` (PowerGatingSwitch::begin).
  void begin(uint64_t c);
  // The `gated` output in cycle `c`, false once a request in `c` has started a wake-up.
  bool gatedAt(uint64_t c);
  // A request in cycle `c`: the cycle from which the block is usable (starts a wake-up when
  // gated), from the `wait_cycles` output.
  uint64_t acquire(uint64_t c);
  // The block is busy over [from, until) (calls in non-decreasing `from` order).
  void use(uint64_t from, uint64_t until);
  void beginBusy(uint64_t c);
  void endBusy(uint64_t c);

  uint64_t clocks() const { return clocks_; }
  PowerGatingSwitchPins& pins() { return *pins_; }

 private:
  bool busyAt(uint64_t c);
  void advanceTo(uint64_t c);
  void clock(bool use);

  std::unique_ptr<PowerGatingSwitchPins> pins_;
  uint64_t cycle_ = 0;                              // the cycle whose inputs the next clock applies
  std::deque<std::pair<uint64_t, uint64_t>> busy_;  // [from, until), in order
  bool open_ = false;
  uint64_t openSince_ = 0;
  bool acquirePending_ = false, lastBusy_ = false;
  uint64_t clocks_ = 0;
};

}  // namespace gpusc::rtl
