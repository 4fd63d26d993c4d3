#include "noc/interconnect.hpp"

#include <cstring>
#include <utility>

#include <fmt/format.h>

#include "common/error.hpp"
#include "common/mem_access.hpp"
#include "noc/crossbar.hpp"
#include "noc/mesh.hpp"

namespace gpusc::noc {

Interconnect::Interconnect(const sc_core::sc_module_name& name, const PlatformConfig& cfg,
                           std::string topology)
    : sc_core::sc_module(name),
      sm_sockets("sm_sockets"),
      l2_sockets("l2_sockets"),
      topology_(std::move(topology)),
      noc_(cfg.noc),
      numSms_(cfg.gpu.num_sms),
      numL2_(cfg.memory.partitions * cfg.l2.slices_per_partition),
      addressMap_(cfg),
      clock_(cfg.gpu.clocks.interconnect_mhz),
      fabric_(cfg.noc) {
  if (nodeCount() > 0xffff)
    throw InputError(
        fmt::format("gpu.num_sms: {} SMs and {} L2 slices are too many nodes", numSms_, numL2_));
  sm_sockets.register_nb_transport_fw(this, &Interconnect::fromSm);
  l2_sockets.register_nb_transport_bw(this, &Interconnect::fromL2);
  for (uint32_t n = 0; n < nodeCount(); ++n) {
    const bool sm = n < numSms_;
    nis_.push_back(std::make_unique<NetworkInterface>(
        fmt::format("ni_{}", nodeName(n)).c_str(), fabric_, packets_, traffic_, outbox_, n,
        sm ? NetworkInterface::Side::kSm : NetworkInterface::Side::kL2, sm ? n : n - numSms_, noc_,
        sm ? noc_.injection_queue_packets : 0, noc_.ejection_queue_packets));
  }
  niActive_.assign((nis_.size() + 7) / 8 * 8, 0);  // whole words of 8 (the scan reads words)
  for (size_t n = 0; n < nis_.size(); ++n) nis_[n]->setActivityFlag(&niActive_[n]);  // sets it
  SC_METHOD(step);
  sensitive << wake_;
  dont_initialize();
}

Interconnect::~Interconnect() = default;

std::string Interconnect::nodeName(uint32_t node) const {
  return node < numSms_ ? fmt::format("sm{}", node) : fmt::format("l2_{}", node - numSms_);
}

void Interconnect::end_of_elaboration() {
  if (sm_sockets.size() != numSms_ || l2_sockets.size() != numL2_)
    throw InternalError(fmt::format("{}: {} SM sockets and {} L2 sockets bound, expected {} and {}",
                                    name(), sm_sockets.size(), l2_sockets.size(), numSms_, numL2_));
}

// ---- sockets -----------------------------------------------------------------------------------

tlm::tlm_sync_enum Interconnect::fromSm(int id, tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase,
                                        sc_core::sc_time&) {
  if (phase == tlm::END_RESP) return tlm::TLM_COMPLETED;
  if (phase != tlm::BEGIN_REQ)
    throw InternalError(fmt::format("{}: unexpected phase {} from SM {}", name(), phase, id));
  MemAccessExtension* ext = PayloadPool::extensionOf(gp);
  if (!ext) throw InternalError(fmt::format("{}: a request without MemAccessExtension", name()));
  const uint64_t cycle = clock_.now();
  gp.acquire();
  const uint32_t dst = l2Node(addressMap_.slice(gp.get_address()));
  if (!nis_[smNode(static_cast<uint32_t>(id))]->acceptRequest(gp, dst, cycle))
    return tlm::TLM_ACCEPTED;  // END_REQ once the NI has room
  scheduleAt(cycle + 1);
  phase = tlm::END_REQ;
  return tlm::TLM_UPDATED;
}

tlm::tlm_sync_enum Interconnect::fromL2(int id, tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase,
                                        sc_core::sc_time&) {
  const uint64_t cycle = clock_.now();
  NetworkInterface& ni = *nis_[l2Node(static_cast<uint32_t>(id))];
  if (phase == tlm::END_REQ) {
    ni.requestAccepted(gp);
    scheduleAt(cycle + 1);  // the next request may go, ejection may resume
    return tlm::TLM_ACCEPTED;
  }
  if (phase != tlm::BEGIN_RESP)
    throw InternalError(fmt::format("{}: unexpected phase {} from L2 slice {}", name(), phase, id));
  MemAccessExtension* ext = PayloadPool::extensionOf(gp);
  if (!ext || ext->sm >= numSms_)
    throw InternalError(fmt::format("{}: a reply from L2 slice {} for no SM", name(), id));
  gp.acquire();
  ni.acceptReply(gp, smNode(ext->sm), cycle);
  scheduleAt(cycle + 1);
  return tlm::TLM_COMPLETED;
}

// ---- evaluation --------------------------------------------------------------------------------

void Interconnect::scheduleAt(uint64_t cycle) {
  if (cycle >= scheduled_) return;
  scheduled_ = cycle;
  wakeup_.at(cycle * clock_.periodValue());  // replaces a later pending request
}

void Interconnect::step() {
  scheduled_ = kNever;
  const uint64_t now = clock_.now();
  if (evaluated_ && now <= lastCycle_) {  // this cycle is done already
    scheduleAt(lastCycle_ + 1);
    return;
  }
  if (evaluated_ && now > lastCycle_ + 1)
    for (auto& ni : nis_) ni->accountSkipped(now - lastCycle_ - 1);
  ++evaluatedCycles_;
  fabric_.now = now;
  fabric_.progress = false;
  fabric_.deliverCredits();
  // The NIs that may have work (their activity byte set), in node order, eight bytes at a time;
  // the others are quiet. (No NI's step sets another's byte.)
  for (size_t base = 0; base < niActive_.size(); base += 8) {
    uint64_t bytes;
    std::memcpy(&bytes, &niActive_[base], sizeof bytes);
    for (; bytes != 0; bytes &= bytes - 1) {  // (a set byte is 1: its lowest bit)
      const size_t n = base + size_t(__builtin_ctzll(bytes)) / 8;
      NetworkInterface& ni = *nis_[n];
      if (!ni.quiet()) ni.step();
      if (ni.quiet()) niActive_[n] = 0;
    }
  }
  stepRouters();
  lastCycle_ = now;
  evaluated_ = true;
  dispatch();
  const uint64_t next = fabric_.progress ? now + 1 : fabric_.nextMarked();
  if (next != kNever) scheduleAt(next);
}

void Interconnect::stepRouters() {
  if (!workers_ || !workers_->engaged()) {
    // One thread: one after another, each router's effects applied at once.
    for (Router* r : routers_) r->step(false);
    return;
  }
  dueRouters_.clear();
  for (uint32_t i = 0; i < routers_.size(); ++i)
    if (routers_[i]->due()) dueRouters_.push_back(i);
  if (dueRouters_.size() >= kParallelRouters) {
    ++parallelCycles_;
    // Thread t owns the routers [t x R / T, (t + 1) x R / T), as the core clock domain does
    // with the SMs.
    workers_->ownerShares(dueRouters_, routers_.size(), bounds_);
    auto evaluate = [&](size_t k) { routers_[dueRouters_[k]]->step(true); };
    workers_->run(dueRouters_.size(), evaluate, bounds_.data());
    auto deliver = [&](size_t k) { routers_[dueRouters_[k]]->deliver(); };
    workers_->run(dueRouters_.size(), deliver, bounds_.data());
    for (uint32_t i : dueRouters_) routers_[i]->commit();
  } else {
    for (uint32_t i : dueRouters_) routers_[i]->step(false);
  }
}

void Interconnect::dispatch() {
  // By index: a callee may call back into the interconnect (which never adds deliveries).
  for (size_t i = 0; i < outbox_.size(); ++i) {
    const Delivery d = outbox_[i];
    sc_core::sc_time t = sc_core::SC_ZERO_TIME;
    switch (d.kind) {
      case Delivery::kRequest: {
        tlm::tlm_phase phase = tlm::BEGIN_REQ;
        const tlm::tlm_sync_enum s = l2_sockets[d.index]->nb_transport_fw(*d.gp, phase, t);
        NetworkInterface& ni = *nis_[l2Node(d.index)];
        if (s == tlm::TLM_UPDATED && phase == tlm::END_REQ) {
          if (ni.awaitingEndRequest(*d.gp)) ni.requestAccepted(*d.gp);
        } else if (s != tlm::TLM_ACCEPTED) {
          throw InternalError(
              fmt::format("{}: L2 slice {} must answer BEGIN_REQ with END_REQ or TLM_ACCEPTED",
                          name(), d.index));
        }
        break;
      }
      case Delivery::kReply: {
        d.gp->set_response_status(tlm::TLM_OK_RESPONSE);
        tlm::tlm_phase phase = tlm::BEGIN_RESP;
        sm_sockets[d.index]->nb_transport_bw(*d.gp, phase, t);
        d.gp->release();
        break;
      }
      case Delivery::kEndRequest: {
        tlm::tlm_phase phase = tlm::END_REQ;
        sm_sockets[d.index]->nb_transport_bw(*d.gp, phase, t);
        break;
      }
    }
    fabric_.progress = true;
  }
  outbox_.clear();
}

// ---- state and statistics ----------------------------------------------------------------------

void Interconnect::resetState() {
  for (auto& ni : nis_) ni->reset();
  packets_.clear();
  for (Router* r : routers_) r->reset();
  fabric_.reset();
  outbox_.clear();
  wakeup_.cancel();
  scheduled_ = kNever;
  evaluated_ = false;
  lastCycle_ = 0;
}

void Interconnect::resetStats() {
  traffic_.reset();
  for (auto& ni : nis_) ni->resetStats();
  for (auto& ni : nis_) ni->injection().flits = 0;
  for (Router* r : routers_)
    for (uint32_t p = 0; p < r->ports(); ++p) r->output(p).flits = 0;
  statsStart_ = clock_.now();
}

std::vector<const OutputChannel*> Interconnect::links() const {
  std::vector<const OutputChannel*> out;
  for (const auto& ni : nis_) out.push_back(&ni->injection());
  for (const Router* r : routers_)
    for (uint32_t p = 0; p < r->ports(); ++p)
      if (r->output(p).connected()) out.push_back(&r->output(p));
  return out;
}

Interconnect::FlitTraversals Interconnect::flitTraversals() const {
  FlitTraversals t;
  for (const auto& ni : nis_) t.links += ni->injection().flits;
  for (const Router* r : routers_)
    for (uint32_t p = 0; p < r->ports(); ++p)
      if (r->output(p).connected()) t.routers += r->output(p).flits;
  t.links += t.routers;
  return t;
}

uint32_t Interconnect::leakingRouters() const {
  return topology_ == "mesh" ? static_cast<uint32_t>(routers_.size()) : nodeCount();
}

std::vector<uint32_t> Interconnect::creditCounters() const {
  std::vector<uint32_t> out;
  for (const OutputChannel* l : links())
    out.insert(out.end(), l->allCredits().begin(), l->allCredits().end());
  return out;
}

bool Interconnect::drained() const {
  if (packets_.live() != 0 || fabric_.creditsInFlight() || !outbox_.empty()) return false;
  for (const auto& ni : nis_)
    if (!ni->empty()) return false;
  for (const Router* r : routers_)
    for (uint32_t p = 0; p < r->ports(); ++p)
      if (r->input(p).occupancy() != 0) return false;
  return true;
}

namespace {

nlohmann::json networkJson(const NetworkStats& s) {
  nlohmann::json j;
  j["injected_packets"] = s.injectedPackets;
  j["packets"] = s.packets;
  j["flits"] = s.flits;
  const double n = s.packets ? double(s.packets) : 1.0;
  j["average_hops"] = double(s.hopsSum) / n;
  nlohmann::json lat;
  lat["average"] = double(s.latencySum) / n;
  lat["max"] = s.latencyMax;
  nlohmann::json hist = nlohmann::json::array();
  size_t last = 0;
  for (size_t b = 0; b < NetworkStats::kBuckets; ++b)
    if (s.histogram[b]) last = b + 1;
  for (size_t b = 0; b < last; ++b) {
    const uint64_t lo = b == 0 ? 0 : 1ull << b, hi = (2ull << b) - 1;
    hist.push_back({{"from", lo}, {"to", hi}, {"packets", s.histogram[b]}});
  }
  lat["histogram"] = hist;
  j["latency"] = lat;
  return j;
}

}  // namespace

uint64_t Interconnect::injectionStallCycles(const NetworkInterface& ni, uint64_t now) const {
  // Cycles after the last evaluated one look like it.
  const uint64_t pending =
      evaluated_ && ni.stalled() && now > lastCycle_ + 1 ? now - lastCycle_ - 1 : 0;
  return ni.injectionStallCycles() + pending;
}

uint64_t Interconnect::injectionStallCycles() const {
  const uint64_t now = clock_.now();
  uint64_t total = 0;
  for (const auto& ni : nis_) total += injectionStallCycles(*ni, now);
  return total;
}

nlohmann::json Interconnect::statsJson() const {
  const uint64_t now = clock_.now();
  const uint64_t cycles = now > statsStart_ ? now - statsStart_ : 0;
  nlohmann::json j;
  j["topology"] = topology_;
  j["cycles"] = cycles;
  uint64_t packets = 0, flits = 0, latency = 0, hops = 0, maxLatency = 0;
  nlohmann::json nets;
  const char* names[kVirtualNetworks] = {"request", "reply"};
  for (uint32_t v = 0; v < kVirtualNetworks; ++v) {
    const NetworkStats& s = traffic_.network[v];
    nets[names[v]] = networkJson(s);
    packets += s.packets;
    flits += s.flits;
    latency += s.latencySum;
    hops += s.hopsSum;
    maxLatency = std::max(maxLatency, s.latencyMax);
  }
  j["packets"] = packets;
  j["flits"] = flits;
  j["average_latency"] = packets ? double(latency) / double(packets) : 0.0;
  j["max_latency"] = maxLatency;
  j["average_hops"] = packets ? double(hops) / double(packets) : 0.0;
  j["networks"] = std::move(nets);
  nlohmann::json stalls = nlohmann::json::object(), holds = nlohmann::json::object();
  uint64_t totalStalls = 0;
  for (const auto& ni : nis_) {
    const uint64_t n = injectionStallCycles(*ni, now);
    stalls[nodeName(ni->node())] = n;
    totalStalls += n;
    if (ni->node() < numSms_) holds[nodeName(ni->node())] = ni->holdCycles();
  }
  j["injection_stall_cycles"] = std::move(stalls);
  j["injection_stall_cycles_total"] = totalStalls;
  j["request_hold_cycles"] = std::move(holds);
  nlohmann::json linkList = nlohmann::json::array();
  for (const OutputChannel* l : links()) {
    linkList.push_back({{"from", l->from},
                        {"to", l->to},
                        {"flits", l->flits},
                        {"utilization", cycles ? double(l->flits) / double(cycles) : 0.0}});
  }
  j["links"] = std::move(linkList);
  return j;
}

// ---- factory -----------------------------------------------------------------------------------

std::optional<HeldRequest> Interconnect::oldestHeld() const {
  std::optional<HeldRequest> best;
  for (uint32_t i = 0; i < packets_.slots(); ++i) {
    if (!packets_.isLive(i) || !packets_[i].gp) continue;
    const Packet& p = packets_[i];
    keepOlder(best, p.accepted * clock_.periodValue(),
              fmt::format("{}, a {} packet from node {} to node {}", describeRequest(*p.gp),
                          p.network == kRequestNetwork ? "request" : "reply", p.src, p.dst));
  }
  return best;
}

std::unique_ptr<Interconnect> makeInterconnect(const sc_core::sc_module_name& name,
                                               const PlatformConfig& cfg) {
  if (cfg.noc.topology == "mesh") {
    meshLayout(cfg);  // validates the layout before any module exists
    return std::make_unique<Mesh>(name, cfg);
  }
  if (cfg.noc.topology == "crossbar") return std::make_unique<Crossbar>(name, cfg);
  throw InputError(
      fmt::format("noc.topology: unknown topology '{}' (known: crossbar, mesh)", cfg.noc.topology));
}

}  // namespace gpusc::noc
