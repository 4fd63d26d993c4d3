// The interconnect's router and the pieces every part of the network shares.
//
// Flits travel over links. A link is an OutputChannel at its sender (a credit counter and an
// ownership flag per virtual channel of the receiver) and an InputChannel at its receiver (a
// FIFO of noc.vc_buffer_flits flits per VC). There are 2 x noc.virtual_channels VCs per link:
// VCs [0, V) carry requests and [V, 2V) replies, two virtual networks so a reply never waits
// behind a request.
//
// Router: an input-queued virtual-channel router with any number of ports and a routing table
// (destination node -> output port). A mesh router has 5 ports (N, E, S, W, local) and a table
// for dimension-order XY routing; the crossbar is one Router with a port per node. Per cycle,
// for every input VC whose front flit is in its buffer:
//   route computation  a head flit is ready for VC allocation noc.routing_delay cycles after it
//                      arrives;
//   VC allocation      it asks for any free VC of its virtual network at its output port; the
//                      allocator (noc.allocator) picks; switch allocation may start
//                      noc.vc_alloc_delay cycles after the grant;
//   switch allocation  VCs with a flit ready and a credit for their output VC ask for their
//                      output port; an output takes one flit per cycle and an input port sends at
//                      most noc.input_speedup flits per cycle (one per VC);
//   traversal          a granted flit crosses the switch noc.switch_alloc_delay cycles later
//                      (1 cycle), then spends noc.link_latency cycles on the link.
// So a head flit that meets no contention spends D = routing_delay + vc_alloc_delay +
// switch_alloc_delay + 1 cycles in a router and arrives at the next buffer D + link_latency
// cycles after it arrived at this one; body flits follow one per cycle.
//
// Flow control is credit based: a sender spends a credit per flit; the credit comes back
// noc.credit_delay cycles after the flit leaves the receiver's buffer (at the earliest the next
// cycle). Wormhole with virtual channels: a packet holds its output VC from VC allocation until
// its tail flit has been sent; the next packet may then take the VC and queue behind it in the
// downstream buffer (Booksim's wait_for_tail_credit = 0). Within a VC packets follow one another
// whole, so flits of a packet never reorder or interleave.
//
// Timing is kept by the Fabric: the network's current cycle, credits in flight and a calendar
// of the future cycles at which something becomes possible, so the interconnect's one process
// runs only on cycles where something can happen. A flit is written into the downstream buffer
// (whose space its credit reserved) when it wins switch allocation, stamped with the cycle it
// arrives; until then the receiver treats it as on the link.
#pragma once

#include <atomic>
#include <cstdint>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include <systemc>

#include "common/platform_config.hpp"
#include "noc/allocator.hpp"

namespace gpusc::noc {

inline constexpr uint64_t kNever = ~0ull;
inline constexpr uint32_t kVirtualNetworks = 2;
enum VirtualNetwork : uint32_t { kRequestNetwork = 0, kReplyNetwork = 1 };

// A growable FIFO that keeps its storage: no allocation once it has reached its largest size.
template <class T>
class Ring {
 public:
  bool empty() const { return size_ == 0; }
  size_t size() const { return size_; }
  T& front() { return buf_[head_]; }
  const T& front() const { return buf_[head_]; }
  void push_back(const T& v) {
    if (size_ == buf_.size()) grow();
    buf_[(head_ + size_) % buf_.size()] = v;
    ++size_;
  }
  void pop_front() {
    head_ = (head_ + 1) % buf_.size();
    --size_;
  }
  void clear() { head_ = size_ = 0; }

 private:
  void grow() {
    std::vector<T> next(buf_.empty() ? 8 : buf_.size() * 2);
    for (size_t i = 0; i < size_; ++i) next[i] = buf_[(head_ + i) % buf_.size()];
    buf_.swap(next);
    head_ = 0;
  }
  std::vector<T> buf_;
  size_t head_ = 0, size_ = 0;
};

struct Flit {
  uint64_t arrival = 0;  // cycle from which it is in the receiving buffer (on the link before)
  uint32_t packet = 0;   // index in the interconnect's packet table
  uint16_t dst = 0;      // destination node: the header's routing field
  uint16_t seq = 0;      // position in its packet
  uint16_t hops = 0;     // routers traversed so far (counted on the head flit)
  bool head = false, tail = false;
};

class OutputChannel;

// The receiving end of a link: a flit FIFO per VC.
class InputChannel {
 public:
  void init(uint32_t vcs, uint32_t depth);
  void reset();
  uint32_t vcs() const { return static_cast<uint32_t>(count_.size()); }
  uint32_t depth() const { return depth_; }
  uint32_t occupancy() const { return occupancy_; }  // flits in all VCs, including on the link
  bool empty(uint32_t vc) const { return count_[vc] == 0; }
  const Flit& front(uint32_t vc) const { return slots_[vc * depth_ + head_[vc]]; }
  // Arrival cycle of the front flit of `vc`, kNever if the VC is empty.
  uint64_t frontArrival(uint32_t vc) const { return frontArrival_[vc]; }
  // Calls f(vc) for every VC holding a flit (in its buffer or on the link), in VC order: a
  // router's scan visits only those (most of a busy router's VCs are empty).
  template <class F>
  void forEachNonEmpty(F&& f) const {
    for (uint32_t w = 0; w < kMaskWords; ++w)
      for (uint64_t m = nonEmpty_[w]; m != 0; m &= m - 1)
        f(w * 64 + static_cast<uint32_t>(__builtin_ctzll(m)));
  }
  Flit pop(uint32_t vc);
  // `concurrent`: other senders into the receiver may push at the same time (Router::deliver on
  // the host threads), so its wake cycle is lowered atomically.
  void push(uint32_t vc, const Flit& f, bool concurrent = false);

  // The most VCs a link has: 2 virtual networks x noc.virtual_channels (at most 64).
  static constexpr uint32_t kMaxVcs = 128;

  OutputChannel* upstream = nullptr;  // the sender, which gets the credits
  // The receiver's next evaluation cycle, lowered to a flit's arrival when one is written (null:
  // the receiver is evaluated every cycle anyway). Atomic: the senders on a router's several
  // inputs may write at once (Router::deliver); lowering commutes.
  std::atomic<uint64_t>* wake = nullptr;
  // Set to 1 when a flit is written (null: none): a network interface's ejection channel marks
  // the interface as having work (Interconnect::step). One sender per channel, so the byte has
  // one writer even when routers deliver on the host threads.
  uint8_t* activity = nullptr;

 private:
  std::vector<Flit> slots_;  // vcs x depth rings
  std::vector<uint32_t> head_, count_;
  std::vector<uint64_t> frontArrival_;  // compact copy of each front's arrival, for the scans
  uint32_t depth_ = 0, occupancy_ = 0;
  static constexpr uint32_t kMaskWords = kMaxVcs / 64;
  uint64_t nonEmpty_[kMaskWords] = {};  // bit vc: count_[vc] != 0
};

// The sending end of a link: per VC of the receiver, the credits left and whether a packet holds
// it. Also the link's statistics.
class OutputChannel {
 public:
  void init(uint32_t vcs, uint32_t depth);
  void reset();
  bool connected() const { return downstream != nullptr; }
  uint32_t credits(uint32_t vc) const { return credits_[vc]; }
  bool busy(uint32_t vc) const { return busy_[vc] != 0; }
  void claim(uint32_t vc) { busy_[vc] = 1; }
  const std::vector<uint32_t>& allCredits() const { return credits_; }

  InputChannel* downstream = nullptr;
  uint32_t delay = 0;                     // cycles from winning the channel to arriving downstream
  std::atomic<uint64_t>* wake = nullptr;  // the sender's next evaluation cycle, lowered when a
                                          // credit returns
  std::string from, to;                   // endpoints, for statistics
  uint64_t flits = 0;                     // flits sent since the statistics were reset

 private:
  friend class Fabric;
  std::vector<uint32_t> credits_;
  std::vector<uint8_t> busy_;
  uint32_t depth_ = 0;
};

void connect(OutputChannel& from, InputChannel& to, uint32_t delay);

// Lowers `wake` to `cycle` if it is later; with `concurrent`, as one of several threads that may
// do so at once (a compare-and-swap loop), else a plain store.
inline void lowerWake(std::atomic<uint64_t>& wake, uint64_t cycle, bool concurrent = false) {
  uint64_t w = wake.load(std::memory_order_relaxed);
  if (!concurrent) {
    if (cycle < w) wake.store(cycle, std::memory_order_relaxed);
    return;
  }
  while (cycle < w && !wake.compare_exchange_weak(w, cycle, std::memory_order_relaxed)) {
  }
}

// What a router's evaluation of a cycle hands on to the rest of the network, held back until
// every router of the cycle has been evaluated: flits for downstream buffers, credits on their
// way back upstream, the cycles it marked, and whether anything moved. A router touches nothing
// but its own state while it is evaluated, so the routers of a cycle can be evaluated on host
// threads. Then each router writes its flits into the buffers downstream (Router::deliver: every
// buffer has one sender, so the routers can do that on host threads too), and the rest is
// committed router by router in index order (Fabric::commit). Nothing a router hands on can
// matter to another router in the same cycle (a flit arrives and a credit returns a cycle later
// at the earliest), so holding it back changes no result: routers evaluated one after another
// with their effects applied at once (one thread, or few routers due) give the same.
struct FabricWrites {
  struct Push {
    InputChannel* to;
    uint32_t vc;
    Flit flit;
  };
  struct Credit {
    OutputChannel* to;
    uint32_t vc;
    uint64_t due;
  };
  std::vector<Push> pushes;
  std::vector<Credit> credits;
  std::vector<uint64_t> marks;
  bool progress = false;
};

// Network-wide timing shared by the routers and network interfaces of one interconnect.
class Fabric {
 public:
  explicit Fabric(const NocConfig& noc);

  // Parameters.
  uint32_t vcsPerNetwork() const { return vcsPerNetwork_; }
  uint32_t vcs() const { return vcsPerNetwork_ * kVirtualNetworks; }
  uint32_t depth() const { return depth_; }
  uint32_t networkOf(uint32_t vc) const { return vc / vcsPerNetwork_; }

  uint64_t now = 0;       // the cycle being evaluated
  bool progress = false;  // something moved this cycle

  // Something becomes possible at `cycle` (ignored unless it is in the future).
  void markAt(uint64_t cycle) {
    if (cycle > now) calendar_[cycle & mask_] = cycle;
  }
  // The first marked cycle after `now`, or kNever.
  uint64_t nextMarked() const;

  // Sends `f` on `oc`'s VC `vc`: spends a credit, writes the flit into the downstream buffer with
  // its arrival cycle, counts it for the link; a tail frees the VC for the next packet.
  // A router evaluated on a host thread passes its FabricWrites `w`: the sender's own credit
  // counter, VC and statistics change at once, the rest waits in `w`. Null: all at once.
  void send(OutputChannel& oc, uint32_t vc, Flit f, FabricWrites* w = nullptr);
  // A flit left VC `vc` of the channel fed by `to`: the credit reaches `to` after `delay` cycles
  // (at least one).
  void returnCredit(OutputChannel& to, uint32_t vc, uint32_t delay, FabricWrites* w = nullptr);
  // markAt and progress for a router, at once or into `w`.
  void markAt(uint64_t cycle, FabricWrites* w) {
    if (!w)
      markAt(cycle);
    else if (cycle > now && (w->marks.empty() || w->marks.back() != cycle))
      w->marks.push_back(cycle);  // (a router marks the same cycle for several VCs)
  }
  void moved(FabricWrites* w) {
    if (w)
      w->progress = true;
    else
      progress = true;
  }
  // Writes the flits `w` holds into their buffers (they must come from one sender), while other
  // routers may do the same for theirs.
  static void deliver(FabricWrites& w);
  // Applies the rest of `w` (credits, marks, progress), in order, and empties it.
  void commit(FabricWrites& w);
  // Applies the credits due now.
  void deliverCredits();
  bool creditsInFlight() const { return creditsInFlight_ != 0; }

  void reset();

 private:
  struct Credit {
    OutputChannel* to;
    uint32_t vc;
  };
  uint32_t vcsPerNetwork_, depth_;
  uint64_t mask_;
  std::vector<uint64_t> calendar_;                // slot (cycle & mask) holds a marked cycle
  std::vector<std::vector<Credit>> creditWheel_;  // slot (cycle & mask): credits due then
  uint64_t creditsInFlight_ = 0;
};

class Router : public sc_core::sc_module {
 public:
  // `route[node]` is the output port toward `node`.
  Router(const sc_core::sc_module_name& name, Fabric& fabric, uint32_t ports,
         std::vector<uint16_t> route, const NocConfig& noc);

  uint32_t ports() const { return static_cast<uint32_t>(inputs_.size()); }
  InputChannel& input(uint32_t port) { return inputs_[port]; }
  OutputChannel& output(uint32_t port) { return outputs_[port]; }
  const InputChannel& input(uint32_t port) const { return inputs_[port]; }
  const OutputChannel& output(uint32_t port) const { return outputs_[port]; }
  // The delay to give an output channel of this router: switch allocation to the next buffer.
  static uint32_t outputDelay(const NocConfig& noc) {
    return noc.switch_alloc_delay + 1 + noc.link_latency;
  }

  // Whether the router may act in cycle fabric.now (a flit arrives or a stage completes, a
  // credit returns, or it moved a flit in the cycle before); step() does nothing otherwise.
  bool due() const { return wakeAt_.load(std::memory_order_relaxed) <= fabric_.now; }
  // Evaluates cycle fabric.now. With `defer` false what it hands on to the rest of the network
  // takes effect at once (the routers evaluated one after another on the simulation thread).
  // With `defer` true it changes only this router's state, and what it hands on waits for
  // deliver() and commit() (FabricWrites); it may then run on a host thread, and an error is
  // kept for commit() to throw. Both give the same results.
  void step(bool defer);
  // Writes the flits the last step() sent into the buffers downstream. May run on a host thread
  // (once every router's step() is done), as may other routers' deliver().
  void deliver();
  // Applies the rest of what the last step() handed on (on the simulation thread, routers in
  // index order) and throws an error step() or deliver() kept.
  void commit();
  void reset();

 private:
  enum class Stage : uint8_t { Idle, VcAlloc, Active };
  struct VcState {
    Stage stage = Stage::Idle;
    uint16_t outPort = 0;
    uint16_t outVc = 0;
    // VcAlloc: ready for VC allocation; Active: ready for switch allocation (0 once the head
    // has gone: body flits go as soon as they are here).
    uint64_t readyAt = 0;
  };

  void evaluate(FabricWrites* w);
  void traverse(uint32_t port, uint32_t vc, FabricWrites* w);

  Fabric& fabric_;
  FabricWrites writes_;
  std::exception_ptr fault_;
  std::atomic<uint64_t> wakeAt_{kNever};  // the first cycle in which this router may act
  std::vector<uint16_t> route_;
  uint32_t vcs_;
  uint32_t routingDelay_, vcAllocDelay_, switchAllocDelay_, creditDelay_;
  std::vector<InputChannel> inputs_;
  std::vector<OutputChannel> outputs_;
  std::vector<VcState> state_;  // port x vc
  std::unique_ptr<Allocator> vcAllocator_, switchAllocator_;
  std::vector<AllocRequest> requests_;
  std::vector<uint32_t> grants_;
  std::vector<uint32_t> candidates_;  // input VCs (port x vc) asking for the switch
};

// A router of the 2D mesh at column x, row y (row 0 at the top: north is y - 1).
class MeshRouter : public Router {
 public:
  enum Port : uint32_t { kNorth = 0, kEast = 1, kSouth = 2, kWest = 3, kLocal = 4, kPorts = 5 };

  // `nodeX[n]`, `nodeY[n]`: the router of node n.
  MeshRouter(const sc_core::sc_module_name& name, Fabric& fabric, uint32_t x, uint32_t y,
             const std::vector<uint32_t>& nodeX, const std::vector<uint32_t>& nodeY,
             const NocConfig& noc);

  uint32_t x() const { return x_; }
  uint32_t y() const { return y_; }
  // Dimension-order routing: along the row (X) first, then along the column (Y).
  static uint32_t xyPort(uint32_t x, uint32_t y, uint32_t dx, uint32_t dy);

 private:
  static std::vector<uint16_t> xyTable(uint32_t x, uint32_t y, const std::vector<uint32_t>& nodeX,
                                       const std::vector<uint32_t>& nodeY);
  uint32_t x_, y_;
};

}  // namespace gpusc::noc
