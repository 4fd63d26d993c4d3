#include "gpu/report.hpp"

namespace gpusc {

nlohmann::json toJson(const Dim3& d) { return nlohmann::json::array({d.x, d.y, d.z}); }

double averageActiveLanes(const func::ExecStats& s) {
  return s.warpInsts ? double(s.threadInsts) / double(s.warpInsts) : 0.0;
}

nlohmann::json toJson(const func::ExecStats& s) {
  nlohmann::json j;
  j["warp_instructions"] = s.warpInsts;
  j["thread_instructions"] = s.threadInsts;
  j["ctas"] = s.ctas;
  j["branches"] = s.branches;
  j["divergent_branches"] = s.divergentBranches;
  j["barrier_waits"] = s.barrierWaits;
  j["average_active_lanes"] = averageActiveLanes(s);
  nlohmann::json cls = nlohmann::json::object();
  for (int i = 0; i < func::kNumInstClasses; ++i)
    if (s.byClass[i]) cls[func::instClassName(static_cast<func::InstClass>(i))] = s.byClass[i];
  j["warp_instructions_by_class"] = cls;
  nlohmann::json hist = nlohmann::json::array();
  for (int i = 0; i <= func::kWarpSize; ++i) hist.push_back(s.activeLanes[i]);
  j["active_lanes_histogram"] = hist;  // index: active threads per warp instruction
  return j;
}

nlohmann::json toJson(const LaunchRecord& l) {
  nlohmann::json j;
  j["kernel"] = l.kernel;
  j["grid"] = toJson(l.grid);
  j["block"] = toJson(l.block);
  j["dynamic_shared_bytes"] = l.dynamicShared;
  j["shared_bytes_per_cta"] = l.sharedPerCta;
  j["estimated_registers_per_thread"] = l.regsPerThread;
  j["host_seconds"] = l.seconds;
  j["stats"] = toJson(l.stats);
  return j;
}

}  // namespace gpusc
