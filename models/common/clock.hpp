// A clock domain: converts between simulation time and cycles of one clock. Modules of a domain
// (core, interconnect, L2, DRAM; gpu.clocks) schedule their work on its edges. Time resolution
// is one femtosecond (set by the timing engine before any module exists).
#pragma once

#include <cmath>
#include <cstdint>

#include <systemc>

namespace gpusc {

class Clock {
 public:
  Clock() = default;
  explicit Clock(double mhz)
      : periodValue_(static_cast<uint64_t>(std::llround(1e9 / mhz))) {}  // femtoseconds

  sc_core::sc_time period() const { return sc_core::sc_time::from_value(periodValue_); }
  uint64_t periodValue() const { return periodValue_; }
  // The cycle in progress now (the last edge at or before the current time).
  uint64_t now() const { return sc_core::sc_time_stamp().value() / periodValue_; }
  // The first edge at or after the current time.
  uint64_t nextEdge() const {
    const uint64_t t = sc_core::sc_time_stamp().value();
    return (t + periodValue_ - 1) / periodValue_;
  }
  // Delay from now until edge `cycle` (zero if it has passed).
  sc_core::sc_time until(uint64_t cycle) const {
    const uint64_t at = cycle * periodValue_, t = sc_core::sc_time_stamp().value();
    return sc_core::sc_time::from_value(at > t ? at - t : 0);
  }
  // Cycles of this clock in `t`, rounded up.
  uint64_t cyclesIn(const sc_core::sc_time& t) const {
    return (t.value() + periodValue_ - 1) / periodValue_;
  }

 private:
  uint64_t periodValue_ = 1;
};

}  // namespace gpusc
