// Wake-up requests held back while host threads evaluate SMs' cycles.
//
// SystemC's kernel and the edge scheduler are single-threaded: while a worker thread evaluates an
// SM's cycle (and the requests it hands its L1 data cache through the socket), nothing may call
// into them. The SM's L1 asks for its runs through one EventOutbox; while the outbox holds, the
// requests are kept in order and made by flush(), which the core clock domain calls on the
// simulation thread, SM by SM in index order, after the cycle's evaluations.
#pragma once

#include <utility>
#include <vector>

#include <systemc>

#include "common/edge_scheduler.hpp"

namespace gpusc {

class EventOutbox {
 public:
  // Asks `w` for a run at `time` (sc_time values) now, or after the evaluations when holding.
  void notify(Wakeup& w, uint64_t time) {
    if (holding_)
      held_.emplace_back(&w, time);
    else
      w.at(time);
  }
  void hold() { holding_ = true; }
  // Issues the held requests in the order they were made (the simulation time has not moved
  // since) and stops holding.
  void flush() {
    holding_ = false;
    for (auto& [w, time] : held_) w->at(time);
    held_.clear();
  }

 private:
  bool holding_ = false;
  std::vector<std::pair<Wakeup*, uint64_t>> held_;
};

}  // namespace gpusc
