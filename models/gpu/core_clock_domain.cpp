#include "gpu/core_clock_domain.hpp"

#include <algorithm>

namespace gpusc::gpu {

CoreClockDomain::CoreClockDomain(const sc_core::sc_module_name& name, std::vector<sm::Sm*> sms,
                                 sc_core::sc_time period)
    : sc_core::sc_module(name),
      sms_(std::move(sms)),
      periodValue_(period.value()),
      due_(sms_.size(), sm::kNever) {
  for (sm::Sm* s : sms_) s->setScheduler(this);
  SC_METHOD(cycle);
  sensitive << wake_;
  dont_initialize();
}

CoreClockDomain::~CoreClockDomain() = default;

void CoreClockDomain::reset() {
  std::fill(due_.begin(), due_.end(), sm::kNever);
  lastCycle_ = sm::kNever;
}

void CoreClockDomain::setThreads(unsigned n, ThreadPolicy policy) {
  n = std::max(1u, n);
  if (n != threads_) {
    threads_ = n;
    workers_.reset();
    if (n > 1) workers_ = std::make_unique<HostWorkers>(n);
  }
  policy_ = policy;
  governor_.reset();
  if (workers_) {
    workers_->setEngaged(true);
    if (policy == ThreadPolicy::Adaptive) governor_ = std::make_unique<HostThreadGovernor>();
  }
}

std::string CoreClockDomain::serialReason() const {
  if (threads_ <= 1) return "one host thread";
  if (!fixedSerial_.empty()) return fixedSerial_;
  return launchSerial_;
}

void CoreClockDomain::wake(uint32_t sm, sm::Cycle c) {
  const sm::Cycle now = cycleNow();
  // Not before the current cycle, nor again in a cycle already evaluated.
  c = std::max(c, lastCycle_ == now ? now + 1 : now);
  if (c < due_[sm]) due_[sm] = c;
  arm(c);
}

void CoreClockDomain::arm(sm::Cycle c) {
  if (c >= armed_) return;
  armed_ = c;
  wakeup_.at(c * periodValue_);
}

void CoreClockDomain::cycle() {
  const sm::Cycle now = cycleNow();
  armed_ = sm::kNever;      // the notification that ran us is spent
  if (lastCycle_ == now) {  // a second activation in a cycle already evaluated
    sm::Cycle next = sm::kNever;
    for (sm::Cycle d : due_) next = std::min(next, d);
    if (next != sm::kNever) arm(std::max(next, now + 1));
    return;
  }
  // The SMs due now, into batch_ (sized for all of them once): through local pointers, which
  // the batch's stores cannot alias as the compiler must assume of the vectors' own fields.
  sm::Cycle rest = sm::kNever;  // the earliest due cycle of the SMs not in the batch
  {
    const uint32_t n = uint32_t(due_.size());
    batch_.resize(n);
    sm::Cycle* due = due_.data();
    uint32_t* batch = batch_.data();
    uint32_t taken = 0;
    for (uint32_t i = 0; i < n; ++i) {
      const sm::Cycle d = due[i];
      if (d <= now) {
        batch[taken++] = i;
        due[i] = sm::kNever;
      } else if (d < rest) {
        rest = d;
      }
    }
    batch_.resize(taken);
  }
  lastCycle_ = now;
  if (!batch_.empty()) {
    next_.resize(batch_.size());
    auto evaluate = [&](size_t k) { next_[k] = sms_[batch_[k]]->evaluateCycle(now); };
    ++evaluatedCycles_;
    // What the first commit would begin with, on this thread while the others start on the
    // SMs (setBeforeCommits): everything before this cycle, or before the one an SM skipped
    // (its report of that cycle comes first). Found before the SMs are handed out: their
    // evaluations change what reportsSkippedCycle reads.
    sm::Cycle upTo = now;
    if (beforeCommits_)
      for (uint32_t i : batch_)
        if (sms_[i]->reportsSkippedCycle(now)) upTo = now - 1;
    auto first = [&] {
      if (beforeCommits_) beforeCommits_(upTo);
    };
    if (workers_ && workers_->engaged() && batch_.size() > 1 && fixedSerial_.empty() &&
        launchSerial_.empty()) {
      ++parallelCycles_;
      // Thread t owns SMs [t x N / T, (t + 1) x N / T): an SM stays on one thread (its state in
      // that core's cache) unless another thread runs out of work and takes it.
      workers_->ownerShares(batch_, sms_.size(), bounds_);
      workers_->run(batch_.size(), evaluate, bounds_.data(), first);
    } else {
      first();
      for (size_t k = 0; k < batch_.size(); ++k) evaluate(k);
    }
    // The epochs count SM evaluations (the work the threads share), and time everything else
    // the simulation does with them.
    if (governor_ && governor_->add(batch_.size())) workers_->setEngaged(governor_->engaged());
    bool faulted = false;
    for (size_t k = 0; k < batch_.size(); ++k) {
      sm::Sm& s = *sms_[batch_[k]];
      s.commitCycle();
      faulted = faulted || s.fault() != nullptr;
      due_[batch_[k]] = std::min(due_[batch_[k]], next_[k]);
    }
    if (faulted) sc_core::sc_pause();  // the timing engine rethrows the fault
  }
  // The other SMs' due cycles are as they were, or lowered by wake(), which arms for itself.
  sm::Cycle next = rest;
  for (uint32_t i : batch_) next = std::min(next, due_[i]);
  if (next != sm::kNever) arm(std::max(next, now + 1));
}

}  // namespace gpusc::gpu
