// The transactor of the verilated drowsy-line controllers of one cache
// (models/rtl/verilog/drowsy_line_controller.sv, one per bank) and the `verilated` and
// `lockstep` implementations of cache::DrowsyLineController built on it.
//
// Each bank is its own clock domain, clocked lazily like the switch controller's: a touch at
// cycle c first clocks the bank through the cycles since its last clock while a frame is still
// ON (`quiet` low: its counters still count), then jumps to c once it is quiet (no register can
// change without an access), and clocks c with the access. Frame (set, way) lives in bank
// set mod banks, at index (set / banks) x ways + way (bank = line mod banks, set = line mod
// sets, with banks <= sets).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cache/drowsy_line_controller.hpp"
#include "rtl/drowsy_line_controller_pins.hpp"

namespace gpusc::rtl {

// The settings the transactor writes to the blocks' configuration inputs.
struct DrowsyLineSettings {
  bool timeoutPolicy = false;
  uint32_t timeout = 0, wakeLatency = 0, lookahead = 0;  // lookahead: 0 without look-ahead
};

class DrowsyLineControllerTransactor {
 public:
  // `banks` blocks for a cache of `sets` x `ways` frames; `makeBlock(frames)` builds one for a
  // bank's frames (the built-in block by default).
  using BlockFactory = std::unique_ptr<DrowsyLineControllerPins> (*)(uint32_t frames);
  DrowsyLineControllerTransactor(const DrowsyLineSettings& s, uint32_t sets, uint32_t ways,
                                 uint32_t banks,
                                 BlockFactory makeBlock = &makeDrowsyLineControllerBlock);

  // Reset of every bank (one clock each); the next clocks start at `cycle`.
  void powerOn(uint64_t cycle);
  // A touch of frame (set, way) at `cycle`: the `wake` and `wait_cycles` outputs.
  // InternalError if the bank was already clocked past `cycle`.
  cache::DrowsyLineController::Touch touch(uint32_t set, uint32_t way, uint64_t cycle, bool early);

  uint32_t banks() const { return static_cast<uint32_t>(banks_.size()); }
  uint32_t bankOf(uint32_t set) const { return set & (banks() - 1); }
  uint64_t clocks() const { return clocks_; }
  DrowsyLineControllerPins& pins(uint32_t bank) { return *banks_[bank].pins; }
  // Traces every bank (scope.bank0, scope.bank1, ...).
  void trace(RtlWaves& w, const std::string& scope, uint64_t periodFs);
  // Whether frame (set, way) is DROWSY in the bank's RTL after its last clock.
  bool drowsy(uint32_t set, uint32_t way) const;

 private:
  struct Bank {
    std::unique_ptr<DrowsyLineControllerPins> pins;
    uint64_t cycle = 0;  // the cycle whose inputs the next clock applies
  };
  uint32_t indexOf(uint32_t set, uint32_t way) const { return (set >> bankShift_) * ways_ + way; }
  void clock(Bank& b);

  DrowsyLineSettings settings_;
  uint32_t ways_, bankShift_;
  std::vector<Bank> banks_;
  uint64_t clocks_ = 0;
};

// rtl.drowsy_controller: verilated. The RTL decides; the model keeps the last touches for the
// accounting.
class VerilatedDrowsyLineController : public cache::DrowsyLineController {
 public:
  VerilatedDrowsyLineController(const Params& p, DrowsyLineControllerTransactor rtl)
      : DrowsyLineController(p), rtl_(std::move(rtl)) {}
  void powerOn(uint64_t cycle) override;
  Touch touch(uint32_t set, uint32_t way, uint64_t cycle, bool early) override;
  DrowsyLineControllerTransactor& transactor() { return rtl_; }
  void traceWaves(RtlWaves& w, const std::string& scope, uint64_t periodFs) override {
    rtl_.trace(w, scope, periodFs);
  }

 private:
  DrowsyLineControllerTransactor rtl_;
};

// rtl.drowsy_controller: lockstep. The model decides; the RTL sees the same touches and its
// `wake` and `wait_cycles` are compared at each (LockstepDivergence at the first difference,
// naming the cache and the bank).
class LockstepDrowsyLineController : public cache::DrowsyLineController {
 public:
  LockstepDrowsyLineController(const Params& p, DrowsyLineControllerTransactor rtl,
                               std::string instance)
      : DrowsyLineController(p), rtl_(std::move(rtl)), instance_(std::move(instance)) {}
  void powerOn(uint64_t cycle) override;
  Touch touch(uint32_t set, uint32_t way, uint64_t cycle, bool early) override;
  DrowsyLineControllerTransactor& transactor() { return rtl_; }
  void traceWaves(RtlWaves& w, const std::string& scope, uint64_t periodFs) override {
    rtl_.trace(w, scope, periodFs);
  }

 private:
  DrowsyLineControllerTransactor rtl_;
  const std::string instance_;
};

}  // namespace gpusc::rtl
