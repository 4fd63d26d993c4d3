// A power-gating switch (sleep transistor) in front of one block: an SM, a SIMD unit or a lane
// (seed 002). The block is ON (busy or idle), GATED or WAKING. When it gates is the idle
// detection's choice (power.gating.idle_detect):
//
//   none     never gated.
//   ideal    an oracle gates every idle period of at least the break-even time (BET) for its
//            whole length and wakes the block just in time: no performance cost (seed 002's
//            evaluation assumes this). Decided when the idle period ends.
//   timeout  gated after timeout_cycles of idleness; a use of a gated block must wait
//            wake_latency cycles (acquire() says until when), a real performance cost.
//
// The switch keeps no clock: it is told when its block is used (use(), or beginBusy()/endBusy()
// for open-ended use such as an SM holding CTAs) and accounts idle periods when they end, so an
// idle block costs nothing to simulate. Calls come in non-decreasing cycle order.
// Cycles are whole clock cycles: use(from, until) makes cycles from .. until-1 busy.
//
// With rtl.power_switch (docs/rtl-cosim.md) a timeout switch also drives the verilated switch
// controller (SwitchRtl) with the same calls: `verilated` lets the RTL answer gatedAt(),
// usableFrom() and acquire() (the counters account the stretches those answers make);
// `lockstep` answers from the model and compares every answer with the RTL's.
//
// Accounting over a window [begin(), finish()): busy + idle + gated + waking cycles = window
// (minus the cycles between suspend() and resume(); a stretch still running at finish() is cut
// there).
// The break-even time: gating pays only when the gated time exceeds
//   BET = switch energy / (leakage saved per cycle)
// and seed 002's net saving, in cycles of the block's leakage, is
//   net = gated cycles - gatings x BET
// (for ideal detection: the sum of idle periods >= BET minus their count x BET).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>
#include <systemc>

#include "common/lockstep.hpp"
#include "common/power_config.hpp"
#include "power/switch_rtl.hpp"

namespace gpusc::power {

enum class IdleDetect : uint8_t { None, Ideal, Timeout };
IdleDetect parseIdleDetect(const std::string& name);  // InputError for an unknown name
const char* idleDetectName(IdleDetect d);

// The break-even time in cycles (rounded up, at least 1): switching energy over the leakage the
// gated block saves per cycle. Energies and powers already scaled to the supply voltage.
uint64_t breakEvenCycles(double switchPj, double leakageW, double gatedLeakageFraction,
                         double cycleSeconds);

// One level of switch as the platform sets it (power::switchParams in gating_params.hpp).
struct SwitchParams {
  IdleDetect detect = IdleDetect::None;
  uint32_t timeout = 0, wakeLatency = 0;
  uint64_t breakEven = 1;  // cycles
  double switchPj = 0;     // per gating, at the supply voltage
  double leakageW = 0;     // of the gated block, at the supply voltage
  double gatedLeakageFraction = 0;
  SwitchRtlMode rtl = SwitchRtlMode::Model;  // rtl.power_switch (timeout detection only)
};

struct SwitchCounters {
  uint64_t busyCycles = 0;    // the block was in use
  uint64_t idleCycles = 0;    // idle and ON
  uint64_t gatedCycles = 0;   // gated
  uint64_t wakingCycles = 0;  // waking because a use needed it (timeout)
  uint64_t gatings = 0;       // times the block was gated
  uint64_t wakeups = 0;       // times a use found it gated and had to wait (timeout)
  uint64_t shortGatings = 0;  // gatings shorter than BET: each a net energy loss
  uint64_t idlePeriods = 0;   // idle periods that ended (by a use or the window's end)
  uint64_t idlePeriodsAtLeastBet = 0;
  uint64_t idleCyclesAtLeastBet = 0;  // cycles in idle periods >= BET (ideal gating's gain)

  SwitchCounters& operator+=(const SwitchCounters& o);
  uint64_t windowCycles() const { return busyCycles + idleCycles + gatedCycles + wakingCycles; }
};
// Keys: busy_cycles, idle_cycles, gated_cycles, waking_cycles, gatings, wakeups, short_gatings,
// idle_periods, idle_periods_at_least_bet, idle_cycles_at_least_bet.
nlohmann::json toJson(const SwitchCounters& c);

class PowerGatingSwitch : public sc_core::sc_module {
 public:
  PowerGatingSwitch(const sc_core::sc_module_name& name, const SwitchParams& p);
  PowerGatingSwitch(const sc_core::sc_module_name& name, IdleDetect detect, uint32_t timeout,
                    uint32_t wakeLatency, uint64_t breakEven);

  IdleDetect detect() const { return detect_; }
  uint64_t breakEven() const { return bet_; }
  uint32_t wakeLatency() const { return wake_; }

  // Starts an accounting window at `c` with the block ON and idle; clears the counters.
  void begin(Cycle c);
  // Starts the next accounting window at `c` with the block as the last window left it: the
  // sleep transistor and its idle detection do not know where a kernel ends, so an idle period
  // under way goes on (a timeout switch idle for longer than its timeout is gated, and its next
  // use waits for the wake-up). Clears the counters. The period's cycles before `c` were
  // accounted by the earlier window (a gating it counted is not counted again); a gating that
  // starts at or after `c`, and an ideal gating whose period reaches BET only now, count here.
  void continueWindow(Cycle c);
  // Ends the window at `c` (an open busy stretch is closed there, a trailing idle period is
  // accounted, gated without a wake-up when the detection gates it).
  void finish(Cycle c);

  // Accounting pauses (a SIMD lane while its SM holds no CTA: the SM's own switch accounts
  // that time): suspend() ends the current stretch at `c` like finish(); resume() restarts it
  // at `c` with the block ON and idle, keeping the counters. A suspended switch ignores
  // acquire() (the block is usable at once), use(), beginBusy() and endBusy().
  void suspend(Cycle c) {
    finish(c);
    suspended_ = true;
  }
  void resume(Cycle c);
  bool suspended() const { return suspended_; }

  // The cycle from which the block can be used if asked at `c`: `c` when it is ON (or
  // detection is not timeout), else the end of its wake-up, which this call starts (the idle
  // period ends at `c`; the block is WAKING until the returned cycle).
  Cycle acquire(Cycle c);
  // Is the block gated at `c` (acquire(c) would start a wake-up)? No side effects.
  bool gatedAt(Cycle c) const;
  // Without side effects: `c` when the block is usable at `c`, the end of a wake-up under way,
  // or kGated when it is gated (only acquire() wakes it).
  static constexpr Cycle kGated = ~Cycle(0);
  Cycle usableFrom(Cycle c) const;
  // The block is busy over [from, until). With timeout detection, call acquire() first.
  void use(Cycle from, Cycle until);
  // Keeps the block ON over [from, until) without using it (counted as waking): a unit's
  // switch waiting for its lanes to wake. Like use(), the block must not be gated at `from`.
  // The block stays usable: a held block is powered, and another request may use it before
  // `until` (a hold that delayed it would let two wake-ups of one unit for different lanes
  // postpone each other until their lanes' timeouts gated them again, for ever).
  void hold(Cycle from, Cycle until);
  // Open-ended use (an SM holding CTAs): busy from `c` until endBusy().
  void beginBusy(Cycle c);
  void endBusy(Cycle c);
  bool busy() const { return open_; }
  // The cycle the block last stopped being busy (or waking).
  Cycle idleSince() const { return lastEnd_; }

  const SwitchCounters& counters() const { return n_; }
  // Seed 002's net saving in cycles: gated cycles - gatings x BET (negative: gating lost energy).
  double netGatedCycles() const {
    return double(n_.gatedCycles) - double(n_.gatings) * double(bet_);
  }

  // RTL co-simulation: from now on `rtl` (reset at the next begin()) runs beside the model,
  // deciding (`verilated`) or compared (`lockstep`). Timeout detection only.
  void attachRtl(std::unique_ptr<SwitchRtl> rtl, SwitchRtlMode mode);
  // Lockstep: the first divergence between the model and the RTL (empty: none).
  const std::string& divergence() const;
  // gpusc run --vcd: the attached RTL's signals into `waves` under `scope` (none without RTL).
  void traceWaves(rtl::RtlWaves& waves, const std::string& scope, uint64_t periodFs) {
    if (rtl_) rtl_->block->trace(waves, scope, periodFs);
  }

 private:
  struct Rtl {
    std::unique_ptr<SwitchRtl> block;
    SwitchRtlMode mode;
    LockstepMonitor lockstep;
  };
  // The model's own answer to gatedAt().
  bool modelGatedAt(Cycle c) const;
  // The value that drives the platform: the RTL's (verilated), else the model's, compared with
  // the RTL's (lockstep).
  uint64_t decide(Cycle c, const char* signal, uint64_t model, uint64_t rtl) const;
  // The idle period that began at idleFrom_ ends at `end` (a use, a wake-up or the window's
  // end); the window accounts its cycles from lastEnd_ on.
  void closeIdle(Cycle end);
  // The block starts being used (or held) at `c`: the idle period before it ends there.
  // InternalError if the block is gated at `c` (`what` names the call).
  void endIdleAt(Cycle c, const char* what);

  const IdleDetect detect_;
  const uint32_t timeout_, wake_;
  const uint64_t bet_;
  Cycle lastEnd_ = 0;  // end of the last busy or waking stretch, or the window's start
  // Start of the idle period under way: lastEnd_, or earlier when the period began in an earlier
  // window (continueWindow).
  Cycle idleFrom_ = 0;
  Cycle wakeUntil_ = 0;  // end of the last wake-up
  Cycle busySince_ = 0;
  bool open_ = false;
  bool wakingTail_ = false;  // the stretch ending at lastEnd_ is a wake-up (not a use)
  bool suspended_ = false;
  SwitchCounters n_;
  std::unique_ptr<Rtl> rtl_;  // null: rtl.power_switch model
};

}  // namespace gpusc::power
