// SIMD issue control (seed 002 section 3.2): which SIMD units and how many of their lanes an
// SM's SIMD instructions may use, so that the others stay idle long enough to be gated.
//
// Four states with decreasing lanes in use (power.simd_issue):
//   1: every unit, all lanes            2: units 1.. split (half their lanes, warps in halves)
//   3: unit 0 only                      4: unit 0 only, split
// A split unit runs a warp on half its lanes in twice the passes: its occupancy doubles and the
// result comes that many cycles later. The SM measures its lane utilisation over time slices of
// power.simd_issue.slice_cycles (lane operations of SIMD instructions / (units x lanes x
// cycles), gated lanes included) and a policy picks the state of the next slice.
//
// Thread compaction (power.thread_compaction, seed 002 section 3.2.2): a warp's k active threads
// over p passes run on lanes 0 .. ceil(k / p) - 1 instead of lane (thread mod lanes); the
// passes, and so the timing, stay the same.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "common/platform_config.hpp"
#include "common/registry.hpp"

namespace gpusc::rtl {
class RtlWaves;  // rtl/rtl_waves.hpp
}

namespace gpusc::sm {

inline constexpr uint32_t kIssueStates = 4;

class SimdIssuePolicy {
 public:
  virtual ~SimdIssuePolicy() = default;
  // False when the state never leaves 1 (the SM then does not measure slices).
  virtual bool adaptive() const = 0;
  // The state (1 .. kIssueStates) of the next slice, given the state of the slice that ended and
  // its lane utilisation (0 .. 1).
  virtual uint32_t next(uint32_t state, double utilisation) const = 0;
  // What the Sm calls: next() for the slice that ended at cycle `end` (the first cycle of the
  // next slice). A co-simulated policy (rtl.simd_issue) clocks its RTL here.
  virtual uint32_t nextAt(uint64_t end, uint32_t state, double utilisation) {
    (void)end;
    return next(state, utilisation);
  }
  // A kernel starts: the state is 1 again (the state machine's reset).
  virtual void begin() {}
  // RTL co-simulation in lockstep (rtl.simd_issue): the first divergence between the model and
  // the RTL (empty: none).
  virtual std::string divergence() const { return {}; }
  // gpusc run --vcd: the RTL's signals into `waves` under `scope` (rtl/rtl_waves.hpp), clocks
  // of platform cycle c at c x `periodFs`. The model has none.
  virtual void traceWaves(rtl::RtlWaves& waves, const std::string& scope, uint64_t periodFs) {
    (void)waves;
    (void)scope;
    (void)periodFs;
  }
};

// "none" (state 1 forever) and "utilisation" (seed 002's four states with hysteresis: from
// state s step down when the utilisation is below down_thresholds[s-1], else step up when it is
// at least up_thresholds[s-2]; at most one step per slice).
using SimdIssueRegistry = Registry<SimdIssuePolicy, const SimdIssueConfig&>;
const SimdIssueRegistry& simdIssuePolicies();

// The policy power.simd_issue.policy names (looked up in `registry`), as rtl.simd_issue runs it
// for SM `smId`: the model, the verilated state machine (models/rtl/verilog/simd_issue_control.sv)
// or both in lockstep (models/rtl/simd_issue_rtl.cpp).
std::unique_ptr<SimdIssuePolicy> makeSimdIssuePolicy(const PlatformConfig& cfg, uint32_t smId,
                                                     const SimdIssueRegistry& registry);

// What state `state` lets SIMD unit `unit` do. With a single unit, states 2 and 3 are state 1
// (there is no other unit to split or leave out).
struct SimdUnitMode {
  bool enabled = true;  // may take instructions
  bool split = false;   // runs warps on half its lanes
};
SimdUnitMode simdUnitMode(uint32_t state, uint32_t unit);

// The lanes (bit l: lane l) of a unit using `lanes` lanes that an instruction with executed
// mask `executed` keeps busy, for a warp of `warpSize` threads: thread t runs on lane t mod
// lanes, or, with `compact`, the active threads are packed onto the lowest lanes.
uint64_t simdLaneMask(uint32_t executed, uint32_t lanes, uint32_t warpSize, bool compact);

}  // namespace gpusc::sm
