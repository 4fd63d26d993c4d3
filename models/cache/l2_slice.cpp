#include "cache/l2_slice.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "common/error.hpp"

namespace gpusc::cache {

namespace {

bool validated(const PlatformConfig& cfg, uint32_t slice) {
  const CacheConfig& c = cfg.l2.slice;
  const uint32_t slices = cfg.memory.partitions * cfg.l2.slices_per_partition;
  if (slice >= slices) throw InternalError(fmt::format("L2Slice: slice {} of {}", slice, slices));
  if (!c.enabled) return false;
  if (c.write_policy != "write-back" ||
      (c.write_allocate != "allocate" && c.write_allocate != "write-validate"))
    throw InputError(fmt::format(
        "l2.slice: write_policy '{}' with write_allocate '{}' is not supported by the L2 slice "
        "(it is write-back with allocate or write-validate)",
        c.write_policy, c.write_allocate));
  if (c.line_bytes > cfg.memory.partition_interleave_bytes)
    throw InputError(fmt::format(
        "l2.slice.line_bytes ({}) exceeds memory.partition_interleave_bytes ({}): an L2 line "
        "must lie within one partition",
        c.line_bytes, cfg.memory.partition_interleave_bytes));
  return true;
}

}  // namespace

L2Slice::L2Slice(const sc_core::sc_module_name& name, uint32_t slice, const PlatformConfig& cfg,
                 PayloadPool& pool, const ReplacementRegistry& replacement)
    : sc_core::sc_module(name),
      noc_socket("noc_socket"),
      dram_socket("dram_socket"),
      slice_(slice),
      partition_(slice / cfg.l2.slices_per_partition),
      pool_(pool),
      clock_(cfg.gpu.clocks.l2_mhz),
      enabled_(validated(cfg, slice)),
      map_(cfg),
      writeValidate_(cfg.l2.slice.write_allocate == "write-validate"),
      hitLatency_(cfg.l2.slice.hit_latency),
      missQueue_(cfg.l2.slice.miss_queue),
      core_(cfg.l2.slice, "l2.slice", cfg.l2.slice.replacement_seed + slice, replacement),
      power_(cfg.power.l2, cfg.l2.slice, "power.l2", false, cfg.rtl.drowsy_controller,
             fmt::format("L2 slice {}", slice), cfg.rtl.drowsy_controller_block),
      // Room for the write-backs fills cause beyond the miss queue: at most one per MSHR.
      down_(size_t(cfg.l2.slice.miss_queue) + cfg.l2.slice.mshr_entries,
            cfg.l2.slice.sends_per_cycle),
      pending_(size_t(cfg.l2.slice.mshr_entries) * cfg.l2.slice.mshr_max_merge) {
  noc_socket.register_nb_transport_fw(this, &L2Slice::nb_transport_fw);
  dram_socket.register_nb_transport_bw(this, &L2Slice::nb_transport_bw);
  SC_METHOD(run);
  sensitive << wake_;
  dont_initialize();
}

// ---- requests from the interconnect
// --------------------------------------------------------------

tlm::tlm_sync_enum L2Slice::nb_transport_fw(tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase,
                                            sc_core::sc_time&) {
  if (phase == tlm::END_RESP) return tlm::TLM_COMPLETED;
  if (phase != tlm::BEGIN_REQ)
    throw InternalError(fmt::format("{}: unexpected phase on noc_socket", name()));
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

Stall L2Slice::tryAccept(tlm::tlm_generic_payload& gp, uint64_t cycle) {
  return enabled_ ? lookup(gp, cycle) : passThrough(gp, cycle);
}

Stall L2Slice::passThrough(tlm::tlm_generic_payload& gp, uint64_t cycle) {
  if (down_.size() >= missQueue_) return Stall::MissQueueFull;
  gp.acquire();  // ours until the answer has gone back up
  down_.push(&gp, cycle);
  ++forwarded_;
  ++stats_.of(accessOf(gp).kind).requests;
  ++stats_.bypassed;
  wakeAt(cycle);
  return Stall::None;
}

// What one request needs of the slice, line by line: shared by taking it whole and in parts.
struct L2Slice::LineWalk {
  L2Slice& s;
  tlm::tlm_generic_payload& gp;
  MemAccessExtension& ext;
  const bool write, store, demand;
  const uint64_t addr;
  const uint32_t len, lineBytes, serial;
  DataCacheStats::Kind& st;

  LineWalk(L2Slice& slice, tlm::tlm_generic_payload& p)
      : s(slice),
        gp(p),
        ext(accessOf(p)),
        write(ext.kind == AccessKind::Store || ext.kind == AccessKind::Atomic),
        store(ext.kind == AccessKind::Store),
        // The bytes the requesting warp needs, for the divided word lines: an L1 fetches whole
        // lines.
        demand(anyByte(ext.demandMask)),
        addr(p.get_address()),
        len(std::max(1u, p.get_data_length())),
        lineBytes(slice.core_.lineBytes()),
        // An atomic's operations on one word run one after another: its bank is busy that
        // long, and the answer waits for the last one.
        serial(ext.kind == AccessKind::Atomic ? std::max(1u, ext.atomicSerial) : 1u),
        st(slice.stats_.of(ext.kind)) {}

  // Lines are walked in device addresses (what requests carry) and looked up by their
  // slice-local address.
  uint64_t first() const { return s.core_.lineOf(addr); }
  uint64_t last() const { return s.core_.lineOf(addr + len - 1); }
  ByteMask mask(uint64_t line) const { return lineMask(ext.byteMask, addr, len, line, lineBytes); }
  // A store that misses allocates the line without reading DRAM when it covers whole sectors
  // (whole lines, unsectored: nothing of the old data survives) or, with write-validate, always
  // (the line then holds only the bytes written). A read or an atomic needs the bytes it
  // touches: the sectors of them a line lacks are fetched (merged with what was written when
  // the data arrive).
  bool allocateWithoutFetch(const ByteMask& m) const {
    if (!store) return false;
    if (s.writeValidate_) return true;
    const ByteMask whole = s.core_.sectorsOf(m);
    return whole == m && anyByte(m);
  }
  // A store to a present line takes it whatever the line holds (its bytes become valid).
  bool storeHit(uint32_t way) const { return store && way != CacheCore::kNoWay; }

  // The resources `line` needs: a stall, or nothing (and the MSHR and miss-queue entries it
  // takes added to `fetches` and `queued`).
  Stall needs(uint64_t line, uint64_t cycle, uint32_t& fetches, uint32_t& queued) const {
    const uint64_t local = s.localOf(line);
    const uint32_t bank = s.core_.bankOf(local);
    if (!s.core_.bankFree(bank, cycle)) {
      s.retryAt_ = s.core_.bankFreeAt(bank);
      return Stall::BankConflict;
    }
    const ByteMask m = mask(line);
    const CacheCore::Lack l = s.core_.lack(local, m);
    if (l.hit || storeHit(l.way)) return Stall::None;
    MshrTable& mshrs = s.core_.mshrs();
    for (uint32_t i = 0; i < l.waits; ++i)
      if (!mshrs.canMerge(l.waitOn[i])) return Stall::MergeLimit;
    if (l.waits == 0 && l.way == CacheCore::kNoWay && allocateWithoutFetch(m)) {
      ++queued;  // the line it replaces may need a write-back
    } else if (l.fetches()) {
      ++fetches;  // (a present line stays; its missing sectors are fetched)
      ++queued;
    }
    return Stall::None;
  }

  // Looks `line` up and takes what it needs (needs() said it may): a hit sets `ready`; a miss
  // opens the request's record (once), joins the MSHR entries fetching what it needs and
  // allocates one for the rest.
  void take(uint64_t line, uint64_t cycle, uint64_t& ready, uint32_t& record) {
    const uint64_t local = s.localOf(line);
    const uint64_t slot = s.core_.claimBank(s.core_.bankOf(local), cycle, serial);
    const ByteMask m = mask(line);
    ++st.accesses;
    s.power_.lookup();
    const uint32_t way = s.core_.access(local, slot, m, write);
    const CacheCore::Lack l = s.core_.lack(local, m);
    if (l.hit || storeHit(way)) {
      ++st.hits;
      const uint32_t set = s.core_.setOf(local);
      if (write) {
        s.core_.setDirty(set, way);
        s.core_.addBytes(set, way, m);
      }
      const uint32_t wake = s.power_.hit(
          set, way, slot, demand ? lineMask(ext.demandMask, addr, len, line, lineBytes) : m,
          write ? LinePower::Data::Write : LinePower::Data::Read, false);
      ready = std::max(ready, slot + wake + (serial - 1) + s.hitLatency_);
      return;
    }
    ++st.misses;
    if (way != CacheCore::kNoWay) ++s.stats_.sectorMisses;
    MshrTable& mshrs = s.core_.mshrs();
    if (l.waits == 0 && way == CacheCore::kNoWay && allocateWithoutFetch(m)) {
      const FillResult r = s.core_.fill(local, slot, true, m);
      ++s.stats_.fills;
      const uint32_t wake = s.power_.fill(r.set, r.way, slot);
      s.evicted(r, ext.sm, slot + wake);
      ready = std::max(ready, slot + wake + s.hitLatency_);
      return;
    }
    if (record == MshrTable::kNone) {
      gp.acquire();  // ours until answered
      record = s.pending_.open(&gp);
      s.pending_.at(record).afterFill = serial - 1;
    }
    if (l.waits > 0) ++s.stats_.mshrMerges;
    for (uint32_t i = 0; i < l.waits; ++i) {
      ++s.pending_.at(record).linesLeft;
      if (write) mshrs.entry(l.waitOn[i]).dirtyOnFill = true;
      mshrs.addWaiter(l.waitOn[i], record);
    }
    if (!l.fetches()) return;
    const uint32_t e = s.core_.openFetch(local, l.fetch);
    tlm::tlm_generic_payload* f = s.newRequest(tlm::TLM_READ_COMMAND, line, ext.sm, e);
    describeFetch(s.core_, accessOf(*f), l.fetch, s.stats_);
    mshrs.entry(e).fetch = f;
    s.down_.push(f, slot);
    s.wakeAt(slot);
    if (write) mshrs.entry(e).dirtyOnFill = true;
    ++s.pending_.at(record).linesLeft;
    mshrs.addWaiter(e, record);
  }

  // Every line taken: the answer, when nothing waits for a fill.
  void finish(uint64_t ready, uint32_t record) {
    if (record == MshrTable::kNone) {
      gp.acquire();
      s.answerAt(ready, &gp);
    } else {
      s.pending_.at(record).ready = ready;
    }
  }
};

Stall L2Slice::lookup(tlm::tlm_generic_payload& gp, uint64_t cycle) {
  LineWalk w(*this, gp);
  const uint64_t first = w.first(), last = w.last();
  MshrTable& mshrs = core_.mshrs();
  const uint64_t lines = (last - first) / w.lineBytes + 1;
  // A request whose lines could never all have their miss-queue entries and MSHRs at once (an
  // L2 line much smaller than the requester's, under a short miss queue) is split into its
  // lines, taken in address order as the resources free up (inParts).
  if (inParts_.gp == &gp || lines > missQueue_ || lines > mshrs.capacity())
    return lookupInParts(w, cycle);

  // Resources first, so a request is taken whole or not at all.
  uint32_t fetches = 0, queued = 0;
  for (uint64_t line = first; line <= last; line += w.lineBytes)
    if (const Stall s = w.needs(line, cycle, fetches, queued); s != Stall::None) return s;
  if (fetches > mshrs.available()) return Stall::MshrFull;
  if (down_.size() + queued > missQueue_) return Stall::MissQueueFull;

  ++w.st.requests;
  if (w.ext.kind == AccessKind::Load || w.store || w.ext.kind == AccessKind::Atomic)
    power_.warpRequest(w.ext.warpThreads);
  uint64_t ready = cycle;
  uint32_t record = MshrTable::kNone;
  for (uint64_t line = first; line <= last; line += w.lineBytes) w.take(line, cycle, ready, record);
  w.finish(ready, record);
  return Stall::None;
}

Stall L2Slice::lookupInParts(LineWalk& w, uint64_t cycle) {
  MshrTable& mshrs = core_.mshrs();
  if (inParts_.gp != &w.gp) {
    inParts_ = InParts{&w.gp, w.first(), cycle, MshrTable::kNone};
    ++w.st.requests;
    ++stats_.splitRequests;
    if (w.ext.kind == AccessKind::Load || w.store || w.ext.kind == AccessKind::Atomic)
      power_.warpRequest(w.ext.warpThreads);
  }
  const uint64_t last = w.last();
  for (; inParts_.next <= last; inParts_.next += w.lineBytes) {
    uint32_t fetches = 0, queued = 0;
    if (const Stall s = w.needs(inParts_.next, cycle, fetches, queued); s != Stall::None) return s;
    if (fetches > mshrs.available()) return Stall::MshrFull;
    if (down_.size() + queued > missQueue_) return Stall::MissQueueFull;
    const bool opened = inParts_.record != MshrTable::kNone;
    w.take(inParts_.next, cycle, inParts_.ready, inParts_.record);
    // A fill may answer lines taken earlier before the last line is taken: the record holds one
    // line more until then.
    if (!opened && inParts_.record != MshrTable::kNone) ++pending_.at(inParts_.record).linesLeft;
  }
  const InParts done = inParts_;
  inParts_ = InParts{};
  if (done.record == MshrTable::kNone) {
    w.finish(done.ready, done.record);
  } else {
    PendingRequests::Record& rec = pending_.at(done.record);
    rec.ready = std::max(rec.ready, done.ready);
    if (--rec.linesLeft == 0) {
      answerAt(rec.ready, rec.gp);
      pending_.close(done.record);
    }
  }
  return Stall::None;
}

tlm::tlm_generic_payload* L2Slice::newRequest(tlm::tlm_command cmd, uint64_t deviceAddr,
                                              uint32_t sm, uint64_t tag) {
  const uint32_t lineBytes = core_.lineBytes();
  tlm::tlm_generic_payload* p = pool_.acquire();  // our reference until the answer
  MemAccessExtension& x = accessOf(*p);
  x.sm = sm;
  x.kind = cmd == tlm::TLM_WRITE_COMMAND ? AccessKind::Store : AccessKind::Load;
  x.byteMask = firstBytes(lineBytes);  // whole lines
  x.tag = tag;
  p->set_command(cmd);
  p->set_address(deviceAddr);
  p->set_data_length(lineBytes);
  p->set_streaming_width(lineBytes);
  return p;
}

void L2Slice::hostWrite(uint64_t line, const ByteMask& mask, bool dirty) {
  if (!enabled_ || !anyByte(mask)) return;
  const uint64_t cycle = clock_.now();
  const uint32_t set = core_.setOf(line);
  const uint32_t way = core_.access(line, cycle, mask, true);
  if (way != CacheCore::kNoWay) {
    if (dirty) core_.setDirty(set, way);
    core_.addBytes(set, way, mask);
    return;
  }
  if (!writeValidate_ && core_.sectorsOf(mask) != mask) return;
  core_.fill(line, cycle, dirty, mask);
}

void L2Slice::warm(uint64_t line, const ByteMask& mask, bool write) {
  if (!enabled_ || !anyByte(mask)) return;
  const uint64_t cycle = clock_.now();
  const uint32_t set = core_.setOf(line);
  const CacheCore::Lack l = core_.lack(line, mask);
  const uint32_t way = core_.access(line, cycle, mask, write);
  if (way != CacheCore::kNoWay) {
    core_.addBytes(set, way, write ? mask : l.fetch);
    if (write) core_.setDirty(set, way);
    return;
  }
  if (write && (writeValidate_ || core_.sectorsOf(mask) == mask)) {
    core_.fill(line, cycle, true, mask);
  } else {
    core_.fill(line, cycle, write, l.fetch);
  }
}

void L2Slice::evicted(const FillResult& r, uint32_t sm, uint64_t cycle) {
  if (!r.evicted) return;
  ++stats_.evictions;
  if (!r.evictedDirty) return;
  ++stats_.dirtyWritebacks;
  ++writeBacks_;
  tlm::tlm_generic_payload* wb =
      newRequest(tlm::TLM_WRITE_COMMAND, deviceOf(r.evictedLine), sm, kWriteBackTag);
  // Only the bytes the line holds are written (DRAM write data masks; GDDR5 has them).
  accessOf(*wb).byteMask = r.evictedBytes;
  down_.push(wb, cycle);
  wakeAt(cycle);
}

void L2Slice::noteStall(Stall reason, uint64_t cycle) {
  if (cycle > heldSince_) stats_.stallCycles[static_cast<size_t>(heldFor_)] += cycle - heldSince_;
  heldSince_ = std::max(heldSince_, cycle);
  heldFor_ = reason;
}

void L2Slice::retryHeld(uint64_t cycle) {
  if (!held_) return;
  const Stall s = tryAccept(*held_, cycle);
  noteStall(s, cycle);
  if (s != Stall::None) return;
  tlm::tlm_generic_payload* gp = held_;
  held_ = nullptr;
  tlm::tlm_phase phase = tlm::END_REQ;
  sc_core::sc_time t = sc_core::SC_ZERO_TIME;
  noc_socket->nb_transport_bw(*gp, phase, t);
  gp->release();
}

void L2Slice::answerAt(uint64_t cycle, tlm::tlm_generic_payload* gp) {
  answers_.push(cycle, gp);
  wakeAt(cycle);
}

// ---- the memory controller
// ------------------------------------------------------------------------

tlm::tlm_sync_enum L2Slice::nb_transport_bw(tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase,
                                            sc_core::sc_time&) {
  const uint64_t cycle = clock_.nextEdge();
  if (phase == tlm::END_REQ) {
    down_.requestEnded(gp);
    wakeAt(cycle);
    return tlm::TLM_ACCEPTED;
  }
  if (phase != tlm::BEGIN_RESP)
    throw InternalError(fmt::format("{}: unexpected phase on dram_socket", name()));
  down_.requestEnded(gp);  // BEGIN_RESP also ends the request
  MshrTable& mshrs = core_.mshrs();
  const uint64_t tag = accessOf(gp).tag;
  if (!enabled_) {  // no L2: the answer goes up as it is
    if (forwarded_ == 0)
      throw InternalError(fmt::format("{}: an answer nobody is waiting for", name()));
    --forwarded_;
    answerAt(cycle, &gp);  // with the reference taken when it was accepted
  } else if (tag == kWriteBackTag) {
    if (writeBacks_ == 0)
      throw InternalError(fmt::format("{}: an unexpected write-back acknowledgement", name()));
    --writeBacks_;
    gp.release();  // nothing waits for it
  } else if (tag < mshrs.capacity() && mshrs.entry(uint32_t(tag)).used &&
             mshrs.entry(uint32_t(tag)).fetch == &gp) {
    fill(uint32_t(tag), cycle);
  } else {
    throw InternalError(fmt::format("{}: an answer nobody is waiting for", name()));
  }
  wakeAt(cycle);
  return tlm::TLM_COMPLETED;
}

void L2Slice::fill(uint32_t e, uint64_t cycle) {
  MshrTable& mshrs = core_.mshrs();
  MshrTable::Entry& en = mshrs.entry(e);
  const uint64_t line = core_.lineOf(en.line);
  const uint64_t slot = core_.claimBank(core_.bankOf(line), cycle);
  const uint32_t way = core_.find(line);
  uint32_t wake = 0;  // the frame filled was drowsy: the data are written this much later
  if (way == CacheCore::kNoWay) {
    const FillResult r = core_.fill(line, slot, en.dirtyOnFill, en.bytes);
    ++stats_.fills;
    wake = power_.fill(r.set, r.way, slot);
    evicted(r, accessOf(*en.fetch).sm, slot + wake);
  } else {  // the line stayed (write-validate or sectored: it lacked bytes a request needed)
    core_.addBytes(core_.setOf(line), way, en.bytes);
    if (en.dirtyOnFill) core_.setDirty(core_.setOf(line), way);
  }
  // The MSHR hands its merged requests back one per cycle (one response path).
  const uint32_t* w = mshrs.waiters(e);
  for (uint32_t i = 0; i < en.waiters; ++i) {
    PendingRequests::Record& rec = pending_.at(w[i]);
    rec.ready = std::max(rec.ready, slot + wake + rec.afterFill + hitLatency_ + i);
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

void L2Slice::run() {
  const uint64_t cycle = clock_.now();
  retryHeld(cycle);
  down_.send(cycle, *dram_socket.operator->(), stats_, name());
  retryHeld(cycle);  // the send may have made room in the miss queue
  answers_.deliver(cycle, *noc_socket.operator->());
  if (!answers_.empty()) wakeAt(answers_.nextCycle());
  if (const uint64_t w = down_.wakeCycle(cycle); w != SendQueue::kNever) wakeAt(w);
  if (held_ && heldFor_ == Stall::BankConflict) wakeAt(retryAt_);
}

// ---- statistics and state
// ------------------------------------------------------------------------

bool L2Slice::idle() const {
  return !held_ && down_.idle() && answers_.empty() && forwarded_ == 0 && writeBacks_ == 0 &&
         core_.mshrs().used() == 0 && pending_.openCount() == 0;
}

std::optional<HeldRequest> L2Slice::oldestHeld() const {
  return oldestHeldOf(held_, heldAt_, down_, answers_, clock_.periodValue());
}

nlohmann::json L2Slice::statsJson() const {
  nlohmann::json j = stats_.json(enabled_, core_.sectored());
  j["power_states"] = toJson(reportedPowerCounters());
  return j;
}

void L2Slice::census(double growth, LineCensus& c) const {
  if (!enabled_) return;
  const uint32_t ways = core_.usableWays();
  for (uint32_t set = 0; set < core_.sets(); ++set) {
    uint64_t touched = 0;
    for (uint32_t way = 0; way < ways; ++way) {
      const LineState& l = core_.line(set, way);
      touched += l.valid && l.lastAccess > statsSince_;
    }
    c.touched += touched;
    if (touched < ways && double(touched) * growth >= double(ways)) c.pending += touched;
  }
}

void L2Slice::resetStats() {
  stats_ = DataCacheStats{};
  statsSince_ = clock_.now();
  heldSince_ = std::max(heldSince_, clock_.now());
  power_.beginWindow(clock_.now());
}

void L2Slice::resetState() {
  if (!idle())
    throw InternalError(fmt::format("{}: resetState() while requests are in flight", name()));
  core_.reset();
  down_.reset();
  power_.powerOn(clock_.now());
}

}  // namespace gpusc::cache
