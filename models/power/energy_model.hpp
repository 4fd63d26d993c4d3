// The energy model: every block's activity becomes energy, dynamic (events x energy per event)
// and static (leakage power x time in each power state), at the platform's supply voltage.
//
// Two paths, one set of formulas:
//   - totals: at the end of a launch, from the counters of every block (SM activity counters,
//     cache power-state counters, power-gating switch counters, interconnect and DRAM
//     statistics). Energy is exactly "counted events x energies + leakage x time".
//   - streams: the SMs report their activity cycle by cycle (sm::ActivityObserver); the model
//     books each cycle's energy in the cycles its pipeline stages draw it (the lanes' share over
//     the execution stages after dispatch, power.sm.execute_stages; every other event in its own
//     cycle), hands each SM's current I = P / V cycle by cycle to CurrentSinks (the
//     power-delivery network reads it), and bins the energy into a power time series with a
//     configurable period (power.sample_cycles).
// docs/power.md describes the blocks, the parameters and where each value comes from.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <systemc>

#include "common/platform_config.hpp"
#include "power/voltage_scaling.hpp"
#include "sm/activity.hpp"

namespace gpusc::power {

// The blocks of the breakdown. SM blocks are per SM; the rest are chip-wide.
enum class Block : uint8_t {
  FrontEnd,           // fetch, decode, instruction cache
  Schedulers,         // warp schedulers and scoreboard
  RegisterFile,       // register file banks
  OperandCollectors,  // operand collectors
  SimdLanes,          // SIMD lanes and units (integer and FP32)
  SfuDp,              // special-function units and the FP64 path
  Tensor,             // tensor cores (listed in results only where they ran)
  Ldst,               // LD/ST unit and coalescer
  SharedMemory,       // shared memory
  ConstCache,         // constant cache
  L1d,                // L1 data cache
  SmClock,            // SM clock tree and latches
  L2,                 // L2 slices
  Noc,                // interconnect routers and links
  MemoryControllers,  // memory controllers
  Dram,               // DRAM channels (on their own supply: not scaled with the core supply)
  Constant,           // chip-level constant power
  Count_
};
inline constexpr int kNumBlocks = static_cast<int>(Block::Count_);
inline constexpr int kNumSmBlocks = static_cast<int>(Block::L2);
const char* blockName(Block b);

struct BlockEnergy;
// Whether results list block `b`: every block but the tensor cores, which only where they ran.
bool listed(Block b, const BlockEnergy& e);

struct BlockEnergy {
  double dynamicJ = 0, staticJ = 0;
  double total() const { return dynamicJ + staticJ; }
};

struct EnergyBreakdown {
  std::array<BlockEnergy, kNumBlocks> blocks{};
  BlockEnergy& operator[](Block b) { return blocks[static_cast<size_t>(b)]; }
  const BlockEnergy& operator[](Block b) const { return blocks[static_cast<size_t>(b)]; }
  double dynamicJ() const;
  double staticJ() const;
  double totalJ() const { return dynamicJ() + staticJ(); }
  double smJ() const;  // the SM blocks
  EnergyBreakdown& operator+=(const EnergyBreakdown& o);
};

// What a data cache did in a window (from its power-state counters).
struct CacheEnergyInputs {
  uint32_t frames = 0, subwordsPerLine = 1;
  uint64_t lookups = 0, reads = 0, writes = 0, fills = 0;
  uint64_t readSubwords = 0, writeSubwords = 0;  // enabled sub-word-lines (DWL)
  uint64_t wakeups = 0;
  uint64_t lineCycles = 0, drowsyLineCycles = 0;  // 0 line-cycles: every line ON all window
  uint64_t lentLineCycles = 0;  // of the line-cycles, lent to shared memory (unified L1)
};

// The power-gating switches of one SM over a window.
struct SmGatingInputs {
  uint64_t smGatedCycles = 0, smGatings = 0;
  uint64_t unitGatedCycles = 0, unitGatings = 0;  // summed over the SIMD units
  uint64_t laneGatedCycles = 0, laneGatings = 0;  // summed over the lanes
};

struct SmEnergyInputs {
  sm::SmCounters counters;
  CacheEnergyInputs l1;
  SmGatingInputs gating;
};

// The memory side: cumulative event counts since the launch started.
struct UncoreEnergyInputs {
  std::vector<CacheEnergyInputs> l2;  // per slice
  uint64_t routerFlits = 0;           // flit traversals of routers (every flit a router sends)
  uint64_t linkFlits = 0;             // flit traversals of links
  uint32_t nocNodes = 0;              // routers that leak
  uint64_t controllerRequests = 0;
  uint32_t controllers = 0;
  uint64_t activates = 0, precharges = 0, readBursts = 0, writeBursts = 0, refreshes = 0;
  uint32_t channels = 0;
};

// Per-event energies (J) and leakage powers (W) at the supply voltage.
struct EnergyTable {
  explicit EnergyTable(const PlatformConfig& cfg);

  VoltageScaling scale;
  double cycleSeconds;  // core clock
  double supplyVoltage;
  // SM, J per event
  double fetchDecode, icache, scheduler, rfRead, rfWrite, collector, ldst, shared, constAccess,
      tensorCycle;
  std::array<double, sm::kNumLaneKinds> lane{};
  double smClockW;
  // SM leakage, W
  double frontendW, rfW, sharedW, laneW, unitW, sfuW, ldstW;
  bool unifiedL1 = false;  // shared memory is lines of the L1's array (sharedW 0)
  uint32_t lanesPerSm, unitsPerSm;
  // caches (J per event, W)
  struct Cache {
    double tag, read, write, fill, wake, dataShare, leakageW, lineShare, drowsyFraction;
    bool dwl;
  } l1, l2;
  // uncore
  double routerFlit, linkFlit, routerW;
  double controllerRequest, controllerW;
  double activate, precharge, readBurst, writeBurst, refresh, dramBackgroundW;
  double constantW;
  // switching energy per gating (J)
  double smSwitch, unitSwitch, laneSwitch;
  double smGatedFraction, unitGatedFraction, laneGatedFraction;

  // When the lanes of each kind draw their energy (power.sm.execute_stages).
  struct LaneStage {
    uint32_t delay = 0, cycles = 1;
  };
  std::array<LaneStage, sm::kNumLaneKinds> laneStage{};

  // Dynamic energy (J) of one cycle of SM activity `a` in the SM core blocks (L1D aside).
  double activityJ(const sm::SmActivity& a) const;
  // The part of it drawn in the cycle of the activity: every event but the lanes' and the
  // tensor cores' work.
  double eventJ(const sm::SmActivity& a) const;
  // The tensor cores' energy: their busy cycles (drawn over the instructions' occupancy).
  double tensorJ(const sm::SmActivity& a) const {
    return a.unitBusy[int(sm::Unit::Tensor)] * tensorCycle;
  }
  // The lanes' energy of kind k (drawn over laneStage[k]).
  double laneJ(const sm::SmActivity& a, sm::LaneKind k) const {
    return a.laneOpsByKind[int(k)] * lane[int(k)];
  }
  // Leakage (W) of a whole SM with every block ON (L1D included), plus its clock power.
  double smOnW() const;
};

// Energy of one SM's blocks over a window of `cycles` core cycles.
EnergyBreakdown smEnergy(const EnergyTable& t, const SmEnergyInputs& in, uint64_t cycles);
// Dynamic energy of a cache's events; static energy of its lines and periphery over a window
// of `seconds` in which it was powered for `onFraction` of the time.
BlockEnergy cacheEnergy(const EnergyTable::Cache& c, const CacheEnergyInputs& in, double seconds,
                        double onFraction);
// Energy of the memory side over a window of `cycles` core cycles.
EnergyBreakdown uncoreEnergy(const EnergyTable& t, const UncoreEnergyInputs& in, uint64_t cycles);
// Dynamic energy only (for the time series' per-sample deltas).
double uncoreDynamicJ(const EnergyTable& t, const UncoreEnergyInputs& in, Block b);

// Reads the current of each SM cycle by cycle: `cycles` consecutive core cycles of SM `sm`
// from `firstCycle`, each drawing `amps` from the supply. Every cycle of every SM comes exactly
// once, each SM's in order. A report of cycle c means that every SM's current of the cycles
// before c has come, except for cycles drawing only the idle current (EnergyModel::
// idleSmAmps()), which may come later.
class CurrentSink {
 public:
  virtual ~CurrentSink() = default;
  virtual void onSmCurrent(uint32_t sm, uint64_t firstCycle, uint64_t cycles, double amps) = 0;
  // The activity behind the current of one evaluated cycle (before onSmCurrent), for a sink
  // that wants more than the current (the voltage monitor's predictor features).
  virtual void onSmActivity(uint32_t sm, uint64_t cycle, const sm::SmActivity& a) {
    (void)sm;
    (void)cycle;
    (void)a;
  }
};

// One row of the power time series.
struct PowerSample {
  uint64_t startCycle = 0, cycles = 0;
  std::vector<double> smW;                  // per SM (its blocks and L1D)
  std::array<double, kNumBlocks> blockW{};  // per block, summed over SMs
  double totalW = 0;
};

struct PowerReport {
  uint64_t cycles = 0;
  double seconds = 0;
  double supplyVoltage = 0;
  EnergyBreakdown total;
  std::vector<EnergyBreakdown> perSm;
  std::vector<PowerSample> samples;  // empty when power.sample_cycles is 0
  nlohmann::json parameters;         // derived values worth reporting (break-even times, ...)
};
// Energy and average power of every block (`smBlocksOnly`: of the SM blocks).
nlohmann::json toJson(const EnergyBreakdown& e, double seconds, bool smBlocksOnly = false);
nlohmann::json toJson(const PowerReport& r);

class EnergyModel : public sc_core::sc_module, public sm::ActivityObserver {
 public:
  EnergyModel(const sc_core::sc_module_name& name, const PlatformConfig& cfg);

  const EnergyTable& table() const { return table_; }
  // Another observer that sees every activity report after the model.
  void setDownstream(sm::ActivityObserver* o) { downstream_ = o; }
  void addCurrentSink(CurrentSink* s) { sinks_.push_back(s); }
  void removeCurrentSink(CurrentSink* s) {
    sinks_.erase(std::remove(sinks_.begin(), sinks_.end(), s), sinks_.end());
  }
  // The current of an SM that does nothing but is not gated (leakage and clock), in A.
  double idleSmAmps() const { return smStaticA_; }

  // A launch starts at `startCycle` (core cycles).
  void beginLaunch(uint64_t startCycle);
  // Simulated time has reached `cycle`: every SM's current before it is final and goes to the
  // sinks now (an SM that sleeps still draws the late stages of what it dispatched). The timing
  // engine calls it with the launch's end before the sinks finish the launch.
  void completeBefore(uint64_t cycle);
  // What an SM's report of `cycle` would begin with: completeBefore(cycle) when the model
  // streams (to sinks or a time series).
  void streamBefore(uint64_t cycle) {
    if (!sinks_.empty() || sampleCycles_ > 0) completeBefore(cycle);
  }
  // The next sample boundary after `cycle`, or ~0 when there is no time series.
  uint64_t nextSampleCycle(uint64_t cycle) const;
  // Cumulative counts at a sample boundary (`cycle`), for the time series.
  void sample(uint64_t cycle, const std::vector<CacheEnergyInputs>& l1,
              const UncoreEnergyInputs& uncore);
  // A run limit stopped the launch before `cycle`: the stages booked for later cycles are
  // never drawn (the SMs' counts still hold the instructions they belong to).
  void dropBookedFrom(uint64_t cycle);
  // The launch ended at `endCycle` (exclusive); `sms` and `uncore` are its final counts.
  PowerReport finishLaunch(uint64_t endCycle, const std::vector<SmEnergyInputs>& sms,
                           const UncoreEnergyInputs& uncore);

  void onActivity(uint32_t sm, uint64_t firstCycle, uint64_t cycles,
                  const sm::SmActivity& a) override;

 private:
  void addSmDynamic(uint32_t sm, uint64_t first, uint64_t cycles, double joulesPerCycle);
  // Cycle `c` of SM `sm` (the next one its stream owes) with the energy booked for it; `a`: the
  // activity evaluated in that cycle, if any.
  void emitCycle(uint32_t sm, uint64_t c, const sm::SmActivity* a);
  // Books the stages of activity `a` of SM `sm` in cycle `c`.
  void book(uint32_t sm, uint64_t c, const sm::SmActivity& a);
  void setPendingEnd(uint32_t sm, uint64_t end);
  size_t binOf(uint64_t cycle) const;
  void ensureBins(size_t n) {  // per SM and cycle: the check inline, the growth out of line
    if (smCoreJ_.size() < n) addBins(n);
  }
  void addBins(size_t n);

  const PlatformConfig cfg_;
  const EnergyTable table_;
  const uint32_t numSms_;
  const uint64_t sampleCycles_;
  sm::ActivityObserver* downstream_ = nullptr;
  std::vector<CurrentSink*> sinks_;
  double smStaticA_ = 0;  // current of an ON SM's leakage and clock

  // The stage-distributed stream. Each SM's energy booked for its coming cycles sits in a ring
  // of kRing cycles (a stage ends at most 16 + 32 cycles after its activity, a tensor core's
  // draw at most kMaxTensorDraw cycles after its dispatch); `next` is the
  // first cycle of the SM not handed to the sinks yet, `pendingEnd` one past the last cycle
  // with energy booked. Cycles before `horizon_` are final for every SM.
  static constexpr uint64_t kRing = 256;
  static constexpr uint64_t kMaxTensorDraw = 192;
  static_assert(kRing > 16 + 32 && kRing > kMaxTensorDraw,
                "the ring must hold the longest stage (ExecuteStageConfig) and tensor draw");
  struct Stream {
    uint64_t next = 0, pendingEnd = 0;
    bool pending() const { return pendingEnd > next; }
  };
  std::vector<Stream> streams_;
  std::vector<double> ring_;  // [sm * kRing + cycle % kRing]: J booked for that cycle
  // The SMs with booked energy not handed on yet, as a bit set (bit sm % 64 of word sm / 64):
  // completeBefore visits only them, in SM order, instead of every SM's stream every cycle (most
  // SMs idle in a kernel of few CTAs).
  std::vector<uint64_t> pendingMask_;
  void markPending(uint32_t sm, bool on) {
    const uint64_t bit = 1ull << (sm % 64);
    if (on)
      pendingMask_[sm / 64] |= bit;
    else
      pendingMask_[sm / 64] &= ~bit;
  }
  bool anyPending() const {
    for (uint64_t w : pendingMask_)
      if (w != 0) return true;
    return false;
  }
  // f(sm) for each pending SM in SM order, as the set stood when its word was reached.
  template <class F>
  void forEachPending(F f) const {
    for (size_t w = 0; w < pendingMask_.size(); ++w)
      for (uint64_t b = pendingMask_[w]; b != 0; b &= b - 1)
        f(uint32_t(w * 64 + size_t(__builtin_ctzll(b))));
  }
  uint64_t horizon_ = 0;

  uint64_t start_ = 0;
  // Time series: per bin, the SMs' core dynamic energy (streamed), and the deltas of the
  // sampled counts (L1 per SM, uncore per block).
  std::vector<std::vector<double>> smCoreJ_;  // [bin][sm]
  size_t lastBin_ = 0;  // addSmDynamic's last bin, cycles [lastBinFrom_, lastBinTo_)
  uint64_t lastBinFrom_ = 0, lastBinTo_ = 0;
  std::vector<std::vector<double>> l1J_;                 // [bin][sm]
  std::vector<std::array<double, kNumBlocks>> uncoreJ_;  // [bin][block]
  std::vector<uint64_t> binEnd_;                         // sampled boundaries
  std::vector<double> lastL1J_;  // cumulative dynamic L1 energy per SM at last sample
  std::array<double, kNumBlocks> lastUncoreJ_{};
};

}  // namespace gpusc::power
