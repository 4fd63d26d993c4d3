#include "sm/warp_scheduler.hpp"

#include <algorithm>

namespace gpusc::sm {

namespace {

void eraseValue(std::vector<uint32_t>& v, uint32_t x) {
  v.erase(std::remove(v.begin(), v.end(), x), v.end());
}

bool contains(const std::vector<uint32_t>& v, uint32_t x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

// Round-robin over `ring`, starting after `last`.
void rotateAfter(const std::vector<uint32_t>& ring, uint32_t last, bool haveLast,
                 std::vector<uint32_t>& out) {
  out.clear();
  size_t start = 0;
  if (haveLast) {
    auto it = std::upper_bound(ring.begin(), ring.end(), last);
    start = static_cast<size_t>(it - ring.begin());
  }
  for (size_t i = 0; i < ring.size(); ++i) out.push_back(ring[(start + i) % ring.size()]);
}

class LooseRoundRobin : public WarpSchedulingPolicy {
 public:
  void add(uint32_t w, uint64_t) override {
    ring_.insert(std::upper_bound(ring_.begin(), ring_.end(), w), w);
    stale_ = true;
  }
  void remove(uint32_t w) override {
    eraseValue(ring_, w);
    stale_ = true;
  }
  // Rebuilt only when the warps or the last issued warp changed.
  const std::vector<uint32_t>& order() override {
    if (!stale_) return out_;
    stale_ = false;
    ++version_;
    rotateAfter(ring_, last_, haveLast_, out_);
    return out_;
  }
  uint64_t orderVersion() const override { return version_; }
  void issued(uint32_t w) override {
    if (haveLast_ && last_ == w) return;
    last_ = w;
    haveLast_ = true;
    stale_ = true;
  }
  void reset() override {
    const uint64_t v = version_;  // a version never repeats
    *this = LooseRoundRobin();
    version_ = v;
  }

 private:
  std::vector<uint32_t> ring_, out_;  // ring_: warp slots in increasing order
  uint32_t last_ = 0;
  bool haveLast_ = false;
  bool stale_ = true;  // out_ no longer follows ring_ and last_
  uint64_t version_ = 0;
};

class GreedyThenOldest : public WarpSchedulingPolicy {
 public:
  void add(uint32_t w, uint64_t age) override {
    auto it = std::upper_bound(
        byAge_.begin(), byAge_.end(), age,
        [](uint64_t a, const std::pair<uint64_t, uint32_t>& e) { return a < e.first; });
    byAge_.insert(it, {age, w});
    stale_ = true;
  }
  void remove(uint32_t w) override {
    byAge_.erase(
        std::remove_if(byAge_.begin(), byAge_.end(), [&](auto& e) { return e.second == w; }),
        byAge_.end());
    if (haveGreedy_ && greedy_ == w) haveGreedy_ = false;
    stale_ = true;
  }
  // The warps oldest first; the greedy warp goes first through preferred(). Rebuilt only when
  // the warps change.
  const std::vector<uint32_t>& order() override {
    if (!stale_) return out_;
    stale_ = false;
    ++version_;
    out_.resize(byAge_.size());
    for (size_t k = 0; k < byAge_.size(); ++k) out_[k] = byAge_[k].second;
    return out_;
  }
  uint64_t orderVersion() const override { return version_; }
  uint32_t preferred() const override { return haveGreedy_ ? greedy_ : kNoWarp; }
  void issued(uint32_t w) override {
    greedy_ = w;
    haveGreedy_ = true;
  }
  void reset() override {
    const uint64_t v = version_;  // a version never repeats
    *this = GreedyThenOldest();
    version_ = v;
  }

 private:
  std::vector<std::pair<uint64_t, uint32_t>> byAge_;  // (start order, warp), oldest first
  std::vector<uint32_t> out_;
  uint32_t greedy_ = 0;
  bool haveGreedy_ = false;
  bool stale_ = true;  // out_ no longer follows byAge_
  uint64_t version_ = 0;
};

class TwoLevel : public WarpSchedulingPolicy {
 public:
  explicit TwoLevel(uint32_t activeSize) : size_(activeSize) {}
  void add(uint32_t w, uint64_t) override {
    if (active_.size() < size_) {
      active_.insert(std::upper_bound(active_.begin(), active_.end(), w), w);
    } else {
      pending_.push_back(w);
    }
    stale_ = true;
  }
  void remove(uint32_t w) override {
    eraseValue(active_, w);
    eraseValue(pending_, w);
    eraseValue(waiting_, w);
    refill();
    stale_ = true;
  }
  // Rebuilt only when the active group or the last issued warp changed.
  const std::vector<uint32_t>& order() override {
    if (!stale_) return out_;
    stale_ = false;
    ++version_;
    rotateAfter(active_, last_, haveLast_, out_);
    return out_;
  }
  uint64_t orderVersion() const override { return version_; }
  void issued(uint32_t w) override {
    if (haveLast_ && last_ == w) return;
    last_ = w;
    haveLast_ = true;
    stale_ = true;
  }
  void waitsLong(uint32_t w) override {
    if (!contains(waiting_, w)) waiting_.push_back(w);
    if (contains(active_, w)) {
      eraseValue(active_, w);
      pending_.push_back(w);
      refill();
    }
    stale_ = true;
  }
  void longWaitOver(uint32_t w) override {
    eraseValue(waiting_, w);
    refill();
    stale_ = true;
  }
  void reset() override {
    const uint64_t v = version_;  // a version never repeats
    *this = TwoLevel(size_);
    version_ = v;
  }

 private:
  // Moves ready pending warps, oldest first, into free places of the active group.
  void refill() {
    for (auto it = pending_.begin(); it != pending_.end() && active_.size() < size_;) {
      if (contains(waiting_, *it)) {
        ++it;
        continue;
      }
      active_.insert(std::upper_bound(active_.begin(), active_.end(), *it), *it);
      it = pending_.erase(it);
    }
  }

  uint32_t size_;
  std::vector<uint32_t> active_, pending_, waiting_, out_;
  uint32_t last_ = 0;
  bool haveLast_ = false;
  bool stale_ = true;  // out_ no longer follows active_ and last_
  uint64_t version_ = 0;
};

class DynamicFifo : public WarpSchedulingPolicy {
 public:
  void add(uint32_t w, uint64_t) override {
    queue_.push_back(w);
    ++version_;
  }
  void remove(uint32_t w) override {
    eraseValue(queue_, w);
    eraseValue(waiting_, w);
    ++version_;
  }
  const std::vector<uint32_t>& order() override { return queue_; }
  uint64_t orderVersion() const override { return version_; }
  void issued(uint32_t w) override {  // to the back of the queue
    if (!queue_.empty() && queue_.back() == w) return;
    eraseValue(queue_, w);
    queue_.push_back(w);
    ++version_;
  }
  void waitsLong(uint32_t w) override {
    if (contains(waiting_, w)) return;
    waiting_.push_back(w);
    eraseValue(queue_, w);
    ++version_;
  }
  void longWaitOver(uint32_t w) override {
    if (!contains(waiting_, w)) return;
    eraseValue(waiting_, w);
    queue_.push_back(w);
    ++version_;
  }
  void reset() override {
    const uint64_t v = version_;  // a version never repeats
    *this = DynamicFifo();
    version_ = v + 1;
  }

 private:
  std::vector<uint32_t> queue_, waiting_;
  uint64_t version_ = 0;
};

}  // namespace

const Registry<WarpSchedulingPolicy, const SmConfig&>& warpSchedulingPolicies() {
  static const Registry<WarpSchedulingPolicy, const SmConfig&> registry(
      "warp scheduler",
      {{"lrr", "loose round-robin",
        [](const SmConfig&) { return std::make_unique<LooseRoundRobin>(); }},
       {"gto", "greedy then oldest",
        [](const SmConfig&) { return std::make_unique<GreedyThenOldest>(); }},
       {"two-level", "active and pending groups (seed 000)",
        [](const SmConfig& c) { return std::make_unique<TwoLevel>(c.two_level_active); }},
       {"dfifo", "round-robin; warps waiting on memory rejoin at the back (seed 003)",
        [](const SmConfig&) { return std::make_unique<DynamicFifo>(); }}});
  return registry;
}

WarpScheduler::WarpScheduler(const sc_core::sc_module_name& name, const SmConfig& cfg,
                             const Registry<WarpSchedulingPolicy, const SmConfig&>& policies)
    : sc_core::sc_module(name), policy_(policies.create(cfg.scheduler, cfg)) {}

}  // namespace gpusc::sm
