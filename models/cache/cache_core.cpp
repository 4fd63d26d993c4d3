#include "cache/cache_core.hpp"

#include <algorithm>
#include <utility>

#include <fmt/format.h>

#include "common/error.hpp"

namespace gpusc::cache {

ByteMask firstBytes(uint32_t n) {
  ByteMask m{};
  for (uint32_t w = 0; w < m.size() && n > 0; ++w) {
    const uint32_t bits = std::min<uint32_t>(n, 64);
    m[w] = bits == 64 ? ~0ull : (1ull << bits) - 1;
    n -= bits;
  }
  return m;
}

ByteMask rebase(const ByteMask& mask, uint64_t from, uint64_t to) {
  ByteMask out{};
  const int64_t d = static_cast<int64_t>(to - from);  // bit i of out = bit i + d of mask
  constexpr int64_t kBits = 64 * 4;
  if (d >= kBits || d <= -kBits) return out;
  const int n = static_cast<int>(mask.size());
  if (d >= 0) {
    const int ws = static_cast<int>(d / 64), bs = static_cast<int>(d % 64);
    for (int k = 0; k + ws < n; ++k) {
      out[k] = mask[k + ws] >> bs;
      if (bs && k + ws + 1 < n) out[k] |= mask[k + ws + 1] << (64 - bs);
    }
  } else {
    const int ws = static_cast<int>(-d / 64), bs = static_cast<int>(-d % 64);
    for (int k = ws; k < n; ++k) {
      out[k] = mask[k - ws] << bs;
      if (bs && k - ws - 1 >= 0) out[k] |= mask[k - ws - 1] >> (64 - bs);
    }
  }
  return out;
}

ByteMask lineMask(const ByteMask& mask, uint64_t addr, uint32_t len, uint64_t line,
                  uint32_t lineBytes) {
  ByteMask m = mask;
  const ByteMask inTransaction = firstBytes(std::min(len, kMaxLineBytes));
  for (size_t i = 0; i < m.size(); ++i) m[i] &= inTransaction[i];
  m = rebase(m, addr, line);
  const ByteMask inLine = firstBytes(lineBytes);
  for (size_t i = 0; i < m.size(); ++i) m[i] &= inLine[i];
  return m;
}

CacheCore::CacheCore(const CacheConfig& cfg, const std::string& key, uint64_t seed,
                     const ReplacementRegistry& replacement)
    : cfg_(cfg),
      sets_(cfg.sets),
      ways_(cfg.ways),
      lineBytes_(cfg.line_bytes),
      sectorBytes_(cfg.sectorBytes()),
      banks_(cfg.banks),
      usableWays_(cfg.ways),
      lines_(size_t(cfg.sets) * cfg.ways),
      validBytes_(cfg.write_allocate == "write-validate" || cfg.sectored()
                      ? size_t(cfg.sets) * cfg.ways
                      : 0),
      replacement_(replacement.create(cfg.replacement, cfg.sets, cfg.ways, seed)),
      mshrs_(cfg.mshr_entries, cfg.mshr_max_merge),
      bankFree_(cfg.banks, 0) {
  if (cfg.line_bytes > kMaxLineBytes)
    throw InputError(fmt::format(
        "{}.line_bytes = {}: data caches support lines of at most {} bytes (the byte mask of an "
        "access)",
        key, cfg.line_bytes, kMaxLineBytes));
  // The configuration checks these too; the index arithmetic relies on them.
  const auto pow2 = [](uint32_t v) { return v != 0 && (v & (v - 1)) == 0; };
  if (!pow2(sets_) || !pow2(lineBytes_) || !pow2(banks_) || ways_ == 0)
    throw InputError(fmt::format("{}: sets, line_bytes and banks must be powers of two", key));
  if (!pow2(sectorBytes_) || sectorBytes_ < 4 || sectorBytes_ > lineBytes_)
    throw InputError(fmt::format(
        "{}.sector_bytes = {}: a sector is a power of two from 4 bytes to the line ({} bytes)", key,
        cfg.sector_bytes, lineBytes_));
}

ByteMask CacheCore::sectorsOf(const ByteMask& mask) const {
  if (!sectored()) return anyByte(mask) ? firstBytes(lineBytes_) : ByteMask{};
  ByteMask out{};
  for (uint32_t from = 0; from < lineBytes_; from += sectorBytes_) {
    const uint32_t w = from / 64, lo = from % 64, n = std::min(sectorBytes_, 64u);
    const uint64_t bits = n == 64 ? ~0ull : ((1ull << n) - 1) << lo;
    bool any = false;
    for (uint32_t k = 0; k < std::max(1u, sectorBytes_ / 64); ++k) any |= (mask[w + k] & bits) != 0;
    if (any)
      for (uint32_t k = 0; k < std::max(1u, sectorBytes_ / 64); ++k) out[w + k] |= bits;
  }
  return out;
}

uint64_t CacheCore::fetchKey(uint64_t line, const ByteMask& bytes) const {
  if (!sectored()) return line;
  for (uint32_t w = 0; w < bytes.size(); ++w)
    if (bytes[w]) return line + 64 * w + __builtin_ctzll(bytes[w]);
  return line;
}

uint32_t CacheCore::openFetch(uint64_t line, const ByteMask& bytes) {
  const uint32_t e = mshrs_.allocate(fetchKey(line, bytes));
  mshrs_.entry(e).bytes = bytes;
  return e;
}

CacheCore::Lack CacheCore::lack(uint64_t line, const ByteMask& needed) const {
  Lack l;
  l.way = find(line);
  // A request without a byte mask (an instruction fetch, a constant load) needs the line.
  ByteMask missing = anyByte(needed) ? needed : firstBytes(lineBytes_);
  if (l.way != kNoWay) {
    if (holds(setOf(line), l.way, needed)) {
      l.hit = true;
      return l;
    }
    const ByteMask& v = validBytes_[index(setOf(line), l.way)];  // holds() is false: tracked
    for (size_t i = 0; i < missing.size(); ++i) missing[i] &= ~v[i];
  }
  // The sectors of the missing bytes; those a fetch in flight brings are waited for.
  l.fetch = sectorsOf(missing);
  for (uint32_t off = 0; off < lineBytes_; off += sectorBytes_) {
    const uint32_t e = mshrs_.find(line + off);
    if (e == MshrTable::kNone) continue;
    const ByteMask& b = mshrs_.entry(e).bytes;
    bool wanted = false;
    for (size_t i = 0; i < b.size(); ++i) {
      wanted |= (l.fetch[i] & b[i]) != 0;
      l.fetch[i] &= ~b[i];
    }
    if (wanted) l.waitOn[l.waits++] = e;
  }
  return l;
}

uint32_t CacheCore::find(uint64_t addr) const {
  const uint64_t tag = tagOf(addr);
  const LineState* set = &lines_[index(setOf(addr), 0)];
  for (uint32_t w = 0; w < ways_; ++w)
    if (set[w].valid && set[w].tag == tag) return w;
  return kNoWay;
}

uint32_t CacheCore::access(uint64_t addr, uint64_t cycle, const ByteMask& lineMask, bool isWrite) {
  const uint32_t set = setOf(addr);
  const uint32_t way = find(addr);
  if (way != kNoWay) {
    lines_[index(set, way)].lastAccess = cycle;
    replacement_->touched(set, way);
  }
  if (observer_) observer_->onAccess(set, way, cycle, lineMask, isWrite, way != kNoWay);
  return way;
}

FillResult CacheCore::fill(uint64_t addr, uint64_t cycle, bool dirty) {
  return fill(addr, cycle, dirty, firstBytes(lineBytes_));
}

FillResult CacheCore::fill(uint64_t addr, uint64_t cycle, bool dirty, const ByteMask& bytes) {
  FillResult r;
  r.set = setOf(addr);
  if (find(addr) != kNoWay)
    throw InternalError(fmt::format("CacheCore: fill of line {:#x}, which is present", addr));
  LineState* set = &lines_[index(r.set, 0)];
  uint32_t way = kNoWay;
  for (uint32_t w = 0; w < usableWays_ && way == kNoWay; ++w)
    if (!set[w].valid) way = w;
  if (way == kNoWay) {
    way = replacement_->victim(r.set, usableWays_);
    r.evicted = true;
    r.evictedDirty = set[way].dirty;
    r.evictedLine = lineAddressOf(r.set, way);
    r.evictedBytes = bytesOf(r.set, way);
    if (observer_) observer_->onEvict(r.set, way, cycle, set[way].dirty);
  }
  r.way = way;
  set[way] = LineState{tagOf(addr), cycle, true, dirty};
  if (tracksBytes()) validBytes_[index(r.set, way)] = bytes;
  replacement_->filled(r.set, way);
  if (observer_) observer_->onFill(r.set, way, cycle);
  return r;
}

void CacheCore::drop(uint32_t set, uint32_t way, uint64_t cycle) {
  LineState& l = lines_[index(set, way)];
  if (observer_) observer_->onEvict(set, way, cycle, l.dirty);
  l.valid = false;
  l.dirty = false;
}

bool CacheCore::invalidate(uint64_t addr, uint64_t cycle) {
  const uint32_t way = find(addr);
  if (way == kNoWay) return false;
  drop(setOf(addr), way, cycle);
  return true;
}

void CacheCore::invalidateAll(uint64_t cycle) {
  for (uint32_t set = 0; set < sets_; ++set)
    for (uint32_t way = 0; way < ways_; ++way)
      if (lines_[index(set, way)].valid) drop(set, way, cycle);
}

bool CacheCore::holds(uint32_t set, uint32_t way, const ByteMask& mask) const {
  if (!tracksBytes()) return true;
  const ByteMask& v = validBytes_[index(set, way)];
  for (size_t i = 0; i < v.size(); ++i)
    if ((mask[i] & ~v[i]) != 0) return false;
  return true;
}

void CacheCore::addBytes(uint32_t set, uint32_t way, const ByteMask& mask) {
  if (!tracksBytes()) return;
  ByteMask& v = validBytes_[index(set, way)];
  const ByteMask inLine = firstBytes(lineBytes_);
  for (size_t i = 0; i < v.size(); ++i) v[i] |= mask[i] & inLine[i];
}

ByteMask CacheCore::bytesOf(uint32_t set, uint32_t way) const {
  return tracksBytes() ? validBytes_[index(set, way)] : firstBytes(lineBytes_);
}

uint32_t CacheCore::validLines() const {
  uint32_t n = 0;
  for (const auto& l : lines_) n += l.valid ? 1 : 0;
  return n;
}

uint64_t CacheCore::claimBank(uint32_t bank, uint64_t cycle, uint32_t cycles) {
  const uint64_t slot = std::max(cycle, bankFree_[bank]);
  bankFree_[bank] = slot + std::max(1u, cycles);
  return slot;
}

void CacheCore::setUsableWays(uint32_t ways, uint64_t cycle) {
  if (ways == 0 || ways > ways_)
    throw InternalError(fmt::format("CacheCore: {} usable ways of {}", ways, ways_));
  for (uint32_t s = 0; s < sets_; ++s)
    for (uint32_t w = ways; w < usableWays_; ++w)
      if (lines_[index(s, w)].valid) drop(s, w, cycle);
  usableWays_ = ways;
}

void CacheCore::reset() {
  usableWays_ = ways_;
  std::fill(lines_.begin(), lines_.end(), LineState{});
  std::fill(validBytes_.begin(), validBytes_.end(), ByteMask{});
  replacement_->reset();
  mshrs_.clear();
  std::fill(bankFree_.begin(), bankFree_.end(), 0);
}

// ---- shared plumbing ---------------------------------------------------------------------------

void SendQueue::push(tlm::tlm_generic_payload* gp, uint64_t notBefore) {
  if (size_ == items_.size()) throw InternalError("SendQueue: push on a full queue");
  items_[(head_ + size_) % items_.size()] = Item{gp, notBefore};
  ++size_;
}

void SendQueue::send(uint64_t cycle, tlm::tlm_fw_transport_if<>& next, DataCacheStats& stats,
                     const char* owner) {
  if (sendCycle_ != cycle) {
    sendCycle_ = cycle;
    sentInCycle_ = 0;
  }
  while (!sending_ && size_ > 0 && sentInCycle_ < sendsPerCycle_ &&
         items_[head_].notBefore <= cycle) {
    tlm::tlm_generic_payload* gp = items_[head_].gp;
    head_ = (head_ + 1) % items_.size();
    --size_;
    ++sentInCycle_;
    if (gp->get_command() == tlm::TLM_WRITE_COMMAND)
      ++stats.sentWrites;
    else
      ++stats.sentReads;
    sending_ = gp;  // before the call: the target may end the request from inside it
    tlm::tlm_phase phase = tlm::BEGIN_REQ;
    sc_core::sc_time t = sc_core::SC_ZERO_TIME;
    const tlm::tlm_sync_enum s = next.nb_transport_fw(*gp, phase, t);
    if (s == tlm::TLM_UPDATED && phase == tlm::END_REQ) {
      requestEnded(*gp);
    } else if (s != tlm::TLM_ACCEPTED) {
      throw InternalError(fmt::format(
          "{}: the next level must answer BEGIN_REQ with END_REQ or TLM_ACCEPTED", owner));
    }
  }
}

void SendQueue::oldestHeld(std::optional<HeldRequest>& best, uint64_t periodValue,
                           const std::string& where) const {
  for (size_t i = 0; i < size_; ++i) {
    const Item& it = items_[(head_ + i) % items_.size()];
    keepOlder(best, it.notBefore * periodValue, describeRequest(*it.gp) + ", " + where);
  }
}

uint64_t SendQueue::wakeCycle(uint64_t cycle) const {
  if (size_ == 0 || sending_) return kNever;
  const uint64_t nextSend =
      sendCycle_ == cycle && sentInCycle_ >= sendsPerCycle_ ? cycle + 1 : cycle;
  return std::max(items_[head_].notBefore, nextSend);
}

void AnswerQueue::deliver(uint64_t cycle, tlm::tlm_bw_transport_if<>& up) {
  while (!empty() && nextCycle() <= cycle) {
    tlm::tlm_generic_payload* gp = pop();
    gp->set_response_status(tlm::TLM_OK_RESPONSE);
    tlm::tlm_phase phase = tlm::BEGIN_RESP;
    sc_core::sc_time t = sc_core::SC_ZERO_TIME;
    up.nb_transport_bw(*gp, phase, t);  // the requester takes it at once (TLM_COMPLETED)
    gp->release();
  }
}

uint32_t PendingRequests::open(tlm::tlm_generic_payload* gp) {
  uint32_t id;
  if (free_.empty()) {
    id = static_cast<uint32_t>(records_.size());
    records_.emplace_back();
  } else {
    id = free_.back();
    free_.pop_back();
  }
  records_[id] = Record{gp, 0, 0};
  return id;
}

void describeFetch(const CacheCore& core, MemAccessExtension& request, const ByteMask& bytes,
                   DataCacheStats& stats) {
  request.byteMask = bytes;
  if (!core.sectored()) return;
  request.sectorBytes = core.sectorBytes();
  stats.fetchedSectors += core.sectorCount(bytes);
}

nlohmann::json DataCacheStats::json(bool enabled, bool sectored) const {
  using nlohmann::json;
  json byKind = json::object();
  uint64_t accesses = 0, hits = 0, misses = 0;
  for (size_t k = 0; k < kinds.size(); ++k) {
    const Kind& c = kinds[k];
    byKind[accessKindName(static_cast<AccessKind>(k))] = {
        {"requests", c.requests},
        {"accesses", c.accesses},
        {"hits", c.hits},
        {"misses", c.misses},
        {"hit_rate", c.accesses ? double(c.hits) / double(c.accesses) : 0.0}};
    accesses += c.accesses;
    hits += c.hits;
    misses += c.misses;
  }
  const auto stall = [&](Stall s) { return stallCycles[static_cast<size_t>(s)]; };
  json j{
      {"enabled", enabled},
      {"accesses", accesses},
      {"hits", hits},
      {"misses", misses},
      {"hit_rate", accesses ? double(hits) / double(accesses) : 0.0},
      {"by_kind", std::move(byKind)},
      {"mshr_merges", mshrMerges},
      {"fills", fills},
      {"evictions", evictions},
      {"invalidations", invalidations},
      {"dirty_writebacks", dirtyWritebacks},
      {"bypassed", bypassed},
      {"split_requests", splitRequests},
      {"sent_down",
       {{"reads", sentReads}, {"writes", sentWrites}, {"total", sentReads + sentWrites}}},
      {"stall_cycles",
       {{"mshr_full", stall(Stall::MshrFull)},
        {"merge_limit", stall(Stall::MergeLimit)},
        {"miss_queue_full", stall(Stall::MissQueueFull)},
        {"bank_conflict", stall(Stall::BankConflict)}}},
      // Back-pressure for want of an MSHR (none free, or the line's at its merge limit).
      {"mshr_full_stall_cycles", stall(Stall::MshrFull) + stall(Stall::MergeLimit)},
  };
  if (sectored) j["sectors"] = {{"sector_misses", sectorMisses}, {"fetched", fetchedSectors}};
  return j;
}

std::optional<HeldRequest> oldestHeldOf(const tlm::tlm_generic_payload* held, uint64_t heldAt,
                                        const SendQueue& down, const AnswerQueue& answers,
                                        uint64_t periodValue) {
  std::optional<HeldRequest> best;
  if (held) keepOlder(best, heldAt * periodValue, describeRequest(*held) + ", not accepted yet");
  down.oldestHeld(best, periodValue, "in the miss queue");
  answers.oldestHeld(best, periodValue, "answered, not delivered");
  return best;
}

}  // namespace gpusc::cache
