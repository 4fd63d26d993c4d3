#include "gpu/functional_tail.hpp"

#include <algorithm>
#include <chrono>

#include "common/error.hpp"

namespace gpusc::gpu {

FunctionalTail::FunctionalTail(const func::LaunchState& L, func::GlobalMemory& memory, Params p)
    : p_(p),
      total_(L.grid.count()),
      memory_(memory),
      copy_(memory.copyOnAccess()),
      floor_(total_),
      bottom_(keepAbove(0)) {
  const unsigned n = std::max(1u, p_.threads);
  launches_.assign(n, L);
  for (func::LaunchState& x : launches_) {
    x.gmem = copy_.get();
    x.accessLog = nullptr;
    x.countMemoryUnits = false;
  }
  stats_.assign(n, func::ExecStats{});
}

void FunctionalTail::start() {
  if (!threads_.empty()) throw InternalError("FunctionalTail::start: started already");
  const unsigned n = static_cast<unsigned>(launches_.size());
  threads_.reserve(n);
  try {
    for (unsigned t = 0; t < n; ++t) threads_.emplace_back([this, t] { work(t); });
  } catch (...) {
    stop();
    throw;
  }
}

FunctionalTail::~FunctionalTail() {
  abort_.store(true, std::memory_order_relaxed);
  stop();
  if (memory_.logging()) memory_.endUndoLog();  // dropped: the copy is not read again
}

void FunctionalTail::stop() {
  {
    std::lock_guard<std::mutex> lock(m_);
    stopping_ = true;
  }
  changed_.notify_all();
  for (std::thread& t : threads_)
    if (t.joinable()) t.join();
}

void FunctionalTail::ctaStarting(uint64_t linear) {
  std::lock_guard<std::mutex> lock(m_);
  if (linear >= floor_) conflict_ = true;
  bottom_ = std::max(bottom_, keepAbove(linear + 1));
}

uint64_t FunctionalTail::keepAbove(uint64_t next) const {
  // The upper half of the CTAs the model has yet to start, and at least `margin` above the next.
  const uint64_t left = total_ > next ? total_ - next : 0;
  return std::min(total_, next + std::max(p_.margin, left / 2));
}

void FunctionalTail::work(unsigned thread) {
  func::LaunchState& L = launches_[thread];
  func::Executor ex(L);
  func::Cta cta;
  func::StepEnv env;
  std::unique_lock<std::mutex> lock(m_);
  for (;;) {
    changed_.wait(lock, [&] { return stopping_ || conflict_ || failure_ || floor_ > bottom_; });
    if (stopping_ || conflict_ || failure_) return;
    const uint64_t id = --floor_;
    taken_.emplace_back();
    const size_t slot = taken_.size() - 1;
    // Logged while the logs of the CTAs above it, all done, hold fewer entries than the launch's
    // log keeps (else its entries would be overwritten in a run in order).
    func::AccessLog* log = nullptr;
    if (p_.logCapacity > 0 && (doneTop_ < slot || loggedTop_ < p_.logCapacity)) {
      taken_[slot].log = std::make_unique<func::AccessLog>(p_.logCapacity);
      log = taken_[slot].log.get();
      log->setCta(static_cast<uint32_t>(id));
    }
    ++inFlight_;
    lock.unlock();
    std::exception_ptr failed;
    try {
      L.accessLog = log;
      ex.initCta(cta, L.grid.ctaOf(id), id, static_cast<uint32_t>(id % L.numSms));
      ex.runCta(cta, stats_[thread], &tailBudget_, &env);
    } catch (...) {
      failed = std::current_exception();
    }
    lock.lock();
    --inFlight_;
    if (failed) {
      if (id < failedCta_) {
        failedCta_ = id;
        failure_ = failed;
      }
    } else {
      taken_[slot].done = true;
      while (doneTop_ < taken_.size() && taken_[doneTop_].done) {
        if (taken_[doneTop_].log) loggedTop_ += taken_[doneTop_].log->logged();
        ++doneTop_;
      }
    }
    changed_.notify_all();
  }
}

bool FunctionalTail::finish(func::LaunchState& L, uint64_t first, func::ExecStats& stats,
                            const RunBudget* budget,
                            const std::function<void(uint64_t done)>& progress,
                            double progressSeconds) {
  if (L.accessLog != nullptr && L.accessLog->capacity() != p_.logCapacity)
    throw InternalError("FunctionalTail::finish: the tail's logs keep another count of entries");
  bool logHere = false;
  {
    std::unique_lock<std::mutex> lock(m_);
    if (conflict_ || first > floor_) {
      lock.unlock();
      abort_.store(true, std::memory_order_relaxed);
      stop();
      memory_.endUndoLog();  // the copy is not read again
      return false;
    }
    bottom_ = first;
    // The calling thread's CTAs log only while the tail's logs may not hold all a run in order
    // keeps (the tail's CTAs logged so far are its last).
    logHere = L.accessLog != nullptr && (loggedTop_ < p_.logCapacity || doneTop_ < taken_.size());
  }
  changed_.notify_all();
  func::LaunchState here = L;
  std::unique_ptr<func::AccessLog> hereLog;
  if (logHere) hereLog = std::make_unique<func::AccessLog>(L.accessLog->capacity());
  here.accessLog = hereLog.get();
  func::Executor ex(here);
  func::Cta cta;
  auto lastReport = std::chrono::steady_clock::now();
  uint64_t doneHere = 0;
  const auto report = [&](bool now) {
    if (!progress) return;
    const auto t = std::chrono::steady_clock::now();
    if (!now && std::chrono::duration<double>(t - lastReport).count() < progressSeconds) return;
    uint64_t tail = 0;
    {
      std::lock_guard<std::mutex> lock(m_);
      tail = doneTop_;
    }
    progress(doneHere + tail);
    lastReport = t;
  };
  for (;;) {
    uint64_t id;
    {
      std::lock_guard<std::mutex> lock(m_);
      if (bottom_ >= floor_) break;
      id = bottom_++;
    }
    ex.initCta(cta, L.grid.ctaOf(id), id, static_cast<uint32_t>(id % L.numSms));
    if (hereLog) hereLog->setCta(static_cast<uint32_t>(id));
    ex.runCta(cta, stats, budget);  // throws: the destructor drops the tail
    ++doneHere;
    report(false);
  }
  // The tail's CTAs still running finish; a host stop (interrupt, time limit) stops them too.
  {
    std::unique_lock<std::mutex> lock(m_);
    while (inFlight_ > 0) {
      changed_.wait_for(lock, std::chrono::milliseconds(50));
      if (budget != nullptr)
        if (const std::optional<StopReason> why = budget->hostStop()) {
          lock.unlock();
          throw RunStopped(*why, budget->message(*why, 0, stats.warpInsts));
        }
    }
  }
  stop();
  if (failure_) std::rethrow_exception(failure_);  // the lowest: every CTA below it ran
  if (doneTop_ != taken_.size())
    throw InternalError("FunctionalTail::finish: a CTA of the tail did not finish");
  memory_.applyChanges(*copy_);
  for (const func::ExecStats& s : stats_) stats.add(s);
  if (L.accessLog != nullptr) {
    if (hereLog) L.accessLog->append(*hereLog);
    for (auto it = taken_.rbegin(); it != taken_.rend(); ++it)
      if (it->log) L.accessLog->append(*it->log);
  }
  report(true);
  return true;
}

}  // namespace gpusc::gpu
