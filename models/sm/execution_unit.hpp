// A pipelined execution unit: SIMD (SP) units, the special-function unit, a double-precision
// unit. A warp instruction occupies the unit for max(initiation interval, warp size / lanes)
// cycles (two cycles for a 32-thread warp on 16 lanes) and produces its result `latency`
// cycles after it starts.
#pragma once

#include <algorithm>
#include <cstdint>

#include <systemc>

#include "common/platform_config.hpp"
#include "sm/pipeline.hpp"

namespace gpusc::sm {

class ExecutionUnit : public sc_core::sc_module {
 public:
  ExecutionUnit(const sc_core::sc_module_name& name, Unit kind, uint32_t lanes, uint32_t warpSize)
      : sc_core::sc_module(name),
        kind_(kind),
        lanes_(lanes),
        warpCycles_((warpSize + lanes - 1) / lanes) {}

  Unit unitKind() const { return kind_; }
  uint32_t lanes() const { return lanes_; }
  bool free(Cycle now) const { return busyUntil_ <= now; }
  bool busy(Cycle now) const { return busyUntil_ > now; }
  Cycle busyUntil() const { return busyUntil_; }
  uint32_t occupancy(const OpTiming& t) const { return std::max(t.initiation, warpCycles_); }
  void start(Cycle now, uint32_t occupancy) { busyUntil_ = now + occupancy; }
  void reset() { busyUntil_ = 0; }

 private:
  Unit kind_;
  uint32_t lanes_;
  uint32_t warpCycles_;
  Cycle busyUntil_ = 0;
};

}  // namespace gpusc::sm
