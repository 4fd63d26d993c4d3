// What one SM's steps see when the timing model evaluates several SMs' cycles on several host
// threads at once. For results that do not depend on the thread count, global memory is not
// written during a cycle: each SM logs its global stores and atomics, and the log is applied
// after the cycle (SM by SM in a fixed order, each log in program order). Loads in the cycle see
// global memory as it was at its start. The PTX memory model allows this: different warps are
// not ordered without fences or barriers (which span cycles), and a warp issues at most one
// instruction per cycle, so its own store-to-load order is kept.
#pragma once

#include <cstdint>
#include <deque>

#include "func/global_memory.hpp"
#include "func/state.hpp"

namespace gpusc::func {

// The operands of a logged read-modify-write (atom, red: v[0] = b, v[1] = c of cas; a bulk
// reduction: the 16 source bytes), and operation details its function needs (param).
struct RmwArgs {
  uint64_t v[4] = {};
  uint32_t param = 0;
};
// Performs a read-modify-write on the memory at `mem`; returns the old value's bits (what the
// instruction writes to its destination; 0 when it has none). The same function serves the
// immediate and the deferred path.
using RmwFn = uint64_t (*)(uint8_t* mem, const RmwArgs& args);

// Global stores and atomics of one SM's cycle, deferred (timing mode with host threads).
class GlobalWriteLog {
 public:
  static constexpr unsigned kMaxStoreBytes = 32;  // st.v4.b64

  bool empty() const { return used_ == 0; }
  size_t size() const { return used_; }

  // A store of `bytes` at device address `addr`, whose current bytes are at `current`: returns
  // a staging slot holding those bytes, for the handler to write. The slot stays valid (and
  // does not move) until clear().
  uint8_t* stage(uint64_t addr, const uint8_t* current, unsigned bytes);
  // A read-modify-write of the memory at `addr`: `fn(mem, args)`, whose result goes to
  // `result` (a destination register lane) unless that is null.
  void rmw(uint64_t addr, RmwFn fn, const RmwArgs& args, uint64_t* result);

  // Applies the logged writes and read-modify-writes to `g` in the order they were made,
  // writes each atomic's old value into its destination register lane, then clears the log.
  void apply(GlobalMemory& g);
  void clear() { used_ = 0; }

 private:
  struct Entry {
    uint64_t addr = 0;
    RmwFn fn = nullptr;  // null: a store of `bytes` bytes of `data`
    uint64_t* result = nullptr;
    RmwArgs args;
    uint8_t bytes = 0;
    alignas(8) uint8_t data[kMaxStoreBytes];
  };
  Entry& append();

  std::deque<Entry> entries_;  // reused from cycle to cycle: [0, used_) is the log
  size_t used_ = 0;
};

// What the timing model passes with each step of one SM.
struct StepEnv {
  uint64_t clock = 0;             // the value %clock/%clock64 read in this step (a core cycle)
  double nsPerCycle = 1.0;        // %globaltimer reads clock x this: nanoseconds, as on a GPU
  GlobalMemory::Tlb tlb;          // this SM's own translation cache (GlobalMemory::translate)
  GlobalWriteLog* log = nullptr;  // non-null: global stores and atomics go to the log
  // nanosleep: the longest sleep, in nanoseconds, a lane of this step asked for (the SM keeps
  // the warp from issuing that long, and sets it back to 0).
  uint64_t sleepNs = 0;
  // The timing model steps the warp (nanosleep makes it wait); false: the functional engine,
  // where nanosleep ends the warp's turn instead (WarpState::Yielded), so a warp spinning on a
  // sleep loop lets the warp it waits for run.
  bool timed = false;
  MemoryUnitsMemo unitsMemo;  // this SM's steps' (sampled simulation's signatures)
};

}  // namespace gpusc::func
