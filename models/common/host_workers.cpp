#include "common/host_workers.hpp"

#include <sched.h>

#include <chrono>
#include <exception>
#include <stdexcept>

namespace gpusc {

namespace {
inline void cpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}
// How long an idle worker spins, then yields, before it sleeps. A cycle's serial part (the
// memory system, the power model, SystemC's scheduler) takes microseconds; a launch boundary or
// a long memory stall takes far longer.
constexpr int kSpins = 2000;
constexpr auto kYieldFor = std::chrono::microseconds(2000);
}  // namespace

HostWorkers::HostWorkers(unsigned threads)
    : threads_(threads < 1 ? 1 : threads), shares_(new Share[threads_]) {
  for (unsigned t = 1; t < threads_; ++t) workers_.emplace_back([this, t] { work(t); });
}

HostWorkers::~HostWorkers() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_.store(true);
  }
  wakeup_.notify_all();
  for (auto& w : workers_) w.join();
}

unsigned HostWorkers::available() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    const int n = CPU_COUNT(&set);
    if (n > 0) return static_cast<unsigned>(n);
  }
  const unsigned h = std::thread::hardware_concurrency();
  return h > 0 ? h : 1;
}

void HostWorkers::ownerShares(const std::vector<uint32_t>& items, size_t n,
                              std::vector<size_t>& bounds) const {
  const size_t T = threads_;
  bounds.assign(T + 1, items.size());
  bounds[0] = 0;
  for (size_t t = 1, k = 0; t < T; ++t) {
    while (k < items.size() && items[k] < t * n / T) ++k;
    bounds[t] = k;
  }
}

void HostWorkers::drainAll(unsigned self, uint64_t gen) {
  size_t ran = 0;
  for (unsigned k = 0; k < threads_; ++k) {
    Share& s = shares_[(self + k) % threads_];
    uint64_t w = s.word.load(std::memory_order_acquire);
    for (;;) {
      const uint64_t next = (w >> kGenBits) & kIndexMask, end = w >> (kGenBits + kIndexBits);
      if ((w & kGenMask) != (gen & kGenMask) || next >= end) break;
      if (!s.word.compare_exchange_weak(w, w + (1ull << kGenBits), std::memory_order_acq_rel,
                                        std::memory_order_acquire))
        continue;
      call_(job_, next);
      ++ran;
      w = s.word.load(std::memory_order_acquire);
    }
  }
  // One update per thread and batch: the counter's cache line moves between cores once, not
  // once per item.
  if (ran > 0) done_.fetch_add(ran, std::memory_order_acq_rel);
}

void HostWorkers::setEngaged(bool on) {
  // A worker spinning or yielding sees the change and goes to sleep; the next batch run while
  // engaged wakes it (run() notifies whenever a worker sleeps).
  engaged_.store(on, std::memory_order_relaxed);
}

void HostWorkers::runErased(size_t n, void* job, Call call, const size_t* bounds, void* first,
                            Call0 callFirst) {
  if (n == 0) {
    if (callFirst) callFirst(first);
    return;
  }
  if (workers_.empty() || !engaged_.load(std::memory_order_relaxed)) {
    const std::exception_ptr firstError = runFirst(first, callFirst);  // as below
    for (size_t i = 0; i < n; ++i) call(job, i);
    if (firstError) std::rethrow_exception(firstError);
    return;
  }
  if (n > kIndexMask) throw std::length_error("HostWorkers: too many items in one batch");
  // Every item of the last batch is done: no thread reads these until it claims a new item.
  job_ = job;
  call_ = call;
  done_.store(0, std::memory_order_relaxed);
  const uint64_t gen = generation_.load(std::memory_order_relaxed) + 1;
  for (unsigned t = 0; t < threads_; ++t) {
    const uint64_t begin = bounds ? bounds[t] : t * n / threads_,
                   end = bounds ? bounds[t + 1] : (t + 1) * n / threads_;
    shares_[t].word.store(claimWord(gen, begin, end), std::memory_order_release);
  }
  generation_.store(gen, std::memory_order_seq_cst);
  wakeSleepers();
  // The first work may throw (e.g. a voltage sink's error): the batch still completes before
  // the error leaves, since the workers are evaluating items of the caller's job.
  const std::exception_ptr firstError = runFirst(first, callFirst);
  drainAll(0, gen);
  // Only items a worker is evaluating now are left.
  for (int spins = 0; done_.load(std::memory_order_acquire) != n; ++spins) {
    if (spins < 4000)
      cpuRelax();
    else
      sched_yield();
  }
  if (firstError) std::rethrow_exception(firstError);
}

void HostWorkers::setBackground(Background* b) {
  background_.store(b, std::memory_order_seq_cst);
  // A worker that read the previous pointer is done with it once it leaves.
  while (inBackground_.load(std::memory_order_seq_cst) != 0) sched_yield();
  if (b != nullptr) wakeForBackground();
}

void HostWorkers::wakeSleepers() {
  if (sleepers_.load(std::memory_order_seq_cst) == 0) return;
  std::lock_guard<std::mutex> lock(mutex_);
  wakeup_.notify_all();
}

std::exception_ptr HostWorkers::runFirst(void* first, Call0 callFirst) {
  if (!callFirst) return nullptr;
  try {
    callFirst(first);
  } catch (...) {
    return std::current_exception();
  }
  return nullptr;
}

template <class F>
bool HostWorkers::withBackground(F call) {
  if (background_.load(std::memory_order_relaxed) == nullptr) return false;
  // Counted in before the pointer is read again: setBackground waits for the count to drop.
  inBackground_.fetch_add(1, std::memory_order_seq_cst);
  Background* b = background_.load(std::memory_order_seq_cst);
  const bool r = b != nullptr && call(*b);
  inBackground_.fetch_sub(1, std::memory_order_seq_cst);
  return r;
}

bool HostWorkers::runBackground(uint64_t seen) {
  return withBackground(
      [&](Background& b) { return b.runSome(Interrupt(generation_, seen, stop_)); });
}

void HostWorkers::work(unsigned self) {
  uint64_t seen = 0;
  const auto idle = [&] { return !engaged_.load(std::memory_order_relaxed); };
  // Whether the background work wants a sleeping worker.
  const auto wanted = [&] { return withBackground([](Background& b) { return b.wantsWorker(); }); };
  for (;;) {
    // Wait for a new batch, doing background work meanwhile: spin, then yield, then sleep. While
    // the team is not engaged no batch comes, and the worker sleeps at once unless it has just
    // done background work, which comes in bursts (more of it is likely soon: a futex wake-up
    // per burst would cost the simulation thread more than the spinning costs this core).
    uint64_t g = generation_.load(std::memory_order_acquire);
    int spins = 0;
    bool yielding = false, busy = false;
    std::chrono::steady_clock::time_point until;
    while (g == seen && !stop_.load(std::memory_order_relaxed)) {
      const bool active = busy || !idle();
      if (runBackground(seen)) {
        spins = 0;
        yielding = false;
        busy = true;
      } else if (active && spins < kSpins) {
        cpuRelax();
        ++spins;
      } else if (active && !yielding) {
        yielding = true;
        until = std::chrono::steady_clock::now() + kYieldFor;
        sched_yield();
      } else if (active && std::chrono::steady_clock::now() < until) {
        sched_yield();
      } else {
        std::unique_lock<std::mutex> lock(mutex_);
        sleepers_.fetch_add(1, std::memory_order_seq_cst);
        wakeup_.wait(lock, [&] {
          return stop_.load() || generation_.load(std::memory_order_seq_cst) != seen || wanted();
        });
        sleepers_.fetch_sub(1, std::memory_order_seq_cst);
        spins = 0;
        yielding = busy = false;
      }
      g = generation_.load(std::memory_order_acquire);
    }
    if (stop_.load()) return;
    seen = g;
    drainAll(self, g);
  }
}

}  // namespace gpusc
