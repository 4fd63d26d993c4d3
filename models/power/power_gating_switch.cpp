#include "power/power_gating_switch.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "common/error.hpp"

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

PowerGatingSwitch::PowerGatingSwitch(const sc_core::sc_module_name& name, IdleDetect detect,
                                     uint32_t timeout, uint32_t wakeLatency, uint64_t breakEven)
    : sc_core::sc_module(name),
      detect_(detect),
      timeout_(timeout),
      wake_(wakeLatency),
      bet_(std::max<uint64_t>(1, breakEven)) {}

void PowerGatingSwitch::begin(Cycle c) {
  n_ = SwitchCounters{};
  lastEnd_ = c;
  wakeUntil_ = 0;  // no wake-up under way: usable at once, even before c
  busySince_ = c;
  open_ = false;
  wakingTail_ = false;
  suspended_ = false;
}

void PowerGatingSwitch::resume(Cycle c) {
  if (!suspended_) return;
  suspended_ = false;
  lastEnd_ = std::max(lastEnd_, c);
  wakeUntil_ = 0;  // resumed ON, with no wake-up under way
  wakingTail_ = false;
}

void PowerGatingSwitch::closeIdle(uint64_t len) {
  if (len == 0) return;
  ++n_.idlePeriods;
  if (len >= bet_) {
    ++n_.idlePeriodsAtLeastBet;
    n_.idleCyclesAtLeastBet += len;
  }
  switch (detect_) {
    case IdleDetect::None:
      n_.idleCycles += len;
      break;
    case IdleDetect::Ideal:
      if (len >= bet_) {
        n_.gatedCycles += len;
        ++n_.gatings;
      } else {
        n_.idleCycles += len;
      }
      break;
    case IdleDetect::Timeout:
      if (len > timeout_) {
        const uint64_t gated = len - timeout_;
        n_.idleCycles += timeout_;
        n_.gatedCycles += gated;
        ++n_.gatings;
        if (gated < bet_) ++n_.shortGatings;
      } else {
        n_.idleCycles += len;
      }
      break;
  }
}

bool PowerGatingSwitch::gatedAt(Cycle c) const {
  return detect_ == IdleDetect::Timeout && !open_ && !suspended_ && c > lastEnd_ &&
         c - lastEnd_ > timeout_;
}

Cycle PowerGatingSwitch::usableFrom(Cycle c) const {
  if (suspended_) return c;
  return gatedAt(c) ? kGated : std::max(c, wakeUntil_);
}

Cycle PowerGatingSwitch::acquire(Cycle c) {
  if (suspended_) return c;
  if (!gatedAt(c)) return std::max(c, wakeUntil_);  // ON, or a wake-up already under way
  // Gated since lastEnd_ + timeout: the idle period ends now and the block wakes.
  closeIdle(c - lastEnd_);
  ++n_.wakeups;
  n_.wakingCycles += wake_;
  lastEnd_ = c + wake_;
  wakeUntil_ = lastEnd_;
  wakingTail_ = wake_ > 0;
  return lastEnd_;
}

void PowerGatingSwitch::endIdleAt(Cycle c, const char* what) {
  if (c <= lastEnd_) return;
  if (gatedAt(c))
    throw InternalError(
        fmt::format("{}: {} at cycle {} while gated (call acquire() first)", name(), what, c));
  closeIdle(c - lastEnd_);
  lastEnd_ = c;
}

void PowerGatingSwitch::use(Cycle from, Cycle until) {
  if (suspended_) return;
  if (open_)
    throw InternalError(fmt::format("{}: use() during an open-ended busy stretch", name()));
  endIdleAt(from, "used");
  if (until > lastEnd_) {
    n_.busyCycles += until - lastEnd_;
    lastEnd_ = until;
    wakingTail_ = false;
  }
}

void PowerGatingSwitch::hold(Cycle from, Cycle until) {
  if (suspended_ || open_) return;
  endIdleAt(from, "held");
  if (until > lastEnd_) {
    n_.wakingCycles += until - lastEnd_;
    lastEnd_ = until;
    wakingTail_ = true;
  }
  wakeUntil_ = std::max(wakeUntil_, until);
}

void PowerGatingSwitch::beginBusy(Cycle c) {
  if (open_ || suspended_) return;
  endIdleAt(c, "made busy");
  busySince_ = lastEnd_;  // a wake-up in progress ends before the block is busy
  open_ = true;
}

void PowerGatingSwitch::endBusy(Cycle c) {
  if (!open_) return;
  open_ = false;
  if (c > busySince_) {
    n_.busyCycles += c - busySince_;
    wakingTail_ = false;
  }
  lastEnd_ = std::max(lastEnd_, c);
}

void PowerGatingSwitch::finish(Cycle c) {
  if (suspended_) return;  // the stretch ended at suspend()
  if (open_) endBusy(c);
  if (c > lastEnd_) {
    closeIdle(c - lastEnd_);
  } else if (lastEnd_ > c) {
    // A use or a wake-up reaching past the window's end counts only up to it.
    uint64_t& tail = wakingTail_ ? n_.wakingCycles : n_.busyCycles;
    tail -= std::min<uint64_t>(tail, lastEnd_ - c);
  }
  lastEnd_ = c;
  wakeUntil_ = std::min(wakeUntil_, c);
  wakingTail_ = false;
}

}  // namespace gpusc::power
