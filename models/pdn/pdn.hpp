// The Pdn: the power-delivery network as a SystemC module. It reads every SM's current from the
// energy model (power::CurrentSink), steps the network (PdnNetwork) once per core cycle and hands
// the voltage at every SM's node to the VoltageMonitor.
//
// Timing: the Pdn has no process of its own (it adds no event, so it cannot change the order in
// which the rest of the model runs). An SM's report of cycle c means simulated time has reached
// cycle c, so every earlier cycle is complete: the Pdn then steps the cycles up to c - 1 (an SM
// woken between clock edges still evaluates the cycle in progress, so cycle c itself may get
// more reports). An SM that did not evaluate a cycle (it sleeps while nothing changes) still
// draws the late stages of the instructions it dispatched before: the energy model hands those
// cycles on as soon as time passes them, and reports the rest later, in bulk, as idle; the Pdn
// uses the idle current for a cycle nobody reported, which is what that report says (docs/pdn.md).
// finishLaunch() steps the rest. An SM's current is its core's dynamic power, drawn in the
// cycles its pipeline stages take it, plus its leakage and clock power, divided by the supply
// voltage (power::EnergyModel).
//
// With pdn.monitor.attribution the Pdn also steps one copy of the network per SM, each driven by
// that SM's current alone: by superposition their drops add up to the full drop, and the monitor
// learns which SMs caused each droop (seed 001's spatial analysis). It costs a full network step
// per SM, so it is off by default.
//
// With pdn.step_cycles N > 1 (a detail level) the network is discretised for N core cycles and
// steps once per N: each SM's current is its mean over the N cycles (a window, counted from the
// launch's first cycle; a launch's last, partial window draws the idle current for the cycles
// after its end), and the monitor gets every cycle's voltage interpolated linearly between the
// drops at the ends of the windows, with the cycle's own current and estimate. Droops shorter
// than a few windows are smoothed; the cycle-level model is not affected (nothing reads a
// voltage during a run).
//
// With host threads (Gpu::setHostThreads) the Pdn runs as the team's background work
// (HostWorkers::Background): the simulation thread only gathers each cycle's currents and
// estimates into a ring of cycles, and a waiting worker steps the network and the monitor through
// them in order, one thread at a time, while the simulation goes on. A full ring and a launch's
// end make the simulation thread step what is left itself; a launch that fails drops it
// (abandonLaunch), so that no thread steps it afterwards. The arithmetic and its
// order are the same, so the results are the same bit for bit. The monitor's VoltageSink then
// gets its rows on whichever thread steps them, never two at once; with a VCD file
// (pdn.monitor.vcd_file), which SystemC samples on the simulation thread, the Pdn steps there.
#pragma once

#include <atomic>
#include <cstdint>
#include <exception>
#include <mutex>
#include <vector>

#include <systemc>

#include "common/host_workers.hpp"
#include "common/platform_config.hpp"
#include "pdn/pdn_network.hpp"
#include "pdn/voltage_monitor.hpp"
#include "power/energy_model.hpp"
#include "sm/local_droop_predictor.hpp"

namespace gpusc::pdn {

class Pdn : public sc_core::sc_module, public power::CurrentSink, public HostWorkers::Background {
 public:
  // `idleSmAmps`: the current of an SM that does nothing (leakage and clock).
  Pdn(const sc_core::sc_module_name& name, const PlatformConfig& cfg, double idleSmAmps);

  ~Pdn() override;

  const PdnNetwork& network() const { return net_; }
  VoltageMonitor& monitor() { return monitor_; }

  // A launch's accounted cycles start at `firstCycle` (the network starts from the steady
  // state of idle SMs). `uncoreAmps`: the memory side's current, drawn from the core rail
  // with pdn.uncore_rail shared (ignored with separate).
  void beginLaunch(uint64_t firstCycle, double uncoreAmps);
  // The launch's cycles end before `endCycle` (exclusive): reports of later cycles (SMs woken
  // while the memory system drains) are not stepped. Reports of earlier ones still are: an SM
  // may evaluate the last cycle after the simulation paused at it.
  void endLaunchAt(uint64_t endCycle) { end_ = endCycle; }
  // Steps the cycles not stepped yet before the end and stops.
  VoltageReport finishLaunch();
  // Stops a launch that will not finish (an error), without stepping what is left: once it
  // returns, no thread steps a cycle of it. Does nothing after finishLaunch. Does not throw.
  void abandonLaunch() noexcept;
  // Reports of cycles that were already stepped (their current was taken as idle): 0 unless
  // an SM evaluates a cycle after its middle.
  uint64_t lateReports() const { return lateReports_; }

  // Steps the cycles before `cycle` (what an SM's report of `cycle` begins with): the caller
  // knows no report of an earlier cycle can come.
  void stepBefore(uint64_t cycle) {
    if (!active_ || cycle >= end_) return;
    while (next_ < cycle) stepCycle(next_++);
  }

  // Hands the stepping to the workers' background (`workers`: the team to wake, nullptr: the
  // simulation thread steps the cycles, kBatchCycles at a time). Not during a launch. With a VCD
  // file the Pdn keeps stepping on the simulation thread, every cycle as it completes.
  void setWorkers(HostWorkers* workers);
  bool steppedByWorkers() const { return workers_ != nullptr; }
  // The cycles stepped since the Pdn was made, and how many of them the workers stepped (the
  // rest the simulation thread did).
  uint64_t cyclesStepped() const { return consume_.stepped.load(std::memory_order_relaxed); }
  uint64_t cyclesSteppedByWorkers() const {
    return consume_.byWorkers.load(std::memory_order_relaxed);
  }

  void onSmCurrent(uint32_t sm, uint64_t firstCycle, uint64_t cycles, double amps) override;
  void onSmActivity(uint32_t sm, uint64_t cycle, const sm::SmActivity& a) override;

  // HostWorkers::Background: steps the cycles in the ring.
  bool runSome(const HostWorkers::Interrupt& interrupted) override;
  bool wantsWorker() const override;

 private:
  // Gathers cycle c's currents and estimates and steps it, or puts it in the ring.
  void stepCycle(uint64_t c);
  // Cycle c's booked current and estimate of each SM, into amps[sm] and estimates[sm].
  void gatherCycle(uint64_t c, double* amps, double* estimates);
  // Steps the network and the monitor through n consecutive cycles, cycles[i]'s currents and
  // estimates at amps and estimates + i * numSms_ (the caller holds stepping_ when the workers
  // step). The network steps up to kStepCycles of them at once (PdnNetwork::stepCycles).
  void advance(const uint64_t* cycles, const double* amps, const double* estimates, uint32_t n);
  // Attribution: steps each SM's copy of the network with that SM's current from `amps` alone;
  // the drops it causes at every SM's node go to contrib[src * SMs + sm].
  void stepAttribution(const double* amps, double* contrib);
  // advance() with pdn.step_cycles > 1: the cycles go into the window; each full one is stepped.
  void advanceWindows(const uint64_t* cycles, const double* amps, const double* estimates,
                      uint32_t n);
  // Steps the network through the window's `filled` cycles (pdn.step_cycles of them, or fewer
  // at a launch's end: the rest draw the idle current) and hands the monitor its cycles.
  void closeWindow(uint32_t filled);
  // The drops at the SMs' nodes of the network states as a launch begins (the windows'
  // interpolation starts from them).
  void startWindows(const std::vector<double>& idle);
  // Without workers: steps the cycles gathered in the batch.
  void stepBatch();
  // Whether each cycle is stepped on the simulation thread as it completes: with a VCD file,
  // whose values SystemC samples there as simulated time passes (no workers, no batches).
  bool steppedAsTimePasses() const { return !cfg_.pdn.monitor.vcd_file.empty(); }
  // On the simulation thread: steps every cycle in the ring (and rethrows a worker's error).
  void stepRing();
  // On the simulation thread: copies the staged cycles not yet in the ring into it.
  void flushStage();
  // Steps the ring's slots of gathered cycles [t, t + n), which do not wrap around the ring's
  // end (the caller holds stepping_).
  void advanceSlots(uint64_t t, uint32_t n);
  // On the simulation thread: stepping_, with a worker holding it asked to stop.
  std::unique_lock<std::mutex> takeStepping();
  // Marks every gathered cycle as stepped (the caller holds stepping_, or no worker has the ring).
  void settleRing();

  const PlatformConfig& cfg_;
  const uint32_t numSms_;
  const uint32_t stepCycles_;  // pdn.step_cycles
  const PdnNetwork net_;       // discretised for stepCycles_ core cycles
  VoltageMonitor monitor_;
  const double supply_;
  const double idleAmps_;
  double uncoreAmps_ = 0;
  bool active_ = false;
  uint64_t next_ = 0;         // the next cycle to step
  uint64_t end_ = ~0ull;      // the first cycle after the launch (endLaunchAt)
  uint64_t lateReports_ = 0;  // reports of cycles already stepped (a bug if not 0)
  PdnState state_;
  std::vector<PdnState> perSm_;  // attribution: one network per SM
  // What each SM reported for the cycle being stepped and the next one: [cycle % 2 * SMs + sm],
  // the idle current and no estimate where it reported nothing. A cycle the SM did not evaluate
  // has a current (the late stages of earlier instructions) but no activity, hence no estimate.
  // A report of cycle c steps the cycles before it first, so cycle c - 2's slots were gathered
  // (and set back to the idle values) before c's are written: each cycle's slots are one block.
  std::vector<double> slotAmps_, slotEstimate_;
  std::vector<uint64_t> slotCycle_;  // the cycle each current slot was last written for
  size_t slot(uint32_t sm, uint64_t cycle) const { return (cycle & 1) * numSms_ + sm; }
  std::vector<double> volts_;  // per SM node
  // The power the local droop predictor estimates for each SM's cycle (its features for the
  // training, recorded whether or not smoothing is on).
  sm::LocalDroopPredictor estimator_;
  // pdn.current_spread_cycles: each SM's last booked currents and their sum.
  const uint32_t spread_;
  std::vector<double> history_, historySum_;
  std::vector<double> one_, contrib_;  // attribution scratch: one SM's currents; [src][node]
  std::vector<double> drops_;          // PdnNetwork::kStepCycles cycles' drops, [cycle][sm]

  // pdn.step_cycles > 1 (touched by whoever steps): the window's cycles, their currents and
  // estimates ([cycle][sm]), the currents' sums, and the drops (and with attribution each SM's
  // contributions, [src][sm]) at the end of the last window and the current one.
  uint32_t windowFill_ = 0;
  std::vector<uint64_t> windowCycle_;
  std::vector<double> windowAmps_, windowEstimates_, windowSum_, windowMean_;
  std::vector<double> dropBefore_, dropAfter_, contribBefore_, contribAfter_, nodeScratch_;

  // Stepping on the simulation thread (no workers): the cycles are gathered kBatchCycles at a
  // time and stepped together, and the rest when the launch finishes. The network is an
  // observer (nothing in the model reads a voltage during a run), so only the order of the
  // monitor's samples matters, which batching keeps. With a VCD file, which SystemC samples as
  // simulated time passes, every cycle is stepped as it completes (batchCycles_ 1).
  static constexpr uint32_t kBatchCycles = 16;
  uint32_t batchCycles_ = 1, batched_ = 0;
  std::vector<uint64_t> batchCycle_;
  std::vector<double> batchAmps_, batchEstimates_;

  // Stepping by the workers: the ring of cycles (ringCycles_ a power of two) the simulation
  // thread has gathered, [sm] per cycle in ringAmps_ and ringEstimates_. Cycles
  // [consume_.tail, gather_.next) wait, those before produce_.head for the workers too; whoever
  // holds stepping_ steps them and advances consume_.tail (every kPublish cycles, and when it
  // stops). Each side keeps the other's index as it last read it, so the two cache lines move
  // between the cores only every so many cycles.
  // The simulation thread gathers a block of kPublish cycles in stageCycle_, stageAmps_ and
  // stageEstimates_ (the same layout), on its own core, and copies it into the ring (whose
  // blocks start on cache lines) with non-temporal stores when it publishes it (flushStage).
  static constexpr uint64_t kPublish = 16;
  HostWorkers* workers_ = nullptr;
  uint32_t ringCycles_ = 0, wakeDepth_ = 0;
  uint64_t* ringCycle_ = nullptr;  // into ringCycleStore_, on a 64-byte boundary
  double* ringAmps_ = nullptr;     // likewise
  double* ringEstimates_ = nullptr;
  std::vector<uint64_t> ringCycleStore_, stageCycle_;
  std::vector<double> ringAmpsStore_, ringEstimatesStore_, stageAmps_, stageEstimates_;
  struct alignas(64) {      // the simulation thread's alone
    uint64_t next = 0;      // the cycles gathered
    uint64_t flushed = 0;   // the cycles copied into the ring
    uint64_t tailSeen = 0;  // consume_.tail as last read
  } gather_;
  struct alignas(64) {
    std::atomic<uint64_t> head{0};     // gather_.next, published every kPublish cycles
    std::atomic<bool> failed{false};   // a worker's step threw
    std::atomic<bool> waiting{false};  // the simulation thread waits for stepping_
  } produce_;
  struct alignas(64) {  // whoever holds stepping_
    std::atomic<uint64_t> tail{0};
    uint64_t headSeen = 0;
    std::exception_ptr error;  // what a worker's step threw
    std::atomic<uint64_t> stepped{0}, byWorkers{0};
  } consume_;
  std::mutex stepping_;
};

}  // namespace gpusc::pdn
