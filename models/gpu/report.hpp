// Machine-readable results: statistics as JSON, written beside every run.
#pragma once

#include <nlohmann/json.hpp>

#include "gpu/device.hpp"

namespace gpusc {

nlohmann::json toJson(const func::ExecStats& s);
nlohmann::json toJson(const LaunchRecord& l);
nlohmann::json toJson(const Dim3& d);

// Average active threads per warp instruction (SIMD utilisation), from the lane histogram.
double averageActiveLanes(const func::ExecStats& s);

}  // namespace gpusc
