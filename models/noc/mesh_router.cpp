#include "noc/mesh_router.hpp"

#include <algorithm>
#include <utility>

#include <fmt/format.h>

#include "common/error.hpp"

namespace gpusc::noc {

// ---- links -------------------------------------------------------------------------------------

void InputChannel::init(uint32_t vcs, uint32_t depth) {
  if (vcs > kMaxVcs)
    throw InternalError(fmt::format("noc: {} VCs per link (at most {})", vcs, kMaxVcs));
  depth_ = depth;
  slots_.assign(size_t(vcs) * depth, Flit{});
  head_.assign(vcs, 0);
  count_.assign(vcs, 0);
  frontArrival_.assign(vcs, kNever);
  occupancy_ = 0;
  std::fill(std::begin(nonEmpty_), std::end(nonEmpty_), 0);
}

void InputChannel::reset() {
  std::fill(head_.begin(), head_.end(), 0);
  std::fill(count_.begin(), count_.end(), 0);
  std::fill(frontArrival_.begin(), frontArrival_.end(), kNever);
  occupancy_ = 0;
  std::fill(std::begin(nonEmpty_), std::end(nonEmpty_), 0);
}

Flit InputChannel::pop(uint32_t vc) {
  const Flit f = slots_[vc * depth_ + head_[vc]];
  head_[vc] = head_[vc] + 1 == depth_ ? 0 : head_[vc] + 1;
  --occupancy_;
  if (--count_[vc]) {
    frontArrival_[vc] = slots_[vc * depth_ + head_[vc]].arrival;
  } else {
    frontArrival_[vc] = kNever;
    nonEmpty_[vc / 64] &= ~(uint64_t(1) << (vc % 64));
  }
  return f;
}

void InputChannel::push(uint32_t vc, const Flit& f, bool concurrent) {
  if (count_[vc] == depth_)
    throw InternalError(fmt::format("noc: a flit arrived at a full VC {} (credit accounting)", vc));
  uint32_t tail = head_[vc] + count_[vc];
  if (tail >= depth_) tail -= depth_;
  slots_[vc * depth_ + tail] = f;
  if (count_[vc]++ == 0) {
    frontArrival_[vc] = f.arrival;
    nonEmpty_[vc / 64] |= uint64_t(1) << (vc % 64);
  }
  if (wake) lowerWake(*wake, f.arrival, concurrent);
  if (activity) *activity = 1;
  ++occupancy_;
}

void OutputChannel::init(uint32_t vcs, uint32_t depth) {
  depth_ = depth;
  credits_.assign(vcs, depth);
  busy_.assign(vcs, 0);
}

void OutputChannel::reset() {
  std::fill(credits_.begin(), credits_.end(), depth_);
  std::fill(busy_.begin(), busy_.end(), 0);
}

void connect(OutputChannel& from, InputChannel& to, uint32_t delay) {
  from.downstream = &to;
  from.delay = delay;
  to.upstream = &from;
}

// ---- fabric ------------------------------------------------------------------------------------

Fabric::Fabric(const NocConfig& noc)
    : vcsPerNetwork_(noc.virtual_channels), depth_(noc.vc_buffer_flits) {
  // Everything is scheduled at most this far ahead: a flit's arrival (switch allocation delay,
  // traversal and link), a head's route computation and VC allocation, a credit's return.
  const uint64_t horizon = uint64_t(noc.switch_alloc_delay) + 1 + noc.link_latency +
                           noc.routing_delay + noc.vc_alloc_delay + noc.credit_delay + 2;
  uint64_t size = 1;
  while (size <= horizon) size <<= 1;
  mask_ = size - 1;
  calendar_.assign(size, kNever);
  creditWheel_.resize(size);
}

uint64_t Fabric::nextMarked() const {
  for (uint64_t c = now + 1; c <= now + mask_; ++c)
    if (calendar_[c & mask_] == c) return c;
  return kNever;
}

void Fabric::send(OutputChannel& oc, uint32_t vc, Flit f, FabricWrites* w) {
  if (oc.credits_[vc] == 0)
    throw InternalError(fmt::format("noc: {} -> {} sent a flit without a credit", oc.from, oc.to));
  --oc.credits_[vc];
  f.arrival = now + oc.delay;
  if (f.tail) oc.busy_[vc] = 0;
  ++oc.flits;
  if (!w) {
    oc.downstream->push(vc, f);
    markAt(f.arrival);
    progress = true;
    return;
  }
  w->pushes.push_back(FabricWrites::Push{oc.downstream, vc, f});
  if (w->marks.empty() || w->marks.back() != f.arrival) w->marks.push_back(f.arrival);
  w->progress = true;
}

void Fabric::returnCredit(OutputChannel& to, uint32_t vc, uint32_t delay, FabricWrites* w) {
  const uint64_t due = now + std::max<uint32_t>(delay, 1);
  if (!w) {
    creditWheel_[due & mask_].push_back(Credit{&to, vc});
    ++creditsInFlight_;
    markAt(due);
    return;
  }
  w->credits.push_back(FabricWrites::Credit{&to, vc, due});
}

void Fabric::deliver(FabricWrites& w) {
  for (const FabricWrites::Push& p : w.pushes) p.to->push(p.vc, p.flit, true);
  w.pushes.clear();
}

void Fabric::commit(FabricWrites& w) {
  uint64_t marked = 0;  // a router's credits of a cycle share their due cycle: one mark
  for (const FabricWrites::Credit& c : w.credits) {
    creditWheel_[c.due & mask_].push_back(Credit{c.to, c.vc});
    if (c.due != marked) markAt(marked = c.due);
  }
  creditsInFlight_ += w.credits.size();
  for (uint64_t m : w.marks) markAt(m);
  progress = progress || w.progress;
  w.credits.clear();
  w.marks.clear();
  w.progress = false;
}

void Fabric::deliverCredits() {
  std::vector<Credit>& due = creditWheel_[now & mask_];
  if (due.empty()) return;
  for (const Credit& c : due) {
    ++c.to->credits_[c.vc];
    if (c.to->wake) lowerWake(*c.to->wake, now);
  }
  creditsInFlight_ -= due.size();
  due.clear();
  progress = true;
}

void Fabric::reset() {
  now = 0;
  progress = false;
  std::fill(calendar_.begin(), calendar_.end(), kNever);
  for (auto& w : creditWheel_) w.clear();
  creditsInFlight_ = 0;
}

// ---- router ------------------------------------------------------------------------------------

Router::Router(const sc_core::sc_module_name& name, Fabric& fabric, uint32_t ports,
               std::vector<uint16_t> route, const NocConfig& noc)
    : sc_core::sc_module(name),
      fabric_(fabric),
      route_(std::move(route)),
      vcs_(fabric.vcs()),
      routingDelay_(noc.routing_delay),
      vcAllocDelay_(noc.vc_alloc_delay),
      switchAllocDelay_(noc.switch_alloc_delay),
      creditDelay_(noc.credit_delay),
      inputs_(ports),
      outputs_(ports),
      state_(size_t(ports) * fabric.vcs()) {
  for (auto& in : inputs_) {
    in.init(vcs_, fabric.depth());
    in.wake = &wakeAt_;
  }
  for (auto& out : outputs_) {
    out.init(vcs_, fabric.depth());
    out.wake = &wakeAt_;
  }
  AllocatorShape va;
  va.inputs = va.outputs = ports * vcs_;
  va.iterations = noc.allocator_iterations;
  vcAllocator_ = allocatorPolicies().create(noc.allocator, va);
  AllocatorShape sa;
  sa.inputs = sa.outputs = ports;
  sa.ids = vcs_;
  sa.inputCapacity = noc.input_speedup;
  sa.iterations = noc.allocator_iterations;
  switchAllocator_ = allocatorPolicies().create(noc.allocator, sa);
  for (uint16_t port : route_)
    if (port >= ports) throw InternalError(fmt::format("{}: route to port {}", name, port));
}

void Router::step(bool defer) {
  if (!due()) return;
  if (!defer) {
    evaluate(nullptr);
    return;
  }
  try {
    evaluate(&writes_);
  } catch (...) {
    fault_ = std::current_exception();
  }
}

void Router::deliver() {
  if (writes_.pushes.empty() || fault_) return;
  try {
    Fabric::deliver(writes_);
  } catch (...) {
    fault_ = std::current_exception();
  }
}

void Router::commit() {
  if (fault_) std::rethrow_exception(std::exchange(fault_, nullptr));
  fabric_.commit(writes_);
}

void Router::evaluate(FabricWrites* w) {
  const uint64_t now = fabric_.now;
  const uint32_t ports = this->ports();
  uint64_t wake = kNever;  // the next cycle something here completes, if nothing moves now
  bool moved = false;

  // One pass over the input VCs whose front flit is here: route computation for new heads,
  // VC allocation requests from heads that are ready for it, switch allocation candidates.
  const uint32_t perNetwork = fabric_.vcsPerNetwork();
  requests_.clear();
  candidates_.clear();
  for (uint32_t p = 0; p < ports; ++p) {
    const InputChannel& in = inputs_[p];
    if (in.occupancy() == 0) continue;
    in.forEachNonEmpty([&](uint32_t k) {
      const uint64_t arrival = in.frontArrival(k);
      if (arrival > now) {  // its front is still on the link
        wake = std::min(wake, arrival);
        return;
      }
      const uint32_t ivc = p * vcs_ + k;
      VcState& s = state_[ivc];
      if (s.stage == Stage::Active) {
        if (s.readyAt > now)
          wake = std::min(wake, s.readyAt);
        else if (outputs_[s.outPort].credits(s.outVc) != 0)
          candidates_.push_back(ivc);  // (without a credit, the credit's return wakes us)
        return;
      }
      if (s.stage == Stage::Idle) {
        const Flit& f = in.front(k);
        if (!f.head) throw InternalError(fmt::format("{}: a body flit without its head", name()));
        s.outPort = route_[f.dst];
        if (!outputs_[s.outPort].connected())
          throw InternalError(fmt::format("{}: no link on port {}", name(), s.outPort));
        s.stage = Stage::VcAlloc;
        s.readyAt = f.arrival + routingDelay_;
        fabric_.markAt(s.readyAt, w);
      }
      if (s.readyAt > now) {
        wake = std::min(wake, s.readyAt);
        return;
      }
      // (If every VC is busy, a tail leaving this router frees one: that is a move here.)
      const OutputChannel& oc = outputs_[s.outPort];
      const uint32_t first = fabric_.networkOf(k) * perNetwork;
      for (uint32_t j = first; j < first + perNetwork; ++j)
        if (!oc.busy(j)) requests_.push_back(AllocRequest{ivc, s.outPort * vcs_ + j, 0});
    });
  }
  if (!requests_.empty()) {
    vcAllocator_->allocate(requests_, grants_);
    for (uint32_t g : grants_) {
      const AllocRequest& r = requests_[g];
      VcState& s = state_[r.input];
      s.stage = Stage::Active;
      s.outVc = static_cast<uint16_t>(r.output % vcs_);
      OutputChannel& oc = outputs_[s.outPort];
      oc.claim(s.outVc);
      s.readyAt = now + vcAllocDelay_;
      fabric_.markAt(s.readyAt, w);
      moved = true;
      if (s.readyAt <= now && oc.credits(s.outVc) != 0) candidates_.push_back(r.input);
    }
  }

  // Switch allocation among the VCs with a flit ready and a credit downstream.
  if (!candidates_.empty()) {
    requests_.clear();
    for (uint32_t ivc : candidates_)
      requests_.push_back(AllocRequest{ivc / vcs_, state_[ivc].outPort, ivc % vcs_});
    switchAllocator_->allocate(requests_, grants_);
    for (uint32_t g : grants_) traverse(requests_[g].input, requests_[g].id, w);
    moved |= !grants_.empty();
  }
  if (moved) fabric_.moved(w);
  wakeAt_.store(moved ? now + 1 : wake, std::memory_order_relaxed);
}

void Router::traverse(uint32_t port, uint32_t vc, FabricWrites* w) {
  VcState& s = state_[port * vcs_ + vc];
  InputChannel& in = inputs_[port];
  Flit f = in.pop(vc);
  // The buffer slot frees when the flit crosses the switch; the credit follows credit_delay later.
  if (in.upstream) fabric_.returnCredit(*in.upstream, vc, switchAllocDelay_ + creditDelay_, w);
  if (f.head) ++f.hops;
  const bool tail = f.tail;
  fabric_.send(outputs_[s.outPort], s.outVc, f, w);
  s.readyAt = 0;  // body flits go as soon as they are here
  if (tail) s.stage = Stage::Idle;
}

void Router::reset() {
  wakeAt_ = kNever;
  writes_ = FabricWrites{};
  fault_ = nullptr;
  for (auto& in : inputs_) in.reset();
  for (auto& out : outputs_) out.reset();
  std::fill(state_.begin(), state_.end(), VcState{});
  vcAllocator_->reset();
  switchAllocator_->reset();
}

// ---- mesh router -------------------------------------------------------------------------------

MeshRouter::MeshRouter(const sc_core::sc_module_name& name, Fabric& fabric, uint32_t x, uint32_t y,
                       const std::vector<uint32_t>& nodeX, const std::vector<uint32_t>& nodeY,
                       const NocConfig& noc)
    : Router(name, fabric, kPorts, xyTable(x, y, nodeX, nodeY), noc), x_(x), y_(y) {}

uint32_t MeshRouter::xyPort(uint32_t x, uint32_t y, uint32_t dx, uint32_t dy) {
  if (dx > x) return kEast;
  if (dx < x) return kWest;
  if (dy > y) return kSouth;
  if (dy < y) return kNorth;
  return kLocal;
}

std::vector<uint16_t> MeshRouter::xyTable(uint32_t x, uint32_t y,
                                          const std::vector<uint32_t>& nodeX,
                                          const std::vector<uint32_t>& nodeY) {
  std::vector<uint16_t> table(nodeX.size());
  for (size_t n = 0; n < nodeX.size(); ++n)
    table[n] = static_cast<uint16_t>(xyPort(x, y, nodeX[n], nodeY[n]));
  return table;
}

}  // namespace gpusc::noc
