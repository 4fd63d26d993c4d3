#include "power/energy_model.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "common/error.hpp"
#include "power/gating_params.hpp"

namespace gpusc::power {

const char* blockName(Block b) {
  switch (b) {
    case Block::FrontEnd:
      return "front_end";
    case Block::Schedulers:
      return "schedulers";
    case Block::RegisterFile:
      return "register_file";
    case Block::OperandCollectors:
      return "operand_collectors";
    case Block::SimdLanes:
      return "simd_lanes";
    case Block::SfuDp:
      return "sfu_dp";
    case Block::Tensor:
      return "tensor";
    case Block::Ldst:
      return "ldst";
    case Block::SharedMemory:
      return "shared_memory";
    case Block::ConstCache:
      return "const_cache";
    case Block::L1d:
      return "l1d";
    case Block::SmClock:
      return "sm_clock";
    case Block::L2:
      return "l2";
    case Block::Noc:
      return "noc";
    case Block::MemoryControllers:
      return "memory_controllers";
    case Block::Dram:
      return "dram";
    case Block::Constant:
      return "constant";
    case Block::Count_:
      break;
  }
  return "?";
}

bool listed(Block b, const BlockEnergy& e) { return b != Block::Tensor || e.total() > 0; }

double EnergyBreakdown::dynamicJ() const {
  double s = 0;
  for (const auto& b : blocks) s += b.dynamicJ;
  return s;
}

double EnergyBreakdown::staticJ() const {
  double s = 0;
  for (const auto& b : blocks) s += b.staticJ;
  return s;
}

double EnergyBreakdown::smJ() const {
  double s = 0;
  for (int i = 0; i < kNumSmBlocks; ++i) s += blocks[i].total();
  return s;
}

EnergyBreakdown& EnergyBreakdown::operator+=(const EnergyBreakdown& o) {
  for (int i = 0; i < kNumBlocks; ++i) {
    blocks[i].dynamicJ += o.blocks[i].dynamicJ;
    blocks[i].staticJ += o.blocks[i].staticJ;
  }
  return *this;
}

// ---- parameters at the supply voltage ----------------------------------------------------------

EnergyTable::EnergyTable(const PlatformConfig& cfg) {
  const PowerConfig& p = cfg.power;
  scale = voltageScaling(p);
  cycleSeconds = 1e-6 / cfg.gpu.clocks.core_mhz;
  supplyVoltage = p.supply_voltage;
  const double dj = 1e-12 * scale.dynamic;  // pJ at nominal -> J at the supply
  const double lw = scale.leakage;
  const SmPowerConfig& s = p.sm;
  fetchDecode = s.fetch_decode_pj * dj;
  icache = s.icache_access_pj * dj;
  scheduler = s.scheduler_pj * dj;
  rfRead = s.rf_read_pj * dj;
  rfWrite = s.rf_write_pj * dj;
  collector = s.collector_pj * dj;
  ldst = s.ldst_pj * dj;
  shared = s.shared_access_pj * dj;
  constAccess = s.const_access_pj * dj;
  tensorCycle = s.tensor_cycle_pj * dj;
  lane[int(sm::LaneKind::Int)] = s.int_lane_pj * dj;
  lane[int(sm::LaneKind::Fp)] = s.fp_lane_pj * dj;
  lane[int(sm::LaneKind::Dp)] = s.dp_lane_pj * dj;
  lane[int(sm::LaneKind::Sfu)] = s.sfu_lane_pj * dj;
  smClockW = s.clock_w * scale.dynamic;  // C V^2 f
  frontendW = s.frontend_leakage_w * lw;
  rfW = s.rf_leakage_w * lw;
  // A unified L1's array holds shared memory too: its leakage is the L1's (power.l1d.leakage_w),
  // shared memory's the share of the lines lent to it (smEnergy).
  unifiedL1 = cfg.sm.unified_l1;
  sharedW = unifiedL1 ? 0.0 : s.shared_leakage_w * lw;
  laneW = s.lane_leakage_w * lw;
  unitW = s.simd_unit_leakage_w * lw;
  sfuW = s.sfu_leakage_w * lw;
  ldstW = s.ldst_leakage_w * lw;
  lanesPerSm = cfg.sm.simd_units * cfg.sm.simd_lanes;
  unitsPerSm = cfg.sm.simd_units;
  auto cache = [&](const CachePowerConfig& c) {
    Cache k;
    k.tag = c.tag_pj * dj;
    k.read = c.read_pj * dj;
    k.write = c.write_pj * dj;
    k.fill = c.fill_pj * dj;
    k.wake = c.drowsy.wake_pj * dj;
    k.dataShare = c.data_share;
    k.leakageW = c.leakage_w * lw;
    k.lineShare = c.line_share;
    k.drowsyFraction = c.drowsy.leakage_fraction;
    k.dwl = c.dwl;
    return k;
  };
  l1 = cache(p.l1d);
  l2 = cache(p.l2);
  routerFlit = p.noc.router_flit_pj * dj;
  linkFlit = p.noc.link_flit_pj * dj;
  routerW = p.noc.router_leakage_w * lw;
  controllerRequest = p.dram.controller_request_pj * dj;
  controllerW = p.dram.controller_leakage_w * lw;
  // DRAM has its own supply: the core supply voltage does not scale it.
  activate = p.dram.activate_pj * 1e-12;
  precharge = p.dram.precharge_pj * 1e-12;
  readBurst = p.dram.read_burst_pj * 1e-12;
  writeBurst = p.dram.write_burst_pj * 1e-12;
  refresh = p.dram.refresh_pj * 1e-12;
  dramBackgroundW = p.dram.background_w;
  constantW = p.constant_w;
  const GatingConfig& g = p.gating;
  smSwitch = g.sm.switch_pj * dj;
  unitSwitch = g.simd_unit.switch_pj * dj;
  laneSwitch = g.lane.switch_pj * dj;
  smGatedFraction = g.sm.gated_leakage_fraction;
  unitGatedFraction = g.simd_unit.gated_leakage_fraction;
  laneGatedFraction = g.lane.gated_leakage_fraction;
  const ExecuteStagesConfig& st = s.execute_stages;
  const bool activity = s.current_model == "activity";
  const auto stage = [activity](const ExecuteStageConfig& c) {
    return activity ? LaneStage{0, 1} : LaneStage{c.delay, c.cycles};
  };
  laneStage[int(sm::LaneKind::Int)] = stage(st.simd);
  laneStage[int(sm::LaneKind::Fp)] = stage(st.simd);
  laneStage[int(sm::LaneKind::Dp)] = stage(st.dp);
  laneStage[int(sm::LaneKind::Sfu)] = stage(st.sfu);
}

double EnergyTable::eventJ(const sm::SmActivity& a) const {
  using sm::Unit;
  return a.issued * (fetchDecode + scheduler) + a.icacheAccesses * icache + a.rfReads * rfRead +
         a.rfWrites * rfWrite +
         (a.dispatched[int(Unit::Sp)] + a.dispatched[int(Unit::Sfu)] + a.dispatched[int(Unit::Dp)] +
          a.dispatched[int(Unit::Ldst)] + a.dispatched[int(Unit::Tensor)]) *
             collector +
         a.dispatched[int(Unit::Ldst)] * ldst + a.sharedAccesses * shared +
         a.constAccesses * constAccess;
}

double EnergyTable::activityJ(const sm::SmActivity& a) const {
  double e = eventJ(a);
  for (int k = 0; k < sm::kNumLaneKinds; ++k) e += a.laneOpsByKind[k] * lane[k];
  return e + tensorJ(a);
}

double EnergyTable::smOnW() const {
  return frontendW + rfW + sharedW + lanesPerSm * laneW + unitsPerSm * unitW + sfuW + ldstW +
         l1.leakageW + smClockW;
}

// ---- energy from counts ------------------------------------------------------------------------

BlockEnergy cacheEnergy(const EnergyTable::Cache& c, const CacheEnergyInputs& in, double seconds,
                        double onFraction) {
  BlockEnergy e;
  const double subwords = std::max<uint32_t>(1, in.subwordsPerLine);
  // With divided word lines only the enabled sub-word-lines of the data array switch.
  const double reads = c.dwl ? (1.0 - c.dataShare) * double(in.reads) +
                                   c.dataShare * double(in.readSubwords) / subwords
                             : double(in.reads);
  const double writes = c.dwl ? (1.0 - c.dataShare) * double(in.writes) +
                                    c.dataShare * double(in.writeSubwords) / subwords
                              : double(in.writes);
  e.dynamicJ = in.lookups * c.tag + reads * c.read + writes * c.write + in.fills * c.fill +
               in.wakeups * c.wake;
  // Lines are ON or drowsy; the periphery (decoders, sense amplifiers) is always ON.
  const double drowsyShare =
      in.lineCycles ? double(in.drowsyLineCycles) / double(in.lineCycles) : 0.0;
  const double lineFactor = (1.0 - drowsyShare) + drowsyShare * c.drowsyFraction;
  e.staticJ = c.leakageW * seconds * onFraction * ((1.0 - c.lineShare) + c.lineShare * lineFactor);
  return e;
}

EnergyBreakdown smEnergy(const EnergyTable& t, const SmEnergyInputs& in, uint64_t cycles) {
  using sm::LaneKind;
  using sm::Unit;
  const sm::SmCounters& n = in.counters;
  const SmGatingInputs& g = in.gating;
  EnergyBreakdown e;
  const double cs = t.cycleSeconds;
  const uint64_t gated = std::min(g.smGatedCycles, cycles);
  const double on = double(cycles - gated), off = double(gated);
  // A block's leakage while its SM is ON, and the residue while the SM is gated.
  const auto leak = [&](double w) { return w * cs * (on + t.smGatedFraction * off); };

  e[Block::FrontEnd].dynamicJ = n.issued * t.fetchDecode + n.icacheAccesses * t.icache;
  e[Block::FrontEnd].staticJ = leak(t.frontendW);
  e[Block::Schedulers].dynamicJ = n.issued * t.scheduler;
  e[Block::RegisterFile].dynamicJ = n.rfReads * t.rfRead + n.rfWrites * t.rfWrite;
  e[Block::RegisterFile].staticJ = leak(t.rfW);
  e[Block::OperandCollectors].dynamicJ =
      double(n.dispatched[int(Unit::Sp)] + n.dispatched[int(Unit::Sfu)] +
             n.dispatched[int(Unit::Dp)] + n.dispatched[int(Unit::Ldst)] +
             n.dispatched[int(Unit::Tensor)]) *
      t.collector;

  // Lanes and SIMD units: their own switches act while the SM is ON.
  const double laneCyclesOn = std::max(0.0, double(t.lanesPerSm) * on - double(g.laneGatedCycles));
  const double unitCyclesOn = std::max(0.0, double(t.unitsPerSm) * on - double(g.unitGatedCycles));
  e[Block::SimdLanes].dynamicJ = n.laneOpsByKind[int(LaneKind::Int)] * t.lane[int(LaneKind::Int)] +
                                 n.laneOpsByKind[int(LaneKind::Fp)] * t.lane[int(LaneKind::Fp)] +
                                 g.laneGatings * t.laneSwitch + g.unitGatings * t.unitSwitch;
  e[Block::SimdLanes].staticJ =
      t.laneW * cs *
          (laneCyclesOn + t.laneGatedFraction * double(g.laneGatedCycles) +
           t.smGatedFraction * t.lanesPerSm * off) +
      t.unitW * cs *
          (unitCyclesOn + t.unitGatedFraction * double(g.unitGatedCycles) +
           t.smGatedFraction * t.unitsPerSm * off);
  e[Block::SfuDp].dynamicJ = n.laneOpsByKind[int(LaneKind::Sfu)] * t.lane[int(LaneKind::Sfu)] +
                             n.laneOpsByKind[int(LaneKind::Dp)] * t.lane[int(LaneKind::Dp)];
  e[Block::SfuDp].staticJ = leak(t.sfuW);
  // Tensor cores: their leakage is in the SM's other blocks' figures.
  e[Block::Tensor].dynamicJ = n.unitBusy[int(Unit::Tensor)] * t.tensorCycle;
  e[Block::Ldst].dynamicJ = n.dispatched[int(Unit::Ldst)] * t.ldst;
  e[Block::Ldst].staticJ = leak(t.ldstW);
  e[Block::SharedMemory].dynamicJ = n.sharedAccesses * t.shared;
  e[Block::SharedMemory].staticJ = leak(t.sharedW);
  e[Block::ConstCache].dynamicJ = n.constAccesses * t.constAccess;
  const double onFraction = cycles ? on / double(cycles) : 1.0;
  const BlockEnergy l1 = cacheEnergy(t.l1, in.l1, double(cycles) * cs, onFraction);
  e[Block::L1d].dynamicJ = l1.dynamicJ;
  e[Block::L1d].staticJ = l1.staticJ + t.l1.leakageW * cs * t.smGatedFraction * off;
  if (t.unifiedL1 && in.l1.lineCycles > 0) {
    // The lines lent to shared memory are ON (never drowsy), periphery and all: their share of
    // the array's leakage is shared memory's.
    const double lent =
        leak(t.l1.leakageW) * double(in.l1.lentLineCycles) / double(in.l1.lineCycles);
    e[Block::SharedMemory].staticJ += lent;
    e[Block::L1d].staticJ -= lent;
  }
  // The clock tree runs while the SM is ON; the SM's switch costs its switching energy.
  e[Block::SmClock].dynamicJ = t.smClockW * cs * on + g.smGatings * t.smSwitch;
  return e;
}

double uncoreDynamicJ(const EnergyTable& t, const UncoreEnergyInputs& in, Block b) {
  switch (b) {
    case Block::L2: {
      double s = 0;
      for (const auto& c : in.l2) s += cacheEnergy(t.l2, c, 0.0, 1.0).dynamicJ;
      return s;
    }
    case Block::Noc:
      return in.routerFlits * t.routerFlit + in.linkFlits * t.linkFlit;
    case Block::MemoryControllers:
      return in.controllerRequests * t.controllerRequest;
    case Block::Dram:
      return in.activates * t.activate + in.precharges * t.precharge + in.readBursts * t.readBurst +
             in.writeBursts * t.writeBurst + in.refreshes * t.refresh;
    default:
      return 0.0;
  }
}

EnergyBreakdown uncoreEnergy(const EnergyTable& t, const UncoreEnergyInputs& in, uint64_t cycles) {
  EnergyBreakdown e;
  const double s = double(cycles) * t.cycleSeconds;
  for (const auto& c : in.l2) {
    const BlockEnergy b = cacheEnergy(t.l2, c, s, 1.0);
    e[Block::L2].dynamicJ += b.dynamicJ;
    e[Block::L2].staticJ += b.staticJ;
  }
  for (Block b : {Block::Noc, Block::MemoryControllers, Block::Dram})
    e[b].dynamicJ = uncoreDynamicJ(t, in, b);
  e[Block::Noc].staticJ = t.routerW * in.nocNodes * s;
  e[Block::MemoryControllers].staticJ = t.controllerW * in.controllers * s;
  e[Block::Dram].staticJ = t.dramBackgroundW * in.channels * s;
  e[Block::Constant].staticJ = t.constantW * s;
  return e;
}

// ---- the model ---------------------------------------------------------------------------------

EnergyModel::EnergyModel(const sc_core::sc_module_name& name, const PlatformConfig& cfg)
    : sc_core::sc_module(name),
      cfg_(cfg),
      table_(cfg),
      numSms_(cfg.gpu.num_sms),
      sampleCycles_(cfg.power.sample_cycles),
      smStaticA_(table_.smOnW() / cfg.power.supply_voltage),
      streams_(numSms_),
      ring_(size_t(numSms_) * kRing, 0.0),
      pendingMask_((numSms_ + 63) / 64, 0) {}

void EnergyModel::beginLaunch(uint64_t startCycle) {
  start_ = startCycle;
  streams_.assign(numSms_, Stream{startCycle, startCycle});
  ring_.assign(size_t(numSms_) * kRing, 0.0);
  pendingMask_.assign((numSms_ + 63) / 64, 0);
  horizon_ = startCycle;
  smCoreJ_.clear();
  lastBin_ = 0;
  lastBinFrom_ = lastBinTo_ = 0;  // no bin yet
  l1J_.clear();
  uncoreJ_.clear();
  binEnd_.clear();
  lastL1J_.assign(numSms_, 0.0);
  lastUncoreJ_.fill(0.0);
}

uint64_t EnergyModel::nextSampleCycle(uint64_t cycle) const {
  if (sampleCycles_ == 0) return ~0ull;
  if (cycle < start_) return start_ + sampleCycles_;
  return start_ + ((cycle - start_) / sampleCycles_ + 1) * sampleCycles_;
}

size_t EnergyModel::binOf(uint64_t cycle) const {
  return cycle <= start_ ? 0 : static_cast<size_t>((cycle - start_) / sampleCycles_);
}

void EnergyModel::addBins(size_t n) {
  while (smCoreJ_.size() < n) {
    smCoreJ_.emplace_back(numSms_, 0.0);
    l1J_.emplace_back(numSms_, 0.0);
    uncoreJ_.emplace_back();
    uncoreJ_.back().fill(0.0);
  }
}

void EnergyModel::addSmDynamic(uint32_t sm, uint64_t first, uint64_t cycles, double jPerCycle) {
  // Most calls are one cycle of an SM in the bin of the call before (every SM's every evaluated
  // cycle): that bin without binOf()'s division. (jPerCycle x 1.0 is jPerCycle exactly.)
  if (cycles == 1 && first >= lastBinFrom_ && first < lastBinTo_) {
    smCoreJ_[lastBin_][sm] += jPerCycle;
    return;
  }
  uint64_t c = std::max(first, start_);
  const uint64_t end = first + cycles;
  while (c < end) {
    const size_t b = binOf(c);
    const uint64_t binEnd = start_ + (uint64_t(b) + 1) * sampleCycles_;
    const uint64_t n = std::min(end, binEnd) - c;
    ensureBins(b + 1);
    smCoreJ_[b][sm] += jPerCycle * double(n);
    lastBin_ = b;
    lastBinFrom_ = start_ + uint64_t(b) * sampleCycles_;
    lastBinTo_ = binEnd;
    c += n;
  }
}

// ---- the stage-distributed stream ---------------------------------------------------------------
//
// An SM reports cycle c when simulated time has reached c (an evaluated cycle) or later (a
// stretch it slept through, reported when it wakes). Its activity's energy is booked in the
// cycles its stages draw it, some of them later than c: while the SM then sleeps, nobody reports
// those cycles, so whenever time advances every SM's booked cycles before the new time are
// handed on (completeBefore), in cycle order across the SMs, as the sinks expect.

void EnergyModel::setPendingEnd(uint32_t sm, uint64_t end) {
  Stream& st = streams_[sm];
  const bool was = st.pending();
  st.pendingEnd = std::max(st.pendingEnd, end);
  if (!was && st.pending()) markPending(sm, true);
}

void EnergyModel::book(uint32_t sm, uint64_t c, const sm::SmActivity& a) {
  double* ring = &ring_[size_t(sm) * kRing];
  for (int k = 0; k < sm::kNumLaneKinds; ++k) {
    if (a.laneOpsByKind[k] == 0) continue;
    const EnergyTable::LaneStage& st = table_.laneStage[k];
    const double perCycle = table_.laneJ(a, sm::LaneKind(k)) / double(st.cycles);
    const uint64_t from = c + st.delay;
    for (uint64_t x = from; x < from + st.cycles; ++x) ring[x % kRing] += perCycle;
    setPendingEnd(sm, from + st.cycles);
  }
  // A tensor core draws from its dispatch over the instruction's occupancy (the cycle's mean
  // occupancy when several started; at most kMaxTensorDraw cycles).
  if (const uint32_t n = a.dispatched[int(sm::Unit::Tensor)]) {
    const uint64_t busy = a.unitBusy[int(sm::Unit::Tensor)];
    const uint64_t cycles = std::min<uint64_t>(kMaxTensorDraw, std::max<uint64_t>(1, busy / n));
    const double perCycle = table_.tensorJ(a) / double(cycles);
    for (uint64_t x = c; x < c + cycles; ++x) ring[x % kRing] += perCycle;
    setPendingEnd(sm, c + cycles);
  }
}

void EnergyModel::emitCycle(uint32_t sm, uint64_t c, const sm::SmActivity* a) {
  Stream& st = streams_[sm];
  double& slot = ring_[size_t(sm) * kRing + c % kRing];
  const double j = slot + (a ? table_.eventJ(*a) : 0.0);
  slot = 0.0;
  const bool was = st.pending();
  st.next = c + 1;
  if (was && !st.pending()) markPending(sm, false);
  if (j > 0 && sampleCycles_ > 0) addSmDynamic(sm, c, 1, j);
  if (!sinks_.empty()) {
    const double amps = j / table_.cycleSeconds / table_.supplyVoltage + smStaticA_;
    for (CurrentSink* s : sinks_) {
      if (a) s->onSmActivity(sm, c, *a);
      s->onSmCurrent(sm, c, 1, amps);
    }
  }
}

void EnergyModel::completeBefore(uint64_t cycle) {
  if (cycle <= horizon_) return;
  horizon_ = cycle;
  if (!anyPending()) return;
  uint64_t x = ~0ull;
  forEachPending([&](uint32_t s) { x = std::min(x, streams_[s].next); });
  // Booked stages end at most kRing cycles after a pending SM's next cycle. In SM order: the
  // SMs pending when x's turn begins (handing a cycle on books nothing new).
  for (; x < cycle && anyPending(); ++x)
    forEachPending([&](uint32_t s) {
      if (streams_[s].next == x) emitCycle(s, x, nullptr);
    });
}

void EnergyModel::dropBookedFrom(uint64_t cycle) {
  completeBefore(cycle);
  for (uint32_t s = 0; s < numSms_ && !streams_.empty(); ++s) {
    Stream& st = streams_[s];
    if (!st.pending()) continue;
    for (uint64_t c = std::max(st.next, cycle); c < st.pendingEnd; ++c)
      ring_[s * kRing + c % kRing] = 0.0;
    st.pendingEnd = st.next;
    markPending(s, false);
  }
}

void EnergyModel::onActivity(uint32_t sm, uint64_t firstCycle, uint64_t cycles,
                             const sm::SmActivity& a) {
  if (!sinks_.empty() || sampleCycles_ > 0) {
    Stream& st = streams_[sm];
    if (cycles > 1 && table_.activityJ(a) == 0.0) {
      // A stretch the SM slept through: simulated time is past it. Its booked cycles are handed
      // on in order with the other SMs'; the rest of it draws the idle current.
      completeBefore(firstCycle + cycles);
      const uint64_t from = std::max(firstCycle, st.next);
      if (from < firstCycle + cycles) {
        st.next = firstCycle + cycles;
        for (CurrentSink* s : sinks_)
          s->onSmCurrent(sm, from, firstCycle + cycles - from, smStaticA_);
      }
    } else {
      for (uint64_t c = firstCycle; c < firstCycle + cycles; ++c) {
        if (c < st.next) {
          // A cycle the SM slept through (reported alone), already handed on with its stages.
          if (table_.activityJ(a) != 0.0)
            throw InternalError(fmt::format(
                "EnergyModel: sm{} reported activity in cycle {} after its current was final", sm,
                c));
          continue;
        }
        completeBefore(c);
        book(sm, c, a);
        emitCycle(sm, c, &a);
      }
    }
  }
  if (downstream_) downstream_->onActivity(sm, firstCycle, cycles, a);
}

void EnergyModel::sample(uint64_t cycle, const std::vector<CacheEnergyInputs>& l1,
                         const UncoreEnergyInputs& uncore) {
  if (sampleCycles_ == 0 || cycle <= start_) return;
  const size_t b = binOf(cycle - 1);
  ensureBins(b + 1);
  for (uint32_t i = 0; i < numSms_ && i < l1.size(); ++i) {
    const double now = cacheEnergy(table_.l1, l1[i], 0.0, 1.0).dynamicJ;
    l1J_[b][i] += now - lastL1J_[i];
    lastL1J_[i] = now;
  }
  for (Block k : {Block::L2, Block::Noc, Block::MemoryControllers, Block::Dram}) {
    const double now = uncoreDynamicJ(table_, uncore, k);
    uncoreJ_[b][size_t(k)] += now - lastUncoreJ_[size_t(k)];
    lastUncoreJ_[size_t(k)] = now;
  }
  if (binEnd_.size() < b + 1) binEnd_.resize(b + 1, 0);
  binEnd_[b] = cycle;
}

PowerReport EnergyModel::finishLaunch(uint64_t endCycle, const std::vector<SmEnergyInputs>& sms,
                                      const UncoreEnergyInputs& uncore) {
  completeBefore(endCycle);
  // Every stage ends by its instruction's writeback (PlatformConfig checks the stages against
  // the latencies), so nothing of the launch may be booked past its end.
  for (uint32_t s = 0; s < numSms_ && !streams_.empty(); ++s)
    if (streams_[s].pending())
      throw InternalError(fmt::format(
          "EnergyModel: sm{} has energy booked up to cycle {}, after the launch's end at {}", s,
          streams_[s].pendingEnd - 1, endCycle - 1));
  PowerReport r;
  r.cycles = endCycle > start_ ? endCycle - start_ : 0;
  r.seconds = double(r.cycles) * table_.cycleSeconds;
  r.supplyVoltage = table_.supplyVoltage;
  for (const auto& in : sms) {
    r.perSm.push_back(smEnergy(table_, in, r.cycles));
    r.total += r.perSm.back();
  }
  const EnergyBreakdown u = uncoreEnergy(table_, uncore, r.cycles);
  r.total += u;

  r.parameters = {
      {"supply_voltage", table_.supplyVoltage},
      {"dynamic_scale", table_.scale.dynamic},
      {"leakage_scale", table_.scale.leakage},
      {"break_even_cycles",
       {{"sm", smSwitchParams(cfg_).breakEven},
        {"simd_unit", simdUnitSwitchParams(cfg_).breakEven},
        {"lane", laneSwitchParams(cfg_).breakEven}}},
      {"sm_on_power_w", table_.smOnW()},
  };

  if (sampleCycles_ == 0 || r.cycles == 0) return r;
  // Close the last bin with the final counts (they include the memory system's drain).
  std::vector<CacheEnergyInputs> l1;
  for (const auto& in : sms) l1.push_back(in.l1);
  sample(std::max(endCycle, start_ + 1), l1, uncore);
  const size_t bins = (r.cycles + sampleCycles_ - 1) / sampleCycles_;
  ensureBins(bins);
  // Energy that is not binned as it happens (leakage, clock, switching, what the streams do not
  // see) is spread evenly over the launch, so the samples add up to the totals.
  std::vector<double> smSpread(sms.size(), 0.0);
  for (size_t i = 0; i < sms.size(); ++i) {
    double streamed = 0, l1Dyn = 0;
    for (size_t b = 0; b < bins; ++b) {
      streamed += smCoreJ_[b][i];
      l1Dyn += l1J_[b][i];
    }
    smSpread[i] = r.perSm[i].smJ() - streamed - l1Dyn;
  }
  std::array<double, kNumBlocks> uncoreSpread{};
  for (int k = kNumSmBlocks; k < kNumBlocks; ++k) {
    double binned = 0;
    for (size_t b = 0; b < bins; ++b) binned += uncoreJ_[b][k];
    uncoreSpread[k] = u.blocks[k].total() - binned;
  }
  for (size_t b = 0; b < bins; ++b) {
    PowerSample s;
    s.startCycle = start_ + uint64_t(b) * sampleCycles_;
    s.cycles = std::min<uint64_t>(sampleCycles_, endCycle - s.startCycle);
    const double share = double(s.cycles) / double(r.cycles);
    const double secs = double(s.cycles) * table_.cycleSeconds;
    for (size_t i = 0; i < sms.size(); ++i) {
      const double j = smCoreJ_[b][i] + l1J_[b][i] + smSpread[i] * share;
      s.smW.push_back(j / secs);
      s.totalW += j / secs;
    }
    for (int k = kNumSmBlocks; k < kNumBlocks; ++k) {
      const double j = uncoreJ_[b][k] + uncoreSpread[k] * share;
      s.blockW[k] = j / secs;
      s.totalW += j / secs;
    }
    r.samples.push_back(std::move(s));
  }
  return r;
}

// ---- results -----------------------------------------------------------------------------------

nlohmann::json toJson(const EnergyBreakdown& e, double seconds, bool smBlocksOnly) {
  nlohmann::json blocks = nlohmann::json::object();
  for (int i = 0; i < (smBlocksOnly ? kNumSmBlocks : kNumBlocks); ++i) {
    const BlockEnergy& b = e.blocks[i];
    if (!listed(static_cast<Block>(i), b)) continue;
    blocks[blockName(static_cast<Block>(i))] = {
        {"dynamic_j", b.dynamicJ},
        {"static_j", b.staticJ},
        {"average_power_w", seconds > 0 ? b.total() / seconds : 0.0}};
  }
  return {{"energy_j", e.totalJ()},
          {"dynamic_j", e.dynamicJ()},
          {"static_j", e.staticJ()},
          {"average_power_w", seconds > 0 ? e.totalJ() / seconds : 0.0},
          {"blocks", blocks}};
}

nlohmann::json toJson(const PowerReport& r) {
  nlohmann::json j = toJson(r.total, r.seconds);
  j["seconds"] = r.seconds;
  j["cycles"] = r.cycles;
  j["parameters"] = r.parameters;
  nlohmann::json sms = nlohmann::json::array();
  for (size_t i = 0; i < r.perSm.size(); ++i) {
    nlohmann::json s = toJson(r.perSm[i], r.seconds, true);
    s["sm"] = i;
    sms.push_back(s);
  }
  j["per_sm"] = sms;
  return j;
}

}  // namespace gpusc::power
