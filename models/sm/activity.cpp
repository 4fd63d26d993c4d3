#include "sm/activity.hpp"

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

void SmCounters::add(const SmActivity& a, uint64_t cycles) {
  issued += uint64_t(a.issued) * cycles;
  for (int i = 0; i < func::kNumInstClasses; ++i)
    issuedByClass[i] += uint64_t(a.issuedByClass[i]) * cycles;
  activeLanes += uint64_t(a.activeLanes) * cycles;
  for (int i = 0; i < kNumUnits; ++i) {
    dispatched[i] += uint64_t(a.dispatched[i]) * cycles;
    unitBusy[i] += uint64_t(a.unitBusy[i]) * cycles;
  }
  laneOps += uint64_t(a.laneOps) * cycles;
  for (int i = 0; i < kNumLaneKinds; ++i) laneOpsByKind[i] += uint64_t(a.laneOpsByKind[i]) * cycles;
  rfReads += uint64_t(a.rfReads) * cycles;
  rfWrites += uint64_t(a.rfWrites) * cycles;
  rfBankConflicts += uint64_t(a.rfBankConflicts) * cycles;
  collectorsBusy += uint64_t(a.collectorsBusy) * cycles;
  sharedAccesses += uint64_t(a.sharedAccesses) * cycles;
  sharedBankConflicts += uint64_t(a.sharedBankConflicts) * cycles;
  icacheAccesses += uint64_t(a.icacheAccesses) * cycles;
  icacheMisses += uint64_t(a.icacheMisses) * cycles;
  constAccesses += uint64_t(a.constAccesses) * cycles;
  constMisses += uint64_t(a.constMisses) * cycles;
  memRequests += uint64_t(a.memRequests) * cycles;
  warpCycles += uint64_t(a.activeWarps) * cycles;
  for (int i = 0; i < kNumStalls; ++i) stalls[i] += uint64_t(a.stalls[i]) * cycles;
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
