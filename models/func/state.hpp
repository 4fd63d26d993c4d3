// Run-time state of the functional engine: warps with their SIMT reconvergence stacks,
// thread blocks (CTAs) with shared memory and barriers, and the context handlers run in.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "func/global_memory.hpp"
#include "func/program.hpp"

namespace gpusc::func {

class AccessLog;
class DeviceHeap;
class DeviceLaunches;
struct StepEnv;

struct Dim3 {
  uint32_t x = 1, y = 1, z = 1;
  uint64_t count() const { return uint64_t(x) * y * z; }
  bool operator==(const Dim3& o) const { return x == o.x && y == o.y && z == o.z; }
  // The block index of the CTA with linear index `linear` (x fastest) in a grid of this shape.
  Dim3 ctaOf(uint64_t linear) const {
    return {static_cast<uint32_t>(linear % x), static_cast<uint32_t>((linear / x) % y),
            static_cast<uint32_t>(linear / (uint64_t(x) * y))};
  }
};

// One entry of the SIMT stack: lanes in `mask` execute from `pc` until they reach `rpc`.
// A `frame` entry marks a function call: lanes leave it by `ret`. A frame pushed by an indirect
// call records the call's pc (its ret copies the results back to the call's variables).
struct SimtEntry {
  uint32_t pc;
  uint32_t rpc;
  uint32_t mask;
  bool frame;
  // The path stopped at a warp-synchronous instruction (its pc) to let another path run to it
  // first (meetAtWarpSync in executor.cpp); cleared when they meet or the path runs again.
  bool waitsAtSync = false;
  uint32_t callSite = kNoPc;
  // Lanes that left their reconvergence point to let a spinning path's lanes go on (yieldPath in
  // executor.cpp), and such a path stopped at a barrier until those lanes come too.
  bool ranAhead = false;
  bool waitsAtBarrier = false;
  // A frame of a recursive function: its caller's activation is saved in Warp::frameSaves.
  bool recursive = false;
};

// MbarrierWait: an mbarrier test_wait/try_wait found its phase incomplete; the warp sleeps until
// an mbarrier of its CTA completes a phase (or no warp of the CTA can run: see Cta::syncEpoch).
// Yielded: in the functional engine, a nanosleep ended the warp's turn; the loop that runs the
// CTA's warps makes it Ready again when the turn ends, so no other warp's step sees it.
enum class WarpState : uint8_t { Ready, AtBarrier, MbarrierWait, Done, Yielded };

struct Warp {
  std::vector<uint64_t> regs;   // numSlots x 32
  std::vector<uint32_t> preds;  // numPreds
  std::vector<SimtEntry> stack;
  std::vector<uint8_t> local;       // 32 x localBytesPerThread
  std::vector<uint8_t> callParams;  // 32 x callParamBytesPerThread
  // The activations recursive calls saved (Program::frames), the innermost last: each record
  // starts at frameSaveAt[k] and belongs to the k-th recursive frame of `stack`.
  std::vector<uint64_t> frameSaves;
  std::vector<uint32_t> frameSaveAt;
  uint32_t live = 0;   // lanes that exist and have not exited
  uint32_t carry = 0;  // CC.CF condition code, one bit per lane
  uint32_t idInCta = 0;
  WarpState state = WarpState::Ready;
  uint32_t barrierId = 0;
  // Waiting in a bar.red: its pc, and the lanes that executed it (they get its result).
  uint32_t redPc = kNoPc;
  uint32_t redMask = 0;
  // Cta::syncEpoch (its low 32 bits) when a path of the warp last yielded at an mbarrier wait
  // (afterMbarrier). The fields are sized and placed to keep the record as small as it was
  // without them (232 bytes): the functional engine reads it at every step.
  uint32_t mbarrierYieldEpoch = ~0u;
  uint64_t instructions = 0;  // warp instructions executed
  // Uniform backward branches of the top path since the warp last diverged or ran converged, and
  // a hash of the warp's state at the last check (spinning and yieldPath in executor.cpp).
  uint32_t spins = 0;
  uint16_t spinGap = 8;     // branches back between two checks (kSpinFirstCheck, growing)
  uint16_t longChecks = 0;  // checks at the longest gap that found the state changed
  uint64_t spinState = 0;   // registers, predicates, stack
  uint64_t spinLocal = 0;   // local memory (0: not hashed at the last check)

  bool done() const { return state == WarpState::Done; }
  uint32_t pc() const { return stack.empty() ? kNoPc : stack.back().pc; }
  uint32_t activeMask() const { return stack.empty() ? 0 : stack.back().mask; }
};

struct Barrier {
  uint32_t arrivedWarps = 0;     // count of warps waiting
  uint32_t expectedThreads = 0;  // 0: all live threads of the CTA
  uint64_t waiting = 0;          // bit per warp
  uint32_t redPopc = 0;          // bar.red accumulators
  bool redAnd = true, redOr = false;
};

struct Cta {
  Dim3 ctaid;
  uint64_t linearId = 0;
  uint32_t smId = 0;
  std::vector<uint8_t> shared;
  std::vector<Warp> warps;
  uint32_t liveWarps = 0;
  Barrier barriers[16];
  // Counts changes of the CTA's barriers and mbarriers. When no warp can run and some sleep in
  // mbarrier waits, they are woken to retry (try_wait's time limit expired), once per value:
  // woken again with nothing changed, they could only repeat themselves (a deadlock).
  uint64_t syncEpoch = 0;
  uint64_t wokenAtEpoch = ~0ull;
  bool mbarrierPhaseDone = false;  // set by a handler that completed an mbarrier phase
};

// The 32 cells of operand slot s: a row of the warp's own `regs`, or of the program's constant
// rows `constRows` (kConstSlotBase and above; never written).
inline uint64_t* rowOf(uint64_t* regs, const uint64_t* constRows, uint32_t s) {
  return s >= kConstSlotBase
             ? const_cast<uint64_t*>(constRows) + size_t(s - kConstSlotBase) * kWarpSize
             : regs + size_t(s) * kWarpSize;
}

// Per-lane memory addresses of the last memory instruction, for the timing model.
struct MemRecord {
  uint32_t mask = 0;                // lanes that accessed memory
  MemSpace space = MemSpace::None;  // resolved space (generic resolved; mixed -> Generic)
  uint8_t bytes = 0;                // bytes per lane (element size x vector length)
  bool write = false, atomic = false;
  uint64_t addr[kWarpSize];  // global: device address; shared/local/...: space offset
};

// Whether `r` is a full warp's access at a0 + lane * stride with a stride of at most 32 bytes
// (coalesced, or one address for all): then no whole 32-byte sector fits between two lanes'
// bytes, so it touches every sector from its first byte's to its last byte's, which this sets.
// One pass of subtractions, which the compiler vectorizes.
inline bool denseSpan(const MemRecord& r, uint64_t& firstByte, uint64_t& lastByte) {
  if (r.mask != kFullMask) return false;
  const uint64_t a0 = r.addr[0], stride = r.addr[1] - a0;
  uint64_t off = 0;
  for (int l = 1; l < kWarpSize; ++l) off |= r.addr[l] - (a0 + uint64_t(l) * stride);
  const uint64_t last = a0 + uint64_t(kWarpSize - 1) * stride + (r.bytes > 0 ? r.bytes : 1) - 1;
  if (off != 0 || stride > 32 || last < a0) return false;
  firstByte = a0;
  lastByte = last;
  return true;
}

// The memory units (ExecStats::memUnits) of recent accesses, for sampled simulation's
// signatures: the warps of a launch repeat the same pattern at an instruction (the same lanes,
// the same offsets from the first lane's address), and one vectorized comparison of the offsets
// replaces the count's pass over the lanes. A hash of pc and mask picks the entry (the warps of
// a block, running one after another, often differ in their lanes at an instruction, at the
// block's edges). An access's units follow from its lanes, size, kind, and addresses up to a
// shift by a whole 32-byte sector (each lane's sectors shift alike; valid addresses are far
// below 2^63, so none wraps), which is all an entry keeps: an entry another instruction or
// program left is compared the same way, so a hit is exact wherever it comes from. One per
// Executor and per StepEnv (each host thread steps with its own); its table is made at its
// first use.
struct MemoryUnitsMemo {
  static constexpr unsigned kEntryBits = 6;
  static constexpr uint32_t kEntries = 1u << kEntryBits;
  struct Entry {
    uint32_t mask = 0;  // 0: empty (an access with no lane has no units to look up)
    uint8_t bytes = 0;
    uint8_t sectorOffset = 0;  // the first lane's address mod 32
    bool atomic = false;
    uint64_t units = 0;
    uint64_t offset[kWarpSize];  // each lane's address less the first lane's (0: not in mask)
    uint64_t lane[kWarpSize];    // all ones for a lane in mask, else 0
  };
  std::unique_ptr<Entry[]> entries;
};

// Everything a launch shares across its CTAs.
struct LaunchState {
  const Program* prog = nullptr;
  GlobalMemory* gmem = nullptr;
  std::vector<uint8_t> params;  // kernel parameter buffer
  const std::vector<uint8_t>* constBank = nullptr;
  Dim3 grid, block;
  uint32_t dynamicShared = 0;
  uint32_t sharedBytes = 0;  // static + dynamic per CTA
  // The shared memory the platform reserves per block (sm.shared_reserved_per_cta), and where a
  // CTA's copy of it begins: after the kernel's own (16-byte aligned) when the kernel reads its
  // %reserved_smem registers (reservedSharedMapped; the CTA's shared memory is then
  // reservedSharedAt + reservedShared bytes), else nowhere (0).
  uint32_t reservedShared = 0;
  uint32_t reservedSharedAt = 0;
  bool reservedSharedMapped = false;
  uint32_t warpsPerCta = 0;
  // Each thread's local memory: the kernel's .local variables, then its stack of stackBytes
  // when it uses one (Program::stackSlot).
  uint32_t stackBytes = kDefaultStackBytes;
  uint32_t localBytes = 0;
  uint32_t smId = 0;  // not read: %smid is the CTA's (Cta::smId, from initCta)
  uint32_t numSms = 1;
  // The launch's CTAs the platform's SMs hold at once (ctasPerSm x SMs): when a CTA of a launch
  // run in order runs long without ending, it may wait for a later CTA, which a GPU runs beside
  // it; so many CTAs then run together (runCtasInOrder). 0: none beside it.
  uint64_t residentCtas = 0;
  // Count ExecStats::memInsts and memUnits (sampled simulation; off: no cost).
  bool countMemoryUnits = false;
  // Sampled simulation: the run's global accesses are logged here (to warm the L2), if set.
  AccessLog* accessLog = nullptr;
  // Value read by %clock (functional mode: instructions so far). A step with a StepEnv reads
  // StepEnv::clock instead and leaves this alone.
  uint64_t clock = 0;
  std::string* printfLog = nullptr;  // device printf output (vprintf), appended in order
  DeviceHeap* heap = nullptr;        // device malloc/free
  // Launches from device code (dynamic parallelism, device_launches.hpp), when the kernel makes
  // them (Program::launchesKernels).
  DeviceLaunches* deviceLaunches = nullptr;
  // A cooperative launch: every CTA is resident at once, and %envreg1:%envreg2 give this
  // address of the grid workspace its grid syncs use (0: not cooperative).
  bool cooperative = false;
  uint64_t gridWorkspace = 0;
};

// LaunchState::localBytes of a launch of `p` with a stack of `stackBytes`.
inline uint32_t localBytesOf(const Program& p, uint32_t stackBytes) {
  return p.stackSlot == kNoPc ? p.localBytesPerThread : p.stackBase + stackBytes;
}

// The context a handler runs in.
struct ExecCtx {
  LaunchState* L = nullptr;
  Cta* cta = nullptr;
  Warp* w = nullptr;
  uint64_t* R = nullptr;        // the warp's rows (Warp::regs)
  const uint64_t* K = nullptr;  // the program's constant rows (Program::constRows)
  uint32_t* P = nullptr;
  uint32_t active = 0;  // SIMT active mask before the guard predicate
  uint32_t pc = 0;
  MemRecord* rec = nullptr;  // set when the timing model wants addresses
  StepEnv* env = nullptr;    // the timing model's per-SM environment (step_env.hpp), if any

  // Throws KernelFault naming the thread, block and instruction.
  [[noreturn]] void fault(int lane, const std::string& what) const;
};

}  // namespace gpusc::func
