#include "rtl/power_gating_switch_rtl.hpp"

#include <algorithm>
#include <memory>

namespace gpusc::rtl {

PowerGatingSwitchTransactor::PowerGatingSwitchTransactor(uint32_t timeout, uint32_t wakeLatency)
    : pins_(makePowerGatingSwitchBlock()) {
  pins_->timeout = timeout;
  pins_->wakeLatency = wakeLatency;
  begin(0);
}

void PowerGatingSwitchTransactor::begin(uint64_t c) {
  pins_->rst = true;
  pins_->cycle = c;
  pins_->clock();
  pins_->rst = false;
  cycle_ = c;
  busy_.clear();
  open_ = acquirePending_ = lastBusy_ = false;
}

bool PowerGatingSwitchTransactor::busyAt(uint64_t c) {
  while (!busy_.empty() && busy_.front().second <= c) busy_.pop_front();
  return (open_ && c >= openSince_) || (!busy_.empty() && busy_.front().first <= c);
}

void PowerGatingSwitchTransactor::clock(bool use) {
  pins_->use = use;
  pins_->acquire = acquirePending_;
  pins_->cycle = cycle_;
  pins_->clock();
  acquirePending_ = false;
  lastBusy_ = use;
  ++cycle_;
  ++clocks_;
}

void PowerGatingSwitchTransactor::advanceTo(uint64_t c) {
  while (cycle_ < c) {
    const bool use = busyAt(cycle_);
    if (!acquirePending_ && !pins_->waking) {
      // No register can change while the block stays idle and gated (the count saturated) or
      // stays busy after a busy cycle (the count stays 0): jump to where that ends.
      uint64_t until = cycle_;
      if (!use && pins_->gated) {
        until = c;
        if (!busy_.empty()) until = std::min(until, std::max(cycle_, busy_.front().first));
        if (open_) until = std::min(until, std::max(cycle_, openSince_));
      } else if (use && lastBusy_) {
        const bool openBusy = open_ && cycle_ >= openSince_;
        until = openBusy ? c : std::min(c, busy_.front().second);
      }
      if (until > cycle_) {
        cycle_ = until;
        continue;
      }
    }
    clock(use);
  }
}

bool PowerGatingSwitchTransactor::gatedAt(uint64_t c) {
  advanceTo(c);
  // A request already made in this cycle has started the wake-up (at the coming edge).
  return pins_->gated && !acquirePending_;
}

uint64_t PowerGatingSwitchTransactor::usableFrom(uint64_t c) {
  advanceTo(c);
  return c + pins_->waitCycles;
}

uint64_t PowerGatingSwitchTransactor::acquire(uint64_t c) {
  const uint64_t ready = usableFrom(c);
  if (pins_->gated) acquirePending_ = true;
  return ready;
}

void PowerGatingSwitchTransactor::use(uint64_t from, uint64_t until) {
  if (until <= from) return;
  if (!busy_.empty() && from <= busy_.back().second)
    busy_.back().second = std::max(busy_.back().second, until);
  else
    busy_.emplace_back(from, until);
}

void PowerGatingSwitchTransactor::hold(uint64_t from, uint64_t until) { use(from, until); }

void PowerGatingSwitchTransactor::beginBusy(uint64_t c) {
  advanceTo(c);
  open_ = true;
  openSince_ = c;
}

void PowerGatingSwitchTransactor::endBusy(uint64_t c) {
  advanceTo(c);
  open_ = false;
}

}  // namespace gpusc::rtl

namespace gpusc::power {

std::unique_ptr<SwitchRtl> makeSwitchRtl(uint32_t timeout, uint32_t wakeLatency) {
  return std::make_unique<rtl::PowerGatingSwitchTransactor>(timeout, wakeLatency);
}

}  // namespace gpusc::power
