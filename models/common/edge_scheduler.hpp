// The order of the model's clocked units within a time step.
//
// The memory system's units (memory controllers, L2 slices, the interconnect, the L1 data
// caches), the CTA scheduler and the core clock domain each run when they have something due.
// Several are often due at the same instant, and what one does there can depend on whether
// another has run yet (an answer handed on in that cycle or the next). With a SystemC process
// per unit that order was the order in which SystemC's timed-event queue (a binary heap, not
// stable for equal times) released their events: deterministic, but a function of every timed
// event in the design, so a passive process of a testbench, or an RTL block's clock, changed
// the simulated cycles.
//
// An EdgeScheduler is one SystemC process that runs its units in a fixed order: by time, then
// by rank (the unit's place in the pipeline, `Rank` below), then by the order they were added.
// A pass over an instant runs its due units in that order; a unit woken for the current instant
// by a unit that runs after it in the pass (or by itself) runs in a further pass at the same
// instant, after the units still due in this one. Events outside it cannot change the order.
//
// A unit asks for its next run with a Wakeup, which behaves as sc_event::notify(delay) does (an
// earlier request replaces a later one; a later one is ignored while an earlier is pending).
// A block built alone (a block-level TLM testbench) keeps its own SystemC process and event:
// its Wakeup notifies that event until the block is attached to a scheduler.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include <systemc>

namespace gpusc {

class EdgeScheduler : public sc_core::sc_module {
 public:
  using Unit = uint32_t;
  // The units' order within an instant: the memory side from DRAM towards the SMs (so a unit
  // sees what the units behind it answered at that edge), the CTA scheduler, then the SMs.
  enum Rank : uint32_t {
    kMemoryController = 0,
    kMemoryAnswers = 1,
    kL2 = 2,
    kInterconnect = 3,
    kL1 = 4,
    kCtaScheduler = 5,
    kCoreDomain = 6,
  };

  explicit EdgeScheduler(const sc_core::sc_module_name& name);

  // Adds a unit; `run` is called at each instant the unit is due.
  Unit add(uint32_t rank, std::function<void()> run);
  // The unit runs at absolute time `time` (sc_time values; the current instant if earlier),
  // unless it is due earlier already. Replaces a later pending time.
  void wakeAt(Unit u, uint64_t time);
  void cancel(Unit u);
  uint64_t pendingTime(Unit u) const { return time_[u]; }

  static constexpr uint64_t kNever = ~0ull;

 private:
  SC_HAS_PROCESS(EdgeScheduler);
  void step();
  void arm();

  // An indexed binary min-heap of the due units by (time, key): a unit is in it at most once,
  // and an earlier request moves it up in place. A key is pass << 48 | rank << 24 | unit.
  struct Slot {
    uint64_t time, key;
    // One 128-bit comparison (compare and subtract-with-borrow), not two branches.
    bool operator<(const Slot& o) const { return wide() < o.wide(); }
    __extension__ using Wide = unsigned __int128;
    Wide wide() const { return Wide(time) << 64 | key; }
  };
  static Unit unitOf(const Slot& s) { return Unit(s.key & 0xffffff); }
  void place(uint32_t i, const Slot& s) {
    heap_[i] = s;
    pos_[unitOf(s)] = i;
  }
  void siftUp(uint32_t i);
  void siftDown(uint32_t i);
  void remove(uint32_t i);
  uint64_t now() const { return running_ ? now_ : sc_core::sc_time_stamp().value(); }
  static constexpr uint64_t kPass = 1ull << 48;
  static constexpr uint32_t kOut = ~0u;

  std::vector<std::function<void()>> run_;
  std::vector<uint64_t> order_;  // per unit: rank << 24 | unit
  std::vector<uint64_t> time_;   // per unit: its due time (kNever: none)
  std::vector<uint32_t> pos_;    // per unit: its place in heap_ (kOut: not due)
  std::vector<Slot> heap_;
  sc_core::sc_event tick_;
  uint64_t armed_ = kNever;  // the time tick_ is notified for
  bool running_ = false;
  uint64_t now_ = 0;         // while running: the current time
  uint64_t runningKey_ = 0;  // while running: the key of the unit that runs
  static constexpr Unit kNoUnit = ~0u;
  Unit runningUnit_ = kNoUnit;   // while running: the unit that runs (at the heap's top)
  uint64_t runningNextKey_ = 0;  // its key for the next run it asked for (time in time_)
};

// A unit's wake-up requests: to its scheduler once attached, else to its own event.
class Wakeup {
 public:
  explicit Wakeup(sc_core::sc_event& own) : own_(&own) {}

  void attach(EdgeScheduler& s, EdgeScheduler::Unit u) {
    sched_ = &s;
    unit_ = u;
  }
  bool attached() const { return sched_ != nullptr; }

  // Like sc_event::notify(delay).
  void after(const sc_core::sc_time& delay) {
    if (sched_)
      sched_->wakeAt(unit_, sc_core::sc_time_stamp().value() + delay.value());
    else
      own_->notify(delay);
  }
  // At absolute time `time` (sc_time values; now if it has passed).
  void at(uint64_t time) {
    if (sched_) {
      sched_->wakeAt(unit_, time);
    } else {
      const uint64_t now = sc_core::sc_time_stamp().value();
      own_->notify(sc_core::sc_time::from_value(time > now ? time - now : 0));
    }
  }
  void cancel() {
    if (sched_)
      sched_->cancel(unit_);
    else
      own_->cancel();
  }

 private:
  sc_core::sc_event* own_;
  EdgeScheduler* sched_ = nullptr;
  EdgeScheduler::Unit unit_ = 0;
};

}  // namespace gpusc
