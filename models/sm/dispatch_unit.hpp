// The DispatchUnit: operand collectors between issue and the execution units.
// An issued instruction takes a free collector of its unit's group (SIMD, SFU/DP, memory;
// sm.collectors_* of each); from the next cycle the collector requests the instruction's
// source registers from the RegisterFile, whose banks deliver one operand per cycle each, so
// two sources in one bank cost an extra cycle (a bank conflict). Once every operand is read
// the instruction is dispatched to a free unit, oldest collector first.
// With sm.sub_cores blocks each block has its own collectors (an equal share of each group) and
// register banks: a warp's instruction takes a collector of its own block.
#pragma once

#include <cstdint>
#include <vector>

#include <systemc>

#include "common/platform_config.hpp"
#include "sm/pipeline.hpp"
#include "sm/register_file.hpp"

namespace gpusc::sm {

// Where the DispatchUnit sends an instruction whose operands are read (the SM's units).
class DispatchTarget {
 public:
  enum class Answer : uint8_t {
    Taken,    // the instruction left for a unit
    Busy,     // every unit that could take it is busy, and nothing changed: no further
              // instruction for this unit kind can leave in this cycle either
    Refused,  // not taken, and the attempt may have had effects (a gated unit began waking)
    Waits,    // every unit that could take this instruction is busy, and nothing changed; others
              // of its unit kind may still leave (an INT32 instruction beside FP-only units)
  };
  virtual Answer dispatch(uint32_t inst, Unit u, Cycle now) = 0;
  // The first cycle from which a unit that could take `inst` may be free, when that depends on
  // nothing outside the SM; otherwise `now + 1`.
  virtual Cycle unitFreeAt(uint32_t inst, Unit u, Cycle now) const = 0;

 protected:
  ~DispatchTarget() = default;
};

class DispatchUnit : public sc_core::sc_module {
 public:
  DispatchUnit(const sc_core::sc_module_name& name, const SmConfig& cfg, RegisterFile& rf);

  bool hasFreeCollector(Unit u, uint32_t block) const {
    return groupHasFree(slotOf(group(u), block));
  }
  // The collector groups (SIMD, SFU/DP/tensor, memory): a unit's group, and whether a block's group
  // (slotOf(group, block): kGroups x blocks of them) has a free one.
  static constexpr int kGroups = 3;
  static constexpr uint32_t kMaxBlocks = 8;
  static int group(Unit u) {
    return u == Unit::Ldst ? 2 : (u == Unit::Sfu || u == Unit::Dp || u == Unit::Tensor) ? 1 : 0;
  }
  static int slotOf(int g, uint32_t block) { return static_cast<int>(block) * kGroups + g; }
  uint32_t groupSlots() const { return static_cast<uint32_t>(groups_.size()); }
  bool groupHasFree(int slot) const { return busyIn_[slot] < groups_[slot].size(); }
  // Instruction `inst` of warp slot `warp` of block `block` enters a collector; it reads the
  // registers `regs`.
  void collect(uint32_t inst, Unit u, uint32_t warp, uint32_t block,
               const std::vector<uint32_t>& regs, uint32_t numRegSlots, Cycle now);
  // One cycle: bank arbitration, then `target.dispatch` for each collector whose operands are
  // all read, oldest first (after a Busy answer, not again for that unit kind in this cycle).
  void cycle(Cycle now, SmActivity& act, DispatchTarget& target);
  bool busy() const { return occupied_ > 0; }
  uint32_t occupied() const { return occupied_; }
  // The first cycle after `now` in which cycle() may do anything but wait: `now + 1`, unless in
  // `now` every busy collector had its operands read and every instruction tried waited for a
  // busy unit without effect (Busy or Waits), and nothing was sent; then the first cycle a unit
  // one of them needs frees (DispatchTarget::unitFreeAt). Until then each cycle only counts the
  // busy collectors.
  Cycle nextChange(Cycle now, const DispatchTarget& target) const;
  // Voltage smoothing (seed 001) throttles the unit: at most `dispatches` instructions leave
  // for the execution units and at most `reads` register operands are read per cycle
  // (kUnlimited: no limit).
  static constexpr uint32_t kUnlimited = ~0u;
  void setLimits(uint32_t dispatches, uint32_t reads) {
    maxDispatch_ = dispatches;
    maxReads_ = reads;
  }
  void reset();

 private:
  struct Collector {
    bool busy = false;
    uint32_t inst = 0;
    Unit unit = Unit::Sp;
    uint8_t block = 0;
    uint64_t order = 0;  // issue order
    Cycle from = 0;      // first cycle it may read
    uint8_t banks[8] = {};
    uint8_t left = 0;  // operands still to read
  };
  RegisterFile& rf_;
  std::vector<std::vector<Collector>> groups_;  // by slotOf(group, block)
  // The busy collectors in issue order (collect() appends, cycle() drops those that left), and
  // those of them that may read in this cycle.
  std::vector<Collector*> live_;
  std::vector<Collector*> byAge_;
  uint32_t occupied_ = 0;
  std::vector<uint32_t> busyIn_;  // busy collectors of each group slot
  uint64_t issueOrder_ = 0;
  uint32_t maxDispatch_ = kUnlimited, maxReads_ = kUnlimited;
  static constexpr uint32_t kMaxBankPorts = 4;  // sm.register_bank_ports' range
  uint32_t bankPorts_ = 1;                      // operands a bank delivers per cycle
  Cycle waitingSince_ = ~0ull;  // the last cycle() in which every collector only waited
};

}  // namespace gpusc::sm
