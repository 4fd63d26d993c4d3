#include "sm/dispatch_unit.hpp"

#include <algorithm>

namespace gpusc::sm {

DispatchUnit::DispatchUnit(const sc_core::sc_module_name& name, const SmConfig& cfg,
                           RegisterFile& rf)
    : sc_core::sc_module(name), rf_(rf), bankPorts_(cfg.register_bank_ports) {
  const uint32_t blocks = cfg.sub_cores;
  groups_.resize(blocks * kGroups);
  busyIn_.assign(groups_.size(), 0);
  for (uint32_t b = 0; b < blocks; ++b) {
    groups_[slotOf(0, b)].resize(cfg.collectors_sp / blocks);
    groups_[slotOf(1, b)].resize(cfg.collectors_sfu / blocks);
    groups_[slotOf(2, b)].resize(cfg.collectors_mem / blocks);
  }
}

void DispatchUnit::reset() {
  for (auto& g : groups_)
    for (auto& c : g) c = Collector{};
  occupied_ = 0;
  std::fill(busyIn_.begin(), busyIn_.end(), 0u);
  live_.clear();
  waitingSince_ = ~0ull;
}

void DispatchUnit::collect(uint32_t inst, Unit u, uint32_t warp, uint32_t block,
                           const std::vector<uint32_t>& regs, uint32_t numRegSlots, Cycle now) {
  const int slot = slotOf(group(u), block);
  for (auto& c : groups_[slot]) {
    if (c.busy) continue;
    c = Collector{};
    c.busy = true;
    c.inst = inst;
    c.unit = u;
    c.block = static_cast<uint8_t>(block);
    c.order = issueOrder_++;
    c.from = now + 1;
    // Each distinct PTX register is read once; immediates and special registers are not in the
    // register file.
    uint32_t seen[8];
    for (uint32_t r : regs) {
      if (r >= numRegSlots || c.left == 8) continue;
      if (std::find(seen, seen + c.left, r) != seen + c.left) continue;
      seen[c.left] = r;
      c.banks[c.left++] = static_cast<uint8_t>(rf_.bank(r, warp, block));
    }
    ++occupied_;
    ++busyIn_[slot];
    live_.push_back(&c);  // issue orders grow: live_ stays in issue order
    return;
  }
}

void DispatchUnit::cycle(Cycle now, SmActivity& act, DispatchTarget& target) {
  if (occupied_ == 0) return;
  // Oldest first: live_ holds the busy collectors in issue order.
  byAge_.clear();
  for (Collector* c : live_)
    if (c->from <= now) byAge_.push_back(c);
  act.collectorsBusy += occupied_;
  // Per port, a bit per register-file bank (at most 256): taken[p] marks the banks whose port p
  // delivered an operand in this cycle.
  uint64_t taken[kMaxBankPorts][4] = {};
  uint32_t reads = 0;
  for (Collector* c : byAge_) {
    uint8_t kept = 0;
    for (uint8_t i = 0; i < c->left; ++i) {
      uint8_t b = c->banks[i];
      const uint64_t bit = 1ull << (b % 64);
      uint32_t port = 0;
      while (port < bankPorts_ && (taken[port][b / 64] & bit)) ++port;
      if (reads >= maxReads_) {  // throttled: the operand waits for a later cycle
        c->banks[kept++] = b;
      } else if (port < bankPorts_) {
        ++reads;
        taken[port][b / 64] |= bit;
        act.rfReads += 1;
      } else {
        act.rfBankConflicts += 1;
        c->banks[kept++] = b;
      }
    }
    c->left = kept;
  }
  uint32_t sent = 0;
  // Whether every busy collector only waited for a unit in this cycle (nextChange).
  bool waiting = byAge_.size() == live_.size() && maxDispatch_ == kUnlimited;
  // Unit kinds (of a block: its units are its own) that answered Busy: the same answer, without
  // effects.
  uint64_t busyKinds = 0;
  for (Collector* c : byAge_) {
    if (c->left != 0) {
      waiting = false;
      continue;
    }
    if (sent >= maxDispatch_) break;
    const uint64_t kind = 1ull << (static_cast<uint32_t>(c->unit) + 8u * c->block);
    if (busyKinds & kind) continue;
    const DispatchTarget::Answer a = target.dispatch(c->inst, c->unit, now);
    if (a == DispatchTarget::Answer::Taken) {
      ++sent;
      c->busy = false;
      --occupied_;
      --busyIn_[slotOf(group(c->unit), c->block)];
    } else if (a == DispatchTarget::Answer::Busy) {
      busyKinds |= kind;
    } else if (a == DispatchTarget::Answer::Refused) {
      waiting = false;
    }
  }
  // Collectors that dispatched in this cycle have left: if every other one answered Busy, the
  // SM may sleep until a unit frees (unitFreeAt) even after a dispatch.
  waitingSince_ = waiting ? now : ~0ull;
  if (sent != 0)
    live_.erase(
        std::remove_if(live_.begin(), live_.end(), [](const Collector* c) { return !c->busy; }),
        live_.end());
}

Cycle DispatchUnit::nextChange(Cycle now, const DispatchTarget& target) const {
  if (occupied_ == 0 || waitingSince_ != now) return now + 1;
  Cycle next = ~0ull;
  for (const Collector* c : live_) {
    next = std::min(next, target.unitFreeAt(c->inst, c->unit, now));
    if (next <= now + 1) return now + 1;
  }
  return next;
}

}  // namespace gpusc::sm
