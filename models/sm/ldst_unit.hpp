// The load/store unit. It takes one memory instruction at a time (after its operands are
// collected) and times the access the functional engine already performed at issue:
//   shared     one pass per conflict degree (SharedMemory), result after the shared latency
//   const and kernel parameters   through the constant cache, one distinct line per cycle;
//              a miss takes one of sm.const_cache.mshr_entries MSHRs and goes to the memory
//              system, and later misses to the same line wait on it (up to mshr_max_merge
//              instructions per line) instead of fetching it again; the fill completes them one
//              per cycle. With every MSHR taken (or
//              the line's merge limit reached) the unit holds the instruction until a fill
//              frees one, as the hardware's constant cache stalls its pipeline.
//   global and local   the coalescer groups the lanes' addresses into line-sized
//              transactions, sent one per cycle through the SM's memory socket; the instruction
//              completes when every transaction is answered
//   call parameters    a register-like per-thread area: one cycle
// Local memory is laid out as the CUDA Programming Guide describes it ("Local Memory":
// consecutive 32-bit words are accessed by consecutive thread IDs, so a warp's access to one
// offset coalesces): word i of a warp's 32 lanes is one 128-byte run, a warp slot's words follow
// one another, and the slots' frames (the launch's local bytes per thread) are packed.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

#include <systemc>

#include "cache/tag_array.hpp"
#include "common/mem_access.hpp"
#include "common/platform_config.hpp"
#include "sm/pipeline.hpp"
#include "sm/shared_memory.hpp"

namespace gpusc::sm {

struct MemTransaction {
  uint64_t addr = 0;  // line-aligned
  uint32_t bytes = 0;
  uint32_t lanes = 0;
  std::array<uint64_t, 4> byteMask{};
  AccessKind kind = AccessKind::Load;
  uint32_t atomicSerial = 1;  // atomics: the most lanes on one word (MemAccessExtension)
};

// What the LdstUnit needs from its SM.
class LdstHost {
 public:
  virtual ~LdstHost() = default;
  virtual InFlight& record(uint32_t inst) = 0;
  // Sends one transaction for instruction `inst`; false if the memory system cannot take it now.
  virtual bool send(uint32_t inst, const MemTransaction& t) = 0;
  // The instruction's results are available at cycle `at` (or, for stores, it is done).
  virtual void complete(uint32_t inst, Cycle at) = 0;
};

class LdstUnit : public sc_core::sc_module {
 public:
  // `replacement`: where the constant cache's policy is looked up.
  LdstUnit(const sc_core::sc_module_name& name, const PlatformConfig& cfg, uint32_t smId,
           const cache::ReplacementRegistry& replacement = cache::replacementPolicies());

  bool free(Cycle now) const { return !current_ && !constPending_ && busyUntil_ <= now; }
  bool busy(Cycle now) const { return current_ || constPending_ || busyUntil_ > now; }
  // Instruction `inst` is still looking up its constant lines (it completes when it is done).
  bool constLookingUp(uint32_t inst) const { return constPending_ && inst_ == inst; }
  // Earliest cycle at which the unit has something to do on its own, or kNever.
  Cycle nextEvent(Cycle now) const;
  void accept(uint32_t inst, Cycle now, LdstHost& host, SmActivity& act);
  void cycle(Cycle now, LdstHost& host, SmActivity& act);
  // A constant-cache line arrived from memory: the line is placed and `done(inst)` is called
  // for every instruction that waited on it (each once per line it waited for).
  template <class F>
  void constFill(uint64_t lineAddr, F&& done) {
    constCache_.fill(lineAddr);
    for (auto& m : constMshrs_) {
      if (!m.used || m.line != lineAddr) continue;
      m.used = false;
      for (uint32_t w : m.waiters) done(w);
      m.waiters.clear();
    }
  }
  void reset();

  // Address in the memory system of local byte `offset` of thread `lane` of warp slot `warp`.
  uint64_t localAddress(uint32_t warp, int lane, uint64_t offset) const;
  // The launch's local memory per thread (func::LaunchState::localBytes): each warp slot's frame.
  void setLocalBytes(uint32_t perThread) {
    localWords_ = std::max<uint64_t>(1, (perThread + 3) / 4);
  }

  static constexpr uint64_t kLocalBase = 0x6000'0000'0000ull;
  static constexpr uint64_t kConstBase = 0x6100'0000'0000ull;  // constant bank
  static constexpr uint64_t kParamBase = 0x6200'0000'0000ull;  // kernel parameters

 private:
  uint64_t localWords_ = 1;  // 32-bit words of local memory per thread in this launch
  void coalesce(const InFlight& in, AccessKind kind);
  void serialiseAtomics(const func::MemRecord& r);  // each transaction's atomicSerial
  // Works through the constant lines of the instruction in the unit, one per cycle; false while
  // it waits for an MSHR.
  bool constCycle(Cycle now, LdstHost& host, SmActivity& act);
  // Sends the next transaction of the instruction in the unit (global, local, constant misses).
  void sendNext(Cycle now, LdstHost& host, SmActivity& act);

  struct ConstMshr {
    bool used = false;
    uint64_t line = 0;
    std::vector<uint32_t> waiters;  // instructions waiting for the line
  };

  const PlatformConfig& cfg_;
  uint32_t smId_;
  SharedMemory shared_;
  cache::TagArray constCache_;
  bool current_ = false;
  uint32_t inst_ = 0;
  std::vector<MemTransaction> toSend_;
  size_t next_ = 0;
  // A constant or kernel-parameter instruction in the unit: its distinct lines, the next to
  // look up, and whether the last cycle ended waiting for an MSHR (the SM wakes on a fill).
  bool constPending_ = false;
  bool constBlocked_ = false;
  std::vector<uint64_t> constLines_;
  size_t constNext_ = 0;
  Cycle constFirst_ = 0;  // cycle its first line was looked up
  std::vector<ConstMshr> constMshrs_;
  const uint32_t constMaxMerge_;
  Cycle busyUntil_ = 0;
};

}  // namespace gpusc::sm
