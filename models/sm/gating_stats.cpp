#include "sm/gating_stats.hpp"

namespace gpusc::sm {

SmGatingStats& SmGatingStats::operator+=(const SmGatingStats& o) {
  lanes += o.lanes;
  simdUnits += o.simdUnits;
  laneNetGatedCycles += o.laneNetGatedCycles;
  unitNetGatedCycles += o.unitNetGatedCycles;
  laneCycles += o.laneCycles;
  for (int k = 0; k < 4; ++k) stateCycles[k] += o.stateCycles[k];
  wakeStallCycles += o.wakeStallCycles;
  splitInstructions += o.splitInstructions;
  compactedInstructions += o.compactedInstructions;
  return *this;
}

nlohmann::json toJson(const SmGatingStats& s) {
  nlohmann::json j;
  j["lanes"] = power::toJson(s.lanes);
  j["simd_units"] = power::toJson(s.simdUnits);
  j["lane_net_gated_cycles"] = s.laneNetGatedCycles;
  j["unit_net_gated_cycles"] = s.unitNetGatedCycles;
  j["lane_cycles"] = s.laneCycles;
  j["state_cycles"] = {s.stateCycles[0], s.stateCycles[1], s.stateCycles[2], s.stateCycles[3]};
  j["wake_stall_cycles"] = s.wakeStallCycles;
  j["split_instructions"] = s.splitInstructions;
  j["compacted_instructions"] = s.compactedInstructions;
  return j;
}

}  // namespace gpusc::sm
