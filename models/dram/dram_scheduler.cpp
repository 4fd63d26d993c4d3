#include "dram/dram_scheduler.hpp"

#include <algorithm>

#include "common/error.hpp"

namespace gpusc::dram {

// ---- RequestQueue ------------------------------------------------------------------------------

RequestQueue::RequestQueue(uint32_t capacity) : slots_(capacity) {
  free_.reserve(capacity);
  clear();
}

void RequestQueue::clear() {
  free_.clear();
  for (uint32_t i = capacity(); i-- > 0;) free_.push_back(i);  // slot 0 is used first
  head_ = tail_ = kEnd;
  size_ = 0;
}

uint32_t RequestQueue::push(const DramRequest& r) {
  if (free_.empty()) throw InternalError("DRAM request queue: push into a full queue");
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
  slot.prev = slot.next = kEnd;
  slot.req.gp = nullptr;
  free_.push_back(s);
  --size_;
}

// ---- policies ----------------------------------------------------------------------------------

namespace {

using Kind = DramDecision::Kind;

// Per-bank marks that are valid for one decision: a bank is marked when its stamp equals the
// current epoch, so starting a decision clears every mark at no cost.
class BankMarks {
 public:
  explicit BankMarks(uint32_t banks) : stamps_(banks, 0) {}
  void newRound() { ++epoch_; }
  bool marked(uint32_t bank) const { return stamps_[bank] == epoch_; }
  void mark(uint32_t bank) { stamps_[bank] = epoch_; }

 private:
  std::vector<uint64_t> stamps_;
  uint64_t epoch_ = 0;
};

class FirstReadyFcfs : public DramSchedulingPolicy {
 public:
  explicit FirstReadyFcfs(const DramConfig& cfg)
      : hasHit_(cfg.banks), seen_(cfg.banks), triedRead_(cfg.banks), triedWrite_(cfg.banks) {}

  DramDecision decide(const RequestQueue& q, const DramChannel& ch, uint64_t now) override {
    DramDecision d;
    hasHit_.newRound();
    seen_.newRound();
    triedRead_.newRound();
    triedWrite_.newRound();
    // First ready: the oldest row hit whose column command may issue now. A bank's earliest
    // read (write) column command is the same for all its hits, so after its oldest read
    // (write) hit could not issue, its younger ones cannot either.
    for (uint32_t i = q.oldest(); i != RequestQueue::kEnd; i = q.next(i)) {
      const DramRequest& r = q[i];
      if (!ch.isRowHit(r.bank, r.row)) continue;
      hasHit_.mark(r.bank);
      BankMarks& tried = r.write ? triedWrite_ : triedRead_;
      if (tried.marked(r.bank)) continue;
      tried.mark(r.bank);
      const uint64_t t = ch.earliestColumn(r.bank, r.write);
      if (t <= now) return DramDecision{Kind::Column, i, now};
      d.retry = std::min(d.retry, t);
    }
    // Otherwise open a row: for the oldest request of each bank that has no row hit queued
    // (its hits are served first), oldest request first.
    for (uint32_t i = q.oldest(); i != RequestQueue::kEnd; i = q.next(i)) {
      const uint32_t bank = q[i].bank;
      if (hasHit_.marked(bank) || seen_.marked(bank)) continue;
      seen_.mark(bank);
      const uint64_t t = ch.earliestRowCommand(bank);
      if (t <= now) return DramDecision{Kind::Row, i, now};
      d.retry = std::min(d.retry, t);
    }
    return d;
  }

 private:
  BankMarks hasHit_, seen_, triedRead_, triedWrite_;
};

class Fcfs : public DramSchedulingPolicy {
 public:
  explicit Fcfs(const DramConfig& cfg) : seen_(cfg.banks) {}

  DramDecision decide(const RequestQueue& q, const DramChannel& ch, uint64_t now) override {
    DramDecision d;
    seen_.newRound();
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
    for (uint32_t i = head; i != RequestQueue::kEnd; i = q.next(i)) {
      const DramRequest& r = q[i];
      if (seen_.marked(r.bank)) continue;
      seen_.mark(r.bank);
      if (ch.isRowHit(r.bank, r.row)) continue;
      const uint64_t t = ch.earliestRowCommand(r.bank);
      if (t <= now) return DramDecision{Kind::Row, i, now};
      d.retry = std::min(d.retry, t);
    }
    return d;
  }

 private:
  BankMarks seen_;
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
