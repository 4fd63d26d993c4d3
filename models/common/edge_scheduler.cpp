#include "common/edge_scheduler.hpp"

#include <algorithm>

#include "common/error.hpp"

namespace gpusc {

EdgeScheduler::EdgeScheduler(const sc_core::sc_module_name& name) : sc_core::sc_module(name) {
  SC_METHOD(step);
  sensitive << tick_;
  dont_initialize();
}

EdgeScheduler::Unit EdgeScheduler::add(uint32_t rank, std::function<void()> run) {
  const Unit u = Unit(run_.size());
  if (u >= (1u << 24) || rank >= (1u << 24))
    throw InternalError("EdgeScheduler: more than 2^24 units or ranks");
  run_.push_back(std::move(run));
  order_.push_back(uint64_t(rank) << 24 | u);
  time_.push_back(kNever);
  pos_.push_back(kOut);
  return u;
}

void EdgeScheduler::siftUp(uint32_t i) {
  const Slot s = heap_[i];
  while (i > 0) {
    const uint32_t parent = (i - 1) / 2;
    if (!(s < heap_[parent])) break;
    place(i, heap_[parent]);
    i = parent;
  }
  place(i, s);
}

void EdgeScheduler::siftDown(uint32_t i) {
  const Slot s = heap_[i];
  const uint32_t n = uint32_t(heap_.size());
  for (;;) {
    uint32_t c = 2 * i + 1;
    if (c >= n) break;
    if (c + 1 < n && heap_[c + 1] < heap_[c]) ++c;
    if (!(heap_[c] < s)) break;
    place(i, heap_[c]);
    i = c;
  }
  place(i, s);
}

void EdgeScheduler::remove(uint32_t i) {
  const Unit u = unitOf(heap_[i]);
  pos_[u] = kOut;
  time_[u] = kNever;
  const Slot last = heap_.back();
  heap_.pop_back();
  if (unitOf(last) == u) return;
  place(i, last);
  if (i > 0 && last < heap_[(i - 1) / 2])
    siftUp(i);
  else
    siftDown(i);
}

void EdgeScheduler::wakeAt(Unit u, uint64_t time) {
  const uint64_t t0 = now();
  time = std::max(time, t0);
  if (time >= time_[u]) return;  // due earlier already
  uint64_t key = order_[u];
  if (running_ && time == t0) {  // in this pass if it comes later in it, else in the next
    const uint64_t pass = runningKey_ / kPass;
    key += (key > runningKey_ % kPass ? pass : pass + 1) * kPass;
    if (key / kPass >= (1ull << 15))
      throw InternalError("EdgeScheduler: units keep waking each other within one instant");
  }
  time_[u] = time;
  if (u == runningUnit_) {  // the running unit's next run: placed when it returns
    runningNextKey_ = key;
    return;
  }
  if (pos_[u] == kOut) {
    heap_.push_back(Slot{time, key});
    pos_[u] = uint32_t(heap_.size() - 1);
  } else {
    heap_[pos_[u]] = Slot{time, key};
  }
  siftUp(pos_[u]);  // an earlier time only moves it up
  if (!running_ && time < armed_) arm();
}

void EdgeScheduler::cancel(Unit u) {
  if (u == runningUnit_) {
    time_[u] = kNever;
    return;
  }
  if (pos_[u] == kOut) return;
  remove(pos_[u]);
  if (!running_) arm();  // nothing may stay scheduled for it (SystemC would see activity)
}

void EdgeScheduler::arm() {
  if (heap_.empty()) {
    if (armed_ != kNever) tick_.cancel();
    armed_ = kNever;
    return;
  }
  const uint64_t t = heap_.front().time, now = sc_core::sc_time_stamp().value();
  if (t == armed_) return;
  armed_ = t;
  tick_.cancel();
  tick_.notify(sc_core::sc_time::from_value(t - now));
}

void EdgeScheduler::step() {
  now_ = sc_core::sc_time_stamp().value();
  armed_ = kNever;  // the notification that ran us is spent
  running_ = true;
  struct Done {  // also when a unit throws (the engine then stops): the unit leaves the heap
    EdgeScheduler& s;
    ~Done() {
      if (s.runningUnit_ != kNoUnit) {
        s.time_[s.runningUnit_] = kNever;
        s.runningUnit_ = kNoUnit;
        s.remove(0);
      }
      s.running_ = false;
    }
  } done{*this};
  // The running unit stays at the top of the heap while it runs: every unit it wakes is due
  // after it (later in this pass, in a later pass or at a later time), so the top stays the
  // least. Its own next request waits beside the heap; when it returns, that request replaces
  // the top with one sift down (or the top is removed), instead of a removal and an insertion.
  while (!heap_.empty() && heap_.front().time <= now_) {
    const Slot s = heap_.front();
    const Unit u = unitOf(s);
    runningKey_ = s.key;
    runningUnit_ = u;
    time_[u] = kNever;
    run_[u]();
    runningUnit_ = kNoUnit;
    if (time_[u] != kNever) {
      place(0, Slot{time_[u], runningNextKey_});
      siftDown(0);
    } else {
      remove(0);
    }
  }
  running_ = false;
  arm();
}
}  // namespace gpusc
