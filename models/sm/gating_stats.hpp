// Power-gating statistics of one SM's SIMD units and lanes (seed 002), over one kernel: their
// switches' counters, the SIMD issue control's states and what the control cost. The SM's own
// switch is Sm::powerSwitch(). Valid after Sm::finishPowerWindow().
#pragma once

#include <cstdint>

#include <nlohmann/json.hpp>

#include "power/power_gating_switch.hpp"

namespace gpusc::sm {

struct SmGatingStats {
  power::SwitchCounters lanes;      // summed over every lane of every SIMD unit
  power::SwitchCounters simdUnits;  // summed over the SIMD units
  double laneNetGatedCycles = 0, unitNetGatedCycles = 0;  // summed netGatedCycles()
  uint64_t laneCycles = 0;       // lanes x cycles the lanes accounted (their windows)
  uint64_t stateCycles[4] = {};  // cycles in issue-control states 1..4
  uint64_t wakeStallCycles = 0;  // cycles a SIMD dispatch waited for waking units/lanes
  uint64_t splitInstructions = 0, compactedInstructions = 0;

  // Adds another SM's (or launch's) figures.
  SmGatingStats& operator+=(const SmGatingStats& o);
};

// Keys: lanes, simd_units (power::toJson of the counters), lane_net_gated_cycles,
// unit_net_gated_cycles, lane_cycles, state_cycles [4], wake_stall_cycles, split_instructions,
// compacted_instructions.
nlohmann::json toJson(const SmGatingStats& s);

}  // namespace gpusc::sm
