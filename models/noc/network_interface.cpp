#include "noc/network_interface.hpp"

#include <fmt/format.h>

#include "common/error.hpp"
#include "common/mem_access.hpp"

namespace gpusc::noc {

// ---- packets -----------------------------------------------------------------------------------

uint32_t PacketTable::create(const Packet& p) {
  uint32_t i;
  if (!free_.empty()) {
    i = free_.back();
    free_.pop_back();
    packets_[i] = p;
  } else {
    i = static_cast<uint32_t>(packets_.size());
    packets_.push_back(p);
    live_.push_back(0);
  }
  live_[i] = 1;
  return i;
}

void PacketTable::free(uint32_t i) {
  live_[i] = 0;
  packets_[i].gp = nullptr;
  free_.push_back(i);
}

void PacketTable::clear() {
  for (size_t i = 0; i < packets_.size(); ++i)
    if (live_[i] && packets_[i].gp) packets_[i].gp->release();
  packets_.clear();
  live_.clear();
  free_.clear();
}

void NetworkStats::record(uint32_t flitCount, uint64_t latency, uint32_t hops) {
  ++packets;
  flits += flitCount;
  latencySum += latency;
  if (latency > latencyMax) latencyMax = latency;
  hopsSum += hops;
  ++histogram[bucket(latency)];
}

// ---- network interface -------------------------------------------------------------------------

NetworkInterface::NetworkInterface(const sc_core::sc_module_name& name, Fabric& fabric,
                                   PacketTable& packets, TrafficStats& stats,
                                   std::vector<Delivery>& outbox, uint32_t node, Side side,
                                   uint32_t index, const NocConfig& noc, uint32_t injectionCapacity,
                                   uint32_t ejectionCapacity)
    : sc_core::sc_module(name),
      fabric_(fabric),
      packets_(packets),
      stats_(stats),
      outbox_(outbox),
      node_(node),
      index_(index),
      side_(side),
      network_(side == Side::kSm ? kRequestNetwork : kReplyNetwork),
      headerBytes_(noc.header_bytes),
      flitBytes_(noc.flit_bytes),
      creditDelay_(noc.credit_delay),
      injectionCapacity_(injectionCapacity),
      ejectionCapacity_(ejectionCapacity),
      reassembly_(fabric.vcs()) {
  injection_.init(fabric.vcs(), fabric.depth());
  ejection_.init(fabric.vcs(), fabric.depth());
}

uint32_t NetworkInterface::packetFlits(uint32_t headerBytes, uint32_t flitBytes,
                                       uint32_t dataBytes) {
  const uint64_t bytes = uint64_t(headerBytes) + dataBytes;
  const uint64_t flits = (bytes + flitBytes - 1) / flitBytes;
  if (flits > 0xffff) throw InternalError(fmt::format("noc: a packet of {} bytes", bytes));
  return flits == 0 ? 1 : static_cast<uint32_t>(flits);
}

uint32_t NetworkInterface::dataBytes(const tlm::tlm_generic_payload& gp, uint32_t network) {
  const bool write = gp.get_command() == tlm::TLM_WRITE_COMMAND;
  const bool carriesData = network == kRequestNetwork ? write : !write;
  return carriesData ? movedBytes(gp) : 0;
}

bool NetworkInterface::acceptRequest(tlm::tlm_generic_payload& gp, uint32_t dst, uint64_t cycle) {
  if (side_ != Side::kSm) throw InternalError(fmt::format("{}: a request at an L2 slice", name()));
  if (held_)
    throw InternalError(
        fmt::format("{}: BEGIN_REQ before the previous request phase ended", name()));
  if (injectionCapacity_ != 0 && injectQueue_.size() >= injectionCapacity_) {
    held_ = &gp;
    heldDst_ = dst;
    heldSince_ = cycle;
    return false;
  }
  enqueue(gp, dst, cycle);
  return true;
}

void NetworkInterface::acceptReply(tlm::tlm_generic_payload& gp, uint32_t dst, uint64_t cycle) {
  if (side_ != Side::kL2) throw InternalError(fmt::format("{}: a reply at an SM", name()));
  if (awaiting_ == &gp) requestAccepted(gp);  // BEGIN_RESP ends the request phase
  enqueue(gp, dst, cycle);
}

void NetworkInterface::requestAccepted(tlm::tlm_generic_payload& gp) {
  if (awaiting_ != &gp || ejectQueue_.empty())
    throw InternalError(fmt::format("{}: END_REQ for a request not in progress", name()));
  awaiting_ = nullptr;
  packets_.free(ejectQueue_.front());
  ejectQueue_.pop_front();
  gp.release();
  markActive();  // the next queued request may go to the L2
}

void NetworkInterface::enqueue(tlm::tlm_generic_payload& gp, uint32_t dst, uint64_t cycle) {
  Packet p;
  p.gp = &gp;
  p.accepted = cycle;
  p.readyAt = cycle + 1;
  p.src = node_;
  p.dst = dst;
  p.network = network_;
  p.flits = static_cast<uint16_t>(packetFlits(headerBytes_, flitBytes_, dataBytes(gp, network_)));
  injectQueue_.push_back(packets_.create(p));
  ++stats_.network[network_].injectedPackets;
  markActive();
}

void NetworkInterface::step() {
  const uint64_t now = fabric_.now;
  stalled_ = false;
  if (ejection_.occupancy() != 0) eject(now);
  if (side_ == Side::kL2) deliver();
  if (!injectQueue_.empty()) inject(now);
}

void NetworkInterface::eject(uint64_t now) {
  const uint32_t vcs = ejection_.vcs();
  const bool requestsBlocked = ejectQueue_.size() >= ejectionCapacity_;
  for (uint32_t i = 0; i < vcs; ++i) {  // one flit per cycle, VCs in round-robin order
    const uint32_t vc = (ejectPointer_ + i) % vcs;
    if (ejection_.empty(vc) || ejection_.front(vc).arrival > now) continue;
    if (requestsBlocked && fabric_.networkOf(vc) == kRequestNetwork) continue;
    const Flit f = ejection_.pop(vc);
    fabric_.returnCredit(*ejection_.upstream, vc, creditDelay_);
    if (f.dst != node_)
      throw InternalError(
          fmt::format("{}: a flit for node {} ejected at node {}", name(), f.dst, node_));
    Reassembly& r = reassembly_[vc];
    if (f.head) {
      if (r.active)
        throw InternalError(
            fmt::format("{}: a head flit inside another packet on VC {}", name(), vc));
      r = Reassembly{true, f.packet, 0};
      packets_[f.packet].hops = f.hops;
    } else if (!r.active || r.packet != f.packet) {
      throw InternalError(
          fmt::format("{}: a flit of packet {} on VC {} out of its packet", name(), f.packet, vc));
    }
    if (f.seq != r.next)
      throw InternalError(fmt::format("{}: flit {} of packet {} arrived when {} was due", name(),
                                      f.seq, f.packet, r.next));
    ++r.next;
    if (f.tail) {
      if (r.next != packets_[f.packet].flits)
        throw InternalError(fmt::format("{}: packet {} ended after {} of its {} flits", name(),
                                        f.packet, r.next, packets_[f.packet].flits));
      r.active = false;
      complete(f.packet, now);
    }
    ejectPointer_ = (vc + 1) % vcs;
    fabric_.progress = true;
    return;
  }
}

void NetworkInterface::complete(uint32_t id, uint64_t now) {
  const Packet& p = packets_[id];
  stats_.network[p.network].record(p.flits, now - p.accepted, p.hops);
  if (p.network == kRequestNetwork) {
    if (side_ != Side::kL2)
      throw InternalError(fmt::format("{}: a request ejected at an SM", name()));
    ejectQueue_.push_back(id);
  } else {
    if (side_ != Side::kSm)
      throw InternalError(fmt::format("{}: a reply ejected at an L2 slice", name()));
    outbox_.push_back(Delivery{Delivery::kReply, index_, p.gp});  // the delivery releases it
    packets_.free(id);
  }
}

void NetworkInterface::deliver() {
  if (awaiting_ || ejectQueue_.empty()) return;
  awaiting_ = packets_[ejectQueue_.front()].gp;
  outbox_.push_back(Delivery{Delivery::kRequest, index_, awaiting_});
  fabric_.progress = true;
}

void NetworkInterface::inject(uint64_t now) {
  const uint32_t id = injectQueue_.front();
  const Packet& p = packets_[id];
  if (!sending_) {
    if (p.readyAt > now) {
      fabric_.markAt(p.readyAt);
      return;
    }
    // VC allocation on the link into the router: a free VC of the packet's network with room
    // for the head.
    const uint32_t perNetwork = fabric_.vcsPerNetwork(), first = p.network * perNetwork;
    bool found = false;
    for (uint32_t i = 0; i < perNetwork && !found; ++i) {
      const uint32_t vc = first + (vcPointer_ + i) % perNetwork;
      if (injection_.busy(vc) || injection_.credits(vc) == 0) continue;
      found = true;
      sendVc_ = vc;
      vcPointer_ = (vc - first + 1) % perNetwork;
    }
    if (!found) {  // waits for a credit
      stalled_ = true;
      ++stallCycles_;
      return;
    }
    injection_.claim(sendVc_);
    sending_ = true;
    sent_ = 0;
  }
  if (injection_.credits(sendVc_) == 0) return;
  Flit f;
  f.packet = id;
  f.dst = static_cast<uint16_t>(p.dst);
  f.seq = static_cast<uint16_t>(sent_);
  f.head = sent_ == 0;
  f.tail = sent_ + 1 == p.flits;
  fabric_.send(injection_, sendVc_, f);
  ++sent_;
  if (!f.tail) return;
  sending_ = false;
  injectQueue_.pop_front();
  if (held_) {  // room for the L1's waiting request
    tlm::tlm_generic_payload* gp = held_;
    held_ = nullptr;
    holdCycles_ += now - heldSince_;
    enqueue(*gp, heldDst_, now);
    fabric_.markAt(now + 1);
    outbox_.push_back(Delivery{Delivery::kEndRequest, index_, gp});
  }
}

bool NetworkInterface::empty() const {
  if (!injectQueue_.empty() || held_ || !ejectQueue_.empty() || awaiting_ ||
      ejection_.occupancy() != 0)
    return false;
  for (const Reassembly& r : reassembly_)
    if (r.active) return false;
  return true;
}

void NetworkInterface::resetStats() {
  stallCycles_ = 0;
  holdCycles_ = 0;
}

void NetworkInterface::reset() {
  injectQueue_.clear();
  sending_ = false;
  sendVc_ = sent_ = vcPointer_ = 0;
  if (held_) held_->release();
  held_ = nullptr;
  stalled_ = false;
  for (Reassembly& r : reassembly_) r = Reassembly{};
  ejectPointer_ = 0;
  ejectQueue_.clear();
  awaiting_ = nullptr;  // its packet's payload is released with the packet table
  markActive();
  injection_.reset();
  ejection_.reset();
}

}  // namespace gpusc::noc
