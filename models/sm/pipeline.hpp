// State shared by the stages of one SM's pipeline: warp slots with their instruction buffers
// and scoreboards, and the records of instructions between issue and writeback.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

#include "func/state.hpp"
#include "sm/activity.hpp"

namespace gpusc::sm {

using Cycle = uint64_t;
inline constexpr Cycle kNever = std::numeric_limits<Cycle>::max();

// Scoreboard states of a register.
enum : uint8_t { kReady = 0, kPendingAlu = 1, kPendingMemory = 2 };

// The fields every cycle's scans read (fetch, issue, the scoreboard check) come first and fill
// one 64-byte cache line, and a slot starts on a line: a warp that cannot issue costs one line,
// not the three its fields spanned when they were ordered by topic.
struct alignas(64) WarpSlot {
  // ---- read by the per-cycle scans (one cache line) ----
  bool active = false;
  // The functional warp's pc and state, as of the last sync(). Only the functional engine's step
  // changes them (a step of this warp, or of another warp of its CTA releasing it: the SM
  // syncs the CTA's slots then), so the per-cycle scans over the slots (fetch, issue, the next
  // event) read these instead of the warp itself, which is a cache miss per warp.
  func::WarpState state = func::WarpState::Done;
  bool fetching = false;     // waits for an instruction-cache miss
  bool waitingLong = false;  // its scheduler was told it waits on a load or a barrier
  uint32_t pc = func::kNoPc;
  // Instruction buffer: decoded instructions for pcs [ibBegin, ibEnd), usable from ibReady.
  uint32_t ibBegin = 0, ibEnd = 0;
  uint32_t checkedPc = ~0u;
  uint8_t checkedPending = kReady;
  Unit checkedUnit = Unit::None;  // the unit of the instruction at checkedPc
  Cycle ibReady = 0;
  Cycle eligibleAt = 0;  // may not issue before (CTA start, barrier release)
  // The scoreboard's answer for the instruction at checkedPc, valid while scoreboardVersion
  // (bumped whenever one of the warp's registers is written back) equals checkedVersion.
  uint64_t scoreboardVersion = 0, checkedVersion = ~0ull;

  // ---- the rest ----
  func::Warp* warp = nullptr;
  uint32_t cta = 0;  // CTA slot of the SM
  uint32_t scheduler = 0;
  uint64_t age = 0;            // start order, for greedy-then-oldest
  uint32_t inFlight = 0;       // issued instructions not complete, including unacknowledged stores
  uint32_t memoryPending = 0;  // registers and predicates waiting for a load
  std::vector<uint8_t> regPending, predPending;
  // cp.async groups: asyncCounts[i] is the incomplete copies of group asyncFirst + i, from the
  // oldest committed group not complete (or the open one) on; the open group is asyncOpen, the
  // number of groups committed so far.
  std::vector<uint32_t> asyncCounts;
  uint64_t asyncFirst = 0, asyncOpen = 0;

  void sync() {
    pc = warp->pc();
    state = warp->state;
  }
  bool done() const { return state == func::WarpState::Done; }
  bool hasInstruction(uint32_t pc, Cycle now) const {
    return pc >= ibBegin && pc < ibEnd && ibReady <= now;
  }
};
static_assert(offsetof(WarpSlot, checkedVersion) + sizeof(uint64_t) <= 64,
              "the scans' fields of a warp slot fit one cache line");

// One instruction between issue and writeback.
struct InFlight {
  bool used = false;
  uint32_t warp = 0;
  uint32_t pc = 0;
  const func::Inst* inst = nullptr;
  const func::InstInfo* info = nullptr;
  Unit unit = Unit::Sp;
  uint32_t latency = 0;          // cycles from dispatch to result
  uint32_t occupancy = 0;        // cycles the unit is busy
  uint32_t lanes = 0;            // threads that executed it
  uint32_t executed = 0;         // their mask (bit t: thread t of the warp)
  bool loadsFromMemory = false;  // its results arrive from the memory system
  bool asyncCopy = false;        // a cp.async of group asyncGroup (WarpSlot::asyncCounts)
  bool fpUnits = false;          // a SIMD instruction the FP32-only units may take too
  uint64_t asyncGroup = 0;
  uint32_t outstanding = 0;  // memory transactions not yet answered
  func::MemRecord mem;       // addresses, for memory instructions
};

}  // namespace gpusc::sm
