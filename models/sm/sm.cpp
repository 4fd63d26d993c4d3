#include "sm/sm.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "common/bits.hpp"
#include "common/error.hpp"
#include "power/energy_model.hpp"
#include "power/gating_params.hpp"

namespace gpusc::sm {

using func::InstClass;

uint32_t registerPartitionOf(const SmConfig& s, uint32_t slot) {
  return slot % s.schedulers / (s.schedulers / s.register_partitions);
}

uint32_t warpsByRegisters(const SmConfig& s, uint32_t registersPerWarp) {
  if (registersPerWarp == 0) return s.max_warps;
  if (s.register_partitions == 1) return s.registers / registersPerWarp;
  const uint32_t each = s.registerPartitionSize() / registersPerWarp;
  std::array<uint32_t, kMaxRegisterPartitions> slots{};
  for (uint32_t ws = 0; ws < s.max_warps; ++ws) slots[registerPartitionOf(s, ws)] += 1;
  uint32_t n = 0;
  for (uint32_t p = 0; p < s.register_partitions; ++p) n += std::min(slots[p], each);
  return n;
}

uint32_t ctasPerSm(const SmConfig& s, const CtaFootprint& f, uint32_t sharedBytes) {
  uint32_t n = s.max_ctas;
  if (f.threads) n = std::min(n, s.max_threads / f.threads);
  if (f.warps) n = std::min(n, s.max_warps / f.warps);
  if (f.registers) {
    n = std::min(n, s.registers / f.registers);
    if (s.register_partitions > 1 && f.warps)
      n = std::min(n, warpsByRegisters(s, f.registersPerWarp) / f.warps);
  }
  if (f.sharedBytes) n = std::min(n, sharedBytes / f.sharedBytes);
  return n;
}

uint32_t ctasPerSm(const SmConfig& s, const CtaFootprint& f) {
  return ctasPerSm(s, f, s.shared_memory_bytes);
}

uint32_t sharedCarveout(const SmConfig& s, const CtaFootprint& f) {
  if (!s.unified_l1) return s.shared_memory_bytes;
  const uint32_t most = ctasPerSm(s, f);
  for (uint32_t kb : s.shared_carveouts_kb)
    if (ctasPerSm(s, f, kb * 1024) >= most) return kb * 1024;
  return s.shared_memory_bytes;
}

namespace {
bool isNone(const std::string& s) { return s == "none"; }

// ---- cp.async groups of a warp (WarpSlot::asyncCounts) ----
// Drops the complete committed groups at the front.
void settleAsync(WarpSlot& w) {
  size_t done = 0;
  while (done < w.asyncCounts.size() && w.asyncFirst + done < w.asyncOpen &&
         w.asyncCounts[done] == 0)
    ++done;
  w.asyncCounts.erase(w.asyncCounts.begin(), w.asyncCounts.begin() + done);
  w.asyncFirst += done;
}

// A copy joins the open group.
uint64_t addAsyncCopy(WarpSlot& w) {
  const uint64_t g = w.asyncOpen;
  if (w.asyncCounts.empty()) w.asyncFirst = g;
  while (w.asyncFirst + w.asyncCounts.size() <= g) w.asyncCounts.push_back(0);
  w.asyncCounts[g - w.asyncFirst] += 1;
  return g;
}

void completeAsyncCopy(WarpSlot& w, uint64_t g) {
  w.asyncCounts[g - w.asyncFirst] -= 1;
  settleAsync(w);
}

// Whether a cp.async wait may issue: wait_all when no copy is incomplete, wait_group N when no
// committed group but the N most recent is (settleAsync leaves an incomplete one in front).
bool asyncWaitOver(const WarpSlot& w, const func::InstInfo& info) {
  if (info.asyncCopy == func::AsyncCopyOp::WaitAll)
    return std::all_of(w.asyncCounts.begin(), w.asyncCounts.end(),
                       [](uint32_t n) { return n == 0; });
  const bool committedIncomplete = !w.asyncCounts.empty() && w.asyncFirst < w.asyncOpen;
  return !committedIncomplete || w.asyncFirst + info.asyncWaitGroups >= w.asyncOpen;
}

// The classes an FP-only SIMD unit (sm.simd_fp_only_units) runs.
bool isFloatingPoint(InstClass c) {
  return c == InstClass::FpAdd || c == InstClass::FpMax || c == InstClass::FpMul ||
         c == InstClass::FpMad || c == InstClass::FpDiv;
}
}  // namespace

Sm::Sm(const sc_core::sc_module_name& name, uint32_t id, const PlatformConfig& cfg,
       PayloadPool& pool, sc_core::sc_time period, const SmPolicies& policies)
    : sc_core::sc_module(name),
      memory_socket("memory_socket"),
      id_(id),
      cfg_(cfg),
      pool_(pool),
      period_(period),
      periodValue_(period.value()),
      power_switch_("power_switch", power::smSwitchParams(cfg)),
      rf_("register_file", cfg.sm.register_banks, cfg.sm.sub_cores),
      dispatch_("dispatch_unit", cfg.sm, rf_),
      ldst_("ldst_unit", cfg, id, policies.replacement),
      fetch_("fetch_unit", cfg.sm, policies.replacement),
      issuePolicy_(makeSimdIssuePolicy(cfg, id, policies.simdIssue)),
      adaptiveIssue_(issuePolicy_->adaptive()),
      compaction_(cfg.power.thread_compaction),
      wakeOnUse_(power::parseIdleDetect(cfg.power.gating.idle_detect) ==
                 power::IdleDetect::Timeout),
      simdControl_(!isNone(cfg.power.gating.idle_detect) || adaptiveIssue_ || compaction_),
      dpOnSimd_(cfg.sm.dp_units == 0 && cfg.sm.dp_path == "simd"),
      roundRobinIssue_(cfg.sm.scheduler_arbitration == "round-robin"),
      sliceCycles_(cfg.power.simd_issue.slice_cycles) {
  const SmConfig& s = cfg.sm;
  const power::SwitchParams unitSwitch = power::simdUnitSwitchParams(cfg),
                            laneSwitch = power::laneSwitchParams(cfg);
  for (uint32_t i = 0; i < s.simd_units; ++i)
    simd_.push_back(std::make_unique<ExecutionUnit>(fmt::format("simd{}", i).c_str(), Unit::Sp,
                                                    s.simd_lanes, s, unitSwitch, laneSwitch));
  for (uint32_t i = 0; i < s.sfu_units; ++i)
    sfu_.push_back(std::make_unique<ExecutionUnit>(fmt::format("sfu{}", i).c_str(), Unit::Sfu,
                                                   s.sfu_lanes, s));
  for (uint32_t i = 0; i < s.dp_units; ++i)
    dp_.push_back(
        std::make_unique<ExecutionUnit>(fmt::format("dp{}", i).c_str(), Unit::Dp, s.dpLanes(), s));
  // A tensor core's occupancy is the instruction's (setTiming): as wide as a warp.
  for (uint32_t i = 0; i < s.tensor.units; ++i)
    tensor_.push_back(std::make_unique<ExecutionUnit>(fmt::format("tensor{}", i).c_str(),
                                                      Unit::Tensor, s.warp_size, s));
  for (uint32_t i = 0; i < s.schedulers; ++i)
    schedulers_.push_back(std::make_unique<WarpScheduler>(
        fmt::format("warp_scheduler{}", i).c_str(), s, policies.warpSchedulers));
  warps_.resize(s.max_warps);
  activeWarps_.assign((s.max_warps + 63) / 64, 0);
  fetchWatch_ = activeWarps_;
  parked_ = activeWarps_;  // all clear
  structParked_.assign(dispatch_.groupSlots(), activeWarps_);
  parkedReason_.assign(s.max_warps, Stall::Issued);
  scan_.assign(s.schedulers, ScanCache{});
  scanPos_.assign(s.max_warps, 0xff);
  slotScheduler_.resize(s.max_warps);
  slotBlock_.resize(s.max_warps);
  const uint32_t schedulersPerBlock = s.schedulers / s.sub_cores;
  slotPartition_.resize(s.max_warps);
  partitionSlots_.assign(s.register_partitions, std::vector<uint64_t>(activeWarps_.size(), 0));
  for (uint32_t ws = 0; ws < s.max_warps; ++ws) {
    slotScheduler_[ws] = static_cast<uint8_t>(ws % s.schedulers);
    slotBlock_[ws] = static_cast<uint8_t>(slotScheduler_[ws] / schedulersPerBlock);
    slotPartition_[ws] = static_cast<uint8_t>(registerPartitionOf(s, ws));
    partitionSlots_[slotPartition_[ws]][ws >> 6] |= uint64_t{1} << (ws & 63);
  }
  // Block b owns SIMD units [b x n, (b + 1) x n), the last of them FP-only, and its share of the
  // SFUs and DP units.
  const uint32_t simdPer = s.simd_units / s.sub_cores,
                 fpOnlyPer = s.simd_fp_only_units / s.sub_cores;
  const uint32_t sfuPer = s.sfu_units / s.sub_cores, dpPer = s.dp_units / s.sub_cores,
                 tensorPer = s.tensor.units / s.sub_cores;
  blocks_.resize(s.sub_cores);
  for (uint32_t b = 0; b < s.sub_cores; ++b) {
    BlockUnits& u = blocks_[b];
    const uint32_t first = b * simdPer, fpOnly = first + simdPer - fpOnlyPer;
    u.simdFirst = first;
    for (uint32_t i = fpOnly; i < first + simdPer; ++i) u.simdFp.push_back(i);
    for (uint32_t i = first; i < fpOnly; ++i) {
      u.simdFp.push_back(i);
      u.simdInt.push_back(i);
    }
    for (uint32_t i = first; i < first + simdPer; ++i) u.simdUnits.push_back(simd_[i].get());
    u.sfuBegin = b * sfuPer;
    u.sfuEnd = u.sfuBegin + sfuPer;
    u.dpBegin = s.dp_shared ? 0 : b * dpPer;
    u.dpEnd = s.dp_shared ? s.dp_units : u.dpBegin + dpPer;
    u.tensorBegin = b * tensorPer;
    u.tensorEnd = u.tensorBegin + tensorPer;
  }
  ctas_.resize(s.max_ctas);
  memory_socket.register_nb_transport_bw(this, &Sm::nb_transport_bw);
  if (cfg.smoothing.localEnabled()) {
    predictorWeights_ = predictorWeights(power::EnergyTable(cfg), s.warp_size);
    predictor_ = makeDroopPredictorUnit(cfg, predictorWeights_, id);
  }
  env_.log = &writeLog_;
  env_.nsPerCycle = 1000.0 / cfg.gpu.clocks.core_mhz;
  env_.timed = true;
}

// ---- CTAs --------------------------------------------------------------------------------------

bool Sm::fits(const CtaFootprint& f) const {
  const SmConfig& s = cfg_.sm;
  if (!(usedCtas_ < s.max_ctas && usedThreads_ + f.threads <= s.max_threads &&
        usedWarps_ + f.warps <= s.max_warps && usedRegisters_ + f.registers <= s.registers &&
        usedShared_ + f.sharedBytes <= sharedCapacity_))
    return false;
  if (s.register_partitions == 1 || f.registersPerWarp == 0) return true;
  // Each warp takes a free slot whose partition has its registers left (startCta): the warps
  // placeable are, per partition, the fewer of its free slots and the warps its registers hold.
  uint32_t placeable = 0;
  for (uint32_t p = 0; p < s.register_partitions; ++p) {
    uint32_t free = 0;
    for (size_t i = 0; i < activeWarps_.size(); ++i)
      free += uint32_t(__builtin_popcountll(partitionSlots_[p][i] & ~activeWarps_[i]));
    placeable +=
        std::min(free, (s.registerPartitionSize() - partitionRegisters_[p]) / f.registersPerWarp);
  }
  return placeable >= f.warps;
}

void Sm::beginKernel(const KernelContext& k) {
  kernel_ = k;
  sharedCapacity_ = k.sharedBytes != 0 ? k.sharedBytes : cfg_.sm.shared_memory_bytes;
  prog_ = k.executor->launch().prog;
  ldst_.setLocalBytes(k.executor->launch().localBytes);
  holdUntil_ = 0;
  if (predictor_) {  // counters per kernel
    predictor_ = makeDroopPredictorUnit(cfg_, predictorWeights_, id_);
    if (waves_)
      predictor_->traceWaves(*waves_, fmt::format("sm{}.droop_predictor", id_), wavesPeriodFs_);
    throttling_ = false;
    lastDispatched_ = 0;
    dispatch_.setLimits(DispatchUnit::kUnlimited, DispatchUnit::kUnlimited);
  }
  fetch_.setCodeBase(k.codeBase);
  env_.tlb = func::GlobalMemory::Tlb{};  // allocations may have changed since the last kernel
  // Cycles are accounted from the kernel's start; until a CTA arrives the SM has no warps.
  lastCycle_ = cycleNow();
  evaluated_ = true;
  for (auto& s : schedulers_) s->lastOutcome = Stall::NoWarp;
  issueFirst_ = 0;
  idleWarps_ = 0;
  // Power gating: the issue control starts in state 1; the SIMD switches account only while
  // the SM holds CTAs (the SM's own switch covers the rest), so they start suspended.
  // The window covers the cycles the SM accounts: lastCycle_ + 1 .. the kernel's end.
  gating_ = SmGatingStats{};
  issueState_ = 1;
  issuePolicy_->begin();
  sliceStart_ = lastCycle_ + 1;
  sliceLaneOps_ = simdLaneOps_ = 0;
  lastWakeStall_ = kNever;
  powerWindowOpen_ = true;
  if (simdControl_) {
    for (auto& e : simd_)
      e->forEachSwitch([&](power::PowerGatingSwitch& s) { s.begin(lastCycle_ + 1); });
    suspendSimdSwitches(lastCycle_ + 1);
  }
}

std::string Sm::rtlDivergence() const {
  if (predictor_ && !predictor_->divergence().empty()) return predictor_->divergence();
  if (std::string d = issuePolicy_->divergence(); !d.empty()) return d;
  if (!power_switch_.divergence().empty()) return power_switch_.divergence();
  for (const auto& e : simd_) {
    if (!e->unitSwitch()) continue;
    if (!e->unitSwitch()->divergence().empty()) return e->unitSwitch()->divergence();
    for (uint32_t l = 0; l < e->lanes(); ++l)
      if (!e->laneSwitch(l).divergence().empty()) return e->laneSwitch(l).divergence();
  }
  return {};
}

void Sm::traceWaves(rtl::RtlWaves& waves, uint64_t periodFs) {
  waves_ = &waves;
  wavesPeriodFs_ = periodFs;
  const std::string sm = fmt::format("sm{}", id_);
  if (predictor_) predictor_->traceWaves(waves, sm + ".droop_predictor", periodFs);
  issuePolicy_->traceWaves(waves, sm + ".simd_issue_control", periodFs);
  power_switch_.traceWaves(waves, sm + ".power_gating_switch", periodFs);
  for (size_t u = 0; u < simd_.size(); ++u) {
    ExecutionUnit& e = *simd_[u];
    if (!e.unitSwitch()) continue;
    const std::string unit = fmt::format("{}.simd{}", sm, u);
    e.unitSwitch()->traceWaves(waves, unit + ".power_gating_switch", periodFs);
    for (uint32_t l = 0; l < e.lanes(); ++l)
      e.laneSwitch(l).traceWaves(waves, fmt::format("{}.lane{}.power_gating_switch", unit, l),
                                 periodFs);
  }
}

void Sm::suspendSimdSwitches(Cycle now) {
  for (auto& e : simd_) e->forEachSwitch([&](power::PowerGatingSwitch& s) { s.suspend(now); });
}

void Sm::resumeSimdSwitches(Cycle now) {
  for (auto& e : simd_) e->forEachSwitch([&](power::PowerGatingSwitch& s) { s.resume(now); });
}

void Sm::finishPowerWindow(Cycle end) {
  if (!powerWindowOpen_) return;
  powerWindowOpen_ = false;
  if (adaptiveIssue_) advanceSlices(end);
  if (end > sliceStart_) gating_.stateCycles[issueState_ - 1] += end - sliceStart_;
  sliceStart_ = end;
  if (!simdControl_) return;
  for (auto& e : simd_) {
    power::PowerGatingSwitch& u = *e->unitSwitch();
    u.finish(end);
    gating_.simdUnits += u.counters();
    gating_.unitNetGatedCycles += u.netGatedCycles();
    for (uint32_t l = 0; l < e->lanes(); ++l) {
      power::PowerGatingSwitch& sw = e->laneSwitch(l);
      sw.finish(end);
      gating_.lanes += sw.counters();
      gating_.laneNetGatedCycles += sw.netGatedCycles();
      gating_.laneCycles += sw.counters().windowCycles();
    }
  }
}

void Sm::advanceSlices(Cycle now) {
  const double capacity = double(cfg_.sm.simd_units) *
                          double(cfg_.sm.laneOpsPerCycle(cfg_.sm.simd_lanes)) *
                          double(sliceCycles_);
  while (now >= sliceStart_ + sliceCycles_) {
    const bool idleSlice = sliceLaneOps_ == 0;
    const uint32_t next = issuePolicy_->nextAt(sliceStart_ + sliceCycles_, issueState_,
                                               double(sliceLaneOps_) / capacity);
    gating_.stateCycles[issueState_ - 1] += sliceCycles_;
    sliceStart_ += sliceCycles_;
    sliceLaneOps_ = 0;
    if (idleSlice && next == issueState_) {
      // The SM slept: the slices until `now` were idle too and keep this state.
      const uint64_t rest = (now - sliceStart_) / sliceCycles_;
      gating_.stateCycles[issueState_ - 1] += rest * sliceCycles_;
      sliceStart_ += rest * sliceCycles_;
    }
    issueState_ = next;
  }
}

void Sm::endKernel() {
  kernel_ = KernelContext{};
  prog_ = nullptr;
}

void Sm::startCta(const CtaFootprint& f, const func::Dim3& ctaid, uint64_t linearId) {
  const Cycle now = cycleNow();
  uint32_t slot = 0;
  while (ctas_[slot].used) ++slot;
  CtaSlot& c = ctas_[slot];
  c.used = true;
  c.footprint = f;
  kernel_.executor->initCta(c.cta, ctaid, linearId, id_);
  execStats_.ctas += 1;
  c.liveWarps = static_cast<uint32_t>(c.cta.warps.size());
  c.record = CtaRecord{id_, linearId, ctaid, now, 0};
  if (simdControl_ && usedCtas_ == 0) resumeSimdSwitches(now);
  usedCtas_ += 1;
  usedThreads_ += f.threads;
  usedWarps_ += f.warps;
  usedRegisters_ += f.registers;
  usedShared_ += f.sharedBytes;
  peakCtas_ = std::max(peakCtas_, usedCtas_);
  const uint32_t partitions = cfg_.sm.register_partitions;
  c.partitionWarps.fill(0);
  uint32_t ws = 0;
  for (auto& w : c.cta.warps) {
    if (partitions == 1 || f.registersPerWarp == 0) {
      while (warps_[ws].active) ++ws;
    } else {  // the first free slot whose partition has the warp's registers left (Sm::fits)
      const uint32_t room = cfg_.sm.registerPartitionSize() - f.registersPerWarp;
      while (warps_[ws].active || partitionRegisters_[slotPartition_[ws]] > room) ++ws;
      partitionRegisters_[slotPartition_[ws]] += f.registersPerWarp;
      c.partitionWarps[slotPartition_[ws]] += 1;
    }
    WarpSlot& s = warps_[ws];
    s = WarpSlot{};
    setActive(ws, true);
    s.warp = &w;
    s.sync();
    s.cta = slot;
    s.scheduler = ws % static_cast<uint32_t>(schedulers_.size());
    s.age = warpAge_++;
    s.eligibleAt = now + 1;
    s.regPending.assign(prog_->numRegSlots, kReady);
    s.predPending.assign(prog_->numPreds, kReady);
    schedulers_[s.scheduler]->policy().add(ws, s.age);
  }
  wakeAt(now + 1);
}

// ---- the cycle ---------------------------------------------------------------------------------

void Sm::account(Cycle now) {
  // Cycles skipped since the last evaluated one looked exactly like its idle part.
  if (evaluated_ && now > lastCycle_ + 1) {
    const uint64_t skipped = now - lastCycle_ - 1;
    SmActivity idle;
    idle.activeWarps = idleWarps_;
    idle.collectorsBusy = idleCollectors_;
    for (auto& s : schedulers_) {
      s->outcomes[int(s->lastOutcome)] += skipped;
      idle.stalls[int(s->lastOutcome)] += 1;
    }
    counters_.add(idle, skipped);
    reportActivity(lastCycle_ + 1, skipped, idle);
    if (predictor_) {
      predictor_->skipIdle(lastCycle_ + 1, skipped, predictor_->model().estimate(idle));
      lastDispatched_ = 0;
    }
  }
}

void Sm::reportActivity(Cycle first, uint64_t cycles, const SmActivity& a) {
  if (activityObserver_ == nullptr) return;
  if (evaluating_) {
    if (heldOwnCycle_ != kNever) {  // a report after the cycle's own: keep the order
      heldActivity_.push_back({heldOwnCycle_, 1, act_});
      heldOwnCycle_ = kNever;
    }
    if (&a == &act_ && cycles == 1)
      heldOwnCycle_ = first;
    else
      heldActivity_.push_back({first, cycles, a});
  } else
    activityObserver_->onActivity(id_, first, cycles, a);
}

Cycle Sm::evaluateCycle(Cycle now) {
  if (fault_) return kNever;  // stopped at a fault: nothing more to evaluate
  if (evaluated_ && now <= lastCycle_) return lastCycle_ + 1;  // this cycle is done
  evaluating_ = true;
  selfWake_ = kNever;
  outbox_.hold();
  Cycle next = kNever;
  try {
    evaluate(now);
    next = std::min(nextEvent(now), selfWake_);
  } catch (...) {
    // Kept as it was thrown: the clock domain pauses the simulation after the cycle, and the
    // caller of sc_start rethrows it (SystemC would wrap it in an sc_report and lose its type).
    fault_ = std::current_exception();
  }
  evaluating_ = false;
  return next;
}

void Sm::commitCycle() {
  outbox_.flush();
  if (fault_) {
    writeLog_.clear();
    heldActivity_.clear();
    heldOwnCycle_ = kNever;
    heldIssues_.clear();
    heldCtaEnds_.clear();
    heldEvaluated_ = false;
    return;
  }
  if (!writeLog_.empty()) writeLog_.apply(*kernel_.executor->launch().gmem);
  for (const HeldActivity& h : heldActivity_)
    activityObserver_->onActivity(id_, h.first, h.cycles, h.activity);
  heldActivity_.clear();
  if (heldOwnCycle_ != kNever) {
    activityObserver_->onActivity(id_, heldOwnCycle_, 1, act_);
    heldOwnCycle_ = kNever;
  }
  for (const HeldIssue& h : heldIssues_) issueObserver_->onIssue(id_, h.cycle, h.slot, h.pc);
  heldIssues_.clear();
  for (uint32_t resident : heldCtaEnds_) kernel_.listener->ctaFinished(id_, resident);
  heldCtaEnds_.clear();
  if (heldEvaluated_) kernel_.listener->smEvaluated(id_);
  heldEvaluated_ = false;
}

void Sm::evaluate(const Cycle now) {
  account(now);
  if (adaptiveIssue_ && now >= sliceStart_ + sliceCycles_) advanceSlices(now);
  act_.clear();
  regrouped_ = false;
  writeback(now);
  retire(now);
  if (predictor_) throttle(now);
  ldst_.cycle(now, *this, act_);
  dispatch_.cycle(now, act_, *this);
  if (structGroups_ != 0) unparkStructural(false);
  issue(now);
  fetch(now);
  act_.activeWarps = usedWarps_;
  if (kernel_.reportEvaluations) heldEvaluated_ = true;
  // Local smoothing: a predicted droop throttles the next cycles.
  if (predictor_) {
    predictor_->endCycle(now, predictor_->model().estimate(act_));
    lastDispatched_ = 0;
    for (uint32_t d : act_.dispatched) lastDispatched_ += d;
  }

  accumulate(pendingCounts_, act_);
  if (++pendingCycles_ == kCountCycles) flushCounts();
  reportActivity(now, 1, act_);
  // The skipped cycles until the next evaluated one look like this cycle's idle part: its
  // schedulers' outcomes (lastOutcome, which only issue() changes) and its resident warps.
  idleWarps_ = act_.activeWarps;
  idleCollectors_ = dispatch_.occupied();
  for (auto& s : schedulers_) s->outcomes[int(s->lastOutcome)] += 1;
  lastCycle_ = now;
  evaluated_ = true;
}

void Sm::flushAccounting(Cycle cycle) {
  if (evaluated_ && cycle > lastCycle_ + 1) {
    account(cycle);
    lastCycle_ = cycle - 1;
  }
}

Cycle Sm::nextEvent(Cycle now) const {
  // A scheduler that regrouped its warps (two-level: a warp left the active group and another
  // took its place) has warps it has not tried yet.
  if (act_.issued || regrouped_) return now + 1;
  Cycle next = holdUntil_ > now ? holdUntil_ : kNever;
  // Collectors that only wait for busy units sleep until the first of those frees. Not with
  // local smoothing on (the predictor sees every cycle), nor while the memory system holds our
  // last request: an SM evaluated in the cycle its END_REQ comes sends its next request in that
  // cycle, one woken by the END_REQ in the next.
  if (dispatch_.busy()) {
    if (predictor_ || requestBlocked_) return now + 1;
    next = std::min(next, dispatch_.nextChange(now, *this));
    if (next <= now + 1) return now + 1;
  }
  // While the memory system holds back our last request (no END_REQ yet) neither the LD/ST unit
  // nor a fetch can send: END_REQ wakes the SM.
  if (!requestBlocked_) next = std::min(next, ldst_.nextEvent(now));
  if (!wbq_.empty()) next = std::min(next, std::max(wbq_.top().at, now + 1));
  // The active slots only (their bits): an inactive slot's lines are not touched.
  for (size_t i = 0; i < activeWarps_.size(); ++i) {
    for (uint64_t m = activeWarps_[i]; m != 0; m &= m - 1) {
      const WarpSlot& w = warps_[i * 64 + size_t(__builtin_ctzll(m))];
      if (w.done()) continue;
      if (w.eligibleAt > now) next = std::min(next, w.eligibleAt);
      if (w.fetching) continue;
      const uint32_t pc = w.pc;
      if (pc >= w.ibBegin && pc < w.ibEnd) {
        if (w.ibReady > now) next = std::min(next, w.ibReady);
      } else if (!requestBlocked_) {
        next = std::min(next, now + 1);  // needs a fetch
      }
    }
  }
  return next;
}

void Sm::wakeAt(Cycle c) {
  if (evaluating_)
    selfWake_ = std::min(selfWake_, c);
  else if (scheduler_ != nullptr)
    scheduler_->wake(id_, c);
}

// ---- writeback and retirement ------------------------------------------------------------------

void Sm::writeback(Cycle now) {
  while (!wbq_.empty() && wbq_.top().at <= now) {
    const uint32_t i = wbq_.top().inst;
    wbq_.pop();
    InFlight& in = inflight_[i];
    WarpSlot& w = warps_[in.warp];
    unpark(in.warp);
    for (uint32_t r : in.info->regWrites) {
      if (w.regPending[r] == kPendingMemory) --w.memoryPending;
      w.regPending[r] = kReady;
      act_.rfWrites += 1;
    }
    for (uint32_t p : in.info->predWrites) {
      if (w.predPending[p] == kPendingMemory) --w.memoryPending;
      w.predPending[p] = kReady;
    }
    if (in.asyncCopy) completeAsyncCopy(w, in.asyncGroup);
    if ((in.loadsFromMemory || in.asyncCopy) && w.waitingLong &&
        w.state != func::WarpState::AtBarrier && w.state != func::WarpState::MbarrierWait) {
      w.waitingLong = false;
      schedulers_[w.scheduler]->policy().longWaitOver(in.warp);
    }
    w.scoreboardVersion += 1;
    w.inFlight -= 1;
    if (w.inFlight == 0 && w.done()) finishing_.push_back(in.warp);
    freeInFlight(i);
  }
}

void Sm::retire(Cycle now) {
  for (size_t k = 0; k < finishing_.size();) {
    const uint32_t ws = finishing_[k];
    WarpSlot& w = warps_[ws];
    if (!w.active || w.inFlight != 0) {
      ++k;
      continue;
    }
    finishing_[k] = finishing_.back();
    finishing_.pop_back();
    schedulers_[w.scheduler]->policy().remove(ws);
    CtaSlot& c = ctas_[w.cta];
    setActive(ws, false);
    if (--c.liveWarps == 0) {
      c.used = false;
      c.record.end = now;
      timeline_.push_back(c.record);
      usedCtas_ -= 1;
      usedThreads_ -= c.footprint.threads;
      usedWarps_ -= c.footprint.warps;
      usedRegisters_ -= c.footprint.registers;
      usedShared_ -= c.footprint.sharedBytes;
      for (uint32_t p = 0; p < cfg_.sm.register_partitions; ++p)
        partitionRegisters_[p] -= c.partitionWarps[p] * c.footprint.registersPerWarp;
      if (simdControl_ && usedCtas_ == 0) suspendSimdSwitches(now);
      if (kernel_.listener) heldCtaEnds_.push_back(usedCtas_);
    }
  }
}

// ---- issue -------------------------------------------------------------------------------------

Unit Sm::unitOf(InstClass c) const {
  switch (c) {
    case InstClass::Sfu:
      return Unit::Sfu;
    case InstClass::DpAdd:
    case InstClass::DpMax:
    case InstClass::DpMul:
    case InstClass::DpMad:
    case InstClass::DpDiv:
      return dp_.empty() && !dpOnSimd_ ? Unit::Sfu : Unit::Dp;
    case InstClass::Load:
    case InstClass::Store:
    case InstClass::Atomic:
      return Unit::Ldst;
    case InstClass::Barrier:
      return Unit::None;
    default:
      return Unit::Sp;
  }
}

Unit Sm::unitOf(const func::Inst& inst, const func::InstInfo& info) const {
  if (info.matrix.fmas != 0 && !tensor_.empty() && tensorRate(info.matrix.type) != 0)
    return Unit::Tensor;
  if ((info.aluOp == func::AluOp::Convert && cfg_.sm.conversions_on_sfu) ||
      (info.aluOp == func::AluOp::BitCount && cfg_.sm.bit_counts_on_sfu))
    return Unit::Sfu;
  return unitOf(inst.cls);
}

uint32_t Sm::tensorRate(func::MatrixType t) const {
  const TensorConfig& c = cfg_.sm.tensor;
  switch (t) {
    case func::MatrixType::F16:
      return c.fma_f16;
    case func::MatrixType::F16F32:
      return c.fma_f16_f32;
    case func::MatrixType::BF16:
      return c.fma_bf16;
    case func::MatrixType::TF32:
      return c.fma_tf32;
    case func::MatrixType::Int8:
      return c.fma_int8;
    case func::MatrixType::Int4:
      return c.fma_int4;
    case func::MatrixType::B1:
      return c.fma_b1;
    case func::MatrixType::Fp8:
      return c.fma_fp8;
    case func::MatrixType::F64:
      return c.fma_f64;
    case func::MatrixType::Count_:
      break;
  }
  return 0;
}

void Sm::setTiming(InFlight& in, const func::Inst& inst, const func::InstInfo& info, Unit u) const {
  const uint32_t fmas = info.matrix.fmas;
  in.fpUnits = u == Unit::Sp && isFloatingPoint(inst.cls) &&
               !(info.aluOp == func::AluOp::FpCompare && cfg_.sm.fp_compare_on_int_units);
  if (u == Unit::Tensor) {  // fmas / rate passes, the result `latency` after the last
    const uint32_t rate = tensorRate(info.matrix.type);
    in.occupancy = (fmas + rate - 1) / rate;
    in.latency = in.occupancy + cfg_.sm.tensor.latency;
    return;
  }
  // A conversion or bit count the platform runs on the SFUs takes their timing.
  const bool onSfu =
      u == Unit::Sfu && (info.aluOp == func::AluOp::Convert || info.aluOp == func::AluOp::BitCount);
  const OpTiming& t = onSfu ? cfg_.sm.latency.sfu : timingOf(inst.cls);
  in.latency = t.latency;
  in.occupancy = t.initiation;
  if (fmas == 0 || u == Unit::None) return;
  // A matrix instruction without a tensor core: each thread does fmas / warp_size multiply-adds
  // of its class, one warp-wide pass after another on the unit it takes.
  const SmConfig& s = cfg_.sm;
  const uint32_t passes = (fmas + s.warp_size - 1) / s.warp_size;
  const uint32_t lanes = u == Unit::Dp && !dp_.empty() ? s.dpLanes()
                         : u == Unit::Sfu              ? s.sfu_lanes
                                                       : s.simd_lanes;
  const uint32_t pass = std::max(t.initiation, s.warpCycles(lanes));
  in.occupancy = passes * pass;
  in.latency = t.latency + (passes - 1) * pass;
}

const OpTiming& Sm::timingOf(InstClass c) const {
  const LatencyConfig& l = cfg_.sm.latency;
  switch (c) {
    case InstClass::IntMax:
      return l.int_max;
    case InstClass::IntMul:
      return l.int_mul;
    case InstClass::IntMad:
      return l.int_mad;
    case InstClass::IntDiv:
      return l.int_div;
    case InstClass::FpAdd:
      return l.fp_add;
    case InstClass::FpMax:
      return l.fp_max;
    case InstClass::FpMul:
      return l.fp_mul;
    case InstClass::FpMad:
      return l.fp_mad;
    case InstClass::FpDiv:
      return l.fp_div;
    case InstClass::DpAdd:
      return l.dp_add;
    case InstClass::DpMax:
      return l.dp_max;
    case InstClass::DpMul:
      return l.dp_mul;
    case InstClass::DpMad:
      return l.dp_mad;
    case InstClass::DpDiv:
      return l.dp_div;
    case InstClass::Sfu:
      return l.sfu;
    case InstClass::Shfl:
      return l.int_shfl;
    default:
      return l.int_add;
  }
}

uint32_t Sm::allocInFlight() {
  if (freeInFlight_.empty()) {
    inflight_.emplace_back();
    freeInFlight_.push_back(static_cast<uint32_t>(inflight_.size() - 1));
  }
  uint32_t i = freeInFlight_.back();
  freeInFlight_.pop_back();
  inflight_[i].used = true;
  return i;
}

void Sm::freeInFlight(uint32_t i) {
  inflight_[i].used = false;
  freeInFlight_.push_back(i);
}

void Sm::throttle(Cycle now) {
  const bool on = predictor_->throttled(now);
  const LocalDroopPredictor& p = predictor_->model();
  if (on && p.throttleKind() == ThrottleKind::Ramp) {
    // The rise, not the level: lastDispatched_ is the previous evaluated cycle's count (0 after
    // skipped idle cycles).
    throttling_ = true;
    dispatch_.setLimits(lastDispatched_ + p.issueLimit(), DispatchUnit::kUnlimited);
    return;
  }
  if (on == throttling_) return;
  throttling_ = on;
  if (!on) {
    dispatch_.setLimits(DispatchUnit::kUnlimited, DispatchUnit::kUnlimited);
  } else if (p.throttleKind() == ThrottleKind::Dispatch) {
    dispatch_.setLimits(p.issueLimit(), DispatchUnit::kUnlimited);
  } else {
    dispatch_.setLimits(DispatchUnit::kUnlimited, p.rfReadLimit());
  }
}

void Sm::holdIssue(Cycle until) {
  if (until <= holdUntil_) return;
  holdUntil_ = until;
  // Evaluate the next cycle, so the schedulers' outcome is 'smoothing' from then on even while
  // the SM would otherwise sleep (waiting for memory); the evaluation wakes it again at `until`.
  wakeAt(cycleNow() + 1);
}

uint32_t Sm::activeWarps() const {
  uint32_t n = 0;
  for (const WarpSlot& w : warps_)
    if (w.active && !w.done() && !w.waitingLong && !w.fetching) ++n;
  return n;
}

// Most warps a scheduler tries cannot issue, for a reason tryIssue would find without changing
// anything (it changes state only when a warp first waits long): this inline check gives that
// answer without the call, and leaves every other case to tryIssue.
inline bool Sm::quietStall(const WarpSlot& w, Cycle now, Stall& reason) const {
  if (w.state != func::WarpState::Ready || w.eligibleAt > now) {
    reason = Stall::Barrier;
    return w.waitingLong ||
           (w.state != func::WarpState::AtBarrier && w.state != func::WarpState::MbarrierWait);
  }
  if (!w.hasInstruction(w.pc, now)) {
    reason = Stall::Fetch;
    return true;
  }
  if (w.checkedPc != w.pc || w.checkedVersion != w.scoreboardVersion) return false;
  if (w.checkedPending != kReady) {
    reason = w.checkedPending == kPendingMemory ? Stall::DataMemory : Stall::DataAlu;
    return reason == Stall::DataAlu || w.waitingLong;
  }
  if (w.checkedUnit != Unit::None &&
      !dispatch_.hasFreeCollector(w.checkedUnit, slotBlock_[&w - warps_.data()])) {
    reason = Stall::Structural;
    return true;
  }
  return false;
}

void Sm::unparkStructural(bool all) {
  for (int g = 0; g < static_cast<int>(structParked_.size()); ++g) {
    if (!((structGroups_ >> g) & 1) || !(all || dispatch_.groupHasFree(g))) continue;
    std::vector<uint64_t>& words = structParked_[g];
    for (size_t i = 0; i < words.size(); ++i) {
      for (uint64_t m = words[i]; m != 0; m &= m - 1)
        unpark(static_cast<uint32_t>(i * 64 + __builtin_ctzll(m)));
      words[i] = 0;
    }
    structGroups_ &= ~(1u << g);
  }
}

void Sm::issue(Cycle now) {
  // sm.scheduler_arbitration round-robin: the schedulers go in turn from the one after the last
  // that issued. Where they compete for a shared unit's collectors (the SFUs, LD/ST and DP units
  // of a Fermi SM; the DP units the blocks of an Ampere SM share), the fixed order gives
  // scheduler 0 every collector that frees and starves the others' warps. (A rotation by cycle
  // number would not do either: a unit that frees every even number of cycles would always
  // favour one scheduler.) The order changes only when a warp issues, so it does not depend on
  // which cycles the SM evaluates.
  const size_t n = schedulers_.size();
  const size_t start = issueFirst_ < n ? issueFirst_ : 0;
  for (size_t k = 0; k < n; ++k) {
    const size_t si = start + k < n ? start + k : start + k - n;
    WarpScheduler& s = *schedulers_[si];
    WarpSchedulingPolicy& policy = s.policy();
    const uint32_t lead = policy.preferred();
    const std::vector<uint32_t>& order = policy.order();
    if (order.empty() && lead == WarpSchedulingPolicy::kNoWarp) {
      s.lastOutcome = Stall::NoWarp;
      continue;
    }
    if (now < holdUntil_) {
      s.lastOutcome = Stall::Smoothing;
      continue;
    }
    Stall first = Stall::Count_;
    // Tries a warp that is not parked; true when it issued.
    const auto attempt = [&](uint32_t slot) __attribute__((always_inline)) {
      Stall why = Stall::Issued;
      const WarpSlot& w = warps_[slot];
      if (quietStall(w, now, why)) {
        // Not ready, or waiting on the scoreboard: the answer holds until the warp's state,
        // pc or scoreboard changes, which unpark it.
        if (why == Stall::DataMemory || why == Stall::DataAlu ||
            (why == Stall::Barrier && w.state != func::WarpState::Ready))
          park(slot, why);
        else if (why == Stall::Structural)
          parkStructural(slot, w.checkedUnit);
        if (first == Stall::Count_) first = why;
        return false;
      }
      if (tryIssue(slot, now, why)) return true;
      if (first == Stall::Count_) first = why;
      return false;
    };
    // The warps in the scan's order: a parked one gives its reason when it is the first tried.
    bool issued = false;
    if (lead != WarpSchedulingPolicy::kNoWarp) {
      if (isParked(lead))
        first = parkedReason_[lead];
      else
        issued = attempt(lead);
    }
    if (!issued) {
      ScanCache& c = scan_[si];
      if (order.size() <= 64) {
        const uint64_t version = policy.orderVersion();
        const bool same = version != WarpSchedulingPolicy::kUnversioned
                              ? version == c.version
                              : order.size() == c.order.size() &&
                                    std::equal(order.begin(), order.end(), c.order.begin());
        if (!same) {
          // (The places of warps no longer in the order are left as they are: every reader of
          // scanPos_ checks that the order holds the warp at that place.)
          c.order.assign(order.begin(), order.end());  // tryIssue may change the policy's order
          c.version = version;
          c.live = 0;
          for (uint32_t p = 0; p < c.order.size(); ++p) {
            scanPos_[c.order[p]] = static_cast<uint8_t>(p);
            if (!isParked(c.order[p])) c.live |= 1ull << p;
          }
        }
        uint64_t todo = c.live;
        if (lead != WarpSchedulingPolicy::kNoWarp && scanPos_[lead] < c.order.size() &&
            c.order[scanPos_[lead]] == lead)
          todo &= ~(1ull << scanPos_[lead]);
        if (first == Stall::Count_) {
          // The first warp tried, when it is parked (else trying it sets `first`).
          const uint32_t p0 = !c.order.empty() && c.order[0] == lead ? 1 : 0;
          if (p0 < c.order.size() && !((c.live >> p0) & 1)) first = parkedReason_[c.order[p0]];
        }
        for (; todo != 0; todo &= todo - 1) {
          if (attempt(c.order[__builtin_ctzll(todo)])) {
            issued = true;
            break;
          }
        }
      } else {
        candidates_.assign(order.begin(), order.end());  // tryIssue may change the policy's order
        for (uint32_t slot : candidates_) {
          if (slot == lead) continue;
          if (isParked(slot)) {
            if (first == Stall::Count_) first = parkedReason_[slot];
            continue;
          }
          if (attempt(slot)) {
            issued = true;
            break;
          }
        }
      }
    }
    s.lastOutcome = issued ? Stall::Issued : (first == Stall::Count_ ? Stall::NoWarp : first);
    if (issued && roundRobinIssue_) issueFirst_ = static_cast<uint32_t>(si + 1 < n ? si + 1 : 0);
  }
}

bool Sm::tryIssue(uint32_t slot, Cycle now, Stall& reason) {
  WarpSlot& w = warps_[slot];
  if (w.state != func::WarpState::Ready || w.eligibleAt > now) {
    reason = Stall::Barrier;
    if ((w.state == func::WarpState::AtBarrier || w.state == func::WarpState::MbarrierWait) &&
        !w.waitingLong) {
      w.waitingLong = true;
      schedulers_[w.scheduler]->policy().waitsLong(slot);
      regrouped_ = true;
    }
    return false;
  }
  const uint32_t pc = w.pc;
  if (!w.hasInstruction(pc, now)) {
    reason = Stall::Fetch;
    return false;
  }
  const func::Inst& inst = prog_->code[pc];
  const func::InstInfo& info = prog_->info[pc];
  uint8_t pending;
  if (w.checkedPc == pc && w.checkedVersion == w.scoreboardVersion) {
    pending = w.checkedPending;  // nothing of this warp was written back since the last check
  } else {
    pending = kReady;
    for (uint32_t r : info.regReads) pending = std::max(pending, w.regPending[r]);
    for (uint32_t r : info.regWrites) pending = std::max(pending, w.regPending[r]);
    for (uint32_t p : info.predReads) pending = std::max(pending, w.predPending[p]);
    for (uint32_t p : info.predWrites) pending = std::max(pending, w.predPending[p]);
    // A cp.async wait waits for copies from memory.
    if (info.asyncCopy >= func::AsyncCopyOp::WaitGroup && !asyncWaitOver(w, info))
      pending = kPendingMemory;
    w.checkedPc = pc;
    w.checkedVersion = w.scoreboardVersion;
    w.checkedPending = pending;
    w.checkedUnit = unitOf(inst, info);
  }
  if (pending != kReady) {
    reason = pending == kPendingMemory ? Stall::DataMemory : Stall::DataAlu;
    if (reason == Stall::DataMemory && !w.waitingLong) {
      w.waitingLong = true;
      schedulers_[w.scheduler]->policy().waitsLong(slot);
      regrouped_ = true;
    }
    return false;
  }
  const Unit unit = w.checkedUnit;  // unitOf(inst, info), cached with the scoreboard answer
  if (unit != Unit::None && !dispatch_.hasFreeCollector(unit, slotBlock_[slot])) {
    reason = Stall::Structural;
    return false;
  }

  // Issue: the functional engine executes the instruction now.
  func::Warp& fw = *w.warp;
  CtaSlot& c = ctas_[w.cta];
  // Only a barrier, an exit or an mbarrier operation can release waiting warps: note which
  // warps wait before it.
  uint64_t waitingBefore = 0;
  if (inst.flow == func::Flow::Barrier || inst.flow == func::Flow::Exit || inst.wakes)
    for (size_t k = 0; k < c.cta.warps.size(); ++k)
      if (c.cta.warps[k].state == func::WarpState::AtBarrier ||
          c.cta.warps[k].state == func::WarpState::MbarrierWait)
        waitingBefore |= 1ull << k;
  const bool isMemory = unit == Unit::Ldst;
  uint32_t idx = 0;
  InFlight* in = nullptr;
  if (unit != Unit::None) {
    idx = allocInFlight();
    in = &inflight_[idx];
  }
  env_.clock = now + 1;  // what %clock reads: the cycle after issue
  const func::StepResult r =
      kernel_.executor->step(c.cta, fw, execStats_, isMemory ? &in->mem : nullptr, &env_);
  w.sync();
  if (env_.sleepNs != 0) {  // nanosleep: the warp issues again after the sleep
    const auto cycles = static_cast<Cycle>(std::ceil(double(env_.sleepNs) / env_.nsPerCycle));
    w.eligibleAt = std::max(w.eligibleAt, now + 1 + cycles);
    env_.sleepNs = 0;
  }
  watchFetch(slot);
  unpark(slot);
  if (r.released) {
    // Other warps of the CTA changed state (a barrier or an mbarrier phase completed).
    for (uint32_t k = 0; k < warps_.size(); ++k) {
      WarpSlot& o = warps_[k];
      if (o.active && o.cta == w.cta) {
        o.sync();
        watchFetch(k);
        unpark(k);
      }
    }
    releaseWarps(c.cta, w.cta, waitingBefore | (1ull << fw.idInCta), now);
  }

  if (info.asyncCopy == func::AsyncCopyOp::Commit || info.asyncCopy == func::AsyncCopyOp::WaitAll) {
    w.asyncOpen += 1;
    settleAsync(w);
  }
  act_.issued += 1;
  counters_.issuedByClass[int(inst.cls)] += 1;
  act_.activeLanes += popcount32(r.active);
  schedulers_[w.scheduler]->policy().issued(slot);
  if (issueObserver_) heldIssues_.push_back({now, slot, pc});

  // The instruction buffer keeps the following instruction only if execution falls through.
  const uint32_t next = fw.done() ? 0 : fw.pc();
  if (next < w.ibBegin || next >= w.ibEnd) w.ibBegin = w.ibEnd = 0;

  if (in) {
    in->warp = slot;
    in->pc = pc;
    in->inst = &inst;
    in->info = &info;
    in->unit = unit;
    in->lanes = popcount32(r.executed);
    in->executed = r.executed;
    in->outstanding = 0;
    setTiming(*in, inst, info, unit);
    in->asyncCopy = info.asyncCopy == func::AsyncCopyOp::Copy;
    if (in->asyncCopy) in->asyncGroup = addAsyncCopy(w);
    in->loadsFromMemory = isMemory && !info.regWrites.empty() &&
                          in->mem.space != func::MemSpace::Shared &&
                          in->mem.space != func::MemSpace::CallParam && in->mem.mask != 0;
    const uint8_t mark = in->loadsFromMemory ? kPendingMemory : kPendingAlu;
    for (uint32_t rr : info.regWrites) {
      if (mark == kPendingMemory) ++w.memoryPending;
      w.regPending[rr] = mark;
    }
    for (uint32_t p : info.predWrites) {
      if (mark == kPendingMemory) ++w.memoryPending;
      w.predPending[p] = mark;
    }
    w.scoreboardVersion += 1;  // the cached scoreboard answer no longer holds
    w.inFlight += 1;
    dispatch_.collect(idx, unit, slot, slotBlock_[slot], info.regReads, prog_->numRegSlots, now);
  }
  if (fw.done() && w.inFlight == 0) finishing_.push_back(slot);
  return true;
}

void Sm::releaseWarps(func::Cta& cta, uint32_t ctaSlot, uint64_t waitingBefore, Cycle now) {
  // Warps that waited at the barrier may issue again after the barrier latency.
  for (WarpSlot& w : warps_) {
    if (!w.active || w.cta != ctaSlot) continue;
    const uint32_t k = w.warp->idInCta;
    if (((waitingBefore >> k) & 1u) && cta.warps[k].state == func::WarpState::Ready) {
      w.eligibleAt = std::max(w.eligibleAt, now + 1 + cfg_.sm.barrier_latency);
      if (w.waitingLong) {
        w.waitingLong = false;
        schedulers_[w.scheduler]->policy().longWaitOver(&w - warps_.data());
      }
    }
  }
}

// ---- dispatch to units -------------------------------------------------------------------------

template <class F>
bool Sm::anyCandidate(const BlockUnits& b, Unit u, bool fp, F&& f) const {
  if (u == Unit::Sp) {
    for (uint32_t i : fp ? b.simdFp : b.simdInt)
      if (f(*simd_[i])) return true;
    return false;
  }
  const auto& units = u == Unit::Sfu ? sfu_ : u == Unit::Dp ? dp_ : tensor_;
  const uint32_t begin = u == Unit::Sfu  ? b.sfuBegin
                         : u == Unit::Dp ? b.dpBegin
                                         : b.tensorBegin,
                 end = u == Unit::Sfu  ? b.sfuEnd
                       : u == Unit::Dp ? b.dpEnd
                                       : b.tensorEnd;
  for (uint32_t i = begin; i < end; ++i)
    if (f(*units[i])) return true;
  return false;
}

DispatchTarget::Answer Sm::dispatch(uint32_t inst, Unit u, Cycle now) {
  InFlight& in = inflight_[inst];
  if (u == Unit::Ldst) {
    if (!ldst_.free(now)) return Answer::Busy;
    act_.dispatched[int(Unit::Ldst)] += 1;
    ldst_.accept(inst, now, *this, act_);
    return Answer::Taken;
  }
  if (u == Unit::Sp && simdControl_)
    return dispatchSimd(inst, now) ? Answer::Taken : Answer::Refused;
  if (u == Unit::Dp && dpOnSimd_) return dispatchDpOnSimd(inst, now);
  const BlockUnits& b = blocks_[slotBlock_[in.warp]];
  const bool taken = anyCandidate(b, u, in.fpUnits, [&](ExecutionUnit& e) {
    if (!e.free(now)) return false;
    const uint32_t occ = std::max(in.occupancy, e.warpCycles());
    e.start(now, occ);
    act_.dispatched[int(u)] += 1;
    act_.unitBusy[int(u)] += occ;
    if (u != Unit::Tensor) {  // a tensor core's energy is its busy cycles'
      act_.laneOps += in.lanes;
      act_.laneOpsByKind[int(laneKindOf(in.inst->cls))] += in.lanes;
    }
    if (u == Unit::Sp) simdLaneOps_ += in.lanes;
    wbq_.push({now + in.latency, inst});
    return true;
  });
  if (taken) return Answer::Taken;
  // An integer instruction waiting for its block's integer-capable units says nothing of the
  // FP-only ones a floating-point instruction could take.
  if (u == Unit::Sp) return in.fpUnits || !b.hasFpOnly() ? Answer::Busy : Answer::Waits;
  // Shared DP units being busy for one block says nothing certain for another's collectors; it
  // does for this one's.
  return Answer::Busy;
}

Cycle Sm::unitFreeAt(uint32_t inst, Unit u, Cycle now) const {
  // The LD/ST unit frees when the memory system answers; the power-gating and issue-control
  // paths may wake units: both are evaluated every cycle.
  if (u == Unit::Ldst || simdControl_) return now + 1;
  const InFlight& in = inflight_[inst];
  const BlockUnits& b = blocks_[slotBlock_[in.warp]];
  Cycle free = ~0ull;
  if (u == Unit::Dp && dpOnSimd_) {  // needs every SIMD unit of its block
    free = 0;
    for (const ExecutionUnit* e : b.simdUnits) free = std::max(free, e->busyUntil());
  } else if (u != Unit::None) {
    anyCandidate(b, u, in.fpUnits, [&](const ExecutionUnit& e) {
      free = std::min(free, e.busyUntil());
      return false;
    });
  }
  return std::max(free, now + 1);
}

DispatchTarget::Answer Sm::dispatchDpOnSimd(uint32_t inst, Cycle now) {
  InFlight& in = inflight_[inst];
  const BlockUnits& b = blocks_[slotBlock_[in.warp]];  // every SIMD unit of the warp's block
  for (ExecutionUnit* e : b.simdUnits)
    if (!e->free(now)) return Answer::Busy;
  // The lanes of the active threads, in every unit (each DP operation pairs a lane of each group).
  const uint64_t used = simdLaneMask(in.executed, cfg_.sm.simd_lanes, cfg_.sm.warp_size, false);
  if (simdControl_ && wakeOnUse_) {
    // Every unit and used lane must be awake; gated ones wake together (see dispatchSimd).
    Cycle ready = now;
    bool gated = false;
    for (ExecutionUnit* e : b.simdUnits) {
      const auto check = [&](const power::PowerGatingSwitch& s) {
        const Cycle r = s.usableFrom(now);
        if (r == power::PowerGatingSwitch::kGated)
          gated = true;
        else
          ready = std::max(ready, r);
      };
      check(*e->unitSwitch());
      e->forEachLane(used, check);
    }
    if (gated) {
      for (ExecutionUnit* e : b.simdUnits) {
        ready = std::max(ready, e->unitSwitch()->acquire(now));
        e->forEachLane(
            used, [&](power::PowerGatingSwitch& s) { ready = std::max(ready, s.acquire(now)); });
      }
      for (ExecutionUnit* e : b.simdUnits) {
        e->unitSwitch()->hold(now, ready);
        e->forEachLane(used, [&](power::PowerGatingSwitch& s) { s.hold(now, ready); });
      }
    }
    if (ready > now || gated) {
      if (ready <= now) return dispatchDpOnSimd(inst, now);  // awake at once (wake_latency 0)
      if (lastWakeStall_ != now) {
        ++gating_.wakeStallCycles;
        lastWakeStall_ = now;
      }
      return Answer::Refused;
    }
  }
  const uint32_t occ = std::max(in.occupancy, b.simdUnits.front()->warpCycles());
  for (ExecutionUnit* e : b.simdUnits) {
    e->start(now, occ);
    if (simdControl_) {
      e->forEachLane(used, [&](power::PowerGatingSwitch& s) { s.use(now, now + occ); });
      e->unitSwitch()->use(now, now + occ);
    }
  }
  act_.dispatched[int(Unit::Dp)] += 1;
  act_.unitBusy[int(Unit::Sp)] += occ * static_cast<uint32_t>(b.simdUnits.size());
  act_.laneOps += in.lanes;
  act_.laneOpsByKind[int(LaneKind::Dp)] += in.lanes;
  simdLaneOps_ += in.lanes;
  sliceLaneOps_ += in.lanes;
  wbq_.push({now + in.latency, inst});
  return Answer::Taken;
}

bool Sm::dispatchSimd(uint32_t inst, Cycle now) {
  InFlight& in = inflight_[inst];
  const uint32_t warpSize = cfg_.sm.warp_size;
  // With timeout detection a unit whose switch or used lanes are gated must wake first: the
  // instruction takes a free unit that is usable now if there is one; otherwise it waits for a
  // free unit already waking, or else wakes the first free unit (one wake-up per instruction).
  ExecutionUnit* waking = nullptr;
  ExecutionUnit* gated = nullptr;
  uint64_t gatedMask = 0;
  // The units of the warp's block that can run it; the issue-control state applies to each
  // block's units as to one SM's (by their number in the block).
  const BlockUnits& b = blocks_[slotBlock_[in.warp]];
  for (uint32_t i : in.fpUnits ? b.simdFp : b.simdInt) {
    ExecutionUnit& e = *simd_[i];
    const SimdUnitMode mode = simdUnitMode(issueState_, i - b.simdFirst);
    if (!mode.enabled || !e.free(now)) continue;
    // A split unit runs the warp on half its lanes in twice the passes.
    const bool split = mode.split && e.lanes() > 1;
    const uint32_t lanes = split ? e.lanes() / 2 : e.lanes();
    const uint64_t natural = simdLaneMask(in.executed, lanes, warpSize, false);
    const uint64_t used = compaction_ ? simdLaneMask(in.executed, lanes, warpSize, true) : natural;
    power::PowerGatingSwitch& unitSwitch = *e.unitSwitch();
    if (wakeOnUse_) {
      Cycle ready = unitSwitch.usableFrom(now);
      e.forEachLane(used, [&](const power::PowerGatingSwitch& s) {
        ready = std::max(ready, s.usableFrom(now));
      });
      if (ready == power::PowerGatingSwitch::kGated) {
        if (!gated) {
          gated = &e;
          gatedMask = used;
        }
        continue;
      }
      if (ready > now) {
        if (!waking) waking = &e;
        continue;
      }
    }
    const uint32_t fullOcc = std::max(in.occupancy, e.warpCycles());
    const uint32_t occ = split ? 2 * fullOcc : fullOcc;
    e.forEachLane(used, [&](power::PowerGatingSwitch& s) { s.use(now, now + occ); });
    unitSwitch.use(now, now + occ);
    e.start(now, occ);
    act_.dispatched[int(Unit::Sp)] += 1;
    act_.unitBusy[int(Unit::Sp)] += occ;
    act_.laneOps += in.lanes;
    act_.laneOpsByKind[int(laneKindOf(in.inst->cls))] += in.lanes;
    simdLaneOps_ += in.lanes;
    sliceLaneOps_ += in.lanes;
    if (split) ++gating_.splitInstructions;
    if (used != natural) ++gating_.compactedInstructions;
    // The second half of a split warp finishes occ - fullOcc cycles later.
    wbq_.push({now + in.latency + (occ - fullOcc), inst});
    return true;
  }
  if (!waking && gated) {
    // Wake the unit and its lanes together: whichever is ready first is held ON (waiting)
    // until the last is, so none gates again while the others wake.
    Cycle ready = gated->unitSwitch()->acquire(now);
    gated->forEachLane(
        gatedMask, [&](power::PowerGatingSwitch& s) { ready = std::max(ready, s.acquire(now)); });
    gated->unitSwitch()->hold(now, ready);
    gated->forEachLane(gatedMask, [&](power::PowerGatingSwitch& s) { s.hold(now, ready); });
    if (ready <= now) return dispatchSimd(inst, now);  // awake at once (wake_latency 0)
  }
  if ((waking || gated) && lastWakeStall_ != now) {  // cycles a dispatch waited for a wake-up
    ++gating_.wakeStallCycles;
    lastWakeStall_ = now;
  }
  return false;
}

// ---- fetch -------------------------------------------------------------------------------------

void Sm::fetch(Cycle now) {
  const uint32_t n = static_cast<uint32_t>(warps_.size());
  const uint32_t start = fetch_.nextWarp % n;
  // Each processing block fetches for one of its warps per cycle (its own L0 instruction cache
  // and fetch, GA10x); an SM of one block, for one warp.
  const uint32_t blocks = cfg_.sm.sub_cores;
  uint32_t fetched = 0;  // a bit per block that fetched in this cycle
  uint32_t count = 0;
  // Round-robin over the active slots from nextWarp: [start, n), then [0, start).
  for (uint32_t pass = 0; pass < 2; ++pass) {
    const uint32_t lo = pass == 0 ? start : 0, hi = pass == 0 ? n : start;
    for (uint32_t word = lo >> 6; (word << 6) < hi; ++word) {  // hi <= n: within fetchWatch_
      uint64_t bits = fetchWatch_[word];
      if (word == lo >> 6) bits &= ~0ull << (lo & 63);
      for (; bits != 0; bits &= bits - 1) {
        const uint32_t ws = (word << 6) + uint32_t(__builtin_ctzll(bits));
        if (ws >= hi) break;
        const uint32_t block = 1u << slotBlock_[ws];
        if (fetched & block) continue;
        if (!fetchFor(ws, now)) continue;
        fetched |= block;
        if (++count == blocks) return;
      }
    }
  }
}

void Sm::setActive(uint32_t ws, bool active) {
  warps_[ws].active = active;
  const uint64_t bit = 1ull << (ws & 63);
  activeWarps_[ws >> 6] = active ? activeWarps_[ws >> 6] | bit : activeWarps_[ws >> 6] & ~bit;
  fetchWatch_[ws >> 6] = active ? fetchWatch_[ws >> 6] | bit : fetchWatch_[ws >> 6] & ~bit;
  unpark(ws);
}

bool Sm::fetchFor(uint32_t ws, Cycle now) {
  const uint32_t n = static_cast<uint32_t>(warps_.size());
  WarpSlot& w = warps_[ws];
  const uint32_t pc = w.pc;
  if (w.fetching || w.done() || (pc >= w.ibBegin && pc < w.ibEnd)) {
    fetchWatch_[ws >> 6] &= ~(1ull << (ws & 63));  // until its pc, buffer or fetch changes
    return false;
  }
  fetch_.nextWarp = ws + 1 == n ? 0 : ws + 1;
  if (fetch_.fetch(ws, w, pc, now, act_) == FetchUnit::Result::Miss) {
    MemTransaction t;
    t.addr = fetch_.lineOf(pc);
    t.bytes = cfg_.sm.icache.line_bytes;
    t.lanes = 0;
    t.kind = AccessKind::InstructionFetch;
    if (send(ws, t)) {
      act_.icacheMisses += 1;  // a miss is a line requested (not a warp joining a request)
    } else {
      fetch_.cancel(t.addr, warps_);  // the memory system is busy: ask again later
      fetchWatch_ = activeWarps_;     // the warps that waited for the line fetch again
    }
  }
  return true;
}

// ---- memory ------------------------------------------------------------------------------------

bool Sm::send(uint32_t inst, const MemTransaction& t) {
  if (requestBlocked_) return false;
  tlm::tlm_generic_payload* gp = pool_.acquire();
  MemAccessExtension& ext = accessOf(*gp);
  ext.sm = id_;
  ext.kind = t.kind;
  ext.activeMask = t.lanes;
  ext.byteMask = t.byteMask;
  ext.atomicSerial = t.atomicSerial;
  if (t.kind == AccessKind::InstructionFetch || t.kind == AccessKind::ConstLoad) {
    // Instruction and constant caches fetch whole lines: every byte is needed.
    ext.byteMask = {};
    for (uint32_t b = 0; b < std::min<uint32_t>(t.bytes, 256); ++b) ext.setByte(b);
  }
  ext.tag = inst;
  ext.l2Only = false;
  if (t.kind == AccessKind::InstructionFetch) {
    ext.warp = inst;
    ext.pc = warps_[inst].pc;
  } else {
    ext.warp = inflight_[inst].warp;
    ext.pc = inflight_[inst].pc;
    ext.warpThreads = popcount32(inflight_[inst].mem.mask);
    ext.l2Only = t.kind == AccessKind::Load && inflight_[inst].info->l2Only;
  }
  gp->set_command(t.kind == AccessKind::Store ? tlm::TLM_WRITE_COMMAND : tlm::TLM_READ_COMMAND);
  gp->set_address(t.addr);
  gp->set_data_length(std::min<uint32_t>(t.bytes, PayloadPool::kDataBytes));
  gp->set_streaming_width(gp->get_data_length());
  tlm::tlm_phase phase = tlm::BEGIN_REQ;
  sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
  tlm::tlm_sync_enum s = memory_socket->nb_transport_fw(*gp, phase, delay);
  if (s == tlm::TLM_ACCEPTED || (s == tlm::TLM_UPDATED && phase == tlm::BEGIN_REQ)) {
    requestBlocked_ = true;
    blockedRequest_ = gp;
  }
  if (s == tlm::TLM_COMPLETED) response(*gp);
  gp->release();
  return true;
}

tlm::tlm_sync_enum Sm::nb_transport_bw(tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase,
                                       sc_core::sc_time&) {
  if (phase == tlm::END_REQ) {
    if (&gp == blockedRequest_) {
      requestBlocked_ = false;
      blockedRequest_ = nullptr;
    }
    wakeAt(cycleNow() + 1);
    return tlm::TLM_ACCEPTED;
  }
  if (phase == tlm::BEGIN_RESP) {
    if (&gp == blockedRequest_) {  // the answer to the held request also ends its request phase
      requestBlocked_ = false;
      blockedRequest_ = nullptr;
    }
    response(gp);
    return tlm::TLM_COMPLETED;
  }
  throw InternalError(fmt::format("{}: unexpected phase on the memory socket", name()));
}

void Sm::response(tlm::tlm_generic_payload& gp) {
  const MemAccessExtension& ext = accessOf(gp);
  // A response is visible from the cycle after it arrives.
  const Cycle at = cycleNow() + 1;
  if (ext.kind == AccessKind::InstructionFetch) {
    fetch_.fill(gp.get_address(), at, warps_);
    fetchWatch_ = activeWarps_;  // the warps that waited for the line have new buffers
  } else {
    if (ext.kind == AccessKind::ConstLoad) {
      // Every instruction waiting on the line (its MSHR's merged requests) gets it, one per
      // cycle: the MSHR replays them through the cache's one read port.
      uint32_t replay = 0;
      ldst_.constFill(gp.get_address(), [&](uint32_t inst) {
        if (--inflight_[inst].outstanding == 0 && !ldst_.constLookingUp(inst))
          complete(inst, at + cfg_.sm.const_cache.hit_latency + replay);
        ++replay;
      });
    } else {
      const uint32_t inst = static_cast<uint32_t>(ext.tag);
      if (--inflight_[inst].outstanding == 0) complete(inst, at);
    }
  }
  wakeAt(at);
}

void Sm::complete(uint32_t inst, Cycle at) { wbq_.push({at, inst}); }

// ---- statistics --------------------------------------------------------------------------------

void Sm::resetStats() {
  counters_ = SmCounters{};
  pendingCounts_.clear();
  pendingCycles_ = 0;
  execStats_ = func::ExecStats{};
  for (auto& s : schedulers_)
    for (auto& o : s->outcomes) o = 0;
  timeline_.clear();
  peakCtas_ = usedCtas_;
  gating_ = SmGatingStats{};
}

std::string Sm::describeState() const {
  std::string out;
  const Cycle now = cycleNow();
  for (uint32_t i = 0; i < warps_.size(); ++i) {
    const WarpSlot& ws = warps_[i];
    if (!ws.active || ws.warp == nullptr) continue;
    const func::Warp& w = *ws.warp;
    const func::Cta& cta = ctas_[ws.cta].cta;
    // A warp at a barrier has moved past it: name the barrier.
    const uint32_t pc = w.state == func::WarpState::AtBarrier && w.pc() != func::kNoPc && w.pc() > 0
                            ? w.pc() - 1
                            : w.pc();
    std::string where = "no pc";
    if (prog_ != nullptr && pc < prog_->info.size())
      where = fmt::format("pc {} ({}: {})", pc, prog_->info[pc].loc.str(), prog_->info[pc].text);
    std::vector<std::string> waits;
    if (w.done()) waits.push_back("finished, draining in-flight work");
    if (w.state == func::WarpState::AtBarrier)
      waits.push_back(fmt::format("at barrier {}", w.barrierId));
    if (w.state == func::WarpState::MbarrierWait) waits.push_back("waits for an mbarrier phase");
    if (ws.fetching) waits.push_back("instruction-cache miss");
    if (ws.memoryPending) waits.push_back(fmt::format("{} loads", ws.memoryPending));
    if (ws.inFlight) waits.push_back(fmt::format("{} instructions in flight", ws.inFlight));
    if (ws.eligibleAt > now) waits.push_back(fmt::format("eligible at cycle {}", ws.eligibleAt));
    out += fmt::format("  {} warp slot {}: block ({},{},{}) warp {}, {}: {}\n", name(), i,
                       cta.ctaid.x, cta.ctaid.y, cta.ctaid.z, w.idInCta, where,
                       waits.empty() ? "ready" : fmt::format("{}", fmt::join(waits, ", ")));
  }
  for (const InFlight& f : inflight_)
    if (f.used && f.outstanding)
      out += fmt::format("  {} in flight: warp slot {} pc {} ({}) waits for {} memory answers\n",
                         name(), f.warp, f.pc, f.info ? f.info->text : "", f.outstanding);
  return out;
}

void Sm::resetState() {
  // Nothing is in flight now, but which free records the next instructions get (and so the
  // order of their same-cycle writebacks, which the scheduling policy sees) depends on the
  // frees before: back to none allocated, as when the SM was built.
  inflight_.clear();
  freeInFlight_.clear();
  for (auto& s : schedulers_) s->policy().reset();
  for (ScanCache& c : scan_) c = ScanCache{};  // rebuilt from the reset policies' orders
  std::fill(scanPos_.begin(), scanPos_.end(), uint8_t(0xff));
  fetch_.reset();
  ldst_.reset();
  dispatch_.reset();
  unparkStructural(true);
  for (auto* units : {&simd_, &sfu_, &dp_})
    for (auto& e : *units) e->reset();
}

}  // namespace gpusc::sm
