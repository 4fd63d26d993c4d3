// The interconnect between the SMs' L1 data caches and the memory partitions' L2 slices
// (docs/memory-system.md): a Mesh of MeshRouters or a Crossbar (noc.topology), on the
// interconnect clock (gpu.clocks.interconnect_mhz).
//
// Nodes: SM i is node i, L2 slice s is node gpu.num_sms + s (AddressMap::slice numbering:
// l2.slices_per_partition per memory partition, partition-major); each has a NetworkInterface.
// sm_sockets[i] is bound by SM i's L1: its requests go to L2 slice AddressMap(cfg).slice(address)
// and the reply comes back on sm_sockets[i]'s backward path. l2_sockets[s] is bound to L2 slice
// s: requests leave as BEGIN_REQ
// (END_REQ back-pressure honoured), replies come in as BEGIN_RESP and go to the SM named by the
// payload's MemAccessExtension::sm. The payload itself travels; the interconnect holds a
// reference to it while it is inside.
//
// Latency. A packet the network takes in interconnect cycle c (the cycle in progress when the
// socket call arrives) is delivered, on an otherwise idle network, in cycle
//     c + 1 + H x (routing_delay + vc_alloc_delay + switch_alloc_delay + 1 + link_latency)
//       + (F - 1)
// where 1 is the NI's packetisation, H the routers the packet passes through (mesh: Manhattan
// distance between the two routers + 1, XY routing; crossbar: 1), each followed by its output
// link (the last one into the destination's NI), and F the packet's flits (a new flit every
// cycle behind the head). The delivering call is made in that cycle. This holds while a VC
// buffer holds the whole packet or covers a hop's credit round trip: vc_buffer_flits >= F or
// >= routing_delay + vc_alloc_delay + switch_alloc_delay + 1 + link_latency
//       + max(1, switch_alloc_delay + credit_delay);
// with smaller buffers the body flits wait for credits.
//
// Evaluation. One SC_METHOD evaluates the whole network, cycle by cycle, only while something
// can happen: after a cycle in which nothing moved it jumps to the next cycle at which a flit
// arrives, a credit returns or a pipeline stage completes (the Fabric's calendar), and with
// nothing in flight it sleeps until a socket call wakes it. Per cycle: credits due, every NI
// (ejection, delivery to the L2, injection), every router that can act in the cycle (route
// computation, VC allocation, switch allocation and traversal; on host threads when there are
// many, with the flits and credits they send committed after all of them, FabricWrites), then
// the socket calls the NIs asked for.
//
// Statistics (statsJson): packets, flits and latency (cycles from the NI taking a packet to the
// ejection of its tail: average, maximum, power-of-two histogram) per virtual network, average
// hop count (routers traversed), per directed link flits and utilisation (flits / elapsed
// cycles), per node injection stall cycles (cycles the packet at the head of the NI's injection
// queue could not start entering the network: no free VC with a credit on the link into its
// router) and per SM hold cycles (cycles L1 requests waited for END_REQ because the injection
// queue was full). Keys: topology, cycles (since resetStats), packets, flits, average_latency,
// max_latency, average_hops, networks.{request,reply}.{injected_packets, packets, flits,
// average_hops, latency.{average, max, histogram: [{from, to, packets}]}},
// injection_stall_cycles.{sm<i>, l2_<s>}, injection_stall_cycles_total,
// request_hold_cycles.{sm<i>}, links: [{from, to, flits, utilization}] (endpoints sm<i>,
// l2_<s>, router(x,y) or switch).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <tlm_utils/multi_passthrough_initiator_socket.h>
#include <tlm_utils/multi_passthrough_target_socket.h>
#include <nlohmann/json.hpp>
#include <systemc>
#include <tlm>

#include "common/address_map.hpp"
#include "common/clock.hpp"
#include "common/edge_scheduler.hpp"
#include "common/host_workers.hpp"
#include "common/mem_access.hpp"
#include "common/platform_config.hpp"
#include "noc/mesh_router.hpp"
#include "noc/network_interface.hpp"

namespace gpusc::noc {

class Interconnect : public sc_core::sc_module {
 public:
  tlm_utils::multi_passthrough_target_socket<Interconnect> sm_sockets;
  tlm_utils::multi_passthrough_initiator_socket<Interconnect> l2_sockets;

  ~Interconnect() override;

  const std::string& topology() const { return topology_; }
  const Clock& clock() const { return clock_; }
  uint32_t smCount() const { return numSms_; }
  uint32_t l2Count() const { return numL2_; }
  uint32_t nodeCount() const { return numSms_ + numL2_; }
  uint32_t smNode(uint32_t sm) const { return sm; }
  uint32_t l2Node(uint32_t slice) const { return numSms_ + slice; }
  std::string nodeName(uint32_t node) const;

  nlohmann::json statsJson() const;
  // injection_stall_cycles_total of statsJson() (interconnect cycles since resetStats), cheaply.
  uint64_t injectionStallCycles() const;
  void resetStats();
  // Flit traversals since resetStats(), for the energy model: of router switches (every flit a
  // router sends on an output) and of links (those, plus the NIs' injection links).
  struct FlitTraversals {
    uint64_t routers = 0, links = 0;
  };
  FlitTraversals flitTraversals() const;
  // Routers that leak: the mesh's routers, or one per node of a crossbar.
  uint32_t leakingRouters() const;
  void resetState();
  // In a platform: runs from `s` (its own process stays idle).
  void attach(EdgeScheduler& s) {
    wakeup_.attach(s, s.add(EdgeScheduler::kInterconnect, [this] { step(); }));
  }
  // Packets inside the network (taken in, not yet delivered).
  size_t packetsInFlight() const { return packets_.live(); }
  // The packet in the network longest (since its network interface took it), for the
  // no-progress watchdog.
  std::optional<HeldRequest> oldestHeld() const;

  // ---- for tests and debugging ----
  // Every sender-side credit counter (router outputs and NI injection links): each equals
  // noc.vc_buffer_flits once the network has drained.
  std::vector<uint32_t> creditCounters() const;
  // No packet, flit or credit anywhere in the network.
  bool drained() const;
  // Cycles the network's process has evaluated since it was built (idle cycles cost nothing).
  uint64_t evaluatedCycles() const { return evaluatedCycles_; }

  // Host threads for the routers (null: the simulation thread alone; not owned). In a cycle in
  // which at least kParallelRouters routers may act, they are evaluated on the team and what
  // they hand on is committed router by router in index order: results are the same for any
  // number of threads (docs/architecture.md, "Host threads").
  void setWorkers(HostWorkers* workers) { workers_ = workers; }
  // (Measured with SGEMM: 16 routers of stream-4x4 run faster on one thread, 64 of stream-8x8
  // and 121 of stream-11x11 on two; docs/performance.md.)
  static constexpr size_t kParallelRouters = 24;
  // Interconnect cycles whose routers were evaluated on host threads.
  uint64_t parallelCycles() const { return parallelCycles_; }

 protected:
  Interconnect(const sc_core::sc_module_name& name, const PlatformConfig& cfg,
               std::string topology);

  Fabric& fabric() { return fabric_; }
  const NocConfig& noc() const { return noc_; }
  NetworkInterface& ni(uint32_t node) { return *nis_[node]; }
  // Topologies register their routers (which they own) in evaluation order.
  void addRouter(Router& r) { routers_.push_back(&r); }

 private:
  SC_HAS_PROCESS(Interconnect);

  tlm::tlm_sync_enum fromSm(int id, tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase,
                            sc_core::sc_time& delay);
  tlm::tlm_sync_enum fromL2(int id, tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase,
                            sc_core::sc_time& delay);
  void end_of_elaboration() override;

  uint64_t injectionStallCycles(const NetworkInterface& ni, uint64_t now) const;
  void step();  // SC_METHOD: evaluates one interconnect cycle
  void stepRouters();
  void scheduleAt(uint64_t cycle);
  void dispatch();  // the socket calls the NIs asked for this cycle
  std::vector<const OutputChannel*> links() const;

  const std::string topology_;
  const NocConfig noc_;
  const uint32_t numSms_, numL2_;
  const AddressMap addressMap_;
  const Clock clock_;
  Fabric fabric_;
  PacketTable packets_;
  TrafficStats traffic_;
  std::vector<Delivery> outbox_;
  std::vector<std::unique_ptr<NetworkInterface>> nis_;
  // Per NI (by node): 1 when it may have work this cycle (NetworkInterface::setActivityFlag);
  // 0 only when it was found quiet and nothing has happened to it since.
  std::vector<uint8_t> niActive_;
  std::vector<Router*> routers_;
  HostWorkers* workers_ = nullptr;
  std::vector<uint32_t> dueRouters_;  // the routers that may act in the current cycle
  std::vector<size_t> bounds_;        // the host threads' shares of them
  uint64_t parallelCycles_ = 0;

  sc_core::sc_event wake_;  // its own process's, while not attached to a scheduler
  Wakeup wakeup_{wake_};
  uint64_t scheduled_ = kNever;  // the cycle wakeup_ is asked for
  uint64_t lastCycle_ = 0;       // the last evaluated cycle
  bool evaluated_ = false;
  uint64_t statsStart_ = 0;  // cycle the statistics were reset
  uint64_t evaluatedCycles_ = 0;
};

// A Mesh or a Crossbar, by noc.topology; InputError for a bad configuration (naming its key).
std::unique_ptr<Interconnect> makeInterconnect(const sc_core::sc_module_name& name,
                                               const PlatformConfig& cfg);

}  // namespace gpusc::noc
