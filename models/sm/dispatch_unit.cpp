#include "sm/dispatch_unit.hpp"

#include <algorithm>

namespace gpusc::sm {

DispatchUnit::DispatchUnit(const sc_core::sc_module_name& name, const SmConfig& cfg,
                           RegisterFile& rf)
    : sc_core::sc_module(name), rf_(rf), bankTaken_(rf.banks(), 0) {
  groups_[0].resize(cfg.collectors_sp);
  groups_[1].resize(cfg.collectors_sfu);
  groups_[2].resize(cfg.collectors_mem);
}

void DispatchUnit::reset() {
  for (auto& g : groups_)
    for (auto& c : g) c = Collector{};
  occupied_ = 0;
  std::fill(std::begin(busyIn_), std::end(busyIn_), 0u);
}

void DispatchUnit::collect(uint32_t inst, Unit u, uint32_t warp, const std::vector<uint32_t>& regs,
                           uint32_t numRegSlots, Cycle now) {
  for (auto& c : groups_[group(u)]) {
    if (c.busy) continue;
    c = Collector{};
    c.busy = true;
    c.inst = inst;
    c.unit = u;
    c.order = issueOrder_++;
    c.from = now + 1;
    // Each distinct PTX register is read once; immediates and special registers are not in the
    // register file.
    uint32_t seen[8];
    for (uint32_t r : regs) {
      if (r >= numRegSlots || c.left == 8) continue;
      if (std::find(seen, seen + c.left, r) != seen + c.left) continue;
      seen[c.left] = r;
      c.banks[c.left++] = static_cast<uint8_t>(rf_.bank(r, warp));
    }
    ++occupied_;
    ++busyIn_[group(u)];
    return;
  }
}

void DispatchUnit::cycle(Cycle now, SmActivity& act, DispatchTarget& target) {
  if (occupied_ == 0) return;
  byAge_.clear();
  for (auto& g : groups_)
    for (auto& c : g)
      if (c.busy && c.from <= now) byAge_.push_back(&c);
  act.collectorsBusy += occupied_;
  // Oldest first (issue orders are unique). Insertion sort: a handful of collectors, mostly
  // in order already.
  for (size_t i = 1; i < byAge_.size(); ++i) {
    Collector* c = byAge_[i];
    size_t j = i;
    for (; j > 0 && byAge_[j - 1]->order > c->order; --j) byAge_[j] = byAge_[j - 1];
    byAge_[j] = c;
  }
  std::fill(bankTaken_.begin(), bankTaken_.end(), 0);
  uint32_t reads = 0;
  for (Collector* c : byAge_) {
    uint8_t kept = 0;
    for (uint8_t i = 0; i < c->left; ++i) {
      uint8_t b = c->banks[i];
      if (reads >= maxReads_) {  // throttled: the operand waits for a later cycle
        c->banks[kept++] = b;
      } else if (!bankTaken_[b]) {
        ++reads;
        bankTaken_[b] = 1;
        act.rfReads += 1;
      } else {
        act.rfBankConflicts += 1;
        c->banks[kept++] = b;
      }
    }
    c->left = kept;
  }
  uint32_t sent = 0;
  uint32_t busyKinds = 0;  // unit kinds that answered Busy: the same answer, without effects
  for (Collector* c : byAge_) {
    if (c->left != 0) continue;
    if (sent >= maxDispatch_) break;
    const uint32_t kind = 1u << static_cast<uint32_t>(c->unit);
    if (busyKinds & kind) continue;
    const DispatchTarget::Answer a = target.dispatch(c->inst, c->unit, now);
    if (a == DispatchTarget::Answer::Taken) {
      ++sent;
      c->busy = false;
      --occupied_;
      --busyIn_[group(c->unit)];
    } else if (a == DispatchTarget::Answer::Busy) {
      busyKinds |= kind;
    }
  }
}

}  // namespace gpusc::sm
