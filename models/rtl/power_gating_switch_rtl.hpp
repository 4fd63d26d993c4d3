// The transactor of the verilated power-gating switch controller
// (models/rtl/verilog/power_gating_switch.sv): the timing calls of power::PowerGatingSwitch
// with timeout idle detection (acquire, gatedAt, use, beginBusy/endBusy) turned into the
// block's per-cycle `use` and `acquire` pins, clocked lazily up to the cycle of each call.
// Stretches in which no register can change (a busy block, a gated block) are skipped.
// It is the power::SwitchRtl that rtl.power_switch attaches to each PowerGatingSwitch.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <utility>

#include "power/switch_rtl.hpp"
#include "rtl/power_gating_switch_pins.hpp"

namespace gpusc::rtl {

class PowerGatingSwitchTransactor : public power::SwitchRtl {
 public:
  PowerGatingSwitchTransactor(uint32_t timeout, uint32_t wakeLatency);

  // The block is on and idle from cycle `c` (PowerGatingSwitch::begin): one reset clock.
  void begin(uint64_t c) override;
  // The `gated` output in cycle `c`, false once a request in `c` has started a wake-up.
  bool gatedAt(uint64_t c) override;
  // From the `wait_cycles` output in cycle `c`.
  uint64_t usableFrom(uint64_t c) override;
  // A request in cycle `c`: the cycle from which the block is usable (starts a wake-up when
  // gated), from the `wait_cycles` output.
  uint64_t acquire(uint64_t c) override;
  // The block is busy over [from, until) (calls in non-decreasing `from` order).
  void use(uint64_t from, uint64_t until) override;
  // Kept on over [from, until) while other blocks wake: `use` high (a request before `until`
  // finds the block on and usable).
  void hold(uint64_t from, uint64_t until) override;
  void beginBusy(uint64_t c) override;
  void endBusy(uint64_t c) override;

  void trace(rtl::RtlWaves& w, const std::string& scope, uint64_t periodFs) override {
    pins_->trace(w, scope, periodFs);
  }

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
