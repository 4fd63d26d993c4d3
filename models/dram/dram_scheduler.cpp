#include "dram/dram_scheduler.hpp"

#include <algorithm>

#include "common/error.hpp"

namespace gpusc::dram {

// ---- RequestQueue ------------------------------------------------------------------------------

RequestQueue::RequestQueue(uint32_t capacity, uint32_t banks)
    : slots_(capacity), listHead_(2 * size_t(banks), kEnd), listTail_(2 * size_t(banks), kEnd) {
  if (banks == 0 || banks > 64) throw InternalError("DRAM request queue: 1 to 64 banks");
  free_.reserve(capacity);
  clear();
}

void RequestQueue::clear() {
  free_.clear();
  for (uint32_t i = capacity(); i-- > 0;) free_.push_back(i);  // slot 0 is used first
  for (Slot& s : slots_) s.prev = s.next = s.bankPrev = s.bankNext = kEnd;
  std::fill(listHead_.begin(), listHead_.end(), kEnd);
  std::fill(listTail_.begin(), listTail_.end(), kEnd);
  banksUsed_ = 0;
  head_ = tail_ = kEnd;
  size_ = 0;
}

uint32_t RequestQueue::bankOldest(uint32_t bank) const {
  const uint32_t r = listHead_[list(bank, false)], w = listHead_[list(bank, true)];
  if (r == kEnd) return w;
  if (w == kEnd) return r;
  return slots_[r].req.seq < slots_[w].req.seq ? r : w;
}

uint32_t RequestQueue::push(const DramRequest& r) {
  if (free_.empty()) throw InternalError("DRAM request queue: push into a full queue");
  if (2 * size_t(r.bank) >= listHead_.size())
    throw InternalError("DRAM request queue: bank out of range");
  const uint32_t s = free_.back();
  free_.pop_back();
  Slot& slot = slots_[s];
  slot.req = r;
  slot.prev = tail_;
  slot.next = kEnd;
  if (tail_ != kEnd)
    slots_[tail_].next = s;
  else
    head_ = s;
  tail_ = s;
  const uint32_t l = list(r.bank, r.write);
  slot.bankPrev = listTail_[l];
  slot.bankNext = kEnd;
  if (listTail_[l] != kEnd)
    slots_[listTail_[l]].bankNext = s;
  else
    listHead_[l] = s;
  listTail_[l] = s;
  banksUsed_ |= 1ull << r.bank;
  ++size_;
  return s;
}

void RequestQueue::remove(uint32_t s) {
  Slot& slot = slots_[s];
  if (slot.prev != kEnd)
    slots_[slot.prev].next = slot.next;
  else
    head_ = slot.next;
  if (slot.next != kEnd)
    slots_[slot.next].prev = slot.prev;
  else
    tail_ = slot.prev;
  const uint32_t bank = slot.req.bank, l = list(bank, slot.req.write);
  if (slot.bankPrev != kEnd)
    slots_[slot.bankPrev].bankNext = slot.bankNext;
  else
    listHead_[l] = slot.bankNext;
  if (slot.bankNext != kEnd)
    slots_[slot.bankNext].bankPrev = slot.bankPrev;
  else
    listTail_[l] = slot.bankPrev;
  if (listHead_[list(bank, false)] == kEnd && listHead_[list(bank, true)] == kEnd)
    banksUsed_ &= ~(1ull << bank);
  slot.prev = slot.next = slot.bankPrev = slot.bankNext = kEnd;
  slot.req.gp = nullptr;
  free_.push_back(s);
  --size_;
}

// ---- policies ----------------------------------------------------------------------------------

namespace {

using Kind = DramDecision::Kind;

// The oldest of the requests a decision may issue (by arrival order, DramRequest::seq).
struct Oldest {
  uint32_t slot = RequestQueue::kEnd;
  uint64_t seq = ~0ull;
  void offer(const RequestQueue& q, uint32_t i) {
    if (q[i].seq < seq) {
      slot = i;
      seq = q[i].seq;
    }
  }
};

class FirstReadyFcfs : public DramSchedulingPolicy {
 public:
  explicit FirstReadyFcfs(const DramConfig&) {}

  DramDecision decide(const RequestQueue& q, const DramChannel& ch, uint64_t now) override {
    DramDecision d;
    // First ready: the oldest row hit whose column command may issue now. A bank's earliest
    // read (write) column command is the same for all its hits, so only each bank's oldest read
    // hit and oldest write hit are candidates: if one cannot issue, its bank's younger hits of
    // the same kind cannot either.
    Oldest column;
    const DramChannel::ColumnBounds bounds = ch.columnBounds();
    uint64_t noHit = 0;  // banks with requests but no row hit queued
    for (uint64_t m = q.banksWithRequests(); m != 0; m &= m - 1) {
      const uint32_t bank = static_cast<uint32_t>(__builtin_ctzll(m));
      if (!ch.isOpen(bank)) {
        noHit |= 1ull << bank;
        continue;
      }
      const uint64_t row = ch.openRow(bank);
      uint32_t hit[2];  // the oldest read hit, the oldest write hit
      for (int w = 0; w < 2; ++w) {
        uint32_t i = q.bankOldest(bank, w == 1);
        while (i != RequestQueue::kEnd && q[i].row != row) i = q.bankNext(i);
        hit[w] = i;
      }
      if (hit[0] == RequestQueue::kEnd && hit[1] == RequestQueue::kEnd) {
        noHit |= 1ull << bank;
        continue;
      }
      for (int w = 0; w < 2; ++w) {
        if (hit[w] == RequestQueue::kEnd) continue;
        const uint64_t t = ch.earliestColumn(bank, w == 1, bounds);
        if (t <= now)
          column.offer(q, hit[w]);
        else
          d.retry = std::min(d.retry, t);
      }
    }
    if (column.slot != RequestQueue::kEnd) return DramDecision{Kind::Column, column.slot, now};
    // Otherwise open a row: for the oldest request of each bank that has no row hit queued
    // (its hits are served first), oldest request first.
    Oldest row;
    for (uint64_t m = noHit; m != 0; m &= m - 1) {
      const uint32_t bank = static_cast<uint32_t>(__builtin_ctzll(m));
      const uint64_t t = ch.earliestRowCommand(bank);
      if (t <= now)
        row.offer(q, q.bankOldest(bank));
      else
        d.retry = std::min(d.retry, t);
    }
    if (row.slot != RequestQueue::kEnd) return DramDecision{Kind::Row, row.slot, now};
    return d;
  }
};

class Fcfs : public DramSchedulingPolicy {
 public:
  explicit Fcfs(const DramConfig&) {}

  DramDecision decide(const RequestQueue& q, const DramChannel& ch, uint64_t now) override {
    DramDecision d;
    // Data move in arrival order: only the oldest request may issue a column command.
    const uint32_t head = q.oldest();
    if (head == RequestQueue::kEnd) return d;
    const DramRequest& h = q[head];
    if (ch.isRowHit(h.bank, h.row)) {
      const uint64_t t = ch.earliestColumn(h.bank, h.write);
      if (t <= now) return DramDecision{Kind::Column, head, now};
      d.retry = t;
    }
    // Each bank opens the row of its own oldest request, oldest request first.
    Oldest row;
    for (uint64_t m = q.banksWithRequests(); m != 0; m &= m - 1) {
      const uint32_t bank = static_cast<uint32_t>(__builtin_ctzll(m));
      const uint32_t i = q.bankOldest(bank);
      if (ch.isRowHit(bank, q[i].row)) continue;
      const uint64_t t = ch.earliestRowCommand(bank);
      if (t <= now)
        row.offer(q, i);
      else
        d.retry = std::min(d.retry, t);
    }
    if (row.slot != RequestQueue::kEnd) return DramDecision{Kind::Row, row.slot, now};
    return d;
  }
};

}  // namespace

const Registry<DramSchedulingPolicy, const DramConfig&>& dramSchedulingPolicies() {
  static const Registry<DramSchedulingPolicy, const DramConfig&> registry(
      "DRAM scheduler",
      {{"fr-fcfs", "first-ready first-come-first-served: row hits first, then the oldest request",
        [](const DramConfig& c) { return std::make_unique<FirstReadyFcfs>(c); }},
       {"fcfs", "strict arrival order of data; banks open rows ahead",
        [](const DramConfig& c) { return std::make_unique<Fcfs>(c); }}});
  return registry;
}

}  // namespace gpusc::dram
