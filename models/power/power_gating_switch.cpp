#include "power/power_gating_switch.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "common/error.hpp"
#include "common/rtl_mode.hpp"

namespace gpusc::power {

IdleDetect parseIdleDetect(const std::string& name) {
  if (name == "none") return IdleDetect::None;
  if (name == "ideal") return IdleDetect::Ideal;
  if (name == "timeout") return IdleDetect::Timeout;
  throw InputError(fmt::format(
      "power.gating.idle_detect: no idle detection named '{}' (known: none, ideal, timeout)",
      name));
}

const char* idleDetectName(IdleDetect d) {
  switch (d) {
    case IdleDetect::None:
      return "none";
    case IdleDetect::Ideal:
      return "ideal";
    case IdleDetect::Timeout:
      return "timeout";
  }
  return "?";
}

uint64_t breakEvenCycles(double switchPj, double leakageW, double gatedLeakageFraction,
                         double cycleSeconds) {
  const double savedPjPerCycle = leakageW * (1.0 - gatedLeakageFraction) * cycleSeconds * 1e12;
  if (savedPjPerCycle <= 0) return ~0ull / 4;  // gating never pays
  // A small tolerance so that an exact ratio (4000 pJ / 40 pJ) is not rounded up by
  // floating-point noise.
  const double bet = switchPj / savedPjPerCycle;
  return std::max<uint64_t>(1, static_cast<uint64_t>(std::ceil(bet - 1e-9)));
}

SwitchCounters& SwitchCounters::operator+=(const SwitchCounters& o) {
  busyCycles += o.busyCycles;
  idleCycles += o.idleCycles;
  gatedCycles += o.gatedCycles;
  wakingCycles += o.wakingCycles;
  gatings += o.gatings;
  wakeups += o.wakeups;
  shortGatings += o.shortGatings;
  idlePeriods += o.idlePeriods;
  idlePeriodsAtLeastBet += o.idlePeriodsAtLeastBet;
  idleCyclesAtLeastBet += o.idleCyclesAtLeastBet;
  return *this;
}

nlohmann::json toJson(const SwitchCounters& c) {
  return {{"busy_cycles", c.busyCycles},
          {"idle_cycles", c.idleCycles},
          {"gated_cycles", c.gatedCycles},
          {"waking_cycles", c.wakingCycles},
          {"gatings", c.gatings},
          {"wakeups", c.wakeups},
          {"short_gatings", c.shortGatings},
          {"idle_periods", c.idlePeriods},
          {"idle_periods_at_least_bet", c.idlePeriodsAtLeastBet},
          {"idle_cycles_at_least_bet", c.idleCyclesAtLeastBet}};
}

SwitchRtlMode parseSwitchRtlMode(const std::string& name) {
  switch (parseRtlMode("rtl.power_switch", name)) {
    case RtlMode::Verilated:
      return SwitchRtlMode::Verilated;
    case RtlMode::Lockstep:
      return SwitchRtlMode::Lockstep;
    case RtlMode::Model:
      break;
  }
  return SwitchRtlMode::Model;
}

PowerGatingSwitch::PowerGatingSwitch(const sc_core::sc_module_name& name, const SwitchParams& p)
    : PowerGatingSwitch(name, p.detect, p.timeout, p.wakeLatency, p.breakEven) {
  if (p.rtl != SwitchRtlMode::Model && p.detect == IdleDetect::Timeout)
    attachRtl(makeSwitchRtl(p.timeout, p.wakeLatency), p.rtl);
}

PowerGatingSwitch::PowerGatingSwitch(const sc_core::sc_module_name& name, IdleDetect detect,
                                     uint32_t timeout, uint32_t wakeLatency, uint64_t breakEven)
    : sc_core::sc_module(name),
      detect_(detect),
      timeout_(timeout),
      wake_(wakeLatency),
      bet_(std::max<uint64_t>(1, breakEven)) {}

void PowerGatingSwitch::attachRtl(std::unique_ptr<SwitchRtl> rtl, SwitchRtlMode mode) {
  if (mode == SwitchRtlMode::Model || detect_ != IdleDetect::Timeout) {
    rtl_.reset();
    return;
  }
  rtl_ = std::make_unique<Rtl>(Rtl{std::move(rtl), mode, {}});
}

const std::string& PowerGatingSwitch::divergence() const {
  static const std::string kNone;
  return rtl_ ? rtl_->lockstep.divergence() : kNone;
}

uint64_t PowerGatingSwitch::decide(Cycle c, const char* signal, uint64_t model,
                                   uint64_t rtl) const {
  if (rtl_->mode == SwitchRtlMode::Verilated) return rtl;
  rtl_->lockstep.check("power_switch", name(), c, signal, model, rtl);
  return model;
}

void PowerGatingSwitch::begin(Cycle c) {
  if (rtl_) rtl_->block->begin(c);
  n_ = SwitchCounters{};
  lastEnd_ = idleFrom_ = c;
  wakeUntil_ = 0;  // no wake-up under way: usable at once, even before c
  busySince_ = c;
  open_ = false;
  wakingTail_ = false;
  suspended_ = false;
}

void PowerGatingSwitch::continueWindow(Cycle c) {
  // finish() ended the last window (its stretches cut there, lastEnd_ at its end); the RTL
  // controller, never told of windows, goes on counting from the period's start as well.
  n_ = SwitchCounters{};
  open_ = false;
  wakingTail_ = false;
  suspended_ = false;
  lastEnd_ = std::max(lastEnd_, c);
  if (wakeUntil_ < lastEnd_) wakeUntil_ = 0;  // no wake-up under way: usable unless gated
  busySince_ = lastEnd_;
}

void PowerGatingSwitch::resume(Cycle c) {
  if (!suspended_) return;
  suspended_ = false;
  lastEnd_ = std::max(lastEnd_, c);
  idleFrom_ = lastEnd_;
  if (rtl_) rtl_->block->begin(lastEnd_);  // on and idle from there, like the model
  wakeUntil_ = 0;                          // resumed ON, with no wake-up under way
  wakingTail_ = false;
}

void PowerGatingSwitch::closeIdle(Cycle end) {
  if (end <= lastEnd_) return;
  // This window's part of the period, and the part an earlier window accounted.
  const uint64_t len = end - lastEnd_;
  const uint64_t before = lastEnd_ - idleFrom_;
  const uint64_t whole = before + len;
  ++n_.idlePeriods;
  if (whole >= bet_) {
    ++n_.idlePeriodsAtLeastBet;
    n_.idleCyclesAtLeastBet += len;
  }
  switch (detect_) {
    case IdleDetect::None:
      n_.idleCycles += len;
      break;
    case IdleDetect::Ideal:
      // The oracle gates the whole period; the earlier window counted the gating if its part
      // alone reached BET.
      if (whole >= bet_) {
        n_.gatedCycles += len;
        if (before < bet_) ++n_.gatings;
      } else {
        n_.idleCycles += len;
      }
      break;
    case IdleDetect::Timeout:
      if (whole > timeout_) {
        const uint64_t gatedBefore = before > timeout_ ? before - timeout_ : 0;
        const uint64_t gated = whole - timeout_ - gatedBefore;
        n_.idleCycles += len - gated;
        n_.gatedCycles += gated;
        if (gatedBefore == 0) {  // gated in this window
          ++n_.gatings;
          if (gated < bet_) ++n_.shortGatings;
        }
      } else {
        n_.idleCycles += len;
      }
      break;
  }
}

bool PowerGatingSwitch::modelGatedAt(Cycle c) const {
  return detect_ == IdleDetect::Timeout && !open_ && !suspended_ && c > idleFrom_ &&
         c - idleFrom_ > timeout_;
}

bool PowerGatingSwitch::gatedAt(Cycle c) const {
  const bool m = modelGatedAt(c);
  if (!rtl_ || suspended_) return m;
  return decide(c, "gated", m, rtl_->block->gatedAt(c)) != 0;
}

Cycle PowerGatingSwitch::usableFrom(Cycle c) const {
  if (suspended_) return c;
  if (gatedAt(c)) return kGated;
  const Cycle m = std::max(c, wakeUntil_);
  if (!rtl_) return m;
  return c + decide(c, "wait_cycles", m - c, rtl_->block->usableFrom(c) - c);
}

Cycle PowerGatingSwitch::acquire(Cycle c) {
  if (suspended_) return c;
  const bool gated = gatedAt(c);
  // ON, or a wake-up already under way; else gated since idleFrom_ + timeout.
  Cycle ready = gated ? c + wake_ : std::max(c, wakeUntil_);
  if (rtl_) ready = c + decide(c, "wait_cycles", ready - c, rtl_->block->acquire(c) - c);
  if (!gated) return ready;
  // The idle period ends now and the block wakes (counted from the window's start when it was
  // gated before the window began).
  closeIdle(c);
  ++n_.wakeups;
  const Cycle from = std::max(c, lastEnd_);
  if (ready > from) n_.wakingCycles += ready - from;
  lastEnd_ = idleFrom_ = std::max(ready, lastEnd_);
  wakeUntil_ = ready;
  wakingTail_ = ready > from;
  return ready;
}

void PowerGatingSwitch::endIdleAt(Cycle c, const char* what) {
  // Busy or waking up to lastEnd_: no idle period ends before it (one carried into the window
  // from an earlier one does).
  if (c <= lastEnd_ && idleFrom_ == lastEnd_) return;
  const bool verilated = rtl_ && rtl_->mode == SwitchRtlMode::Verilated;
  if (verilated ? rtl_->block->gatedAt(c) : modelGatedAt(c))
    throw InternalError(
        fmt::format("{}: {} at cycle {} while gated (call acquire() first)", name(), what, c));
  closeIdle(c);
  lastEnd_ = idleFrom_ = std::max(lastEnd_, c);
}

void PowerGatingSwitch::use(Cycle from, Cycle until) {
  if (suspended_) return;
  if (open_)
    throw InternalError(fmt::format("{}: use() during an open-ended busy stretch", name()));
  endIdleAt(from, "used");
  if (until > lastEnd_) {
    n_.busyCycles += until - lastEnd_;
    lastEnd_ = idleFrom_ = until;
    wakingTail_ = false;
  }
  if (rtl_) rtl_->block->use(from, until);
}

void PowerGatingSwitch::hold(Cycle from, Cycle until) {
  if (suspended_ || open_) return;
  endIdleAt(from, "held");
  if (until > lastEnd_) {
    n_.wakingCycles += until - lastEnd_;
    lastEnd_ = idleFrom_ = until;
    wakingTail_ = true;
  }
  if (rtl_) rtl_->block->hold(from, until);
}

void PowerGatingSwitch::beginBusy(Cycle c) {
  if (open_ || suspended_) return;
  endIdleAt(c, "made busy");
  busySince_ = lastEnd_;  // a wake-up in progress ends before the block is busy
  open_ = true;
  if (rtl_) rtl_->block->beginBusy(c);
}

void PowerGatingSwitch::endBusy(Cycle c) {
  if (!open_) return;
  open_ = false;
  if (rtl_) rtl_->block->endBusy(c);
  if (c > busySince_) {
    n_.busyCycles += c - busySince_;
    wakingTail_ = false;
  }
  lastEnd_ = idleFrom_ = std::max(lastEnd_, c);
}

void PowerGatingSwitch::finish(Cycle c) {
  if (suspended_) return;  // the stretch ended at suspend()
  if (open_) endBusy(c);
  if (c > lastEnd_) {
    closeIdle(c);
  } else if (lastEnd_ > c) {
    // A use or a wake-up reaching past the window's end counts only up to it.
    uint64_t& tail = wakingTail_ ? n_.wakingCycles : n_.busyCycles;
    tail -= std::min<uint64_t>(tail, lastEnd_ - c);
  }
  lastEnd_ = c;
  // An idle period under way goes on into the next window if one continues this one
  // (continueWindow); a stretch cut here leaves the block idle from here.
  idleFrom_ = std::min(idleFrom_, c);
  wakeUntil_ = std::min(wakeUntil_, c);
  wakingTail_ = false;
}

}  // namespace gpusc::power
