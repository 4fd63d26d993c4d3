#include "gpu/gpu.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/address_map.hpp"
#include "common/clock.hpp"
#include "gpu/policies.hpp"

namespace gpusc::gpu {

namespace {
// The interconnect's injection stalls, in core cycles.
class InterconnectProbe : public CongestionProbe {
 public:
  InterconnectProbe(const noc::Interconnect& noc, const ClockConfig& clocks)
      : noc_(noc), coreCyclesPerNocCycle_(clocks.core_mhz / clocks.interconnect_mhz) {}
  double injectionStallCycles() const override {
    return double(noc_.injectionStallCycles()) * coreCyclesPerNocCycle_;
  }

 private:
  const noc::Interconnect& noc_;
  const double coreCyclesPerNocCycle_;
};
}  // namespace

Gpu::Gpu(const sc_core::sc_module_name& name, const PlatformConfig& cfg)
    : sc_core::sc_module(name), cfg_(cfg), period_(Clock(cfg.gpu.clocks.core_mhz).period()) {
  // The policies every unit creates its own from: the platform's (a testbench's registries) or
  // the built-ins.
  const Policies& policies = policiesOf(cfg_);
  for (uint32_t i = 0; i < cfg_.gpu.num_sms; ++i) {
    smPools_.push_back(std::make_unique<PayloadPool>());
    sms_.push_back(std::make_unique<sm::Sm>(
        fmt::format("sm{}", i).c_str(), i, cfg_, *smPools_.back(), period_,
        sm::SmPolicies{policies.warpSchedulers, policies.replacement, policies.simdIssue}));
  }
  edges_ = std::make_unique<EdgeScheduler>("edge_scheduler");
  coreDomain_ = std::make_unique<CoreClockDomain>("core_clock_domain", sms(), period_);
  ctaScheduler_ = std::make_unique<CtaScheduler>("cta_scheduler", cfg_, sms(), period_);
  if (cfg_.power.enabled) energy_ = std::make_unique<power::EnergyModel>("energy_model", cfg_);
  if (energy_ && cfg_.pdn.enabled) {
    pdn_ = std::make_unique<pdn::Pdn>("pdn", cfg_, energy_->idleSmAmps());
    energy_->addCurrentSink(pdn_.get());
  }
  if (energy_) {
    // The first SM report of a cycle begins with these; with host threads they overlap the SMs'
    // evaluations (CoreClockDomain::setBeforeCommits).
    coreDomain_->setBeforeCommits([this](sm::Cycle c) {
      energy_->streamBefore(c);
      if (pdn_) pdn_->stepBefore(c);
    });
  }
  if (cfg_.memory.model == "fixed-latency") {
    fixed_ =
        std::make_unique<FixedLatencyMemory>("memory", period_ * double(cfg_.memory.fixed_latency));
    // A checker's name is one SystemC name segment: not the SM's hierarchical name ("gpu.sm0",
    // whose '.' SystemC replaces with a W506 warning per SM on stderr, even with --quiet).
    for (uint32_t i = 0; i < cfg_.gpu.num_sms; ++i)
      connect(sms_[i]->memory_socket, fixed_->sm_sockets, fmt::format("check_sm{}_memory", i));
    // The SMs' requests meet in one target: their order there is the evaluation order.
    coreDomain_->setSerialReason("memory.model fixed-latency (one target for every SM)");
    attachUnits();
    traceRtlBlocks();
    return;
  }
  for (uint32_t i = 0; i < cfg_.gpu.num_sms; ++i) {
    l1_.push_back(std::make_unique<cache::L1DataCache>(fmt::format("l1d{}", i).c_str(), i, cfg_,
                                                       *smPools_[i], policies.replacement));
    l1_.back()->setOutbox(&sms_[i]->outbox());
  }
  noc_ = noc::makeInterconnect("interconnect", cfg_);
  probe_ = std::make_unique<InterconnectProbe>(*noc_, cfg_.gpu.clocks);
  ctaScheduler_->setCongestionProbe(probe_.get());
  const uint32_t slices = cfg_.memory.partitions * cfg_.l2.slices_per_partition;
  for (uint32_t s = 0; s < slices; ++s)
    l2_.push_back(std::make_unique<cache::L2Slice>(fmt::format("l2_{}", s).c_str(), s, cfg_, pool_,
                                                   policies.replacement));
  for (uint32_t p = 0; p < cfg_.memory.partitions; ++p)
    mc_.push_back(std::make_unique<dram::MemoryController>(fmt::format("mc{}", p).c_str(), p, cfg_,
                                                           policies.dramSchedulers));
  for (uint32_t i = 0; i < cfg_.gpu.num_sms; ++i) {
    connect(sms_[i]->memory_socket, l1_[i]->sm_socket, fmt::format("check_sm{}_l1", i));
    connect(l1_[i]->memory_socket, noc_->sm_sockets, fmt::format("check_l1_{}_noc", i));
  }
  for (uint32_t s = 0; s < slices; ++s) {  // a partition's slices bind its controller in order
    connect(noc_->l2_sockets, l2_[s]->noc_socket, fmt::format("check_noc_l2_{}", s));
    connect(l2_[s]->dram_socket, mc_[s / cfg_.l2.slices_per_partition]->l2_socket,
            fmt::format("check_l2_{}_mc", s));
  }
  attachUnits();
  traceRtlBlocks();
}

void Gpu::attachUnits() {
  // Each kind in index order; the scheduler orders the kinds (EdgeScheduler::Rank).
  for (auto& mc : mc_) mc->attach(*edges_);
  if (fixed_) fixed_->attach(*edges_);
  for (auto& l2 : l2_) l2->attach(*edges_);
  if (noc_) noc_->attach(*edges_);
  for (auto& l1 : l1_) l1->attach(*edges_);
  ctaScheduler_->attach(*edges_);
  coreDomain_->attach(*edges_);
}

Gpu::~Gpu() = default;

void Gpu::traceRtlBlocks() {
  const RtlConfig& r = cfg_.rtl;
  const bool anyRtl = !RtlConfig::isModel(r.droop_predictor) ||
                      !RtlConfig::isModel(r.power_switch) || !RtlConfig::isModel(r.simd_issue) ||
                      !RtlConfig::isModel(r.droop_detector) ||
                      !RtlConfig::isModel(r.drowsy_controller);
  // Verilated blocks inside the SMs and their L1s share Verilator's runtime, and a lockstep
  // divergence pauses the simulation from inside the SM: those SMs run on the simulation thread.
  if (!RtlConfig::isModel(r.droop_predictor) || !RtlConfig::isModel(r.power_switch) ||
      !RtlConfig::isModel(r.simd_issue) || !RtlConfig::isModel(r.drowsy_controller))
    coreDomain_->setSerialReason("verilated blocks in the SMs (rtl.*)");
  if (!pdn_ || cfg_.pdn.monitor.vcd_file.empty() || !anyRtl) return;
  waves_ = std::make_unique<rtl::RtlWaves>();
  // Femtoseconds: the simulation's time resolution, in which a clock period is exact.
  const auto fs = [](sc_core::sc_time t) { return uint64_t(std::llround(t.to_seconds() * 1e15)); };
  const uint64_t coreFs = fs(period_), l2Fs = fs(Clock(cfg_.gpu.clocks.l2_mhz).period());
  std::vector<uint32_t> ids = cfg_.pdn.monitor.vcd_sms;
  if (ids.empty())
    for (uint32_t i = 0; i < cfg_.gpu.num_sms; ++i) ids.push_back(i);
  for (uint32_t i : ids) {
    if (i >= sms_.size()) continue;  // the voltage monitor reports it
    sms_[i]->traceWaves(*waves_, coreFs);
    if (i < l1_.size())
      l1_[i]->linePower().controller().traceWaves(
          *waves_, fmt::format("sm{}.l1d.drowsy_line_controller", i), coreFs);
  }
  for (size_t s = 0; s < l2_.size(); ++s)
    l2_[s]->linePower().controller().traceWaves(
        *waves_, fmt::format("l2_{}.drowsy_line_controller", s), l2Fs);
  if (pdn::GlobalDroopDetector* d = ctaScheduler_->droopDetector())
    d->traceWaves(*waves_, "cta_scheduler.global_droop_detector", coreFs);
}

void Gpu::closeWaves() {
  if (!waves_ || wavesClosed_) return;
  wavesClosed_ = true;
  pdn_->monitor().closeVcd();
  std::string path = cfg_.pdn.monitor.vcd_file;  // SystemC adds ".vcd" when it is missing
  if (path.size() < 4 || path.compare(path.size() - 4, 4, ".vcd") != 0) path += ".vcd";
  // The voltages' window (--vcd-cycles, in core cycles) cuts the blocks' waves too.
  const uint64_t coreFs = uint64_t(std::llround(period_.to_seconds() * 1e15));
  const VoltageMonitorConfig& m = cfg_.pdn.monitor;
  waves_->mergeInto(path, m.vcd_start_cycle * coreFs, m.vcd_end_cycle * coreFs);
}

template <class From, class To>
void Gpu::connect(From& from, To& to, const std::string& name) {
  if (!cfg_.gpu.check_protocol) {
    from.bind(to);
    return;
  }
  checkers_.push_back(std::make_unique<ProtocolChecker>(name.c_str()));
  from.bind(checkers_.back()->upstream);
  checkers_.back()->downstream.bind(to);
}

void Gpu::setHostThreads(unsigned n, ThreadPolicy policy) {
  if (pdn_) pdn_->setWorkers(nullptr);  // before the team it works for may go
  coreDomain_->setThreads(n, policy);
  if (noc_) noc_->setWorkers(coreDomain_->workers());
  if (pdn_) pdn_->setWorkers(coreDomain_->workers());
}

std::vector<sm::Sm*> Gpu::sms() const {
  std::vector<sm::Sm*> out;
  for (const auto& s : sms_) out.push_back(s.get());
  return out;
}

namespace {

// Sums the numeric fields that `units` share, recursively (nested objects are summed too);
// ratios and averages are recomputed by the caller.
// Aggregates per-unit statistics: counters are summed, "max..." counters take the maximum, and
// real-valued fields (rates, averages, elapsed time) are averaged over the units, so a total
// utilisation reads as the mean utilisation of the channels.
double ratio(const nlohmann::json& j, const char* num, const char* den) {
  const uint64_t d = j.value(den, uint64_t(0));
  return d ? double(j.value(num, uint64_t(0))) / double(d) : 0.0;
}

// Totals over units: counts summed, "max..." the maximum, other numbers averaged, hit rates
// recomputed from the summed hits and accesses.
nlohmann::json sumFields(const std::vector<const nlohmann::json*>& units) {
  nlohmann::json total = nlohmann::json::object();
  if (units.empty()) return total;
  std::vector<const nlohmann::json*> fields;  // each unit's value of one key (those that have it)
  // Units have the same keys as a rule: each unit's fields are walked in step with the first
  // unit's (the objects keep their keys sorted), looked up only where a unit differs.
  using Object = nlohmann::json::object_t;
  std::vector<Object::const_iterator> at;
  at.reserve(units.size());
  for (const nlohmann::json* u : units)
    at.push_back(u->is_object() ? u->get_ref<const Object&>().begin() : Object::const_iterator{});
  for (auto it = units[0]->begin(); it != units[0]->end(); ++it) {
    const std::string& key = it.key();
    fields.clear();
    for (size_t k = 0; k < units.size(); ++k) {
      const nlohmann::json* u = units[k];
      if (!u->is_object()) continue;
      const Object& o = u->get_ref<const Object&>();
      if (at[k] == o.end() || at[k]->first != key) at[k] = o.find(key);
      if (at[k] != o.end()) {
        fields.push_back(&at[k]->second);
        ++at[k];
      } else {
        at[k] = o.upper_bound(key);  // the next key after this one, as if it had been there
      }
    }
    if (it.value().is_number_integer() || it.value().is_number_unsigned()) {
      const bool isMax = key.rfind("max", 0) == 0;
      uint64_t s = 0;
      for (const nlohmann::json* f : fields)
        if (f->is_number()) {
          const auto v = f->get<uint64_t>();
          s = isMax ? std::max(s, v) : s + v;
        }
      total[key] = s;
    } else if (it.value().is_number_float()) {
      double s = 0;
      for (const nlohmann::json* f : fields)
        if (f->is_number()) s += f->get<double>();
      total[key] = s / double(units.size());
    } else if (it.value().is_object()) {
      total[key] = sumFields(fields);
    }
  }
  if (total.contains("hit_rate") && total.contains("hits") && total.contains("accesses"))
    total["hit_rate"] = ratio(total, "hits", "accesses");
  return total;
}

std::vector<const nlohmann::json*> pointersTo(const nlohmann::json::array_t& units) {
  std::vector<const nlohmann::json*> p;
  p.reserve(units.size());
  for (const nlohmann::json& u : units) p.push_back(&u);
  return p;
}

}  // namespace

nlohmann::json Gpu::memoryStatsJson() const {
  nlohmann::json j;
  j["model"] = cfg_.memory.model;
  if (fixed_) {
    j["requests"] = fixed_->requests();
    return j;
  }
  nlohmann::json::array_t l1, l2, mc;
  for (const auto& c : l1_) l1.push_back(c->statsJson());
  for (const auto& c : l2_) l2.push_back(c->statsJson());
  for (const auto& c : mc_) mc.push_back(c->statsJson());
  nlohmann::json l1t = sumFields(pointersTo(l1)), l2t = sumFields(pointersTo(l2)),
                 mct = sumFields(pointersTo(mc));
  const uint64_t rowAccesses = mct.value("row_hits", uint64_t(0)) +
                               mct.value("row_misses", uint64_t(0)) +
                               mct.value("row_conflicts", uint64_t(0));
  mct["row_hit_rate"] =
      rowAccesses ? double(mct.value("row_hits", uint64_t(0))) / double(rowAccesses) : 0.0;
  if (mct.contains("read_latency_core_cycles")) {
    auto& lat = mct["read_latency_core_cycles"];
    uint64_t count = 0;
    double weighted = 0;
    for (const auto& u : mc) {
      const auto& ul = u["read_latency_core_cycles"];
      const uint64_t n = ul.value("count", uint64_t(0));
      count += n;
      weighted += double(n) * ul.value("average", 0.0);
    }
    lat["average"] = count ? weighted / double(count) : 0.0;
    uint64_t mx = 0;
    for (const auto& u : mc)
      mx = std::max<uint64_t>(mx, u["read_latency_core_cycles"].value("max", uint64_t(0)));
    lat["max"] = mx;
  }
  // Line power counters add up over the units; their ratios follow from the sums.
  cache::CachePowerCounters l1p, l2p;
  for (const auto& c : l1_) l1p += c->reportedPowerCounters();
  for (const auto& c : l2_) l2p += c->reportedPowerCounters();
  l1t["power_states"] = cache::toJson(l1p);
  l2t["power_states"] = cache::toJson(l2p);
  // Moved in, not copied: the per-unit trees are most of the launch's statistics.
  const auto part = [](nlohmann::json&& totals, const char* name, nlohmann::json::array_t&& units) {
    nlohmann::json p = nlohmann::json::object();
    p["totals"] = std::move(totals);
    p[name] = std::move(units);
    return p;
  };
  j["l1d"] = part(std::move(l1t), "per_sm", std::move(l1));
  j["interconnect"] = noc_->statsJson();
  j["l2"] = part(std::move(l2t), "per_slice", std::move(l2));
  j["dram"] = part(std::move(mct), "per_partition", std::move(mc));
  return j;
}

void Gpu::beginPowerWindow() {
  for (auto& c : l1_) c->beginPowerWindow(c->clock().now());
  for (auto& c : l2_) c->beginPowerWindow(c->clock().now());
}

void Gpu::closePowerWindow() {
  for (auto& c : l1_) c->closePowerWindow(c->clock().now() + 1);
  for (auto& c : l2_) c->closePowerWindow(c->clock().now() + 1);
}

template <class F>
void Gpu::forEachL2Piece(const AddressMap& map, uint64_t addr, uint64_t bytes, F&& f) const {
  const uint64_t interleave = cfg_.memory.partition_interleave_bytes;
  const uint64_t lineBytes = cfg_.l2.slice.line_bytes;
  const uint64_t end = addr + bytes;
  for (uint64_t a = addr; a < end;) {
    const uint64_t local = map.sliceLocal(a);
    const uint64_t offset = local % lineBytes;
    const uint64_t n =
        std::min({end - a, (a / interleave + 1) * interleave - a, lineBytes - offset});
    const uint64_t line = local - offset;
    f(map.slice(a), line, cache::rebase(cache::firstBytes(static_cast<uint32_t>(n)), local, line));
    a += n;
  }
}

void Gpu::hostWrote(uint64_t addr, uint64_t bytes) {
  if (cfg_.l2.host_writes == "dram" || !hierarchy() || !cfg_.l2.slice.enabled) return;
  const bool dirty = cfg_.l2.host_writes == "write-back";
  forEachL2Piece(AddressMap(cfg_), addr, bytes,
                 [&](uint32_t slice, uint64_t line, const cache::ByteMask& mask) {
                   l2_[slice]->hostWrite(line, mask, dirty);
                 });
}

cache::L2Slice::LineCensus Gpu::l2Census(double growth) const {
  cache::L2Slice::LineCensus c;
  for (const auto& s : l2_) s->census(growth, c);
  return c;
}

void Gpu::warmL2(const func::AccessLog& log) {
  if (!hierarchy() || !cfg_.l2.slice.enabled) return;
  const AddressMap map(cfg_);
  constexpr uint64_t kSector = uint64_t(1) << func::AccessLog::kSectorBits;
  constexpr uint32_t kSectors = 1u << (func::AccessLog::kLineBits - func::AccessLog::kSectorBits);
  // Sector by sector; consecutive pieces of one L2 line (of one entry or the next) go to it
  // together.
  uint32_t slice = 0;
  uint64_t line = ~0ull;
  bool write = false;
  cache::ByteMask mask{};
  const auto flush = [&] {
    if (line != ~0ull) l2_[slice]->warm(line, mask, write);
    line = ~0ull;
  };
  log.forEach([&](const func::AccessLog::Entry& e) {
    for (uint32_t s = 0; s < kSectors; ++s) {
      if (!(e.sectors & (1u << s))) continue;
      const uint64_t sector = (e.line << func::AccessLog::kLineBits) + s * kSector;
      forEachL2Piece(map, sector, kSector, [&](uint32_t sl, uint64_t l, const cache::ByteMask& m) {
        if (l != line || sl != slice || e.write != write) {
          flush();
          line = l;
          slice = sl;
          write = e.write;
          mask = cache::ByteMask{};
        }
        for (size_t i = 0; i < mask.size(); ++i) mask[i] |= m[i];
      });
    }
  });
  flush();
}

void Gpu::resetMemoryStats() {
  if (fixed_) fixed_->resetStats();
  for (auto& c : l1_) c->resetStats();
  if (noc_) noc_->resetStats();
  for (auto& c : l2_) c->resetStats();
  for (auto& c : mc_) c->resetStats();
}

void Gpu::resetMemoryState() {
  for (auto& c : l1_) c->resetState();
  if (noc_) noc_->resetState();
  for (auto& c : l2_) c->resetState();
  for (auto& c : mc_) c->resetState();
}

std::string Gpu::memoryUnitsInFlight() const {
  std::vector<std::string> busy;
  // The unit holding the request that has waited longest on that unit itself: where traffic
  // got stuck (the units behind it hold younger requests, backed up).
  std::optional<HeldRequest> oldest;
  std::string oldestUnit;
  const auto consider = [&](const std::string& unit, const std::optional<HeldRequest>& h) {
    if (h && (!oldest || h->since < oldest->since)) {
      oldest = h;
      oldestUnit = unit;
    }
  };
  for (const auto& c : l1_) {
    if (!c->idle()) busy.push_back(c->name());
    consider(c->name(), c->oldestHeld());
  }
  if (noc_ && noc_->packetsInFlight() > 0) {
    busy.push_back(fmt::format("{} ({} packets)", noc_->name(), noc_->packetsInFlight()));
    consider(noc_->name(), noc_->oldestHeld());
  }
  for (const auto& c : l2_) {
    if (!c->idle()) busy.push_back(c->name());
    consider(c->name(), c->oldestHeld());
  }
  for (const auto& c : mc_) {
    if (!c->idle()) busy.push_back(c->name());
    consider(c->name(), c->oldestHeld());
  }
  std::string out = fmt::format("{}", fmt::join(busy, ", "));
  if (oldest && !out.empty())
    out += fmt::format("; the oldest request waits in {} since core cycle {}: {}", oldestUnit,
                       oldest->since / corePeriod().value(), oldest->what);
  return out;
}

namespace {

// What a data cache did, from its power-state counters.
power::CacheEnergyInputs cacheInputs(const cache::CachePowerCounters& c) {
  power::CacheEnergyInputs in;
  in.frames = c.frames;
  in.subwordsPerLine = std::max<uint32_t>(1, c.subwordsPerLine);
  in.lookups = c.lookups;
  in.reads = c.reads;
  in.writes = c.writes;
  in.fills = c.fills;
  in.readSubwords = c.readSubwords;
  in.writeSubwords = c.writeSubwords;
  in.wakeups = c.wakeups;
  in.lineCycles = c.lineCycles;
  in.drowsyLineCycles = c.drowsyLineCycles;
  in.lentLineCycles = c.lentLineCycles;
  return in;
}

}  // namespace

std::vector<power::CacheEnergyInputs> Gpu::l1EnergyInputs() const {
  std::vector<power::CacheEnergyInputs> out;
  for (const auto& c : l1_) out.push_back(cacheInputs(c->powerCounters()));
  if (out.empty()) out.resize(sms_.size());
  return out;
}

power::UncoreEnergyInputs Gpu::uncoreEnergyInputs() const {
  power::UncoreEnergyInputs in;
  if (fixed_) return in;
  for (const auto& c : l2_) in.l2.push_back(cacheInputs(c->powerCounters()));
  const noc::Interconnect::FlitTraversals f = noc_->flitTraversals();
  in.routerFlits = f.routers;
  in.linkFlits = f.links;
  in.nocNodes = noc_->leakingRouters();
  for (const auto& mc : mc_) {
    const dram::MemoryController::EnergyCounts d = mc->energyCounts();
    in.controllerRequests += d.requests;
    in.activates += d.activates;
    in.precharges += d.precharges;
    in.readBursts += d.readBursts;
    in.writeBursts += d.writeBursts;
    in.refreshes += d.refreshes;
  }
  in.controllers = in.channels = static_cast<uint32_t>(mc_.size());
  return in;
}

std::vector<std::string> Gpu::protocolViolations() {
  std::vector<std::string> out;
  for (auto& c : checkers_) {
    c->finish();
    out.insert(out.end(), c->violations().begin(), c->violations().end());
  }
  return out;
}

}  // namespace gpusc::gpu
