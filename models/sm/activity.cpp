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
    case Unit::Tensor:
      return "tensor";
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

namespace {

// Calls f(total, value) for every field of SmActivity with its total in SmCounters.
template <class F>
inline void forEachField(SmCounters& t, const SmActivity& a, F f) {
  f(t.issued, a.issued);
  f(t.activeLanes, a.activeLanes);
  for (int i = 0; i < kNumUnits; ++i) {
    f(t.dispatched[i], a.dispatched[i]);
    f(t.unitBusy[i], a.unitBusy[i]);
  }
  f(t.laneOps, a.laneOps);
  for (int i = 0; i < kNumLaneKinds; ++i) f(t.laneOpsByKind[i], a.laneOpsByKind[i]);
  f(t.rfReads, a.rfReads);
  f(t.rfWrites, a.rfWrites);
  f(t.rfBankConflicts, a.rfBankConflicts);
  f(t.collectorsBusy, a.collectorsBusy);
  f(t.sharedAccesses, a.sharedAccesses);
  f(t.sharedBankConflicts, a.sharedBankConflicts);
  f(t.icacheAccesses, a.icacheAccesses);
  f(t.icacheMisses, a.icacheMisses);
  f(t.constAccesses, a.constAccesses);
  f(t.constMisses, a.constMisses);
  f(t.memRequests, a.memRequests);
  f(t.warpCycles, a.activeWarps);
  for (int i = 0; i < kNumStalls; ++i) f(t.stalls[i], a.stalls[i]);
}

}  // namespace

void SmCounters::add(const SmActivity& a, uint64_t cycles) {
  // Runs every evaluated cycle of every SM: that case (one cycle) without 64-bit multiplies.
  if (cycles == 1)
    forEachField(*this, a, [](uint64_t& t, uint32_t v) { t += v; });
  else
    forEachField(*this, a, [cycles](uint64_t& t, uint32_t v) { t += uint64_t(v) * cycles; });
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
