#include "common/host_workers.hpp"

#include <sched.h>

#include <chrono>

namespace gpusc {

namespace {
inline void cpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}
// How long an idle worker spins, then yields, before it sleeps. A cycle's serial part (the
// memory system, the power model, SystemC's scheduler) takes a few microseconds; a kernel's
// launch boundary or a long memory stall takes far longer.
constexpr int kSpins = 4000;
constexpr auto kYieldFor = std::chrono::microseconds(2000);
}  // namespace

HostWorkers::HostWorkers(unsigned threads) {
  for (unsigned t = 1; t < threads; ++t) workers_.emplace_back([this, t] { work(t); });
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

void HostWorkers::share(unsigned self) {
  const size_t t = threads(), begin = self * n_ / t, end = (self + 1) * n_ / t;
  for (size_t i = begin; i < end; ++i) call_(job_, i);
  // Every thread reports, even with nothing to do: the batch's fields are not rewritten until
  // all have read them.
  done_.fetch_add(1, std::memory_order_acq_rel);
}

void HostWorkers::runErased(size_t n, void* job, Call call) {
  if (n == 0) return;
  if (workers_.empty()) {
    for (size_t i = 0; i < n; ++i) call(job, i);
    return;
  }
  job_ = job;
  call_ = call;
  n_ = n;
  done_.store(0, std::memory_order_relaxed);
  generation_.fetch_add(1, std::memory_order_seq_cst);
  if (sleepers_.load(std::memory_order_seq_cst) > 0) {
    std::lock_guard<std::mutex> lock(mutex_);
    wakeup_.notify_all();
  }
  share(0);
  while (done_.load(std::memory_order_acquire) != threads()) cpuRelax();
}

void HostWorkers::work(unsigned self) {
  uint64_t seen = 0;
  for (;;) {
    // Wait for a new batch: spin, then yield, then sleep.
    uint64_t g = generation_.load(std::memory_order_acquire);
    for (int i = 0; g == seen && i < kSpins; ++i) {
      cpuRelax();
      g = generation_.load(std::memory_order_acquire);
    }
    if (g == seen) {
      const auto until = std::chrono::steady_clock::now() + kYieldFor;
      while ((g = generation_.load(std::memory_order_acquire)) == seen && !stop_.load() &&
             std::chrono::steady_clock::now() < until)
        sched_yield();
    }
    if (g == seen) {
      std::unique_lock<std::mutex> lock(mutex_);
      sleepers_.fetch_add(1, std::memory_order_seq_cst);
      wakeup_.wait(lock, [&] {
        return stop_.load() || generation_.load(std::memory_order_seq_cst) != seen;
      });
      sleepers_.fetch_sub(1, std::memory_order_seq_cst);
      g = generation_.load(std::memory_order_acquire);
    }
    if (stop_.load()) return;
    if (g == seen) continue;
    seen = g;
    share(self);
  }
}

}  // namespace gpusc
