// A pipelined execution unit: SIMD (SP) units, the special-function unit, a double-precision
// unit. Its lanes run at sm.lane_clock_ratio times the core clock; a warp instruction occupies the
// unit for max(initiation interval, ceil(warp size / (lanes x ratio))) core cycles (one cycle for
// a 32-thread warp on 16 lanes at Fermi's doubled shader clock, two at the core clock) and
// produces its result `latency` cycles after it starts.
//
// A SIMD unit has power-gating switches (seed 002): one for the unit's shared logic
// ("power_switch") and one per lane ("lane0", "lane1", ...). The Sm drives them.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

#include <fmt/format.h>
#include <systemc>

#include "common/platform_config.hpp"
#include "power/power_gating_switch.hpp"
#include "sm/pipeline.hpp"

namespace gpusc::sm {

class ExecutionUnit : public sc_core::sc_module {
 public:
  ExecutionUnit(const sc_core::sc_module_name& name, Unit kind, uint32_t lanes, const SmConfig& sm)
      : sc_core::sc_module(name), kind_(kind), lanes_(lanes), warpCycles_(sm.warpCycles(lanes)) {}
  // A unit with power-gating switches for itself and each lane.
  ExecutionUnit(const sc_core::sc_module_name& name, Unit kind, uint32_t lanes, const SmConfig& sm,
                const power::SwitchParams& unitSwitch, const power::SwitchParams& laneSwitch)
      : ExecutionUnit(name, kind, lanes, sm) {
    unitSwitch_ = std::make_unique<power::PowerGatingSwitch>("power_switch", unitSwitch);
    for (uint32_t l = 0; l < lanes; ++l)
      laneSwitches_.push_back(
          std::make_unique<power::PowerGatingSwitch>(fmt::format("lane{}", l).c_str(), laneSwitch));
  }

  Unit unitKind() const { return kind_; }
  uint32_t lanes() const { return lanes_; }
  // Core cycles a full warp occupies the unit (at least; an instruction's initiation interval
  // may be longer).
  uint32_t warpCycles() const { return warpCycles_; }
  bool free(Cycle now) const { return busyUntil_ <= now; }
  bool busy(Cycle now) const { return busyUntil_ > now; }
  Cycle busyUntil() const { return busyUntil_; }
  uint32_t occupancy(const OpTiming& t) const { return std::max(t.initiation, warpCycles_); }
  void start(Cycle now, uint32_t occupancy) { busyUntil_ = now + occupancy; }
  void reset() { busyUntil_ = 0; }

  // Power-gating switches (SIMD units only; nullptr / none otherwise).
  power::PowerGatingSwitch* unitSwitch() { return unitSwitch_.get(); }
  const power::PowerGatingSwitch* unitSwitch() const { return unitSwitch_.get(); }
  power::PowerGatingSwitch& laneSwitch(uint32_t l) { return *laneSwitches_[l]; }
  const power::PowerGatingSwitch& laneSwitch(uint32_t l) const { return *laneSwitches_[l]; }
  // Calls f on the unit's switch and on every lane's (a SIMD unit only).
  template <class F>
  void forEachSwitch(F&& f) {
    f(*unitSwitch_);
    for (auto& l : laneSwitches_) f(*l);
  }
  // Calls f on the switches of the lanes in `mask` (bit l: lane l).
  template <class F>
  void forEachLane(uint64_t mask, F&& f) {
    for (; mask != 0; mask &= mask - 1) f(*laneSwitches_[__builtin_ctzll(mask)]);
  }

 private:
  Unit kind_;
  uint32_t lanes_;
  uint32_t warpCycles_;
  Cycle busyUntil_ = 0;
  std::unique_ptr<power::PowerGatingSwitch> unitSwitch_;
  std::vector<std::unique_ptr<power::PowerGatingSwitch>> laneSwitches_;
};

}  // namespace gpusc::sm
