#include "cache/l1_data_cache.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "common/error.hpp"

namespace gpusc::cache {

namespace {

bool checkWritePolicy(const CacheConfig& c) {
  if (c.write_allocate != "no-allocate" ||
      (c.write_policy != "write-evict" && c.write_policy != "write-through"))
    throw InputError(fmt::format(
        "sm.l1d: write_policy '{}' with write_allocate '{}' is not supported by the L1 data "
        "cache (it supports write-evict or write-through, with no-allocate)",
        c.write_policy, c.write_allocate));
  return c.write_policy == "write-through";
}

}  // namespace

L1DataCache::L1DataCache(const sc_core::sc_module_name& name, uint32_t smId,
                         const PlatformConfig& cfg, PayloadPool& pool,
                         const ReplacementRegistry& replacement)
    : sc_core::sc_module(name),
      sm_socket("sm_socket"),
      memory_socket("memory_socket"),
      smId_(smId),
      pool_(pool),
      clock_(cfg.gpu.clocks.core_mhz),
      enabled_(cfg.sm.l1d.enabled),
      writeThrough_(enabled_ && checkWritePolicy(cfg.sm.l1d)),
      unified_(enabled_ && cfg.sm.unified_l1),
      hitLatency_(cfg.sm.l1d.hit_latency),
      missQueue_(cfg.sm.l1d.miss_queue),
      core_(cfg.sm.l1d, "sm.l1d", cfg.sm.l1d.replacement_seed + smId, replacement),
      power_(cfg.power.l1d, cfg.sm.l1d, "power.l1d", true, cfg.rtl.drowsy_controller,
             fmt::format("L1 of sm{}", smId), cfg.rtl.drowsy_controller_block),
      down_(cfg.sm.l1d.miss_queue, cfg.sm.l1d.sends_per_cycle),
      pending_(size_t(cfg.sm.l1d.mshr_entries) * cfg.sm.l1d.mshr_max_merge) {
  sm_socket.register_nb_transport_fw(this, &L1DataCache::nb_transport_fw);
  memory_socket.register_nb_transport_bw(this, &L1DataCache::nb_transport_bw);
  SC_METHOD(run);
  sensitive << wake_;
  dont_initialize();
}

// ---- requests from the SM -----------------------------------------------------------------------

tlm::tlm_sync_enum L1DataCache::nb_transport_fw(tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase,
                                                sc_core::sc_time&) {
  if (phase == tlm::END_RESP) return tlm::TLM_COMPLETED;
  if (phase != tlm::BEGIN_REQ)
    throw InternalError(fmt::format("{}: unexpected phase on sm_socket", name()));
  if (held_)
    throw InternalError(fmt::format("{}: BEGIN_REQ before the previous request's END_REQ", name()));
  const uint64_t cycle = clock_.nextEdge();
  const Stall s = tryAccept(gp, cycle);
  if (s == Stall::None) {
    phase = tlm::END_REQ;
    return tlm::TLM_UPDATED;
  }
  gp.acquire();
  held_ = &gp;
  heldFor_ = s;
  heldSince_ = cycle;
  heldAt_ = cycle;
  if (s == Stall::BankConflict) wakeAt(retryAt_);
  return tlm::TLM_ACCEPTED;
}

Stall L1DataCache::tryAccept(tlm::tlm_generic_payload& gp, uint64_t cycle) {
  const MemAccessExtension& ext = accessOf(gp);
  const AccessKind kind = ext.kind;
  if (!enabled_ || (kind != AccessKind::Load && kind != AccessKind::Store) || ext.l2Only)
    return forward(gp, cycle);
  // A lookup needs every bank its lines live in.
  const uint64_t first = core_.lineOf(gp.get_address());
  const uint64_t last = core_.lineOf(gp.get_address() + std::max(1u, gp.get_data_length()) - 1);
  for (uint64_t line = first; line <= last; line += core_.lineBytes()) {
    const uint32_t bank = core_.bankOf(line);
    if (!core_.bankFree(bank, cycle)) {
      retryAt_ = core_.bankFreeAt(bank);
      return Stall::BankConflict;
    }
  }
  return kind == AccessKind::Load ? load(gp, cycle) : store(gp, cycle);
}

// Atomics, instruction fetches, constant loads, loads cached in the L2 only (.cg, .cv, volatile,
// gpu-scope), and everything when the cache is disabled.
Stall L1DataCache::forward(tlm::tlm_generic_payload& gp, uint64_t cycle) {
  if (down_.size() >= missQueue_) return Stall::MissQueueFull;
  gp.acquire();  // ours until the answer has gone back up
  down_.push(&gp, cycle);
  ++forwarded_;
  ++stats_.of(accessOf(gp).kind).requests;
  ++stats_.bypassed;
  wakeAt(cycle);
  return Stall::None;
}

Stall L1DataCache::load(tlm::tlm_generic_payload& gp, uint64_t cycle) {
  const uint64_t addr = gp.get_address();
  const uint64_t first = core_.lineOf(addr);
  const uint32_t len = gp.get_data_length();
  const uint64_t last = core_.lineOf(addr + std::max(1u, len) - 1);
  const uint32_t lineBytes = core_.lineBytes();
  MshrTable& mshrs = core_.mshrs();
  MemAccessExtension& ext = accessOf(gp);

  // Resources first, so a request is taken whole or not at all.
  uint32_t fetches = 0;
  for (uint64_t line = first; line <= last; line += lineBytes) {
    const CacheCore::Lack l = core_.lack(line, lineMask(ext.byteMask, addr, len, line, lineBytes));
    if (l.hit) continue;
    for (uint32_t i = 0; i < l.waits; ++i)
      if (!mshrs.canMerge(l.waitOn[i])) return Stall::MergeLimit;
    fetches += l.fetches();
  }
  if (fetches > mshrs.available()) return Stall::MshrFull;
  if (down_.size() + fetches > missQueue_) return Stall::MissQueueFull;

  DataCacheStats::Kind& st = stats_.of(AccessKind::Load);
  ++st.requests;
  power_.warpRequest(ext.warpThreads);
  uint64_t ready = cycle;
  uint32_t record = MshrTable::kNone;
  for (uint64_t line = first; line <= last; line += lineBytes) {
    const uint64_t slot = core_.claimBank(core_.bankOf(line), cycle);
    const ByteMask mask = lineMask(ext.byteMask, addr, len, line, lineBytes);
    ++st.accesses;
    power_.lookup();
    const uint32_t way = core_.access(line, slot, mask, false);
    const CacheCore::Lack l = core_.lack(line, mask);
    if (l.hit) {
      ++st.hits;
      const uint32_t wake =
          power_.hit(core_.setOf(line), way, slot, mask, LinePower::Data::Read, true);
      ready = std::max(ready, slot + wake + hitLatency_);
      continue;
    }
    ++st.misses;
    if (way != CacheCore::kNoWay) ++stats_.sectorMisses;
    if (record == MshrTable::kNone) {
      gp.acquire();  // ours until answered
      record = pending_.open(&gp);
    }
    if (l.waits > 0) ++stats_.mshrMerges;
    for (uint32_t i = 0; i < l.waits; ++i) {
      ++pending_.at(record).linesLeft;
      mshrs.addWaiter(l.waitOn[i], record);
    }
    if (!l.fetches()) continue;
    const uint32_t e = core_.openFetch(line, l.fetch);
    tlm::tlm_generic_payload* f = pool_.acquire();  // our reference until the fill
    MemAccessExtension& fx = accessOf(*f);
    fx.sm = smId_;
    fx.warp = ext.warp;
    fx.pc = ext.pc;
    fx.kind = AccessKind::Load;
    fx.activeMask = ext.activeMask;
    fx.warpThreads = ext.warpThreads;
    describeFetch(core_, fx, l.fetch, stats_);  // the whole line, or the sectors it lacks
    fx.demandMask = mask;                       // of which the warp needs these bytes
    fx.tag = e;
    f->set_command(tlm::TLM_READ_COMMAND);
    f->set_address(line);
    f->set_data_length(lineBytes);
    f->set_streaming_width(lineBytes);
    mshrs.entry(e).fetch = f;
    ++pending_.at(record).linesLeft;
    mshrs.addWaiter(e, record);
    down_.push(f, slot);
    wakeAt(slot);
  }
  if (record == MshrTable::kNone) {
    gp.acquire();
    answerAt(ready, &gp);
  } else {
    pending_.at(record).ready = ready;
  }
  return Stall::None;
}

Stall L1DataCache::store(tlm::tlm_generic_payload& gp, uint64_t cycle) {
  if (down_.size() >= missQueue_) return Stall::MissQueueFull;
  const uint64_t addr = gp.get_address();
  const uint64_t first = core_.lineOf(addr);
  const uint64_t last = core_.lineOf(addr + std::max(1u, gp.get_data_length()) - 1);
  const uint32_t lineBytes = core_.lineBytes();
  DataCacheStats::Kind& st = stats_.of(AccessKind::Store);
  ++st.requests;
  power_.warpRequest(accessOf(gp).warpThreads);
  uint64_t leave = cycle;
  for (uint64_t line = first; line <= last; line += lineBytes) {
    const uint64_t slot = core_.claimBank(core_.bankOf(line), cycle);
    const ByteMask mask =
        lineMask(accessOf(gp).byteMask, addr, gp.get_data_length(), line, lineBytes);
    ++st.accesses;
    power_.lookup();
    leave = std::max(leave, slot);
    const uint32_t way = core_.access(line, slot, mask, true);
    if (way == CacheCore::kNoWay) {
      ++st.misses;  // write-no-allocate: nothing placed
      continue;
    }
    ++st.hits;
    // A drowsy line wakes (counted) but the store does not wait: it leaves in its lookup cycle.
    power_.hit(core_.setOf(line), way, slot, mask,
               writeThrough_ ? LinePower::Data::Write : LinePower::Data::None, true, false);
    if (!writeThrough_) {  // write-evict
      core_.invalidate(line, slot);
      ++stats_.invalidations;
    }
  }
  // A sectored L1 sends only the sectors the store writes (with their byte masks).
  if (core_.sectored()) accessOf(gp).sectorBytes = core_.sectorBytes();
  gp.acquire();  // ours until the acknowledgement has gone back up
  down_.push(&gp, leave);
  ++forwarded_;
  wakeAt(leave);
  return Stall::None;
}

void L1DataCache::noteStall(Stall reason, uint64_t cycle) {
  if (cycle > heldSince_) stats_.stallCycles[static_cast<size_t>(heldFor_)] += cycle - heldSince_;
  heldSince_ = std::max(heldSince_, cycle);
  heldFor_ = reason;
}

void L1DataCache::retryHeld(uint64_t cycle) {
  if (!held_) return;
  const Stall s = tryAccept(*held_, cycle);
  noteStall(s, cycle);
  if (s != Stall::None) return;
  tlm::tlm_generic_payload* gp = held_;
  held_ = nullptr;
  tlm::tlm_phase phase = tlm::END_REQ;
  sc_core::sc_time t = sc_core::SC_ZERO_TIME;
  sm_socket->nb_transport_bw(*gp, phase, t);
  gp->release();
}

void L1DataCache::answerAt(uint64_t cycle, tlm::tlm_generic_payload* gp) {
  answers_.push(cycle, gp);
  wakeAt(cycle);
}

// ---- the next level
// -------------------------------------------------------------------------------

tlm::tlm_sync_enum L1DataCache::nb_transport_bw(tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase,
                                                sc_core::sc_time&) {
  const uint64_t cycle = clock_.nextEdge();
  if (phase == tlm::END_REQ) {
    down_.requestEnded(gp);
    wakeAt(cycle);
    return tlm::TLM_ACCEPTED;
  }
  if (phase != tlm::BEGIN_RESP)
    throw InternalError(fmt::format("{}: unexpected phase on memory_socket", name()));
  down_.requestEnded(gp);  // BEGIN_RESP also ends the request
  MshrTable& mshrs = core_.mshrs();
  const uint64_t tag = accessOf(gp).tag;
  if (tag < mshrs.capacity() && mshrs.entry(uint32_t(tag)).used &&
      mshrs.entry(uint32_t(tag)).fetch == &gp) {
    fill(uint32_t(tag), cycle);
  } else {  // a forwarded request: its answer goes up as it is
    if (forwarded_ == 0)
      throw InternalError(fmt::format("{}: an answer nobody is waiting for", name()));
    --forwarded_;
    answerAt(cycle, &gp);  // the reference taken when it was accepted goes with it
  }
  wakeAt(cycle);
  return tlm::TLM_COMPLETED;
}

void L1DataCache::fill(uint32_t e, uint64_t cycle) {
  MshrTable& mshrs = core_.mshrs();
  MshrTable::Entry& en = mshrs.entry(e);
  const uint64_t line = core_.lineOf(en.line);
  const uint64_t slot = core_.claimBank(core_.bankOf(line), cycle);
  uint32_t wake = 0;  // the frame filled was drowsy: the data are written this much later
  if (const uint32_t way = core_.find(line); way == CacheCore::kNoWay) {
    const FillResult r = core_.fill(line, slot, false, en.bytes);
    ++stats_.fills;
    if (r.evicted) ++stats_.evictions;
    wake = power_.fill(r.set, r.way, slot);
  } else {  // sectored: the line gains the sectors fetched
    core_.addBytes(core_.setOf(line), way, en.bytes);
  }
  // The MSHR hands its merged requests back one per cycle (one response path).
  const uint32_t* w = mshrs.waiters(e);
  for (uint32_t i = 0; i < en.waiters; ++i) {
    PendingRequests::Record& rec = pending_.at(w[i]);
    rec.ready = std::max(rec.ready, slot + wake + hitLatency_ + i);
    if (--rec.linesLeft == 0) {
      answerAt(rec.ready, rec.gp);
      pending_.close(w[i]);
    }
  }
  en.fetch->release();
  mshrs.release(e);
}

// ---- the process
// ----------------------------------------------------------------------------------

void L1DataCache::run() {
  const uint64_t cycle = clock_.now();
  retryHeld(cycle);
  down_.send(cycle, *memory_socket.operator->(), stats_, name());
  retryHeld(cycle);  // the send may have made room in the miss queue
  answers_.deliver(cycle, *sm_socket.operator->());
  // Sleep until the next thing due; fills, END_REQs and new requests wake us as they come.
  if (!answers_.empty()) wakeAt(answers_.nextCycle());
  if (const uint64_t w = down_.wakeCycle(cycle); w != SendQueue::kNever) wakeAt(w);
  if (held_ && heldFor_ == Stall::BankConflict) wakeAt(retryAt_);
}

// ---- statistics and state
// ------------------------------------------------------------------------

bool L1DataCache::idle() const {
  return !held_ && down_.idle() && answers_.empty() && forwarded_ == 0 &&
         core_.mshrs().used() == 0 && pending_.openCount() == 0;
}

std::optional<HeldRequest> L1DataCache::oldestHeld() const {
  return oldestHeldOf(held_, heldAt_, down_, answers_, clock_.periodValue());
}

nlohmann::json L1DataCache::statsJson() const {
  nlohmann::json j = stats_.json(enabled_, core_.sectored());
  j["power_states"] = toJson(reportedPowerCounters());
  if (unified_) {
    j["shared_carveout_bytes"] = carveout_;
    j["capacity_bytes"] = uint64_t(core_.usableWays()) * core_.sets() * core_.lineBytes();
  }
  return j;
}

void L1DataCache::setSharedCarveout(uint32_t sharedBytes) {
  if (!idle())
    throw InternalError(fmt::format("{}: a carve-out while requests are in flight", name()));
  core_.setUsableWays(core_.ways() - static_cast<uint32_t>(sharedBytes / core_.config().wayBytes()),
                      clock_.now());
  // The ways lent hold shared memory: powered, not drowsy L1 lines.
  power_.setLentWaysFrom(sharedBytes ? core_.usableWays() : ~0u);
  carveout_ = sharedBytes;
}

void L1DataCache::invalidateLines() {
  if (!idle())
    throw InternalError(fmt::format("{}: invalidating while requests are in flight", name()));
  core_.invalidateAll(clock_.now());
}

void L1DataCache::resetStats() {
  stats_ = DataCacheStats{};
  heldSince_ = std::max(heldSince_, clock_.now());
  power_.beginWindow(clock_.now());
}

void L1DataCache::resetState() {
  if (!idle())
    throw InternalError(fmt::format("{}: resetState() while requests are in flight", name()));
  core_.reset();
  carveout_ = 0;
  down_.reset();
  power_.powerOn(clock_.now());
}

}  // namespace gpusc::cache
