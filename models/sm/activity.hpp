// What an SM does each cycle: the activity the energy model turns into power, and the
// statistics of the timing model. The Sm fills one SmActivity per evaluated cycle and hands it
// to an ActivityObserver if one is attached; stretches of cycles in which nothing changes are
// reported once, with their length, instead of cycle by cycle.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "func/program.hpp"

namespace gpusc::sm {

// Why a warp scheduler did not issue in a cycle.
enum class Stall : uint8_t {
  Issued,      // it did issue
  NoWarp,      // no warp assigned to this scheduler
  Fetch,       // the next instruction is not in the instruction buffer (fetch, I-cache miss)
  Barrier,     // every warp waits at a barrier, sleeps (nanosleep) or has finished
  DataAlu,     // operands wait for an ALU/SFU result (scoreboard)
  DataMemory,  // operands wait for a memory load (scoreboard)
  Structural,  // no free operand collector for the instruction's unit
  Smoothing,   // held by voltage smoothing (the global droop detector's stagger)
  Count_
};
inline constexpr int kNumStalls = static_cast<int>(Stall::Count_);
const char* stallName(Stall s);

// Execution resources of an SM.
enum class Unit : uint8_t { Sp, Sfu, Dp, Ldst, Tensor, None, Count_ };
inline constexpr int kNumUnits = static_cast<int>(Unit::Count_);
const char* unitName(Unit u);

// Kinds of lane operation, for their energies.
enum class LaneKind : uint8_t { Int, Fp, Dp, Sfu, Count_ };
inline constexpr int kNumLaneKinds = static_cast<int>(LaneKind::Count_);
const char* laneKindName(LaneKind k);
LaneKind laneKindOf(func::InstClass c);

struct SmActivity {
  // Warp instructions issued (by class: the SM counts those into SmCounters itself, at issue;
  // nothing that prices or observes a cycle's activity needs them, and the 26 counts were
  // 40 % of what every evaluated cycle cleared, summed and handed on).
  uint32_t issued = 0;
  uint32_t activeLanes = 0;             // sum of active threads of the issued instructions
  uint32_t dispatched[kNumUnits] = {};  // instructions that entered each unit
  uint32_t unitBusy[kNumUnits] = {};    // units occupied this cycle
  uint32_t laneOps = 0;                 // lanes doing work in SIMD/SFU/DP operations that started
  uint32_t laneOpsByKind[kNumLaneKinds] = {};  // ... by kind
  uint32_t rfReads = 0, rfWrites = 0, rfBankConflicts = 0;
  uint32_t collectorsBusy = 0;
  uint32_t sharedAccesses = 0, sharedBankConflicts = 0;  // conflicts: extra serialised cycles
  uint32_t icacheAccesses = 0, icacheMisses = 0;
  uint32_t constAccesses = 0, constMisses = 0;
  uint32_t memRequests = 0;          // transactions sent to the memory system
  uint32_t activeWarps = 0;          // resident warps
  uint32_t stalls[kNumStalls] = {};  // schedulers by outcome (sums to the scheduler count)

  void clear() { *this = SmActivity{}; }
};

// Adds `a`'s counts to `t`'s, field by field, in 32 bits: the sums of a few thousand cycles
// fit, and the adds go four to a vector instruction. (SmActivity is 32-bit counts only.)
inline void accumulate(SmActivity& t, const SmActivity& a) {
  static_assert(sizeof(SmActivity) % sizeof(uint32_t) == 0 &&
                    std::has_unique_object_representations_v<SmActivity>,
                "SmActivity holds 32-bit counts and nothing else");
  constexpr size_t n = sizeof(SmActivity) / sizeof(uint32_t);
  uint32_t x[n], y[n];
  std::memcpy(x, &t, sizeof x);
  std::memcpy(y, &a, sizeof y);
  for (size_t i = 0; i < n; ++i) x[i] += y[i];
  std::memcpy(&t, x, sizeof x);
}

// Totals over a run.
struct SmCounters {
  uint64_t issued = 0;
  uint64_t issuedByClass[func::kNumInstClasses] = {};
  uint64_t activeLanes = 0;
  uint64_t dispatched[kNumUnits] = {};
  uint64_t unitBusy[kNumUnits] = {};
  uint64_t laneOps = 0;
  uint64_t laneOpsByKind[kNumLaneKinds] = {};
  uint64_t rfReads = 0, rfWrites = 0, rfBankConflicts = 0;
  uint64_t collectorsBusy = 0;
  uint64_t sharedAccesses = 0, sharedBankConflicts = 0;
  uint64_t icacheAccesses = 0, icacheMisses = 0;
  uint64_t constAccesses = 0, constMisses = 0;
  uint64_t memRequests = 0;
  uint64_t warpCycles = 0;  // sum over cycles of resident warps (occupancy = warpCycles / cycles)
  uint64_t stalls[kNumStalls] = {};
  uint64_t evaluatedCycles = 0;  // cycles the SM's process actually ran (the rest were skipped)

  // Adds `cycles` cycles of activity `a`.
  void add(const SmActivity& a, uint64_t cycles);
  SmCounters& operator+=(const SmCounters& o);
};

class ActivityObserver {
 public:
  virtual ~ActivityObserver() = default;
  // `cycles` consecutive cycles of SM `sm`, starting at `firstCycle`, each with activity `a`.
  virtual void onActivity(uint32_t sm, uint64_t firstCycle, uint64_t cycles,
                          const SmActivity& a) = 0;
};

}  // namespace gpusc::sm
