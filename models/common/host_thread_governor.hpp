// Decides, stretch by stretch, whether a HostWorkers team's threads take part in the work
// (docs/architecture.md, "Host threads").
//
// More threads do not always pay. A cycle with little work per SM (a kernel at a low IPC) costs
// more to hand out than it saves, and on a shared host the second core may be slow or taken:
// its thread then stalls the cycles it takes part in. The results are the same either way (the
// threads change only who evaluates what), so the choice can follow what the host measures.
//
// The governor times epochs of the simulation (a fixed amount of work each: SM evaluations)
// with the wall clock, one reading per epoch. It keeps one mode (engaged or not) and now and
// then probes the other for one epoch; it switches when the probe was cheaper per unit of work,
// by more than a margin, than both the epoch before it and the epoch after it (the two around
// it, so that a phase of the kernel getting cheaper or dearer does not pass for the mode's
// doing). After a probe that confirms the mode, the next comes twice as many epochs later, up
// to a longest wait; after a switch, soon.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>

namespace gpusc {

// How a run uses its host threads: `Fixed` engages every thread in every cycle with work for
// several; `Adaptive` lets a HostThreadGovernor engage them while it pays.
enum class ThreadPolicy { Fixed, Adaptive };
// "fixed" or "adaptive".
const char* toString(ThreadPolicy p);

class HostThreadGovernor {
 public:
  // Seconds on a monotonic clock.
  using Clock = std::function<double()>;
  struct Params {
    uint64_t epochWork = 4096;  // units of work per epoch (SM evaluations: a few milliseconds)
    uint32_t firstWait = 4;     // settled epochs before the first probe, and after a switch
    uint32_t longestWait = 64;  // the most settled epochs between two probes
    double margin = 0.03;       // how much cheaper a probe must be to switch (a fraction)
  };
  // The steady clock.
  static double steadySeconds();

  explicit HostThreadGovernor(Clock clock = steadySeconds);
  HostThreadGovernor(Clock clock, Params p);

  // Whether the threads are to take part now. The first mode is engaged.
  bool engaged() const { return engaged_; }
  // Counts `work` units done; closes the epoch when it has its share. True when engaged()
  // changed.
  bool add(uint64_t work) {
    work_ += work;
    return work_ >= p_.epochWork && closeEpoch();
  }
  // The simulation stops (a launch ended) and goes on again: the time between is not counted.
  // An epoch may span launches. The governor starts paused: call resume() when a launch begins.
  void pause();
  void resume();

  // Epochs closed, of them those run engaged, probes, and switches of the settled mode.
  uint64_t epochs() const { return epochs_; }
  uint64_t engagedEpochs() const { return engagedEpochs_; }
  uint64_t probes() const { return probes_; }
  uint64_t switches() const { return switches_; }
  // The share of the closed epochs run engaged (none closed: nullopt).
  std::optional<double> engagedShare() const {
    if (epochs_ == 0) return std::nullopt;
    return double(engagedEpochs_) / double(epochs_);
  }

 private:
  bool closeEpoch();
  enum class Phase { Settled, Probe, After };

  Clock clock_;
  Params p_;
  bool settled_ = true;  // the mode kept between probes
  bool engaged_ = true;  // the mode of the current epoch
  Phase phase_ = Phase::Settled;
  uint32_t wait_, interval_;  // settled epochs left before the next probe; the current interval
  bool paused_ = true;
  double start_ = 0;               // when the current epoch began, or went on after a pause
  double banked_ = 0;              // the epoch's time before its last pause
  uint64_t work_ = 0;              // work done in it
  double before_ = 0, probe_ = 0;  // cost per unit: the last settled epoch, the probe
  uint64_t epochs_ = 0, engagedEpochs_ = 0, probes_ = 0, switches_ = 0;
};

}  // namespace gpusc
