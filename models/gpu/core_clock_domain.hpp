// The core clock domain: the one SystemC process that evaluates the SMs' cycles.
//
// Each core cycle in which some SM has something to do, it evaluates those SMs
// (Sm::evaluateCycle) -- on the host threads of a HostWorkers team when there are several -- and
// then, on the simulation thread and in SM index order, commits what each did (Sm::commitCycle:
// global stores and atomics, the notifications its L1 asked for, activity for the power model,
// ended CTAs). An SM's evaluation sees only its own state, its L1 and global memory as it was at
// the start of the cycle, and everything it hands on is committed in the same order whatever the
// thread count: results are bit-identical for any number of threads (docs/architecture.md,
// "Host threads"). With the adaptive thread policy a HostThreadGovernor decides, epoch by
// epoch, whether the host threads take part at all. From the outside the SMs and their sockets
// are unchanged.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <systemc>

#include "common/edge_scheduler.hpp"
#include "common/host_thread_governor.hpp"
#include "common/host_workers.hpp"
#include "sm/sm.hpp"

namespace gpusc::gpu {

class CoreClockDomain : public sc_core::sc_module, public sm::SmScheduler {
 public:
  CoreClockDomain(const sc_core::sc_module_name& name, std::vector<sm::Sm*> sms,
                  sc_core::sc_time period);
  ~CoreClockDomain() override;

  // Host threads evaluating SMs (1: all on the simulation thread), and how they are used:
  // `Fixed`, in every cycle with several SMs to evaluate; `Adaptive`, while a HostThreadGovernor
  // finds that they pay.
  void setThreads(unsigned n, ThreadPolicy policy = ThreadPolicy::Adaptive);
  unsigned threads() const { return threads_; }
  ThreadPolicy threadPolicy() const { return policy_; }
  // The adaptive policy's governor (null unless threads > 1 and the policy is adaptive).
  const HostThreadGovernor* governor() const { return governor_.get(); }
  // The team (null with one thread); other processes of the simulation thread may use it too.
  HostWorkers* workers() const { return workers_.get(); }
  // Why the SMs must be evaluated on the simulation thread, one after another in index order
  // (empty: they may run on host threads). The results are the same either way; the reason is
  // reported with the run. `launch` is the current kernel's reason (cleared per launch), `fixed`
  // the platform's.
  void setSerialReason(const std::string& fixed) { fixedSerial_ = fixed; }
  void setLaunchSerialReason(const std::string& launch) { launchSerial_ = launch; }
  std::string serialReason() const;
  // Cycles in which SMs were evaluated, and those of them with two SMs or more on host threads.
  uint64_t evaluatedCycles() const { return evaluatedCycles_; }
  uint64_t parallelCycles() const { return parallelCycles_; }
  void resetCounts() { evaluatedCycles_ = parallelCycles_ = 0; }
  // A new run: no SM is due (the SMs' own state is reset too).
  void reset();
  // Work of the simulation thread that the first of a cycle's commits would begin with and that
  // no SM evaluation can see or change: f(c) hands on what is final before cycle c (the energy
  // model's currents, the PDN's steps: Gpu). It runs once per cycle with SMs to evaluate,
  // before the commits, on the simulation thread while the host threads start on the SMs; c is
  // the cycle, or the one before when an SM of the batch reports that one alone first
  // (Sm::reportsSkippedCycle). The results are the same as without it.
  void setBeforeCommits(std::function<void(sm::Cycle)> f) { beforeCommits_ = std::move(f); }
  const std::function<void(sm::Cycle)>& beforeCommits() const { return beforeCommits_; }
  // A launch begins and ends: the adaptive policy times only what lies between.
  void resumeTiming() {
    if (governor_) governor_->resume();
  }
  void pauseTiming() {
    if (governor_) governor_->pause();
  }

  void wake(uint32_t sm, sm::Cycle c) override;
  // The next cycle an SM is due to be evaluated in (kNever: every SM asleep until woken).
  sm::Cycle nextEvaluation() const { return armed_; }

  // Runs the domain's cycles from `s` (in the platform), in its place among the other units.
  void attach(EdgeScheduler& s) {
    wakeup_.attach(s, s.add(EdgeScheduler::kCoreDomain, [this] { cycle(); }));
  }

 private:
  SC_HAS_PROCESS(CoreClockDomain);
  void cycle();
  void arm(sm::Cycle c);
  sm::Cycle cycleNow() const { return sc_core::sc_time_stamp().value() / periodValue_; }

  const std::vector<sm::Sm*> sms_;
  const uint64_t periodValue_;
  sc_core::sc_event wake_;
  Wakeup wakeup_{wake_};

  std::vector<sm::Cycle> due_;        // per SM: the cycle it must be evaluated in (kNever: asleep)
  std::vector<uint32_t> batch_;       // SMs evaluated in the current cycle, in index order
  std::vector<sm::Cycle> next_;       // their next cycles (parallel to batch_)
  std::vector<size_t> bounds_;        // the host threads' shares of batch_
  sm::Cycle armed_ = sm::kNever;      // the cycle wake_ is notified for
  sm::Cycle lastCycle_ = sm::kNever;  // the last cycle evaluated (kNever: none yet)
  unsigned threads_ = 1;
  ThreadPolicy policy_ = ThreadPolicy::Adaptive;
  std::unique_ptr<HostWorkers> workers_;
  std::unique_ptr<HostThreadGovernor> governor_;
  std::string fixedSerial_, launchSerial_;
  std::function<void(sm::Cycle)> beforeCommits_;
  uint64_t evaluatedCycles_ = 0, parallelCycles_ = 0;
};

}  // namespace gpusc::gpu
