#include "sm/activity.hpp"

#include <cstddef>
#include <cstring>

namespace gpusc::sm {

const char* stallName(Stall s) {
  switch (s) {
    case Stall::Issued:
      return "issued";
    case Stall::NoWarp:
      return "no_warp";
    case Stall::Fetch:
      return "fetch";
    case Stall::Barrier:
      return "barrier";
    case Stall::DataAlu:
      return "data_alu";
    case Stall::DataMemory:
      return "data_memory";
    case Stall::Structural:
      return "structural";
    case Stall::Smoothing:
      return "smoothing";
    case Stall::Count_:
      break;
  }
  return "?";
}

const char* unitName(Unit u) {
  switch (u) {
    case Unit::Sp:
      return "simd";
    case Unit::Sfu:
      return "sfu";
    case Unit::Dp:
      return "dp";
    case Unit::Ldst:
      return "ldst";
    case Unit::None:
      return "none";
    case Unit::Count_:
      break;
  }
  return "?";
}

const char* laneKindName(LaneKind k) {
  switch (k) {
    case LaneKind::Int:
      return "int";
    case LaneKind::Fp:
      return "fp";
    case LaneKind::Dp:
      return "dp";
    case LaneKind::Sfu:
      return "sfu";
    case LaneKind::Count_:
      break;
  }
  return "?";
}

LaneKind laneKindOf(func::InstClass c) {
  using func::InstClass;
  switch (c) {
    case InstClass::FpAdd:
    case InstClass::FpMax:
    case InstClass::FpMul:
    case InstClass::FpMad:
    case InstClass::FpDiv:
      return LaneKind::Fp;
    case InstClass::DpAdd:
    case InstClass::DpMax:
    case InstClass::DpMul:
    case InstClass::DpMad:
    case InstClass::DpDiv:
      return LaneKind::Dp;
    case InstClass::Sfu:
      return LaneKind::Sfu;
    default:
      return LaneKind::Int;
  }
}

// SmCounters begins with SmActivity's fields, widened: every field at twice its offset.
#define GPUSC_SAME_PLACE(f) \
  static_assert(offsetof(SmCounters, f) == 2 * offsetof(SmActivity, f), #f " moved");
GPUSC_SAME_PLACE(issued)
GPUSC_SAME_PLACE(issuedByClass)
GPUSC_SAME_PLACE(activeLanes)
GPUSC_SAME_PLACE(dispatched)
GPUSC_SAME_PLACE(unitBusy)
GPUSC_SAME_PLACE(laneOps)
GPUSC_SAME_PLACE(laneOpsByKind)
GPUSC_SAME_PLACE(rfReads)
GPUSC_SAME_PLACE(rfWrites)
GPUSC_SAME_PLACE(rfBankConflicts)
GPUSC_SAME_PLACE(collectorsBusy)
GPUSC_SAME_PLACE(sharedAccesses)
GPUSC_SAME_PLACE(sharedBankConflicts)
GPUSC_SAME_PLACE(icacheAccesses)
GPUSC_SAME_PLACE(icacheMisses)
GPUSC_SAME_PLACE(constAccesses)
GPUSC_SAME_PLACE(constMisses)
GPUSC_SAME_PLACE(memRequests)
GPUSC_SAME_PLACE(stalls)
#undef GPUSC_SAME_PLACE
static_assert(offsetof(SmCounters, warpCycles) == 2 * offsetof(SmActivity, activeWarps));
static_assert(offsetof(SmCounters, evaluatedCycles) == 2 * sizeof(SmActivity));
static_assert(sizeof(SmActivity) % sizeof(uint32_t) == 0);

void SmCounters::add(const SmActivity& a, uint64_t cycles) {
  // One loop over the fields as arrays (the compiler vectorises it): this runs every evaluated
  // cycle of every SM. warpCycles sums activeWarps.
  constexpr size_t n = sizeof(SmActivity) / sizeof(uint32_t);
  uint32_t in[n];
  uint64_t sum[n];
  std::memcpy(in, &a, sizeof in);
  std::memcpy(sum, this, sizeof sum);
  if (cycles == 1) {  // every evaluated cycle: no 64-bit multiply (SSE2 has none)
    for (size_t i = 0; i < n; ++i) sum[i] += in[i];
  } else {
    for (size_t i = 0; i < n; ++i) sum[i] += uint64_t(in[i]) * cycles;
  }
  std::memcpy(this, sum, sizeof sum);
}

SmCounters& SmCounters::operator+=(const SmCounters& b) {
  SmCounters& a = *this;
  a.issued += b.issued;
  for (int i = 0; i < func::kNumInstClasses; ++i) a.issuedByClass[i] += b.issuedByClass[i];
  a.activeLanes += b.activeLanes;
  for (int i = 0; i < kNumUnits; ++i) {
    a.dispatched[i] += b.dispatched[i];
    a.unitBusy[i] += b.unitBusy[i];
  }
  a.laneOps += b.laneOps;
  for (int i = 0; i < kNumLaneKinds; ++i) a.laneOpsByKind[i] += b.laneOpsByKind[i];
  a.rfReads += b.rfReads;
  a.rfWrites += b.rfWrites;
  a.rfBankConflicts += b.rfBankConflicts;
  a.collectorsBusy += b.collectorsBusy;
  a.sharedAccesses += b.sharedAccesses;
  a.sharedBankConflicts += b.sharedBankConflicts;
  a.icacheAccesses += b.icacheAccesses;
  a.icacheMisses += b.icacheMisses;
  a.constAccesses += b.constAccesses;
  a.constMisses += b.constMisses;
  a.memRequests += b.memRequests;
  a.warpCycles += b.warpCycles;
  a.evaluatedCycles += b.evaluatedCycles;
  for (int i = 0; i < kNumStalls; ++i) a.stalls[i] += b.stalls[i];
  return *this;
}

}  // namespace gpusc::sm
