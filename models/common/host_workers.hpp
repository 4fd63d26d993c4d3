// A fixed team of host threads that runs one batch of independent jobs at a time: the core
// clock domain hands it a cycle's SM evaluations (docs/architecture.md, "Host threads").
//
// run() calls job(i) for i in [0, n) and returns when every call has returned. The calling
// thread takes part: with T threads, item i runs on thread i x T / n (contiguous shares, so an SM
// that is busy every cycle tends to stay on one thread and in its cache). Workers wait for the
// next batch spinning briefly, then yielding, then asleep on a condition variable: a cycle's batch
// comes microseconds after the last, and a machine shared with other work gets its cores back
// when the simulation pauses. Jobs must not throw.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

namespace gpusc {

class HostWorkers {
 public:
  // `threads` >= 1 (the caller counts as one; threads - 1 workers are started).
  explicit HostWorkers(unsigned threads);
  ~HostWorkers();
  HostWorkers(const HostWorkers&) = delete;
  HostWorkers& operator=(const HostWorkers&) = delete;

  unsigned threads() const { return static_cast<unsigned>(workers_.size()) + 1; }

  template <class Job>
  void run(size_t n, Job& job) {
    runErased(n, &job, [](void* j, size_t i) { (*static_cast<Job*>(j))(i); });
  }

  // The cores this process may run on (its CPU affinity), at least 1.
  static unsigned available();

 private:
  using Call = void (*)(void*, size_t);
  void runErased(size_t n, void* job, Call call);
  void work(unsigned self);
  void share(unsigned self);  // runs this thread's share of the current batch

  std::vector<std::thread> workers_;
  // The batch: written before `generation_` is bumped (release), read after (acquire).
  void* job_ = nullptr;
  Call call_ = nullptr;
  size_t n_ = 0;
  std::atomic<uint64_t> generation_{0};
  std::atomic<size_t> done_{0};  // threads done with the current batch
  std::atomic<unsigned> sleepers_{0};
  std::atomic<bool> stop_{false};
  std::mutex mutex_;
  std::condition_variable wakeup_;
};

}  // namespace gpusc
