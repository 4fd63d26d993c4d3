#include "sm/ldst_unit.hpp"

#include <algorithm>

namespace gpusc::sm {

using func::MemSpace;

LdstUnit::LdstUnit(const sc_core::sc_module_name& name, const PlatformConfig& cfg, uint32_t smId,
                   const cache::ReplacementRegistry& replacement)
    : sc_core::sc_module(name),
      cfg_(cfg),
      smId_(smId),
      shared_("shared_memory", cfg.sm.shared_memory_banks),
      constCache_(cfg.sm.const_cache, smId, replacement),
      constMshrs_(cfg.sm.const_cache.mshr_entries),
      constMaxMerge_(cfg.sm.const_cache.mshr_max_merge) {}

void LdstUnit::reset() {
  current_ = false;
  toSend_.clear();
  next_ = 0;
  busyUntil_ = 0;
  constPending_ = constBlocked_ = false;
  constLines_.clear();
  constNext_ = 0;
  for (auto& m : constMshrs_) m = ConstMshr{};
  constCache_.invalidateAll();
}

Cycle LdstUnit::nextEvent(Cycle now) const {
  if (current_ && next_ < toSend_.size()) return now + 1;
  if (constPending_) return constBlocked_ ? kNever : now + 1;  // a fill wakes the SM
  return busyUntil_ > now ? busyUntil_ : kNever;
}

uint64_t LdstUnit::localAddress(uint32_t warp, int lane, uint64_t offset) const {
  // A thread's consecutive words are consecutive 128-byte lines, in consecutive cache sets. (With
  // word i of every thread of the GPU together, one thread's words were num_sms x max_threads x
  // 4 bytes apart, a multiple of the L1's sets x line size on rtx3070: a warp's frame fell in
  // one set and thrashed it.)
  const uint64_t slot = uint64_t(smId_) * (cfg_.sm.max_threads / func::kWarpSize) + warp;
  return kLocalBase + ((slot * localWords_ + offset / 4) * func::kWarpSize + lane) * 4 + offset % 4;
}

void LdstUnit::coalesce(const InFlight& in, AccessKind kind) {
  toSend_.clear();
  next_ = 0;
  const func::MemRecord& r = in.mem;
  const uint64_t line = cfg_.sm.l1d.line_bytes;
  const uint64_t byteEnd = std::min<uint64_t>(line, 256);  // the byte mask covers 256 bytes
  // Sets bytes [from, to) of a transaction's mask.
  const auto setBytes = [](MemTransaction& t, uint64_t from, uint64_t to) {
    for (uint64_t i = from; i < to;) {
      const uint64_t lo = i % 64, n = std::min<uint64_t>(to - i, 64 - lo);
      t.byteMask[i / 64] |= (n == 64 ? ~0ull : ((1ull << n) - 1)) << lo;
      i += n;
    }
  };
  if (r.mask == ~0u && r.space != MemSpace::Local) {
    // The common coalesced access: every lane, lane l at addr[0] + l x bytes. The lines come in
    // address order, each with a run of lanes whose bytes are one range: what the loop below
    // gives lane by lane.
    const uint64_t a0 = r.addr[0], w = r.bytes;
    bool run = true;
    for (int l = 1; l < func::kWarpSize; ++l) run &= r.addr[l] == a0 + uint64_t(l) * w;
    if (run) {
      int l = 0;
      while (l < func::kWarpSize) {
        const uint64_t base = (a0 + uint64_t(l) * w) & ~(line - 1);
        int end = l + 1;
        while (end < func::kWarpSize && ((a0 + uint64_t(end) * w) & ~(line - 1)) == base) ++end;
        MemTransaction t{base, static_cast<uint32_t>(line), 0, {}, kind};
        t.lanes = (end == 32 ? ~0u : (1u << end) - 1) & ~((1u << l) - 1);
        const uint64_t from = a0 + uint64_t(l) * w - base;
        setBytes(t, std::min(from, byteEnd),
                 std::min<uint64_t>(a0 + uint64_t(end - 1) * w - base + w, byteEnd));
        toSend_.push_back(t);
        l = end;
      }
      if (kind == AccessKind::Atomic) serialiseAtomics(r);
      return;
    }
  }
  size_t cur = 0;  // the transaction of the last lane: most lanes share their neighbour's line
  for (uint32_t m = r.mask; m != 0; m &= m - 1) {
    const int l = __builtin_ctz(m);
    uint64_t a = r.space == MemSpace::Local ? localAddress(in.warp, l, r.addr[l]) : r.addr[l];
    // An access never crosses a line when it is naturally aligned and at most a line long;
    // a wider vector access still fits one line of a GPU's 128-byte lines.
    const uint64_t base = a & ~(line - 1);
    if (cur >= toSend_.size() || toSend_[cur].addr != base) {
      cur = 0;
      while (cur < toSend_.size() && toSend_[cur].addr != base) ++cur;
      if (cur == toSend_.size())
        toSend_.push_back(MemTransaction{base, static_cast<uint32_t>(line), 0, {}, kind});
    }
    MemTransaction& t = toSend_[cur];
    t.lanes |= 1u << l;
    // Bytes [a - base, + r.bytes) of the line, within the mask.
    setBytes(t, a - base, std::min<uint64_t>(a - base + r.bytes, byteEnd));
  }
  if (kind == AccessKind::Atomic) serialiseAtomics(r);
}

// Lanes on the same word of a transaction are serialised where the atomics are performed.
void LdstUnit::serialiseAtomics(const func::MemRecord& r) {
  for (MemTransaction& t : toSend_) {
    uint32_t most = 1;
    for (int l = 0; l < func::kWarpSize; ++l) {
      if (!((t.lanes >> l) & 1u)) continue;
      uint32_t same = 0;
      for (int m = 0; m < func::kWarpSize; ++m)
        same += ((t.lanes >> m) & 1u) && r.addr[m] / 4 == r.addr[l] / 4;
      most = std::max(most, same);
    }
    t.atomicSerial = most;
  }
}

void LdstUnit::accept(uint32_t inst, Cycle now, LdstHost& host, SmActivity& act) {
  InFlight& in = host.record(inst);
  const func::MemRecord& r = in.mem;
  const bool atomic = r.atomic;
  MemSpace space = r.space;
  if (r.mask == 0) {  // every lane's guard was false: nothing to access
    busyUntil_ = now + 1;
    host.complete(inst, now + 1);
    return;
  }
  switch (space) {
    case MemSpace::Shared: {
      uint32_t degree = shared_.conflictDegree(r, atomic);
      act.sharedAccesses += 1;
      act.sharedBankConflicts += degree - 1;
      busyUntil_ = now + degree;
      host.complete(inst,
                    now + degree - 1 + (r.write && !atomic ? 1 : cfg_.sm.shared_memory_latency));
      return;
    }
    case MemSpace::CallParam:
      busyUntil_ = now + 1;
      host.complete(inst, now + cfg_.sm.latency.int_add.latency);
      return;
    case MemSpace::Const:
    case MemSpace::KernelParam: {
      const uint64_t base = space == MemSpace::Const ? kConstBase : kParamBase;
      constLines_.clear();
      for (int l = 0; l < func::kWarpSize; ++l) {
        if (!((r.mask >> l) & 1u)) continue;
        uint64_t la = constCache_.lineAddress(base + r.addr[l]);
        if (std::find(constLines_.begin(), constLines_.end(), la) == constLines_.end())
          constLines_.push_back(la);
      }
      toSend_.clear();
      next_ = 0;
      constNext_ = 0;
      constFirst_ = now;
      constPending_ = true;
      constBlocked_ = false;
      in.outstanding = 0;
      inst_ = inst;
      constCycle(now, host, act);  // the first line is looked up in the cycle the unit takes it
      return;
    }
    default: {
      coalesce(in, atomic ? AccessKind::Atomic : r.write ? AccessKind::Store : AccessKind::Load);
      in.outstanding = static_cast<uint32_t>(toSend_.size());
      current_ = true;
      inst_ = inst;
      sendNext(now, host, act);  // the first transaction leaves in the cycle the unit accepts it
      return;
    }
  }
}

bool LdstUnit::constCycle(Cycle now, LdstHost& host, SmActivity& act) {
  // One distinct line per cycle, as a constant cache serves one address per cycle.
  const uint64_t la = constLines_[constNext_];
  InFlight& in = host.record(inst_);
  if (!constBlocked_) act.constAccesses += 1;  // a retry is the same access
  if (constCache_.access(la) || cfg_.sm.perfect_const_cache) {
    constBlocked_ = false;
  } else {
    ConstMshr* entry = nullptr;
    ConstMshr* freeEntry = nullptr;
    for (auto& m : constMshrs_) {
      if (m.used && m.line == la) entry = &m;
      if (!m.used && !freeEntry) freeEntry = &m;
    }
    if (entry && entry->waiters.size() < constMaxMerge_) {
      entry->waiters.push_back(inst_);  // the line is on its way: wait for it
    } else if (!entry && freeEntry) {
      if (!constBlocked_) act.constMisses += 1;
      freeEntry->used = true;
      freeEntry->line = la;
      freeEntry->waiters.assign(1, inst_);
      toSend_.push_back(
          MemTransaction{la, constCache_.lineBytes(), in.mem.mask, {}, AccessKind::ConstLoad});
    } else {
      if (!constBlocked_) act.constMisses += 1;
      constBlocked_ = true;  // no MSHR (or the line's merge limit): retry after a fill
      return false;
    }
    constBlocked_ = false;
    ++in.outstanding;
  }
  if (!toSend_.empty() && next_ < toSend_.size()) current_ = true;  // misses leave one per cycle
  if (++constNext_ < constLines_.size()) return true;
  constPending_ = false;
  busyUntil_ = std::max(busyUntil_, now + 1);
  if (in.outstanding == 0) host.complete(inst_, now + cfg_.sm.const_cache.hit_latency);
  return true;
}

void LdstUnit::cycle(Cycle now, LdstHost& host, SmActivity& act) {
  sendNext(now, host, act);
  // A constant miss found in a cycle leaves from the next one (above).
  if (constPending_ && (constFirst_ < now || constBlocked_)) constCycle(now, host, act);
}

void LdstUnit::sendNext(Cycle now, LdstHost& host, SmActivity& act) {
  if (!current_) return;
  if (next_ < toSend_.size()) {
    if (host.send(inst_, toSend_[next_])) {
      ++next_;
      act.memRequests += 1;
    }
  }
  if (next_ >= toSend_.size()) {
    // Every transaction is on its way; the instruction completes when the answers arrive.
    current_ = false;
    busyUntil_ = std::max(busyUntil_, now + 1);
  }
}

}  // namespace gpusc::sm
