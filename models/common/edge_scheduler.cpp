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
  if (u > kUnitMask || rank >= (1u << 24))
    throw InternalError("EdgeScheduler: more than 2^24 units or ranks");
  run_.push_back(std::move(run));
  order_.push_back(uint64_t(rank) << 24 | u);
  time_.push_back(kNever);
  key_.push_back(0);
  return u;
}

EdgeScheduler::Instant& EdgeScheduler::instantAt(uint64_t time) {
  size_t i = 0;
  while (i < instants_.size() && instants_[i].time < time) ++i;
  if (i < instants_.size() && instants_[i].time == time) return instants_[i];
  Instant in;
  in.time = time;
  if (!spareKeys_.empty()) {
    in.keys = std::move(spareKeys_.back());
    spareKeys_.pop_back();
  }
  return *instants_.insert(instants_.begin() + long(i), std::move(in));
}

void EdgeScheduler::retireFirst() {
  std::vector<uint64_t> keys = std::move(instants_.front().keys);
  keys.clear();
  spareKeys_.push_back(std::move(keys));
  instants_.erase(instants_.begin());
}

bool EdgeScheduler::live(const Instant& in) const {
  for (size_t k = in.next; k < in.keys.size(); ++k) {
    const Unit u = Unit(in.keys[k] & kUnitMask);
    if (time_[u] == in.time && key_[u] == in.keys[k]) return true;
  }
  return false;
}

void EdgeScheduler::wakeAt(Unit u, uint64_t time) {
  const uint64_t t0 = now();
  time = std::max(time, t0);
  if (time >= time_[u]) return;  // due earlier already
  uint64_t key = order_[u];
  const bool thisInstant = running_ && time == t0;
  if (thisInstant) {  // in this pass if it comes later in it, else in the next
    const uint64_t pass = runningKey_ / kPass;
    key += (key > runningKey_ % kPass ? pass : pass + 1) * kPass;
    if (key / kPass >= (1ull << 15))
      throw InternalError("EdgeScheduler: units keep waking each other within one instant");
  }
  time_[u] = time;
  key_[u] = key;
  Instant& in = instantAt(time);
  if (thisInstant) {  // the instant running: among its keys still to run, in order
    in.keys.insert(std::upper_bound(in.keys.begin() + long(in.next), in.keys.end(), key), key);
  } else {
    in.sorted = in.sorted && (in.keys.empty() || in.keys.back() <= key);
    in.keys.push_back(key);
  }
  if (!running_ && time < armed_) arm();
}

void EdgeScheduler::cancel(Unit u) {
  time_[u] = kNever;
  if (!running_) arm();  // the next instant may have nothing left
}

void EdgeScheduler::arm() {
  while (!instants_.empty() && !live(instants_.front())) retireFirst();
  if (instants_.empty()) {
    if (armed_ != kNever) tick_.cancel();
    armed_ = kNever;
    return;
  }
  const uint64_t t = instants_.front().time, now = sc_core::sc_time_stamp().value();
  if (t == armed_) return;
  armed_ = t;
  tick_.cancel();
  tick_.notify(sc_core::sc_time::from_value(t > now ? t - now : 0));
}

void EdgeScheduler::step() {
  now_ = sc_core::sc_time_stamp().value();
  armed_ = kNever;  // the notification that ran us is spent
  running_ = true;
  // instants_ may grow while a unit runs (a later instant): the first stays first.
  while (!instants_.empty() && instants_.front().time <= now_) {
    {
      Instant& in = instants_.front();
      if (!in.sorted) std::sort(in.keys.begin() + long(in.next), in.keys.end());
      in.sorted = true;
    }
    while (instants_.front().next < instants_.front().keys.size()) {
      Instant& in = instants_.front();
      const uint64_t key = in.keys[in.next++];
      const Unit u = Unit(key & kUnitMask);
      if (time_[u] != in.time || key_[u] != key) continue;  // stale
      time_[u] = kNever;
      runningKey_ = key;
      run_[u]();
    }
    retireFirst();
  }
  running_ = false;
  arm();
}

}  // namespace gpusc
