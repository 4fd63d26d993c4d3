// A fixed team of host threads that runs one batch of independent jobs at a time: the core
// clock domain hands it a cycle's SM evaluations (docs/architecture.md, "Host threads").
//
// run() calls job(i) for i in [0, n) and returns when every call has returned. The calling
// thread takes part. Each thread owns a contiguous share of the items (equal shares, or the
// caller's: the core clock domain keeps each SM on one thread, in that core's cache) and claims
// them one by one; a thread
// done with its share takes unclaimed items of the others. So the caller never waits for a
// worker that is not running (another process may hold the core): it does that worker's share
// itself, and waits only for items already being evaluated. Workers wait for the next batch
// spinning briefly, then yielding, then asleep on a condition variable (at once while the team
// is not engaged). Jobs must not throw.
//
// While they wait for a batch, the workers do the team's background work, if it has any
// (setBackground): serial work the simulation thread hands on and does not wait for, such as
// the PDN's cycles (pdn::Pdn). A worker doing it returns to the batches as soon as one comes.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
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

  unsigned threads() const { return threads_; }

  // Whether the workers take part (the default). While not, run() calls every job on the
  // calling thread and the workers sleep, leaving their cores to others (a HostThreadGovernor
  // decides). Only the thread that calls run() may change it.
  void setEngaged(bool on);
  bool engaged() const { return engaged_.load(std::memory_order_relaxed); }

  // Background work: done by at most one worker at a time while it waits for a batch, engaged
  // or not (docs/architecture.md, "Host threads").
  class Interrupt;
  class Background {
   public:
    virtual ~Background() = default;
    // Does some of the pending work; false when there was none (or another thread holds it).
    // Returns soon after `interrupted()` becomes true (a batch is waiting). Must not throw.
    virtual bool runSome(const Interrupt& interrupted) = 0;
    // Whether enough work is pending that a sleeping worker should wake for it.
    virtual bool wantsWorker() const = 0;
  };
  class Interrupt {
   public:
    bool operator()() const {
      return generation_.load(std::memory_order_relaxed) != seen_ ||
             stop_.load(std::memory_order_relaxed);
    }

   private:
    friend class HostWorkers;
    Interrupt(const std::atomic<uint64_t>& g, uint64_t seen, const std::atomic<bool>& stop)
        : generation_(g), seen_(seen), stop_(stop) {}
    const std::atomic<uint64_t>& generation_;
    const uint64_t seen_;
    const std::atomic<bool>& stop_;
  };
  // Sets the background work (nullptr: none); returns once no worker runs the previous one.
  // `b` must outlive its use. Only the thread that calls run() may change it.
  void setBackground(Background* b);
  // Wakes a sleeping worker for the background work: the producer calls it when wantsWorker()
  // has just become true.
  void wakeForBackground() { wakeSleepers(); }

  template <class Job>
  void run(size_t n, Job& job) {
    runErased(
        n, &job, [](void* j, size_t i) { (*static_cast<Job*>(j))(i); }, nullptr);
  }
  // The same with the shares given: thread t owns items [bounds[t], bounds[t + 1]) (threads() + 1
  // ascending bounds from 0 to n), e.g. so that an item keeps its thread from batch to batch.
  template <class Job>
  void run(size_t n, Job& job, const size_t* bounds) {
    runErased(
        n, &job, [](void* j, size_t i) { (*static_cast<Job*>(j))(i); }, bounds);
  }
  // The same, with `first()` run on the calling thread once the batch is handed out and before
  // the caller takes items: serial work that no item may see or change, done while the others
  // start on the items (taking the caller's too if it is long). If it throws, every item still
  // runs, and run() then rethrows its exception.
  template <class Job, class First>
  void run(size_t n, Job& job, const size_t* bounds, First& first) {
    runErased(
        n, &job, [](void* j, size_t i) { (*static_cast<Job*>(j))(i); }, bounds, &first,
        [](void* f) { (*static_cast<First*>(f))(); });
  }

  // Shares for run(items.size(), job, bounds.data()) that keep each item on the thread owning
  // it: `items` are ascending indices into [0, n), and thread t owns those in
  // [t x n / T, (t + 1) x n / T) for T = threads(). Writes T + 1 bounds.
  void ownerShares(const std::vector<uint32_t>& items, size_t n, std::vector<size_t>& bounds) const;

  // The cores this process may run on (its CPU affinity), at least 1.
  static unsigned available();

 private:
  using Call = void (*)(void*, size_t);
  using Call0 = void (*)(void*);
  // A share's claim word: the batch's generation (low 20 bits), the next item and the end of
  // the share (22 bits each). One word, so a thread that fell behind by a batch cannot claim
  // an item of the next one.
  static constexpr unsigned kGenBits = 20, kIndexBits = 22;
  static constexpr uint64_t kGenMask = (1ull << kGenBits) - 1,
                            kIndexMask = (1ull << kIndexBits) - 1;
  static uint64_t claimWord(uint64_t gen, uint64_t next, uint64_t end) {
    return (gen & kGenMask) | (next << kGenBits) | (end << (kGenBits + kIndexBits));
  }
  struct alignas(64) Share {
    std::atomic<uint64_t> word{0};
  };

  void runErased(size_t n, void* job, Call call, const size_t* bounds, void* first = nullptr,
                 Call0 callFirst = nullptr);
  void work(unsigned self);
  // call(background) if there is background work, guarded against setBackground; else false.
  template <class F>
  bool withBackground(F call);
  // Runs the background work once if there is any; false when there was none.
  bool runBackground(uint64_t seen);
  // Wakes the sleeping workers, if any (the check before the lock: the caller published first).
  void wakeSleepers();
  // Runs callFirst(first), if any; what it threw, else nullptr.
  static std::exception_ptr runFirst(void* first, Call0 callFirst);
  void drainAll(unsigned self, uint64_t gen);  // claims and runs items of batch `gen`

  const unsigned threads_;
  std::unique_ptr<Share[]> shares_;
  std::vector<std::thread> workers_;
  // The batch: written before `generation_` is published (release), read by a thread only
  // after it claimed an item of that batch (the caller cannot start another batch until the
  // item is done).
  void* job_ = nullptr;
  Call call_ = nullptr;
  std::atomic<uint64_t> generation_{0};
  alignas(64) std::atomic<size_t> done_{0};  // items finished in the current batch
  // Read on every cycle by the simulation thread (engaged_) and on every spin by the workers,
  // written rarely: a line of their own. The workers' count of background calls, changed twice
  // per spin while there is background work, has another: beside these, every read of
  // engaged_ waited for the line to come back from the spinning worker's core.
  alignas(64) std::atomic<bool> engaged_{true};
  std::atomic<bool> stop_{false};
  std::atomic<Background*> background_{nullptr};
  std::atomic<unsigned> sleepers_{0};
  // Workers between reading background_ and done.
  alignas(64) std::atomic<unsigned> inBackground_{0};
  std::mutex mutex_;
  std::condition_variable wakeup_;
};

}  // namespace gpusc
