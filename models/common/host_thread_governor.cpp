#include "common/host_thread_governor.hpp"

#include <algorithm>
#include <chrono>
#include <utility>

namespace gpusc {

const char* toString(ThreadPolicy p) { return p == ThreadPolicy::Fixed ? "fixed" : "adaptive"; }

double HostThreadGovernor::steadySeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

HostThreadGovernor::HostThreadGovernor(Clock clock) : HostThreadGovernor(std::move(clock), {}) {}

HostThreadGovernor::HostThreadGovernor(Clock clock, Params p) : clock_(std::move(clock)), p_(p) {
  p_.epochWork = std::max<uint64_t>(1, p_.epochWork);
  p_.firstWait = std::max<uint32_t>(1, p_.firstWait);
  p_.longestWait = std::max(p_.firstWait, p_.longestWait);
  wait_ = interval_ = p_.firstWait;
}

void HostThreadGovernor::pause() {
  if (paused_) return;
  banked_ += clock_() - start_;
  paused_ = true;
}

void HostThreadGovernor::resume() {
  if (!paused_) return;
  start_ = clock_();
  paused_ = false;
}

bool HostThreadGovernor::closeEpoch() {
  const double now = clock_();
  const double cost = (banked_ + (paused_ ? 0.0 : now - start_)) / double(work_);
  start_ = now;
  banked_ = 0;
  work_ = 0;
  ++epochs_;
  if (engaged_) ++engagedEpochs_;
  switch (phase_) {
    case Phase::Settled:
      before_ = cost;
      if (--wait_ > 0) return false;
      phase_ = Phase::Probe;
      engaged_ = !settled_;
      ++probes_;
      return true;
    case Phase::Probe:
      probe_ = cost;
      phase_ = Phase::After;
      engaged_ = settled_;
      return true;
    case Phase::After:
      break;
  }
  // The epoch after the probe, back in the settled mode.
  phase_ = Phase::Settled;
  const bool better = probe_ * (1.0 + p_.margin) < std::min(before_, cost);
  if (better) {
    settled_ = engaged_ = !settled_;
    interval_ = p_.firstWait;
    ++switches_;
  } else {
    interval_ = std::min(p_.longestWait, interval_ * 2);
  }
  wait_ = interval_;
  before_ = cost;
  return better;
}

}  // namespace gpusc
