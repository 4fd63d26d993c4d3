// A network interface: where a node (an SM's L1 data cache or an L2 slice)
// meets the network. It turns a TLM payload into a packet of flits and back.
//
// Packet size: ceil((noc.header_bytes + data bytes) / noc.flit_bytes) flits (at least one),
// where the data bytes are the payload's data length for write requests and for replies to
// reads (loads, atomics, fetches), and zero for read requests and write acknowledgements.
// Requests travel on the request virtual network, replies on the reply network.
//
// Injection: a packet the NI takes in cycle c may send its head flit in cycle c + 1 (the NI's
// fixed cost); the head needs a VC of its network on the link into the router that is free and
// has a credit, then one flit leaves per cycle while credits last. Packets leave in order. An
// SM's NI buffers at most `injectionCapacity` packets (counting the one leaving): when full it
// holds the L1's request and ends its request phase (END_REQ) once a packet has left. A
// L2 slice's NI queues every reply (the L2 never waits for the network).
//
// Ejection: one flit per cycle from the link out of the router (VCs in round-robin order),
// checked to arrive in order (InternalError otherwise); its credit returns noc.credit_delay
// cycles later. A packet is complete when its tail is ejected: that is when its latency is
// measured. An SM's NI hands a reply to the L1 (BEGIN_RESP, taken at once). An L2 slice's NI queues
// complete requests (at most `ejectionCapacity`) and hands them to the L2 one at a time
// (BEGIN_REQ), waiting for END_REQ before the next; while its queue is full it ejects no request
// flits, so a slow L2 backs traffic up into the network.
//
// The NI calls no socket itself: it leaves Deliveries for the interconnect, which makes the
// calls at the end of the cycle's evaluation (so a caller that answers by calling back in never
// finds the network half-evaluated).
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include <systemc>
#include <tlm>

#include "common/platform_config.hpp"
#include "noc/mesh_router.hpp"

namespace gpusc::noc {

struct Packet {
  tlm::tlm_generic_payload* gp = nullptr;
  uint64_t accepted = 0;  // cycle the NI took it
  uint64_t readyAt = 0;   // first cycle its head may leave
  uint32_t src = 0, dst = 0;
  uint32_t network = kRequestNetwork;
  uint16_t flits = 1;
  uint16_t hops = 0;  // routers traversed, known once its head is ejected
};

// Packets in the network, by index; indices are reused.
class PacketTable {
 public:
  uint32_t create(const Packet& p);
  Packet& operator[](uint32_t i) { return packets_[i]; }
  const Packet& operator[](uint32_t i) const { return packets_[i]; }
  void free(uint32_t i);
  size_t live() const { return packets_.size() - free_.size(); }
  bool isLive(uint32_t i) const { return i < live_.size() && live_[i]; }
  size_t slots() const { return packets_.size(); }
  // Releases the payload of every live packet and forgets them all.
  void clear();

 private:
  std::vector<Packet> packets_;
  std::vector<uint8_t> live_;
  std::vector<uint32_t> free_;
};

// Delivered traffic, per virtual network.
struct NetworkStats {
  static constexpr size_t kBuckets = 64;  // latency histogram: [0, 2), [2, 4), [4, 8), ...
  uint64_t injectedPackets = 0;
  uint64_t packets = 0, flits = 0;
  uint64_t latencySum = 0, latencyMax = 0;
  uint64_t hopsSum = 0;
  std::array<uint64_t, kBuckets> histogram{};

  static size_t bucket(uint64_t latency) {
    return latency < 2 ? 0 : static_cast<size_t>(63 - __builtin_clzll(latency));
  }
  void record(uint32_t flitCount, uint64_t latency, uint32_t hops);
};

struct TrafficStats {
  std::array<NetworkStats, kVirtualNetworks> network;
  void reset() { network = {}; }
};

// A socket call the interconnect makes for an NI at the end of the cycle.
struct Delivery {
  enum Kind : uint8_t { kRequest, kReply, kEndRequest };
  Kind kind = kRequest;
  uint32_t index = 0;  // L2 slice (kRequest) or SM (kReply, kEndRequest)
  tlm::tlm_generic_payload* gp = nullptr;
};

class NetworkInterface : public sc_core::sc_module {
 public:
  enum class Side { kSm, kL2 };

  // `node`: this NI's node number; `index`: its SM or L2 slice number.
  // `injectionCapacity`: packets the injection queue holds, 0 for no limit.
  NetworkInterface(const sc_core::sc_module_name& name, Fabric& fabric, PacketTable& packets,
                   TrafficStats& stats, std::vector<Delivery>& outbox, uint32_t node, Side side,
                   uint32_t index, const NocConfig& noc, uint32_t injectionCapacity,
                   uint32_t ejectionCapacity);

  // Flits of a packet: ceil((header + data) / flit bytes), at least one.
  static uint32_t packetFlits(uint32_t headerBytes, uint32_t flitBytes, uint32_t dataBytes);
  // Data bytes a payload's packet carries on `network`.
  static uint32_t dataBytes(const tlm::tlm_generic_payload& gp, uint32_t network);

  OutputChannel& injection() { return injection_; }
  InputChannel& ejection() { return ejection_; }
  const OutputChannel& injection() const { return injection_; }
  uint32_t node() const { return node_; }

  // ---- the TLM side, in cycle `cycle` (the caller holds a reference to gp for the NI) ----
  // SM: a request from the L1 for node `dst`. False: the queue is full; the NI keeps the
  // request and asks the interconnect to send END_REQ when it has taken it.
  bool acceptRequest(tlm::tlm_generic_payload& gp, uint32_t dst, uint64_t cycle);
  // L2 slice: a reply from the L2 for node `dst` (it also ends the request phase of that payload
  // if that had not ended).
  void acceptReply(tlm::tlm_generic_payload& gp, uint32_t dst, uint64_t cycle);
  // L2 slice: the L2 took the request handed to it (END_REQ, or the TLM_UPDATED return).
  bool awaitingEndRequest(const tlm::tlm_generic_payload& gp) const { return awaiting_ == &gp; }
  void requestAccepted(tlm::tlm_generic_payload& gp);

  // Evaluates cycle fabric.now: ejection, delivery, injection.
  void step();
  // step() would do nothing this cycle: nothing to eject, hand to the L2 or inject, and no
  // stall to clear. Asked inline for every interface every cycle; most are quiet.
  bool quiet() const {
    return !stalled_ && ejection_.occupancy() == 0 && injectQueue_.empty() &&
           (side_ != Side::kL2 || awaiting_ != nullptr || ejectQueue_.empty());
  }
  // A byte the NI sets to 1 whenever it may stop being quiet: a packet to inject, a flit written
  // into its ejection channel, the L2 taking a request while more wait. The interconnect clears
  // it when it finds the NI quiet, and steps only NIs whose byte is set.
  void setActivityFlag(uint8_t* flag) {
    activity_ = flag;
    ejection_.activity = flag;
    markActive();
  }
  // `cycles` cycles passed unevaluated, in the state of the last evaluated one.
  void accountSkipped(uint64_t cycles) {
    if (stalled_) stallCycles_ += cycles;
  }
  bool stalled() const { return stalled_; }
  bool empty() const;  // nothing queued, held or being reassembled

  uint64_t injectionStallCycles() const { return stallCycles_; }
  uint64_t holdCycles() const { return holdCycles_; }
  void resetStats();
  void reset();  // drops everything (the packet table releases the payloads of packets)

 private:
  struct Reassembly {
    bool active = false;
    uint32_t packet = 0;
    uint32_t next = 0;  // expected sequence number
  };

  void eject(uint64_t now);
  void complete(uint32_t id, uint64_t now);
  void deliver();
  void inject(uint64_t now);
  void enqueue(tlm::tlm_generic_payload& gp, uint32_t dst, uint64_t cycle);

  Fabric& fabric_;
  PacketTable& packets_;
  TrafficStats& stats_;
  std::vector<Delivery>& outbox_;
  const uint32_t node_, index_;
  const Side side_;
  const uint32_t network_;  // the network this NI injects into
  const uint32_t headerBytes_, flitBytes_, creditDelay_;
  const uint32_t injectionCapacity_, ejectionCapacity_;

  OutputChannel injection_;
  InputChannel ejection_;

  // Injection.
  Ring<uint32_t> injectQueue_;
  bool sending_ = false;
  uint32_t sendVc_ = 0, sent_ = 0;
  uint32_t vcPointer_ = 0;
  tlm::tlm_generic_payload* held_ = nullptr;  // an L1 request waiting for END_REQ
  uint32_t heldDst_ = 0;
  uint64_t heldSince_ = 0;
  bool stalled_ = false;         // the head packet could not start entering the network this cycle
  uint8_t* activity_ = nullptr;  // setActivityFlag
  void markActive() {
    if (activity_) *activity_ = 1;
  }

  // Ejection.
  std::vector<Reassembly> reassembly_;  // per VC
  uint32_t ejectPointer_ = 0;
  Ring<uint32_t> ejectQueue_;                     // complete requests waiting for the L2
  tlm::tlm_generic_payload* awaiting_ = nullptr;  // handed to the L2, END_REQ pending

  uint64_t stallCycles_ = 0, holdCycles_ = 0;
};

}  // namespace gpusc::noc
