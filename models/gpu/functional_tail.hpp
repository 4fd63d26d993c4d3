// FunctionalTail: a wave-sampled launch's last CTAs, run in the functional engine on host
// threads of their own while the cycle-level model runs its first CTAs (docs/sampling.md,
// "The rest on the other host threads").
//
// Wave sampling runs a launch's first waves in detail until its rate is stable, then the rest
// in the functional engine, which still executes every CTA. Where the detailed part ends is
// known only when it ends, but the CTAs it does not reach are the last ones (all of them, unless
// the rate never settles). So the tail takes CTAs from the last down, one at a time, while the
// cycle-level model takes them from the first up, and keeps to the upper half of the CTAs the
// model has yet to start (and a wave, `margin`, above its next): the model would have to run
// half of what is left in detail to reach the tail's CTAs. When the detailed part ends at CTA
// k, the calling thread runs the CTAs from k up while the tail's threads go on down, until they
// meet.
//
// The tail's CTAs run on a copy of global memory as the launch starts (each page copied when the
// tail first touches it; GlobalMemory::copyOnAccess); at the end, the bytes they changed there
// are written to the launch's memory. So nothing the cycle-level model
// reads or writes is touched until then, and dropping the tail costs nothing but its work. That
// gives the same memory as the CTAs run in order exactly when no CTA reads what another CTA of
// the launch writes and no two write different values to one byte, the launches whose order
// cannot change the result (func::serialCtasReason empty; CUDA leaves the others undefined).
// The statistics are sums over CTAs; the access log for the L2 is put together as a run in order
// leaves it (the tail's CTAs log their accesses, each its own log, from the last CTA down until
// the logs hold as many entries as the launch's log keeps).
//
// The tail is dropped, and the caller runs the rest itself, when the cycle-level model starts a
// CTA the tail has taken (a launch whose rate did not settle before it got there).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "common/run_budget.hpp"
#include "func/access_log.hpp"
#include "func/executor.hpp"
#include "func/global_memory.hpp"
#include "gpu/cta_scheduler.hpp"

namespace gpusc::gpu {

class FunctionalTail : public CtaStartObserver {
 public:
  struct Params {
    unsigned threads = 1;    // host threads running the tail
    uint64_t margin = 1;     // the fewest CTAs kept between the tail and the model's next
    size_t logCapacity = 0;  // entries the launch's access log keeps (0: no log)
  };

  // A tail of the launch `L` on a copy of `memory` as it is now (`memory` keeps an undo log for
  // it until finish() or the destructor). `L`'s CTAs must be free to run in any order
  // (func::serialCtasReason empty); its accessLog and countMemoryUnits are not used. Its threads
  // start with start().
  FunctionalTail(const func::LaunchState& L, func::GlobalMemory& memory, Params p);
  // Starts running the CTAs from the last down (those ctaStarting() has not kept it from).
  void start();
  // Stops the threads; what they ran and did not hand on (finish) is dropped.
  ~FunctionalTail() override;
  FunctionalTail(const FunctionalTail&) = delete;
  FunctionalTail& operator=(const FunctionalTail&) = delete;

  void ctaStarting(uint64_t linear) override;

  // The cycle-level model ran CTAs [0, first) of the launch `L` (on the memory the tail was made
  // of): runs the others, those the tail has not, on the calling thread in ascending order while
  // the tail's threads go on, then writes what the tail's CTAs changed into that memory and adds
  // every CTA's statistics
  // to `stats`. With L.accessLog, the log then holds what a run of CTAs [first, end) in order
  // would leave in it. Exceptions as runCtasInOrder's: the lowest CTA's. `progress(done)` is
  // called on this thread about every `progressSeconds` with the CTAs from `first` done.
  // Returns false, with nothing run, when the model started a CTA the tail had taken.
  bool finish(func::LaunchState& L, uint64_t first, func::ExecStats& stats, const RunBudget* budget,
              const std::function<void(uint64_t done)>& progress, double progressSeconds);

  // CTAs the tail's threads ran (after finish).
  uint64_t ctasRun() const { return taken_.size(); }
  // CTAs the tail's threads have finished so far, from the last down without a gap.
  uint64_t ctasDone() {
    std::lock_guard<std::mutex> lock(m_);
    return doneTop_;
  }

 private:
  struct Taken {  // a CTA the tail took, by order taken (from the last CTA down)
    std::unique_ptr<func::AccessLog> log;
    bool done = false;
  };
  // The lowest CTA the tail may take while the model's next CTA is `next`.
  uint64_t keepAbove(uint64_t next) const;
  void work(unsigned thread);
  void stop();

  const Params p_;
  const uint64_t total_;
  func::GlobalMemory& memory_;                // the launch's memory
  std::unique_ptr<func::GlobalMemory> copy_;  // the tail's: memory_ as the launch started
  std::vector<func::LaunchState> launches_;   // per thread: the launch on copy_
  std::vector<func::ExecStats> stats_;        // per thread
  std::atomic<bool> abort_{false};            // the tail's threads stop within a CTA
  RunBudget tailBudget_{LimitsConfig{}, &abort_};

  std::mutex m_;
  std::condition_variable changed_;
  bool stopping_ = false;     // take no more CTAs
  bool conflict_ = false;     // the model started a CTA the tail took
  uint64_t floor_;            // the lowest CTA the tail took (total_: none)
  uint64_t bottom_;           // the tail takes no CTA below it
  std::vector<Taken> taken_;  // taken_[i]: CTA total_ - 1 - i
  size_t inFlight_ = 0;
  size_t doneTop_ = 0;      // taken_[0 .. doneTop_) are done
  uint64_t loggedTop_ = 0;  // the entries their logs hold
  uint64_t failedCta_ = UINT64_MAX;
  std::exception_ptr failure_;
  std::vector<std::thread> threads_;
};

}  // namespace gpusc::gpu
