// The interconnect (models/noc): packet latency on an idle mesh and crossbar against the
// documented formula, XY routes, integrity under saturating random traffic (every request and
// reply delivered exactly once, flits in order, credits restored) with both allocators and both
// topologies, back-pressure from a slow L2 slice, the mesh layout and its validation, the
// allocators themselves, and that an idle network costs no evaluation.
//
// Scripted initiators stand in for the SMs' L1 data caches and recording targets for the
// partitions' L2 slices; all run on the interconnect clock unless a test says otherwise, so
// their cycle numbers are interconnect cycles.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "common/address_map.hpp"
#include "common/error.hpp"
#include "common/platform_config.hpp"
#include "common/protocol_checker.hpp"
#include "common/rng.hpp"
#include "noc/allocator.hpp"
#include "noc/crossbar.hpp"
#include "noc/interconnect.hpp"
#include "noc/mesh.hpp"
#include "noc/network_interface.hpp"
#include "support/tlm_harness.hpp"

using namespace gpusc;
using namespace gpusc::test;
using namespace gpusc::noc;

namespace {

// gtx480 with one L2 slice per partition, so that an L2 port is a partition (the tests below
// address partitions); TwoSlicesPerPartitionEachHaveAPort covers several slices.
PlatformConfig platform(const std::vector<std::string>& sets) {
  std::vector<std::string> all = {"l2.slices_per_partition=1"};
  all.insert(all.end(), sets.begin(), sets.end());
  return loadPlatform("gtx480", all);
}

// A byte address in `partition` (AddressMap: partition = (addr / interleave) mod partitions),
// distinct for every `k`.
uint64_t addressIn(const PlatformConfig& cfg, uint32_t partition, uint64_t k) {
  return (k * cfg.memory.partitions + partition) * cfg.memory.partition_interleave_bytes;
}

Request request(uint64_t cycle, uint64_t addr, AccessKind kind, uint32_t bytes, uint32_t sm) {
  Request r;
  r.cycle = cycle;
  r.addr = addr;
  r.kind = kind;
  r.bytes = bytes;
  r.sm = sm;
  return r;
}

uint32_t requestFlits(const NocConfig& n, const Request& r) {
  return NetworkInterface::packetFlits(n.header_bytes, n.flit_bytes,
                                       r.kind == AccessKind::Store ? r.bytes : 0);
}
uint32_t replyFlits(const NocConfig& n, const Request& r) {
  return NetworkInterface::packetFlits(n.header_bytes, n.flit_bytes,
                                       r.kind == AccessKind::Store ? 0 : r.bytes);
}

// Latency of a packet on an idle network whose buffers cover the credit round trip (the formula
// of models/noc/interconnect.hpp): the NI's packetisation cycle, then for each router passed
// route computation, VC allocation, switch allocation, switch traversal and the output link, and
// a body flit per cycle behind the head.
uint64_t idleLatency(const NocConfig& n, uint32_t routers, uint32_t flits) {
  const uint64_t perRouter =
      n.routing_delay + n.vc_alloc_delay + n.switch_alloc_delay + 1 + n.link_latency;
  return 1 + routers * perRouter + (flits - 1);
}

// The formula holds when a VC buffer covers the credit round trip of a hop, or holds the packet.
bool buffersCoverRoundTrip(const NocConfig& n, uint32_t flits) {
  const uint32_t roundTrip = n.routing_delay + n.vc_alloc_delay + n.switch_alloc_delay + 1 +
                             n.link_latency + std::max(1u, n.switch_alloc_delay + n.credit_delay);
  return n.vc_buffer_flits >= std::min(roundTrip, flits);
}

// Routers between two nodes: XY distance + 1 on a mesh, the one switch of a crossbar.
uint32_t routersBetween(const Interconnect& noc, uint32_t a, uint32_t b) {
  if (const auto* mesh = dynamic_cast<const Mesh*>(&noc)) {
    const MeshLayout& l = mesh->layout();
    auto d = [](uint32_t p, uint32_t q) { return p > q ? p - q : q - p; };
    return d(l.x[a], l.x[b]) + d(l.y[a], l.y[b]) + 1;
  }
  return 1;
}

// SMs as scripted initiators and L2 slices as recording targets around an interconnect, every
// connection watched by a ProtocolChecker (docs/memory-system.md's socket conventions).
struct Bench {
  PlatformConfig cfg;
  Clock clock;
  std::unique_ptr<Interconnect> noc;
  std::vector<std::unique_ptr<ScriptedInitiator>> sms;
  std::vector<std::unique_ptr<RecordingTarget>> slices;
  std::vector<std::unique_ptr<ProtocolChecker>> checkers;

  // `latency(p)` / `maxOutstanding(p)`: L2 port p's answer latency and request limit (a port per
  // slice; with one slice per partition, port p is partition p).
  Bench(const PlatformConfig& c, const std::function<uint32_t(uint32_t)>& latency,
        const std::function<uint32_t(uint32_t)>& maxOutstanding, double benchMhz = 0)
      : cfg(c), clock(benchMhz > 0 ? benchMhz : c.gpu.clocks.interconnect_mhz) {
    noc = makeInterconnect("noc", cfg);
    for (uint32_t i = 0; i < cfg.gpu.num_sms; ++i) {
      sms.push_back(std::make_unique<ScriptedInitiator>(fmt::format("l1_{}", i).c_str(), clock));
      checkers.push_back(std::make_unique<ProtocolChecker>(fmt::format("check_sm{}", i).c_str()));
      bindThrough(*checkers.back(), sms.back()->socket, noc->sm_sockets);
    }
    for (uint32_t p = 0; p < cfg.memory.partitions * cfg.l2.slices_per_partition; ++p) {
      slices.push_back(std::make_unique<RecordingTarget>(fmt::format("l2_{}", p).c_str(), clock,
                                                         latency(p), maxOutstanding(p)));
      checkers.push_back(std::make_unique<ProtocolChecker>(fmt::format("check_l2_{}", p).c_str()));
      bindThrough(*checkers.back(), noc->l2_sockets, slices.back()->socket);
    }
  }

  // Every connection kept the conventions and every request was answered.
  void expectProtocolKept() {
    for (auto& c : checkers) {
      c->finish();
      for (const std::string& v : c->violations()) ADD_FAILURE() << v;
    }
  }

  size_t requests() const {
    size_t n = 0;
    for (const auto& s : sms) n += s->outcomes().size();
    return n;
  }
};

uint32_t unlimited(uint32_t) { return std::numeric_limits<uint32_t>::max(); }

void expectDrainedWithAllCredits(const Interconnect& noc, const NocConfig& n) {
  EXPECT_TRUE(noc.drained());
  const std::vector<uint32_t> credits = noc.creditCounters();
  ASSERT_FALSE(credits.empty());
  for (uint32_t c : credits) ASSERT_EQ(c, n.vc_buffer_flits);
}

// ---- latency on an idle network -----------------------------------------------------------------

// One request at a time (far apart), from every SM to every partition, alternating loads and
// stores: each is received, and its reply returns, exactly when the formula says.
void checkIdleLatencies(const PlatformConfig& cfg) {
  const uint32_t targetLatency = 7;
  Bench b(
      cfg, [&](uint32_t) { return targetLatency; }, unlimited);
  ASSERT_TRUE(buffersCoverRoundTrip(
      cfg.noc, NetworkInterface::packetFlits(cfg.noc.header_bytes, cfg.noc.flit_bytes, 128)));
  const uint64_t spacing = 1000;
  uint64_t k = 0;
  for (uint32_t s = 0; s < cfg.gpu.num_sms; ++s)
    for (uint32_t p = 0; p < cfg.memory.partitions; ++p, ++k)
      b.sms[s]->add(request(k * spacing, addressIn(cfg, p, k),
                            k % 2 ? AccessKind::Store : AccessKind::Load, 128, s));
  sc_core::sc_start();
  const NocConfig& n = cfg.noc;
  uint64_t maxRequestLatency = 0, maxReplyLatency = 0;
  for (uint32_t s = 0; s < cfg.gpu.num_sms; ++s) {
    ASSERT_TRUE(b.sms[s]->allAnswered());
    for (uint32_t p = 0; p < cfg.memory.partitions; ++p) {
      const Outcome& o = b.sms[s]->outcomes()[p];
      const auto& got = b.slices[p]->received();
      const auto it = std::find_if(got.begin(), got.end(),
                                   [&](const Received& r) { return r.addr == o.request.addr; });
      ASSERT_NE(it, got.end());
      const uint32_t routers = routersBetween(*b.noc, b.noc->smNode(s), b.noc->l2Node(p));
      SCOPED_TRACE(fmt::format("sm {} -> partition {} ({} routers, {})", s, p, routers,
                               accessKindName(o.request.kind)));
      EXPECT_EQ(o.accepted, o.sent);  // an empty injection queue takes it at once
      EXPECT_EQ(it->cycle, o.sent + idleLatency(n, routers, requestFlits(n, o.request)));
      EXPECT_EQ(o.answered,
                it->cycle + targetLatency + idleLatency(n, routers, replyFlits(n, o.request)));
      maxRequestLatency =
          std::max(maxRequestLatency, idleLatency(n, routers, requestFlits(n, o.request)));
      maxReplyLatency =
          std::max(maxReplyLatency, idleLatency(n, routers, replyFlits(n, o.request)));
    }
  }
  // The statistics measure the same latencies (NI acceptance to tail ejection).
  const nlohmann::json stats = b.noc->statsJson();
  EXPECT_EQ(stats["networks"]["request"]["latency"]["max"].get<uint64_t>(), maxRequestLatency);
  EXPECT_EQ(stats["networks"]["reply"]["latency"]["max"].get<uint64_t>(), maxReplyLatency);
  expectDrainedWithAllCredits(*b.noc, n);
  b.expectProtocolKept();
}

TEST(Noc, MeshIdleLatencyMatchesFormula) {
  newSimulation();
  // Unequal stage delays so that every term of the formula shows; deep buffers cover the credit
  // round trip; the seed 003 checkerboard layout.
  checkIdleLatencies(platform(
      {"noc.topology=mesh", "gpu.num_sms=8", "memory.partitions=8", "noc.mesh_columns=4",
       "noc.mesh_rows=4", "noc.routing_delay=2", "noc.vc_alloc_delay=1", "noc.switch_alloc_delay=3",
       "noc.link_latency=2", "noc.credit_delay=1", "noc.flit_bytes=32", "noc.header_bytes=8",
       "noc.virtual_channels=2", "noc.vc_buffer_flits=32",
       "noc.mc_positions=[{x: 1, y: 0}, {x: 3, y: 0}, {x: 0, y: 1}, {x: 2, y: 1}, {x: 1, y: 2}, "
       "{x: 3, y: 2}, {x: 0, y: 3}, {x: 2, y: 3}]",
       "noc.sm_positions=[{x: 0, y: 0}, {x: 2, y: 0}, {x: 1, y: 1}, {x: 3, y: 1}, {x: 0, y: 2}, "
       "{x: 2, y: 2}, {x: 1, y: 3}, {x: 3, y: 3}]"}));
}

TEST(Noc, MeshIdleLatencyWithZeroStageDelays) {
  newSimulation();
  // Stages of zero cycles chain within a cycle: a router then costs switch traversal + link.
  checkIdleLatencies(
      platform({"noc.topology=mesh", "gpu.num_sms=5", "memory.partitions=4", "noc.routing_delay=0",
                "noc.vc_alloc_delay=0", "noc.switch_alloc_delay=0", "noc.credit_delay=0",
                "noc.link_latency=1", "noc.vc_buffer_flits=16"}));
}

TEST(Noc, CrossbarIdleLatencyAtGtx480Defaults) {
  newSimulation();
  checkIdleLatencies(platform({"noc.topology=crossbar"}));
}

TEST(Noc, CrossbarIdleLatencyMatchesFormula) {
  newSimulation();
  checkIdleLatencies(
      platform({"noc.topology=crossbar", "gpu.num_sms=6", "memory.partitions=3",
                "noc.routing_delay=1", "noc.vc_alloc_delay=2", "noc.switch_alloc_delay=1",
                "noc.link_latency=3", "noc.flit_bytes=16", "noc.vc_buffer_flits=32"}));
}

// With two L2 slices per partition (gtx480) every slice is a node of its own: a request goes to
// the port of its address's slice (a channel's chunks alternate between its slices), with the
// idle latency of one crossbar hop, and the reply comes back to its SM.
TEST(Noc, TwoSlicesPerPartitionEachHaveAPort) {
  newSimulation();
  const PlatformConfig cfg = platform({"noc.topology=crossbar", "l2.slices_per_partition=2"});
  const AddressMap map(cfg);
  const uint32_t targetLatency = 7, slices = map.slices();
  ASSERT_EQ(slices, 2 * cfg.memory.partitions);
  Bench b(
      cfg, [&](uint32_t) { return targetLatency; }, unlimited);
  ASSERT_EQ(b.noc->l2Count(), slices);
  const uint64_t spacing = 1000;
  std::vector<uint64_t> addrs;
  for (uint64_t k = 0; k < 2 * slices; ++k) {  // every slice twice, from SMs 0 and 1
    addrs.push_back(k * cfg.memory.partition_interleave_bytes);
    b.sms[k % 2]->add(request(k * spacing, addrs.back(), AccessKind::Load, 128, k % 2));
  }
  sc_core::sc_start();
  const NocConfig& n = cfg.noc;
  for (uint64_t k = 0; k < addrs.size(); ++k) {
    const uint32_t slice = map.slice(addrs[k]);
    SCOPED_TRACE(fmt::format("address {:#x} -> slice {}", addrs[k], slice));
    const auto& got = b.slices[slice]->received();
    const auto it =
        std::find_if(got.begin(), got.end(), [&](const Received& r) { return r.addr == addrs[k]; });
    ASSERT_NE(it, got.end());
    const Outcome& o = b.sms[k % 2]->outcomes()[k / 2];
    EXPECT_EQ(it->cycle, o.sent + idleLatency(n, 1, requestFlits(n, o.request)));
    EXPECT_EQ(o.answered, it->cycle + targetLatency + idleLatency(n, 1, replyFlits(n, o.request)));
  }
  for (uint32_t s = 0; s < slices; ++s) EXPECT_EQ(b.slices[s]->received().size(), 2u) << s;
  expectDrainedWithAllCredits(*b.noc, n);
  b.expectProtocolKept();
}

// ---- XY routing ---------------------------------------------------------------------------------

// The links of the XY route from node a to node b: into a's router, along the row, along the
// column, out to b.
std::vector<std::pair<std::string, std::string>> xyRoute(const Mesh& mesh, uint32_t a, uint32_t b) {
  const MeshLayout& l = mesh.layout();
  std::vector<std::pair<std::string, std::string>> links;
  uint32_t x = l.x[a], y = l.y[a];
  links.emplace_back(mesh.nodeName(a), Mesh::routerName(x, y));
  while (x != l.x[b]) {
    const uint32_t nx = x < l.x[b] ? x + 1 : x - 1;
    links.emplace_back(Mesh::routerName(x, y), Mesh::routerName(nx, y));
    x = nx;
  }
  while (y != l.y[b]) {
    const uint32_t ny = y < l.y[b] ? y + 1 : y - 1;
    links.emplace_back(Mesh::routerName(x, y), Mesh::routerName(x, ny));
    y = ny;
  }
  links.emplace_back(Mesh::routerName(x, y), mesh.nodeName(b));
  return links;
}

TEST(Noc, XyRoutingUsesExactlyTheRouteLinks) {
  newSimulation();
  const PlatformConfig cfg = platform({"noc.topology=mesh", "gpu.num_sms=8", "memory.partitions=8",
                                       "noc.mesh_columns=4", "noc.mesh_rows=4"});
  Bench b(
      cfg, [](uint32_t) { return 3; }, unlimited);
  const auto& mesh = dynamic_cast<const Mesh&>(*b.noc);
  // A pair whose XY and YX routes differ (both coordinates differ), in the default layout.
  uint32_t sm = 0, partition = 0;
  bool found = false;
  for (uint32_t s = 0; s < cfg.gpu.num_sms && !found; ++s)
    for (uint32_t p = 0; p < cfg.memory.partitions && !found; ++p) {
      const MeshLayout& l = mesh.layout();
      const uint32_t a = mesh.smNode(s), c = mesh.l2Node(p);
      if (l.x[a] != l.x[c] && l.y[a] != l.y[c] &&
          (l.x[a] > l.x[c] ? l.x[a] - l.x[c] : l.x[c] - l.x[a]) >= 2) {
        sm = s;
        partition = p;
        found = true;
      }
    }
  ASSERT_TRUE(found);
  const Request r = request(0, addressIn(cfg, partition, 0), AccessKind::Load, 128, sm);
  b.sms[sm]->add(r);
  sc_core::sc_start();
  ASSERT_TRUE(b.sms[sm]->allAnswered());

  std::map<std::pair<std::string, std::string>, uint64_t> expected;
  for (const auto& l : xyRoute(mesh, mesh.smNode(sm), mesh.l2Node(partition)))
    expected[l] += requestFlits(cfg.noc, r);
  for (const auto& l : xyRoute(mesh, mesh.l2Node(partition), mesh.smNode(sm)))
    expected[l] += replyFlits(cfg.noc, r);
  const nlohmann::json stats = b.noc->statsJson();
  size_t used = 0;
  for (const auto& link : stats["links"]) {
    const auto key = std::make_pair(link["from"].get<std::string>(), link["to"].get<std::string>());
    const auto it = expected.find(key);
    const uint64_t want = it == expected.end() ? 0 : it->second;
    EXPECT_EQ(link["flits"].get<uint64_t>(), want) << key.first << " -> " << key.second;
    used += it != expected.end();
  }
  EXPECT_EQ(used, expected.size());  // every route link exists
  // Every directed link of the 4x4 mesh is listed: 2 x (3 x 4) x 2 between routers, and a link
  // each way between every node and its router.
  EXPECT_EQ(stats["links"].size(), 2u * 2 * 3 * 4 + 2 * mesh.nodeCount());
  b.expectProtocolKept();
}

// ---- integrity under saturating traffic ---------------------------------------------------------

class NocSaturation : public ::testing::TestWithParam<std::tuple<std::string, std::string>> {};

TEST_P(NocSaturation, EveryPacketDeliveredOnceInOrderAndCreditsRestored) {
  newSimulation();
  const auto& [topology, allocator] = GetParam();
  // Tiny buffers, several VCs, input speedup, an interconnect clock faster than the SMs' and
  // slices', slices that limit their outstanding requests (holding END_REQ).
  const PlatformConfig cfg =
      platform({"noc.topology=" + topology, "noc.allocator=" + allocator,
                "noc.allocator_iterations=2", "gpu.num_sms=8", "memory.partitions=6",
                "noc.virtual_channels=3", "noc.vc_buffer_flits=2", "noc.flit_bytes=16",
                "noc.header_bytes=8", "noc.input_speedup=2", "gpu.clocks.interconnect_mhz=900"});
  const double benchMhz = 700;
  Bench b(
      cfg, [](uint32_t p) { return 2 + p; },
      [](uint32_t p) { return p % 2 ? 2u : std::numeric_limits<uint32_t>::max(); }, benchMhz);
  Rng rng(2024);
  const uint32_t perSm = 500;
  uint64_t k = 0;
  for (uint32_t s = 0; s < cfg.gpu.num_sms; ++s)
    for (uint32_t i = 0; i < perSm; ++i, ++k) {
      const uint32_t p = rng.below(cfg.memory.partitions);
      const AccessKind kind = rng.below(5) < 3 ? AccessKind::Load : AccessKind::Store;
      b.sms[s]->add(request(0, addressIn(cfg, p, k), kind, 32 * (1 + rng.below(4)), s));
    }
  EXPECT_NO_THROW(sc_core::sc_start());  // a flit out of order would throw InternalError

  const size_t total = b.requests();
  const AddressMap map(cfg.memory);
  // Every reply returned (the harness takes each once; with as many replies delivered as
  // requests, none came twice).
  for (const auto& sm : b.sms) ASSERT_TRUE(sm->allAnswered());
  // Every request reached its partition exactly once, with its command.
  std::map<uint64_t, const Outcome*> sent;
  for (const auto& sm : b.sms)
    for (const Outcome& o : sm->outcomes()) sent[o.request.addr] = &o;
  ASSERT_EQ(sent.size(), total);
  std::set<uint64_t> seen;
  size_t received = 0;
  for (uint32_t p = 0; p < cfg.memory.partitions; ++p)
    for (const Received& r : b.slices[p]->received()) {
      ++received;
      EXPECT_TRUE(seen.insert(r.addr).second) << "request delivered twice: " << r.addr;
      EXPECT_EQ(map.partition(r.addr), p);
      ASSERT_TRUE(sent.count(r.addr));
      const Outcome& o = *sent[r.addr];
      EXPECT_EQ(r.sm, o.request.sm);
      EXPECT_EQ(r.command, o.request.kind == AccessKind::Store ? tlm::TLM_WRITE_COMMAND
                                                               : tlm::TLM_READ_COMMAND);
    }
  EXPECT_EQ(received, total);

  // Statistics derived from the traffic: packets, flits, hops and flits over all links (a packet
  // crosses the link into its first router and one output link per router).
  uint64_t reqFlits = 0, repFlits = 0, hops = 0, linkFlits = 0;
  for (const auto& sm : b.sms)
    for (const Outcome& o : sm->outcomes()) {
      const uint32_t routers = routersBetween(*b.noc, b.noc->smNode(o.request.sm),
                                              b.noc->l2Node(map.partition(o.request.addr)));
      reqFlits += requestFlits(cfg.noc, o.request);
      repFlits += replyFlits(cfg.noc, o.request);
      hops += 2 * routers;
      linkFlits += (requestFlits(cfg.noc, o.request) + replyFlits(cfg.noc, o.request)) *
                   uint64_t(routers + 1);
    }
  const nlohmann::json stats = b.noc->statsJson();
  EXPECT_EQ(stats["networks"]["request"]["packets"].get<uint64_t>(), total);
  EXPECT_EQ(stats["networks"]["reply"]["packets"].get<uint64_t>(), total);
  EXPECT_EQ(stats["networks"]["request"]["injected_packets"].get<uint64_t>(), total);
  EXPECT_EQ(stats["networks"]["request"]["flits"].get<uint64_t>(), reqFlits);
  EXPECT_EQ(stats["networks"]["reply"]["flits"].get<uint64_t>(), repFlits);
  EXPECT_DOUBLE_EQ(stats["average_hops"].get<double>(), double(hops) / double(2 * total));
  uint64_t onLinks = 0;
  for (const auto& l : stats["links"]) onLinks += l["flits"].get<uint64_t>();
  EXPECT_EQ(onLinks, linkFlits);
  for (const char* net : {"request", "reply"}) {
    uint64_t inHistogram = 0;
    for (const auto& bucket : stats["networks"][net]["latency"]["histogram"])
      inHistogram += bucket["packets"].get<uint64_t>();
    EXPECT_EQ(inHistogram, total) << net;
  }

  // It was saturated: many requests in flight at once, injection stalls, L1s held back.
  std::vector<std::pair<uint64_t, int>> edges;
  for (const auto& sm : b.sms)
    for (const Outcome& o : sm->outcomes()) {
      edges.emplace_back(o.accepted, +1);
      edges.emplace_back(o.answered, -1);
    }
  std::sort(edges.begin(), edges.end());
  int inFlight = 0, maxInFlight = 0;
  for (const auto& e : edges) maxInFlight = std::max(maxInFlight, inFlight += e.second);
  EXPECT_GT(maxInFlight, int(2 * cfg.gpu.num_sms));
  EXPECT_GT(stats["injection_stall_cycles_total"].get<uint64_t>(), 0u);
  uint64_t held = 0;
  for (const auto& [node, cycles] : stats["request_hold_cycles"].items())
    held += cycles.get<uint64_t>();
  EXPECT_GT(held, 0u);

  expectDrainedWithAllCredits(*b.noc, cfg.noc);
  b.expectProtocolKept();
}

INSTANTIATE_TEST_SUITE_P(TopologiesAndAllocators, NocSaturation,
                         ::testing::Combine(::testing::Values("mesh", "crossbar"),
                                            ::testing::Values("islip", "round-robin")),
                         [](const auto& info) {
                           std::string n = std::get<0>(info.param) + "_" + std::get<1>(info.param);
                           std::replace(n.begin(), n.end(), '-', '_');
                           return n;
                         });

// ---- back-pressure ------------------------------------------------------------------------------

TEST(Noc, SlowPartitionBacksTrafficUpWithoutLoss) {
  newSimulation();
  const PlatformConfig cfg = platform({"noc.topology=mesh", "gpu.num_sms=8", "memory.partitions=8",
                                       "noc.vc_buffer_flits=4", "noc.virtual_channels=2"});
  const uint32_t slowLatency = 20;
  // Partition 0 takes one request at a time and answers each after slowLatency cycles.
  Bench b(
      cfg, [&](uint32_t p) { return p == 0 ? slowLatency : 1; },
      [](uint32_t p) { return p == 0 ? 1u : std::numeric_limits<uint32_t>::max(); });
  const uint32_t perSm = 30;
  uint64_t k = 0;
  for (uint32_t s = 0; s < cfg.gpu.num_sms; ++s)
    for (uint32_t i = 0; i < perSm; ++i, ++k)
      b.sms[s]->add(request(0, addressIn(cfg, 0, k), AccessKind::Load, 128, s));
  sc_core::sc_start();
  const size_t total = b.requests();
  for (const auto& sm : b.sms) ASSERT_TRUE(sm->allAnswered());
  const auto& got = b.slices[0]->received();
  ASSERT_EQ(got.size(), total);
  std::set<uint64_t> addrs;
  for (const Received& r : got) addrs.insert(r.addr);
  EXPECT_EQ(addrs.size(), total);
  // (The NI hands the slice one request at a time and waits for END_REQ: a second BEGIN_REQ
  // while one is held would overwrite the held one in RecordingTarget and lose it.)
  uint64_t last = 0;
  for (const auto& sm : b.sms)
    for (const Outcome& o : sm->outcomes()) last = std::max(last, o.answered);
  EXPECT_GE(last, total * slowLatency);
  // The back-pressure reached the L1s: some waited for END_REQ.
  uint64_t held = 0, late = 0;
  const nlohmann::json stats = b.noc->statsJson();
  for (const auto& [node, cycles] : stats["request_hold_cycles"].items())
    held += cycles.get<uint64_t>();
  for (const auto& sm : b.sms)
    for (const Outcome& o : sm->outcomes()) late += o.accepted > o.sent;
  EXPECT_GT(held, 0u);
  EXPECT_GT(late, 0u);
  expectDrainedWithAllCredits(*b.noc, cfg.noc);
  b.expectProtocolKept();
}

// Requests and replies use separate virtual networks: a reply crosses a link whose request VC is
// jammed without waiting. On a 4x1 mesh [P1, S0, P0, S1], S0 floods the slow P0 so that the
// request VCs along S0 -> P0 fill up; S1's load from P1 then travels west as a request and comes
// back east as a reply over the jammed link S0 -> P0, both in exactly the idle latency.
TEST(Noc, RepliesPassJammedRequests) {
  newSimulation();
  const PlatformConfig cfg =
      platform({"noc.topology=mesh", "gpu.num_sms=2", "memory.partitions=2", "noc.mesh_columns=4",
                "noc.mesh_rows=1", "noc.virtual_channels=1", "noc.vc_buffer_flits=4",
                "noc.sm_positions=[{x: 1, y: 0}, {x: 3, y: 0}]",
                "noc.mc_positions=[{x: 2, y: 0}, {x: 0, y: 0}]"});
  const uint32_t slowLatency = 2000, fastLatency = 5;
  Bench b(
      cfg, [&](uint32_t p) { return p == 0 ? slowLatency : fastLatency; },
      [](uint32_t p) { return p == 0 ? 1u : std::numeric_limits<uint32_t>::max(); });
  for (uint64_t i = 0; i < 60; ++i)
    b.sms[0]->add(request(0, addressIn(cfg, 0, i), AccessKind::Load, 128, 0));
  const uint64_t probeAt = 300;
  const Request probe = request(probeAt, addressIn(cfg, 1, 1000), AccessKind::Load, 128, 1);
  b.sms[1]->add(probe);
  sc_core::sc_start();
  ASSERT_TRUE(b.sms[0]->allAnswered());
  ASSERT_TRUE(b.sms[1]->allAnswered());
  // S0 was still held back by the jam well after the probe's round trip.
  const Outcome& lastOfS0 = b.sms[0]->outcomes().back();
  EXPECT_GT(lastOfS0.accepted, 10 * probeAt);
  const Outcome& o = b.sms[1]->outcomes()[0];
  const uint32_t routers = routersBetween(*b.noc, b.noc->smNode(1), b.noc->l2Node(1));
  ASSERT_EQ(routers, 4u);
  ASSERT_EQ(b.slices[1]->received().size(), 1u);
  const uint64_t received = b.slices[1]->received()[0].cycle;
  EXPECT_EQ(received, probeAt + idleLatency(cfg.noc, routers, requestFlits(cfg.noc, probe)));
  EXPECT_EQ(o.answered,
            received + fastLatency + idleLatency(cfg.noc, routers, replyFlits(cfg.noc, probe)));
  expectDrainedWithAllCredits(*b.noc, cfg.noc);
  b.expectProtocolKept();
}

// ---- idle costs nothing -------------------------------------------------------------------------

TEST(Noc, IdleNetworkIsNotEvaluated) {
  newSimulation();
  const PlatformConfig cfg =
      platform({"noc.topology=crossbar", "gpu.num_sms=2", "memory.partitions=2",
                "noc.link_latency=50", "noc.vc_buffer_flits=64"});
  Bench b(
      cfg, [](uint32_t) { return 100; }, unlimited);
  const Request r = request(10, addressIn(cfg, 1, 0), AccessKind::Load, 128, 0);
  b.sms[0]->add(r);
  sc_core::sc_start();
  ASSERT_TRUE(b.sms[0]->allAnswered());
  const uint64_t evaluated = b.noc->evaluatedCycles();
  // The packets spend most cycles on the long links and the slice takes 100 cycles: the process
  // runs only on the few cycles around each flit's moves (arrival, allocation stages, credit
  // return), not on the cycles between them.
  const uint64_t elapsed = b.sms[0]->outcomes()[0].answered - r.cycle;
  const uint32_t flits = requestFlits(cfg.noc, r) + replyFlits(cfg.noc, r);
  EXPECT_LT(evaluated, 6u * (flits + 2));
  EXPECT_LT(evaluated * 5, elapsed);
  // With nothing in flight, time passes without evaluation.
  sc_core::sc_start(b.clock.period() * 10000);
  EXPECT_EQ(b.noc->evaluatedCycles(), evaluated);
  b.expectProtocolKept();
}

// ---- reset --------------------------------------------------------------------------------------

TEST(Noc, ResetStateEmptiesTheNetwork) {
  newSimulation();
  const PlatformConfig cfg = platform(
      {"noc.topology=mesh", "gpu.num_sms=4", "memory.partitions=4", "noc.vc_buffer_flits=2"});
  Bench b(
      cfg, [](uint32_t) { return 50; }, unlimited);
  for (uint32_t s = 0; s < 4; ++s)
    for (uint64_t i = 0; i < 20; ++i)
      b.sms[s]->add(
          request(0, addressIn(cfg, (s + i) % 4, s * 100 + i), AccessKind::Store, 128, s));
  sc_core::sc_start(b.clock.period() * 30);
  EXPECT_FALSE(b.noc->drained());
  b.noc->resetState();
  expectDrainedWithAllCredits(*b.noc, cfg.noc);
  b.noc->resetStats();
  EXPECT_EQ(b.noc->statsJson()["packets"].get<uint64_t>(), 0u);
}

// ---- layout -------------------------------------------------------------------------------------

TEST(Noc, DefaultMeshLayoutSpreadsPartitionsOnACheckerboard) {
  // 8 SMs + 8 partitions: the smallest square is 4x4; the partitions take all 8 squares with
  // x + y odd, the SMs the others.
  MeshLayout l = meshLayout(platform({"gpu.num_sms=8", "memory.partitions=8"}));
  EXPECT_EQ(l.columns, 4u);
  EXPECT_EQ(l.rows, 4u);
  for (uint32_t n = 0; n < 16; ++n) EXPECT_EQ((l.x[n] + l.y[n]) % 2, n < 8 ? 0u : 1u) << n;
  // 15 SMs + 6 partitions: 5x5; partition i on the (2i + 1)-th of the 12 odd squares.
  l = meshLayout(platform({"gpu.num_sms=15", "memory.partitions=6"}));
  EXPECT_EQ(l.columns, 5u);
  std::vector<uint32_t> odd;
  for (uint32_t r = 0; r < 25; ++r)
    if ((r % 5 + r / 5) % 2) odd.push_back(r);
  std::set<uint32_t> used;
  for (uint32_t p = 0; p < 6; ++p) {
    EXPECT_EQ(l.y[15 + p] * 5 + l.x[15 + p], odd[(2 * p + 1) * odd.size() / 12]) << p;
    used.insert(l.y[15 + p] * 5 + l.x[15 + p]);
  }
  for (uint32_t s = 0; s < 15; ++s) EXPECT_TRUE(used.insert(l.y[s] * 5 + l.x[s]).second) << s;
  // One dimension given: the other holds every node.
  l = meshLayout(platform(
      {"noc.topology=mesh", "gpu.num_sms=15", "memory.partitions=6", "noc.mesh_columns=3"}));
  EXPECT_EQ(l.rows, 7u);
}

TEST(Noc, BuiltinPlatformsBuildTheirInterconnect) {
  // Every built-in platform's layout is valid and puts each node on its own router.
  for (const std::string& name : builtinPlatformNames()) {
    SCOPED_TRACE(name);
    newSimulation();
    const PlatformConfig cfg = loadPlatform(name);
    std::unique_ptr<Interconnect> noc;
    ASSERT_NO_THROW(noc = makeInterconnect("noc", cfg));
    EXPECT_EQ(noc->topology(), cfg.noc.topology);
    if (const auto* mesh = dynamic_cast<const Mesh*>(noc.get())) {
      const MeshLayout& l = mesh->layout();
      std::set<std::pair<uint32_t, uint32_t>> routers;
      for (uint32_t n = 0; n < noc->nodeCount(); ++n) {
        EXPECT_LT(l.x[n], l.columns);
        EXPECT_LT(l.y[n], l.rows);
        EXPECT_TRUE(routers.insert({l.x[n], l.y[n]}).second) << noc->nodeName(n);
      }
    }
  }
}

void expectInputError(const std::vector<std::string>& sets, const std::string& key) {
  newSimulation();
  try {
    // Counts and shapes are refused when the platform loads; positions when the mesh is laid
    // out.
    const PlatformConfig cfg = platform(sets);
    auto noc = makeInterconnect("noc", cfg);
    ADD_FAILURE() << "no InputError for " << key;
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(key), std::string::npos) << e.what();
  }
}

TEST(Noc, InvalidMeshLayoutIsAnInputErrorNamingTheKey) {
  const std::vector<std::string> base = {"noc.topology=mesh", "gpu.num_sms=2",
                                         "memory.partitions=2", "noc.mesh_columns=2",
                                         "noc.mesh_rows=2"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> s = base;
    s.insert(s.end(), extra.begin(), extra.end());
    return s;
  };
  expectInputError(with({"noc.sm_positions=[{x: 0, y: 0}]"}), "noc.sm_positions");
  expectInputError(with({"noc.mc_positions=[{x: 0, y: 0}, {x: 2, y: 1}]"}), "noc.mc_positions[1]");
  expectInputError(with({"noc.sm_positions=[{x: 0, y: 0}, {x: 1, y: 0}]",
                         "noc.mc_positions=[{x: 0, y: 1}, {x: 1, y: 0}]"}),
                   "noc.mc_positions[1]: router (1, 0) already holds noc.sm_positions[1]");
  expectInputError(with({"noc.sm_positions=[{x: 1, y: 1}, {x: 1, y: 1}]"}), "noc.sm_positions[1]");
  expectInputError({"noc.topology=mesh", "gpu.num_sms=4", "memory.partitions=2",
                    "noc.mesh_columns=2", "noc.mesh_rows=2"},
                   "noc.mesh_columns");
}

// ---- allocators ---------------------------------------------------------------------------------

std::unique_ptr<Allocator> allocator(const std::string& name, uint32_t inputs, uint32_t outputs,
                                     uint32_t ids, uint32_t capacity, uint32_t iterations) {
  AllocatorShape s;
  s.inputs = inputs;
  s.outputs = outputs;
  s.ids = ids;
  s.inputCapacity = capacity;
  s.iterations = iterations;
  return allocatorPolicies().create(name, s);
}

TEST(NocAllocator, IslipPointersDesynchronise) {
  // Two inputs both asking for both outputs. Both outputs first grant input 0, which accepts
  // output 0: one match. Only that accepted grant moves the pointers, so next time the outputs
  // prefer different inputs and both match (iSLIP's desynchronisation).
  const std::vector<AllocRequest> all = {{0, 0, 0}, {0, 1, 0}, {1, 0, 0}, {1, 1, 0}};
  std::vector<uint32_t> grants;
  auto one = allocator("islip", 2, 2, 1, 1, 1);
  one->allocate(all, grants);
  ASSERT_EQ(grants.size(), 1u);
  EXPECT_EQ(all[grants[0]].input, 0u);
  EXPECT_EQ(all[grants[0]].output, 0u);
  one->allocate(all, grants);
  EXPECT_EQ(grants.size(), 2u);
  // A second iteration matches the leftovers at once.
  auto two = allocator("islip", 2, 2, 1, 1, 2);
  two->allocate(all, grants);
  EXPECT_EQ(grants.size(), 2u);
}

TEST(NocAllocator, GrantsRespectCapacitiesAndRotateFairly) {
  for (const std::string name : {"islip", "round-robin"}) {
    SCOPED_TRACE(name);
    // Input speedup 2: one input port with three VCs for three outputs gets two grants.
    auto sa = allocator(name, 1, 3, 3, 2, 1);
    std::vector<uint32_t> grants;
    sa->allocate({{0, 0, 0}, {0, 1, 1}, {0, 2, 2}}, grants);
    EXPECT_EQ(grants.size(), 2u);
    // Three inputs competing for one output take turns.
    auto rr = allocator(name, 3, 1, 1, 1, 1);
    const std::vector<AllocRequest> contest = {{0, 0, 0}, {1, 0, 0}, {2, 0, 0}};
    std::vector<uint32_t> wins(3, 0);
    for (int i = 0; i < 30; ++i) {
      rr->allocate(contest, grants);
      ASSERT_EQ(grants.size(), 1u);
      ++wins[contest[grants[0]].input];
    }
    EXPECT_EQ(wins, std::vector<uint32_t>(3, 10));
    // An output is never granted twice, an input never beyond its capacity.
    auto many = allocator(name, 4, 4, 2, 1, 3);
    std::vector<AllocRequest> req;
    for (uint32_t in = 0; in < 4; ++in)
      for (uint32_t out = 0; out < 4; ++out) req.push_back({in, out, out % 2});
    many->allocate(req, grants);
    std::set<uint32_t> ins, outs;
    for (uint32_t g : grants) {
      EXPECT_TRUE(ins.insert(req[g].input).second);
      EXPECT_TRUE(outs.insert(req[g].output).second);
    }
  }
  EXPECT_THROW(allocator("wavefront", 1, 1, 1, 1, 1), InputError);
}

// iSLIP as its header describes it, written plainly (every output scans every request, every
// input sorts its grants): the allocator must give the same grants, in the same order, with the
// same pointer movement, over long random sequences. The request sets mix several inputs asking
// for shared outputs (the general path), a single input (a head flit asking for its port's free
// VCs, or one port's VCs in switch allocation) and outputs asked at most once each (input ports
// bound for different output ports): the last two have paths of their own.
class ReferenceIslip {
 public:
  explicit ReferenceIslip(const AllocatorShape& s)
      : s_(s), grant_(s.outputs, 0), accept_(s.inputs, 0), id_(s.inputs, 0) {}

  std::vector<uint32_t> allocate(const std::vector<AllocRequest>& req) {
    auto dist = [](uint32_t from, uint32_t to, uint32_t n) { return (to + n - from) % n; };
    std::vector<uint32_t> grants, given(s_.inputs, 0);
    std::vector<bool> matched(s_.outputs, false);
    for (uint32_t iter = 0; iter < s_.iterations; ++iter) {
      // Grant: each unmatched output picks among the requests of inputs with room left the one
      // whose input is nearest its pointer, then whose id is nearest the input's id pointer.
      std::vector<std::pair<uint32_t, uint32_t>> granted;  // (input, request index)
      for (uint32_t o = 0; o < s_.outputs; ++o) {
        if (matched[o]) continue;
        int best = -1;
        for (uint32_t i = 0; i < req.size(); ++i) {
          const AllocRequest& r = req[i];
          if (r.output != o || given[r.input] >= s_.inputCapacity) continue;
          if (best < 0) {
            best = int(i);
            continue;
          }
          const AllocRequest& b = req[size_t(best)];
          const auto key =
              std::make_pair(dist(grant_[o], r.input, s_.inputs), dist(id_[r.input], r.id, s_.ids));
          if (key <
              std::make_pair(dist(grant_[o], b.input, s_.inputs), dist(id_[b.input], b.id, s_.ids)))
            best = int(i);
        }
        if (best >= 0) granted.emplace_back(req[size_t(best)].input, uint32_t(best));
      }
      if (granted.empty()) break;
      // Accept: inputs in order, each taking its grants nearest its accept pointer first (the
      // distances as the iteration began), up to its capacity. First-iteration matches move the
      // pointers.
      std::vector<std::tuple<uint32_t, uint32_t, uint32_t>> order;  // (input, distance, index)
      for (auto [in, idx] : granted)
        order.emplace_back(in, dist(accept_[in], req[idx].output, s_.outputs), idx);
      std::sort(order.begin(), order.end());
      for (auto [in, d, idx] : order) {
        if (given[in] >= s_.inputCapacity) continue;
        ++given[in];
        matched[req[idx].output] = true;
        grants.push_back(idx);
        if (iter != 0) continue;
        grant_[req[idx].output] = (in + 1) % s_.inputs;
        accept_[in] = (req[idx].output + 1) % s_.outputs;
        id_[in] = (req[idx].id + 1) % s_.ids;
      }
    }
    return grants;
  }

 private:
  AllocatorShape s_;
  std::vector<uint32_t> grant_, accept_, id_;
};

TEST(NocAllocator, IslipMatchesItsSpecificationOnRandomRequests) {
  Rng rng(20261128);
  for (int shapeNo = 0; shapeNo < 60; ++shapeNo) {
    AllocatorShape s;
    s.inputs = 1 + rng.below(8);
    s.outputs = 1 + rng.below(10);
    s.ids = 1 + rng.below(4);
    s.inputCapacity = 1 + rng.below(3);
    s.iterations = 1 + rng.below(3);
    SCOPED_TRACE(fmt::format("shape {}: {} inputs, {} outputs, {} ids, capacity {}, {} iterations",
                             shapeNo, s.inputs, s.outputs, s.ids, s.inputCapacity, s.iterations));
    auto islip = allocatorPolicies().create("islip", s);
    ReferenceIslip ref(s);
    std::vector<uint32_t> grants;
    for (int call = 0; call < 300; ++call) {
      // Each (input, output, id) at most once; a third of the sets come from one input, a third
      // name each output at most once.
      const uint32_t kind = rng.below(3);
      const uint32_t onlyInput = rng.below(s.inputs);
      const uint32_t density = 1 + rng.below(4);
      std::vector<AllocRequest> req;
      if (kind == 2) {
        for (uint32_t out = 0; out < s.outputs; ++out)
          if (rng.below(8) < 2 * density)
            req.push_back({rng.below(s.inputs), out, rng.below(s.ids)});
      } else {
        for (uint32_t in = 0; in < s.inputs; ++in) {
          if (kind == 1 && in != onlyInput) continue;
          for (uint32_t out = 0; out < s.outputs; ++out)
            for (uint32_t id = 0; id < s.ids; ++id)
              if (rng.below(8) < density) req.push_back({in, out, id});
        }
      }
      // In an order of their own, not the loops' (the router's request order varies too).
      for (size_t i = req.size(); i > 1; --i) std::swap(req[i - 1], req[rng.below(uint32_t(i))]);
      islip->allocate(req, grants);
      ASSERT_EQ(grants, ref.allocate(req)) << "call " << call << ", " << req.size() << " requests";
    }
  }
}

}  // namespace
