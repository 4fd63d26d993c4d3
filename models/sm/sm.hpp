// A streaming multiprocessor: the cycle-level timing model of one SM.
//
//   FetchUnit (I-cache) -> instruction buffers -> WarpScheduler x N (scoreboard check)
//     -> issue (the functional engine executes the instruction here: execute at issue)
//     -> DispatchUnit (operand collectors, RegisterFile banks) -> ExecutionUnit (SIMD, SFU, DP)
//        or LdstUnit (coalescer, SharedMemory, constant cache, memory socket) -> writeback
//
// The core clock domain (gpu/core_clock_domain.hpp) evaluates a cycle of the whole pipeline,
// stage by stage in reverse order (evaluateCycle), possibly on a host thread of its own, and
// then, on the simulation thread in SM order, lets the SM hand on what the cycle did
// (commitCycle). When nothing can change in the next cycle the SM sleeps until the next known
// event (a result being written back, a buffer filling, a barrier releasing) or until woken (a
// memory response, a new CTA); cycles it skips are accounted in bulk, so idle time costs nothing.
#pragma once

#include <array>
#include <cstdint>
#include <exception>
#include <memory>
#include <queue>
#include <string>
#include <vector>

#include <tlm_utils/simple_initiator_socket.h>
#include <systemc>
#include <tlm>

#include "common/event_outbox.hpp"
#include "common/mem_access.hpp"
#include "common/platform_config.hpp"
#include "func/executor.hpp"
#include "func/step_env.hpp"
#include "power/power_gating_switch.hpp"
#include "sm/activity.hpp"
#include "sm/dispatch_unit.hpp"
#include "sm/droop_predictor_unit.hpp"
#include "sm/execution_unit.hpp"
#include "sm/fetch_unit.hpp"
#include "sm/gating_stats.hpp"
#include "sm/ldst_unit.hpp"
#include "sm/local_droop_predictor.hpp"
#include "sm/pipeline.hpp"
#include "sm/register_file.hpp"
#include "sm/simd_issue_control.hpp"
#include "sm/warp_scheduler.hpp"

namespace gpusc::sm {

// Resources one CTA of a kernel takes on an SM.
// registers: every warp's, registersPerWarp each; sharedBytes: as allocated (with
// sm.shared_reserved_per_cta, rounded up to sm.shared_allocation_granularity).
struct CtaFootprint {
  uint32_t threads = 0, warps = 0, registers = 0, registersPerWarp = 0, sharedBytes = 0;
};
// The partition of sm.register_partitions that warp slot `slot` takes its registers from (its
// scheduler's: slot % sm.schedulers).
uint32_t registerPartitionOf(const SmConfig& s, uint32_t slot);
// Warps of `registersPerWarp` registers each whose registers an empty SM holds: with one
// partition, the register file over a warp's; with several, each partition's over a warp's, up to
// the warp slots it serves.
uint32_t warpsByRegisters(const SmConfig& s, uint32_t registersPerWarp);
// CTAs of footprint `f` an empty SM holds at once (what Sm::fits allows), with `sharedBytes` of
// shared memory (default: sm.shared_memory_bytes).
uint32_t ctasPerSm(const SmConfig& s, const CtaFootprint& f);
uint32_t ctasPerSm(const SmConfig& s, const CtaFootprint& f, uint32_t sharedBytes);
// The shared memory a launch of CTAs of footprint `f` gets: sm.shared_memory_bytes, or with
// sm.unified_l1 the smallest carve-out that holds as many of them as the largest would.
uint32_t sharedCarveout(const SmConfig& s, const CtaFootprint& f);

struct CtaRecord {
  uint32_t sm = 0;
  uint64_t linearId = 0;
  func::Dim3 ctaid;
  Cycle start = 0, end = 0;
};

class CtaListener {
 public:
  virtual ~CtaListener() = default;
  // A CTA of SM `sm` ended; `resident` CTAs are left on it.
  virtual void ctaFinished(uint32_t sm, uint32_t resident) = 0;
  // The SM evaluated a cycle (only with KernelContext::reportEvaluations: the global droop
  // detector sleeps while no SM does anything).
  virtual void smEvaluated(uint32_t sm) { (void)sm; }
};

class IssueObserver {
 public:
  virtual ~IssueObserver() = default;
  virtual void onIssue(uint32_t sm, Cycle cycle, uint32_t warpSlot, uint32_t pc) = 0;
};

// Who evaluates the SMs' cycles (the core clock domain).
class SmScheduler {
 public:
  virtual ~SmScheduler() = default;
  // Evaluate SM `sm` at cycle `c` at the latest (called on the simulation thread).
  virtual void wake(uint32_t sm, Cycle c) = 0;
};

// What the SMs share during one kernel.
struct KernelContext {
  func::Executor* executor = nullptr;
  uint64_t codeBase = 0;
  CtaListener* listener = nullptr;
  bool reportEvaluations = false;  // call listener->smEvaluated() every evaluated cycle
  uint32_t sharedBytes = 0;        // shared memory of the launch (sharedCarveout); 0: the SM's
};

// The registries an SM creates its policies from: the platform's Policies (handed down by the Gpu,
// which composes the platform), or the built-ins.
struct SmPolicies {
  const WarpSchedulerRegistry& warpSchedulers;    // sm.scheduler
  const cache::ReplacementRegistry& replacement;  // sm.icache and sm.const_cache .replacement
  const SimdIssueRegistry& simdIssue;             // power.simd_issue.policy
  static SmPolicies builtin() {
    return {warpSchedulingPolicies(), cache::replacementPolicies(), simdIssuePolicies()};
  }
};

class Sm : public sc_core::sc_module, private LdstHost, private DispatchTarget {
 public:
  tlm_utils::simple_initiator_socket<Sm> memory_socket;

  Sm(const sc_core::sc_module_name& name, uint32_t id, const PlatformConfig& cfg, PayloadPool& pool,
     sc_core::sc_time period, const SmPolicies& policies = SmPolicies::builtin());

  uint32_t id() const { return id_; }

  // ---- evaluation (the core clock domain) ----
  void setScheduler(SmScheduler* s) { scheduler_ = s; }
  // The SM's and its L1 data cache's event notifications (held during evaluateCycle).
  EventOutbox& outbox() { return outbox_; }
  // Evaluates cycle `now` and returns the next cycle the SM must be evaluated in (kNever: not
  // until woken). Safe on a host thread concurrently with other SMs' evaluateCycle: it touches
  // only this SM, its L1 through the memory socket (whose notifications the outbox holds), and
  // reads global memory; stores and atomics go to the SM's write log, and what the cycle
  // reports (activity, issues, CTA ends, faults) waits for commitCycle. A fault is caught and
  // kept (fault()).
  Cycle evaluateCycle(Cycle now);
  // On the simulation thread, SM by SM in index order after the cycle's evaluations: applies the
  // cycle's global stores and atomics, issues the held notifications, and reports the cycle to
  // the observers and the CTA scheduler.
  void commitCycle();
  // Whether evaluating cycle `now` reports an earlier cycle alone: the one it skipped, when it
  // last evaluated the cycle before that (its report of a longer skipped stretch draws only the
  // idle current, which the power model hands on with the others).
  bool reportsSkippedCycle(Cycle now) const { return evaluated_ && lastCycle_ + 2 == now; }

  // ---- CTAs (the CtaScheduler) ----
  bool fits(const CtaFootprint& f) const;
  // Starts a CTA now; its warps may issue from the next cycle.
  void startCta(const CtaFootprint& f, const func::Dim3& ctaid, uint64_t linearId);
  void beginKernel(const KernelContext& k);
  void endKernel();
  uint32_t residentCtas() const { return usedCtas_; }

  // ---- power ----
  // The switch that gates the whole SM. The CtaScheduler drives it: busy while the SM holds
  // CTAs; an SM it gates takes no CTA until awake.
  power::PowerGatingSwitch& powerSwitch() { return power_switch_; }
  const power::PowerGatingSwitch& powerSwitch() const { return power_switch_; }
  // The SIMD units' and lanes' switches account from beginKernel() (while the SM holds CTAs)
  // and the issue control's states are recorded, until this call at the kernel's end, with
  // `end` the first cycle after the kernel (TimingResult::endCycle + 1). Then gatingStats()
  // holds the kernel's figures.
  void finishPowerWindow(Cycle end);
  const SmGatingStats& gatingStats() const { return gating_; }
  // The SIMD issue-control state (1 .. 4) in use.
  uint32_t issueState() const { return issueState_; }
  // Lane operations of SIMD (SP) instructions since beginKernel() (lanes x passes actually
  // computing; the lane utilisation's numerator).
  uint64_t simdLaneOps() const { return simdLaneOps_; }
  const ExecutionUnit& simdUnit(uint32_t i) const { return *simd_[i]; }

  // ---- voltage smoothing (seed 001) ----
  // No warp instruction issues before cycle `until` (the global droop detector's stagger).
  void holdIssue(Cycle until);
  // Warps that can make progress: resident, not finished, not waiting for memory, at a barrier
  // or on an instruction fetch (what the SM reports to the global droop detector).
  uint32_t activeWarps() const;
  // The local droop predictor (smoothing.mode local or hierarchical; else nullptr). Its counters
  // cover the current (or last) kernel.
  const DroopPredictorUnit* droopPredictor() const { return predictor_.get(); }

  // ---- RTL co-simulation ----
  // Lockstep: the first divergence of one of the SM's co-simulated blocks (its droop predictor,
  // its own and its SIMD units' power-gating switches); empty when none diverged.
  std::string rtlDivergence() const;
  // gpusc run --vcd: the signals of the SM's verilated blocks (droop predictor, issue control,
  // power-gating switches) into `waves` under sm<id>.*, clocks of cycle c at c x `periodFs`
  // (docs/rtl-cosim.md "Waveforms"). A predictor made anew for a kernel is traced too.
  void traceWaves(rtl::RtlWaves& waves, uint64_t periodFs);

  // ---- observation ----
  void setActivityObserver(ActivityObserver* o) { activityObserver_ = o; }
  void setIssueObserver(IssueObserver* o) { issueObserver_ = o; }
  // The run totals (adding the cycles summed since the last read: call it on the simulation
  // thread, not while the SM is being evaluated).
  const SmCounters& counters() const {
    flushCounts();
    return counters_;
  }
  const func::ExecStats& execStats() const { return execStats_; }
  uint64_t schedulerOutcomes(uint32_t s, Stall st) const {
    return schedulers_[s]->outcomes[int(st)];
  }
  uint32_t numSchedulers() const { return static_cast<uint32_t>(schedulers_.size()); }
  const std::vector<CtaRecord>& ctaTimeline() const { return timeline_; }
  uint32_t peakResidentCtas() const { return peakCtas_; }
  // Clears statistics (counters, outcomes, timeline); caches and units keep their state.
  void resetStats();
  // Returns caches, units, the in-flight records and the warp schedulers to their power-on
  // state (a new run: a new Device reuses the timing engine of the last one).
  void resetState();
  // Accounts cycles up to `cycle` (end of a kernel) as idle.
  void flushAccounting(Cycle cycle);

  // ---- faults and diagnosis ----
  // The exception the SM's process caught (a KernelFault of the kernel it ran, or an internal
  // error), or null. The SM stops evaluating and pauses the simulation when it catches one, so
  // the caller of sc_start can rethrow it as it was thrown: SystemC would otherwise wrap it in
  // an sc_report and lose its type.
  std::exception_ptr fault() const { return fault_; }
  // One line per resident warp: its CTA, PC and PTX line, and what it waits for; then the
  // instructions in flight. For deadlock and no-progress reports.
  std::string describeState() const;

 private:
  struct CtaSlot {
    bool used = false;
    func::Cta cta;
    CtaFootprint footprint;
    // Warps placed in each register partition (sm.register_partitions).
    std::array<uint16_t, kMaxRegisterPartitions> partitionWarps{};
    uint32_t liveWarps = 0;
    CtaRecord record;
  };
  struct Writeback {
    Cycle at;
    uint32_t inst;
    bool operator>(const Writeback& o) const { return at != o.at ? at > o.at : inst > o.inst; }
  };

  Cycle cycleNow() const { return sc_core::sc_time_stamp().value() / periodValue_; }
  void evaluate(Cycle now);
  void reportActivity(Cycle first, uint64_t cycles, const SmActivity& a);
  void account(Cycle now);
  void writeback(Cycle now);
  void retire(Cycle now);
  void issue(Cycle now);
  void throttle(Cycle now);  // local smoothing: the DispatchUnit's limits this cycle
  bool quietStall(const WarpSlot& w, Cycle now, Stall& reason) const;
  bool tryIssue(uint32_t slot, Cycle now, Stall& reason);
  void fetch(Cycle now);
  // Fetch for slot ws if it needs instructions; false: it does not (fetch tries the next).
  bool fetchFor(uint32_t ws, Cycle now);
  // Sets warps_[ws].active and its bit in activeWarps_ (the two change only together).
  void setActive(uint32_t ws, bool active);
  // DispatchTarget
  Answer dispatch(uint32_t inst, Unit u, Cycle now) override;
  Cycle unitFreeAt(uint32_t inst, Unit u, Cycle now) const override;
  bool dispatchSimd(uint32_t inst, Cycle now);        // with gating, issue control or compaction
  Answer dispatchDpOnSimd(uint32_t inst, Cycle now);  // sm.dp_path simd: every SIMD unit at once
  void advanceSlices(Cycle now);  // issue control: slices that ended before `now`
  void suspendSimdSwitches(Cycle now);
  void resumeSimdSwitches(Cycle now);
  void releaseWarps(func::Cta& cta, uint32_t ctaSlot, uint64_t waitingBefore, Cycle now);
  Cycle nextEvent(Cycle now) const;
  void wakeAt(Cycle c);
  uint32_t allocInFlight();
  void freeInFlight(uint32_t i);
  Unit unitOf(func::InstClass c) const;
  // The unit of an instruction: a matrix instruction's is a tensor core where its type has a rate.
  Unit unitOf(const func::Inst& inst, const func::InstInfo& info) const;
  const OpTiming& timingOf(func::InstClass c) const;
  // Dense multiply-adds per clock of one tensor core for `t` (0: not run on the tensor cores).
  uint32_t tensorRate(func::MatrixType t) const;
  // Latency and occupancy of an instruction on unit `u` (InFlight::latency and ::occupancy).
  void setTiming(InFlight& in, const func::Inst& inst, const func::InstInfo& info, Unit u) const;

  // LdstHost
  InFlight& record(uint32_t inst) override { return inflight_[inst]; }
  bool send(uint32_t inst, const MemTransaction& t) override;
  void complete(uint32_t inst, Cycle at) override;

  tlm::tlm_sync_enum nb_transport_bw(tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase,
                                     sc_core::sc_time& delay);
  void response(tlm::tlm_generic_payload& gp);

  const uint32_t id_;
  const PlatformConfig& cfg_;
  PayloadPool& pool_;
  const sc_core::sc_time period_;
  const uint64_t periodValue_;
  SmScheduler* scheduler_ = nullptr;
  EventOutbox outbox_;

  // ---- one evaluation's effects, held until commitCycle ----
  struct HeldActivity {
    Cycle first;
    uint64_t cycles;
    SmActivity activity;
  };
  struct HeldIssue {
    Cycle cycle;
    uint32_t slot, pc;
  };
  bool evaluating_ = false;  // inside evaluateCycle
  Cycle selfWake_ = kNever;  // wakeAt() during the evaluation
  std::vector<HeldActivity> heldActivity_;
  // The evaluated cycle's own activity is act_, which stays as it is until the next evaluation:
  // held by reference (its cycle), not copied, and reported after heldActivity_.
  Cycle heldOwnCycle_ = kNever;
  std::vector<HeldIssue> heldIssues_;
  std::vector<uint32_t> heldCtaEnds_;  // CTAs left resident after each CTA that ended
  bool heldEvaluated_ = false;         // report smEvaluated
  func::GlobalWriteLog writeLog_;
  func::StepEnv env_;

  power::PowerGatingSwitch power_switch_;
  RegisterFile rf_;
  DispatchUnit dispatch_;
  std::vector<std::unique_ptr<ExecutionUnit>> simd_, sfu_, dp_, tensor_;
  LdstUnit ldst_;
  FetchUnit fetch_;
  std::vector<std::unique_ptr<WarpScheduler>> schedulers_;

  KernelContext kernel_;
  std::exception_ptr fault_;
  const func::Program* prog_ = nullptr;
  std::vector<WarpSlot> warps_;
  // Bit ws of word ws / 64: warps_[ws].active. The fetch scan visits these slots only (an
  // inactive slot is a cache line loaded for nothing).
  std::vector<uint64_t> activeWarps_;
  // The active slots the fetch scan looks at: a slot's bit is cleared when the scan finds it
  // needs no fetch (it waits for a line, is done, or its buffer holds its pc), and set again by
  // whatever may change that (its pc or state: sync(); its buffer or wait: a line filled or a
  // fetch cancelled), so a clear bit always means "no fetch" and the scan's choice is the same.
  std::vector<uint64_t> fetchWatch_;
  void watchFetch(uint32_t ws) { fetchWatch_[ws >> 6] |= 1ull << (ws & 63); }
  // Warps the issue scan passes over without looking at their slot: each was found unable to
  // issue for a reason that holds until its state, pc or scoreboard changes (not ready: at a
  // barrier or done; or waiting on a register), kept in parkedReason_. Whatever changes those
  // (a sync, a writeback, a release, the slot's start or end) unparks the warp, so the scan's
  // outcome is the one it would find by looking.
  std::vector<uint64_t> parked_;
  std::vector<Stall> parkedReason_;
  void unpark(uint32_t ws) {
    parked_[ws >> 6] &= ~(1ull << (ws & 63));
    ScanCache& c = scan_[slotScheduler_[ws]];
    const uint8_t p = scanPos_[ws];
    if (p < c.order.size() && c.order[p] == ws) c.live |= 1ull << p;
  }
  // Per scheduler, the policy's order as last seen and which of its places hold a warp that is
  // not parked (bit p: order[p]), kept with parked_, so the scan visits only those. Rebuilt
  // when the order differs (known from the policy's order version when it keeps one, else by
  // comparing); used when a scheduler has at most 64 warps.
  struct ScanCache {
    std::vector<uint32_t> order;
    uint64_t live = 0;
    uint64_t version = WarpSchedulingPolicy::kUnversioned;  // the policy's, for `order`
  };
  std::vector<ScanCache> scan_;
  std::vector<uint8_t> scanPos_;  // a slot's place in its scheduler's cached order
  // A slot's scheduler, slot % schedulers, looked up: park() and unpark() run per instruction,
  // and the division took a tenth of writeback()'s instructions' time.
  std::vector<uint8_t> slotScheduler_;
  void park(uint32_t ws, Stall why) {
    parked_[ws >> 6] |= 1ull << (ws & 63);
    parkedReason_[ws] = why;
    ScanCache& c = scan_[slotScheduler_[ws]];
    const uint8_t p = scanPos_[ws];
    if (p < c.order.size() && c.order[p] == ws) c.live &= ~(1ull << p);
  }
  bool isParked(uint32_t ws) const { return (parked_[ws >> 6] >> (ws & 63)) & 1; }
  // Warps parked for a structural stall, by collector group (DispatchUnit::group): each found
  // its instruction ready but no free collector of its unit's group. That holds until its state,
  // pc or scoreboard changes (which unpark it as above) or a collector of the group frees, which
  // only the dispatch stage does: after it, the warps of a group with a free collector are
  // unparked together (unparkStructural).
  // Warps parked for want of a collector, by the collector group slot they wait for (a group of
  // their block: DispatchUnit::slotOf).
  std::vector<std::vector<uint64_t>> structParked_;
  uint32_t structGroups_ = 0;  // bit g: structParked_[g] may hold a warp
  void parkStructural(uint32_t ws, Unit u) {
    park(ws, Stall::Structural);
    const int g = DispatchUnit::slotOf(DispatchUnit::group(u), slotBlock_[ws]);
    structParked_[g][ws >> 6] |= 1ull << (ws & 63);
    structGroups_ |= 1u << g;
  }
  // The units each processing block (sm.sub_cores) may use: the indices into simd_ that take a
  // floating-point instruction (its FP-only units first) and any other SIMD instruction, every
  // SIMD unit of the block (a DP instruction on dp_path simd holds them all), and its SFUs and DP
  // units (every DP unit with sm.dp_shared).
  struct BlockUnits {
    std::vector<uint32_t> simdFp, simdInt;
    std::vector<ExecutionUnit*> simdUnits;
    uint32_t simdFirst = 0, sfuBegin = 0, dpBegin = 0, sfuEnd = 0, dpEnd = 0, tensorBegin = 0,
             tensorEnd = 0;
    bool hasFpOnly() const { return simdFp.size() != simdInt.size(); }
  };
  std::vector<BlockUnits> blocks_;
  std::vector<uint8_t> slotBlock_;  // each warp slot's block
  // Calls `f` with each unit of block `b` that can run a `u` instruction (Sp: the FP-capable
  // units for a floating-point one, `fp`, else the INT-capable ones; Sfu, Dp, Tensor: the block's)
  // until `f` returns true; returns whether one did. Dispatch picks a free one; unitFreeAt, the
  // first to free.
  template <class F>
  bool anyCandidate(const BlockUnits& b, Unit u, bool fp, F&& f) const;
  void unparkStructural(bool all);
  std::vector<CtaSlot> ctas_;
  // In-flight instruction records: an index is an instruction's tag, and the order of
  // writebacks due in the same cycle, so the free list's order is state (resetState).
  std::vector<InFlight> inflight_;
  std::vector<uint32_t> freeInFlight_;
  std::priority_queue<Writeback, std::vector<Writeback>, std::greater<Writeback>> wbq_;
  std::vector<uint32_t> finishing_;  // warps whose threads exited, waiting for in-flight work
  std::vector<uint32_t> candidates_;
  uint32_t usedThreads_ = 0, usedWarps_ = 0, usedRegisters_ = 0, usedShared_ = 0, usedCtas_ = 0;
  // With sm.register_partitions > 1: each slot's partition, the slots each partition serves (a
  // bit per slot, as activeWarps_), and the registers each partition has given out.
  std::vector<uint8_t> slotPartition_;
  std::vector<std::vector<uint64_t>> partitionSlots_;
  std::array<uint32_t, kMaxRegisterPartitions> partitionRegisters_{};
  uint32_t sharedCapacity_ = 0;  // shared memory of the running launch (KernelContext)
  uint32_t peakCtas_ = 0;
  uint64_t warpAge_ = 0;
  bool requestBlocked_ = false;     // waiting for END_REQ of the last request
  bool regrouped_ = false;          // a scheduler changed its order during issue this cycle
  Cycle holdUntil_ = 0;             // voltage smoothing: no issue before this cycle
  uint32_t issueFirst_ = 0;         // the scheduler that goes first in issue() (round robin)
  rtl::RtlWaves* waves_ = nullptr;  // gpusc run --vcd (traceWaves)
  uint64_t wavesPeriodFs_ = 0;
  std::unique_ptr<DroopPredictorUnit> predictor_;  // voltage smoothing: local level
  PredictorWeights predictorWeights_;
  bool throttling_ = false;      // the DispatchUnit's limits are set
  uint32_t lastDispatched_ = 0;  // instructions dispatched in the last evaluated cycle
  const tlm::tlm_generic_payload* blockedRequest_ = nullptr;  // that request

  func::ExecStats execStats_;
  // The evaluated cycles' activity is summed in 32 bits (accumulate) and added to counters_
  // every kCountCycles cycles, and whenever counters() is read: the same totals, fewer adds.
  mutable SmCounters counters_;
  mutable SmActivity pendingCounts_;
  mutable uint32_t pendingCycles_ = 0;
  static constexpr uint32_t kCountCycles = 1024;  // per-cycle counts stay far below 2^32 / this
  void flushCounts() const {
    if (pendingCycles_ == 0) return;
    counters_.add(pendingCounts_, 1);
    counters_.evaluatedCycles += pendingCycles_;
    pendingCounts_.clear();
    pendingCycles_ = 0;
  }
  SmActivity act_;
  Cycle lastCycle_ = 0;     // last evaluated cycle
  bool evaluated_ = false;  // lastCycle_ is valid
  uint32_t idleWarps_ = 0;  // resident warps in the skipped cycles after the last evaluated one
  uint32_t idleCollectors_ = 0;  // busy operand collectors (waiting for units) in those cycles
  std::vector<CtaRecord> timeline_;
  ActivityObserver* activityObserver_ = nullptr;
  IssueObserver* issueObserver_ = nullptr;

  // ---- power gating of the SIMD units and lanes, SIMD issue control (seed 002) ----
  std::unique_ptr<SimdIssuePolicy> issuePolicy_;
  const bool adaptiveIssue_;  // the issue control may leave state 1: slices are measured
  const bool compaction_;     // power.thread_compaction
  const bool wakeOnUse_;      // timeout detection: a gated unit or lane wakes before use
  // Any of gating, issue control or compaction: SIMD dispatches take dispatchSimd() and the
  // units' and lanes' switches account (off: nothing of this costs anything).
  const bool simdControl_;
  const bool dpOnSimd_;  // double precision holds every SIMD unit (sm.dp_path simd, no DP units)
  const bool roundRobinIssue_;  // sm.scheduler_arbitration round-robin
  const uint64_t sliceCycles_;
  uint32_t issueState_ = 1;
  Cycle sliceStart_ = 0;  // start of the slice in progress
  uint64_t sliceLaneOps_ = 0, simdLaneOps_ = 0;
  Cycle lastWakeStall_ = kNever;  // the last cycle counted in wakeStallCycles
  bool powerWindowOpen_ = false;
  SmGatingStats gating_;
};

}  // namespace gpusc::sm
