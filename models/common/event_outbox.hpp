// Event notifications held back while host threads evaluate SMs' cycles.
//
// SystemC's kernel is single-threaded: while a worker thread evaluates an SM's cycle (and the
// requests it hands its L1 data cache through the socket), nothing may call into the kernel.
// The SM and its L1 notify their events through one EventOutbox; while the outbox holds, the
// notifications are kept in order and issued by flush(), which the core clock domain calls on
// the simulation thread, SM by SM in index order, after the cycle's evaluations.
#pragma once

#include <utility>
#include <vector>

#include <systemc>

namespace gpusc {

class EventOutbox {
 public:
  // Notifies `e` after `delay` now, or after the evaluations when holding.
  void notify(sc_core::sc_event& e, const sc_core::sc_time& delay) {
    if (holding_)
      held_.emplace_back(&e, delay);
    else
      e.notify(delay);
  }
  void hold() { holding_ = true; }
  // Issues the held notifications in the order they were made (the simulation time has not
  // moved since, so each delay is still relative to the moment it was asked for) and stops
  // holding.
  void flush() {
    holding_ = false;
    for (auto& [e, delay] : held_) e->notify(delay);
    held_.clear();
  }

 private:
  bool holding_ = false;
  std::vector<std::pair<sc_core::sc_event*, sc_core::sc_time>> held_;
};

}  // namespace gpusc
