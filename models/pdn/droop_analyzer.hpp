// Droop analysis of the voltage monitor (seed 001, sections 3.2, 3.3 and 3.5), in plain C++: it
// consumes one sample per core cycle (every SM node's voltage and current) and finds droop
// events, classifies each one temporally and spatially, and keeps the traces for plots.
//
// Droop events. An event starts in the first cycle in which some SM's droop
// (supply - V) / supply exceeds the first threshold and lasts until every SM is back below
// (first threshold - hysteresis); [start, end] are its first and last cycles. Its magnitude is
// the worst droop of any SM during it (that SM and cycle are the event's worst). Emergencies are
// counted separately as excursions of any SM below supply * (1 - emergency margin), with the same
// hysteresis.
//
// Temporal classification (first- vs second-order, section 3.2). The worst SM's drop trace over
// [worst - window_before, worst + window_after] (cut by the run's start and end) goes through a
// zero-phase low-pass filter: a 2nd-order Butterworth at lowpass_mhz (bilinear transform with
// pre-warping), run forward and then backward, so the combined response is |H(f)|^2 =
// 1 / (1 + (f/fc)^4) with no phase shift. The window's edges are extended with their edge values
// (the forward pass starts in the steady state of the first sample; the end is padded with the
// last sample until the filter has settled, and the backward pass starts in the steady state
// there). The second-order component of the droop is the low-passed drop at the worst cycle, the
// first-order component the rest. The filter passes DC with unit gain, so the static (IR) drop
// under the average current is part of the second-order component, as in the paper, which
// low-passes the voltage trace itself. A droop is first-order (second-order) dominant when that
// component is more than `dominance` of the droop, balanced otherwise. The decomposition waits
// until window_after cycles after the worst cycle have arrived (or finish()).
//
// Spatial classification (section 3.3). An SM sees an event when its own worst droop during the
// event is at least see_fraction x the event's magnitude. Cluster 1: only the worst SM sees it;
// cluster 4: every SM that sees it lies in one 2x2 block of the layout that contains the worst
// SM's node; otherwise cluster "all". Cluster 1 and 4 are local, "all" is global. With
// attribution (the PDN's superposition of per-SM responses), the event also records which share
// of the worst SM's drop at the worst cycle the worst SM caused alone, the best 2x2 block
// containing it, and all SMs together (about 1 unless other loads draw from the grid).
//
// Cost: sample() does O(numSms) work per cycle (twice that inside an event, for the per-SM worst
// droops) and allocates only to store a classified event or a finished trace row (amortised
// vector growth); a decomposition costs O(window) once per event (once per window_after cycles
// for an event whose worst keeps growing). Measured: ~30 ns per cycle for 15 SMs at -O2.
#pragma once

#include <cstdint>
#include <deque>
#include <iosfwd>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/monitor_config.hpp"

namespace gpusc::pdn {

// Where the SMs sit on the PDN grid: SM i is at node nodeOfSm[i] = row * cols + col. An empty
// nodeOfSm places SM i at node i.
struct GridLayout {
  uint32_t rows = 0, cols = 0;
  std::vector<uint32_t> nodeOfSm;
};

enum class DroopClass : uint8_t { FirstOrder, SecondOrder, Balanced };
inline constexpr size_t kNumDroopClasses = 3;
// "first-order", "second-order", "balanced"
const char* toString(DroopClass c);

struct DroopEvent {
  uint64_t start = 0;           // first cycle above the first threshold
  uint64_t end = 0;             // last cycle of the event (inclusive)
  uint64_t worstCycle = 0;      // cycle of the worst droop
  uint32_t worstSm = 0;         // SM of the worst droop
  double droopPct = 0.0;        // the worst droop, % of the supply
  double firstOrderPct = 0.0;   // first-order component of droopPct (droopPct - secondOrderPct)
  double secondOrderPct = 0.0;  // low-passed drop at the worst cycle (includes the IR drop)
  DroopClass cls = DroopClass::Balanced;
  uint32_t smsSeeing = 0;     // SMs whose worst droop in the event is >= see_fraction x droopPct
  uint32_t cluster = 0;       // 1, 4, or 0 = all
  bool local = false;         // cluster 1 or 4
  bool attributed = false;    // the shares below are valid (attribute() was called at worstCycle)
  double shareSelf = 0.0;     // share of the worst SM's drop caused by the worst SM alone
  double shareCluster = 0.0;  // ... by the best 2x2 block containing it
  double shareAll = 0.0;      // ... by all SMs
  bool truncated = false;     // the classification window was cut by the run's start or end
  // The largest rises of the worst SM's estimated power (the local predictor's input) over 2, 3
  // and 4 cycles, in the lead_cycles cycles before the worst cycle, in W.
  double rise[3] = {0.0, 0.0, 0.0};
};

// Where a DroopAnalyzer's events and voltage-trace rows go as they are produced, instead of into
// its lists (events(), traceStart(), ... then stay empty): with a sink, the analyzer's memory does
// not grow with the run's length.
class DroopSink {
 public:
  virtual ~DroopSink() = default;
  // A classified event: the first max_events of them, in order.
  virtual void droopEvent(const DroopEvent& e) = 0;
  // A voltage-trace row: cycles [startCycle, startCycle + cycles), each SM's minimum voltage.
  virtual void traceRow(uint64_t startCycle, uint32_t cycles, const double* smMinVolts) = 0;
};

class DroopAnalyzer {
 public:
  // `cfg` is checked again here (InputError naming the key). The low-pass cut-off must be below
  // 0.45 x coreClockHz. Throws InputError for a bad layout (an SM outside the grid).
  DroopAnalyzer(const VoltageMonitorConfig& cfg, uint32_t numSms, double supplyV,
                double coreClockHz, GridLayout layout);

  // Sends events and trace rows to `sink` from now on (nullptr: keeps them in the lists again).
  void setSink(DroopSink* sink) { sink_ = sink; }

  // One core cycle: every SM node's voltage (V) and current (A), numSms values each. Cycles must
  // be consecutive (InternalError otherwise, and after finish()).
  // `smEstimateW` (optional): the power the local droop predictor estimates for each SM.
  void sample(uint64_t cycle, const double* smVolts, const double* smAmps,
              const double* smEstimateW = nullptr);
  // True when the last sample was a new worst of the open event, i.e. when attribute() for this
  // cycle would be used (callers may skip building the contributions otherwise).
  bool wantsAttribution() const { return wantAttr_; }
  // Optional spatial attribution for the cycle of the last sample(): contrib[src * numSms + node]
  // is the drop (V) at SM `node` caused by SM `src` alone (superposition).
  void attribute(const double* contrib);
  // Closes the open event and classifies every pending one with the window it has; completes
  // the worst-droop window and the voltage trace. Idempotent.
  void finish();

  // ---- results -----------------------------------------------------------------------------
  uint32_t numSms() const { return n_; }
  double supplyVoltage() const { return supply_; }
  uint64_t cycles() const { return samples_; }  // samples taken
  // Lowest voltage of any SM (the supply before any sample) and the worst droop,
  // 100 (supply - minVoltage()) / supply, with its SM and cycle.
  double minVoltage() const { return samples_ ? minV_ : supply_; }
  double worstDroopPct() const { return samples_ ? 100.0 * worst_ : 0.0; }
  uint32_t worstSm() const { return worstSm_; }
  uint64_t worstCycle() const { return worstCycle_; }
  // Classified events (all of them after finish()); events above threshold k; cycles in which
  // the worst SM's droop exceeded threshold k.
  uint64_t eventCount() const { return finalized_; }
  uint64_t eventsAbove(size_t thresholdIndex) const;
  uint64_t cyclesAbove(size_t thresholdIndex) const;
  // Classified events above threshold k with class c, and local (cluster 1 or 4) ones.
  uint64_t classCount(size_t thresholdIndex, DroopClass c) const;
  uint64_t localCount(size_t thresholdIndex) const;
  // Large droops (>= large_droop_pct) in total and by class.
  uint64_t largeCount() const { return large_.events; }
  uint64_t largeClassCount(DroopClass c) const { return large_.byClass[size_t(c)]; }
  uint64_t emergencies() const { return emergencies_; }
  uint64_t emergencyCycles() const { return emergencyCycles_; }
  // The first max_events classified events, in order (without a sink); how many were listed
  // (kept or sent to the sink).
  const std::vector<DroopEvent>& events() const { return events_; }
  uint64_t eventsListed() const { return listed_; }
  // Event magnitudes: count of bin b covers [b, b+1) x histogram_bin_pct (the last bin is open).
  const std::vector<uint64_t>& histogram() const { return histogram_; }
  double histogramBinPct() const { return cfg_.histogram_bin_pct; }

  // Per-SM voltage and current around the overall worst droop: `length` consecutive cycles from
  // firstCycle, value of SM s at row t is at [t * numSms + s]. Complete once window_after cycles
  // after the worst have arrived, or after finish().
  struct Window {
    uint64_t firstCycle = 0;
    uint32_t length = 0;
    std::vector<double> volts, amps;
  };
  const Window& worstWindow() const { return window_; }

  // Voltage trace (without a sink): row r covers cycles [traceStart()[r], + traceCycles()[r]) (bins
  // aligned to multiples of trace_every) and holds each SM's minimum voltage at [r * numSms + s].
  const std::vector<uint64_t>& traceStart() const { return traceStart_; }
  const std::vector<uint32_t>& traceCycles() const { return traceCycles_; }
  const std::vector<double>& traceMinVolts() const { return traceMin_; }
  // Hand the event list and the voltage trace over (they are left empty), for a caller done with
  // the analyzer.
  std::vector<DroopEvent> takeEvents() { return std::move(events_); }
  void takeTrace(std::vector<uint64_t>& start, std::vector<uint32_t>& cycles,
                 std::vector<double>& minVolts) {
    start = std::move(traceStart_);
    cycles = std::move(traceCycles_);
    minVolts = std::move(traceMin_);
  }

  nlohmann::json summary() const;
  void writeEventsCsv(std::ostream& os) const;
  void writeTraceCsv(std::ostream& os) const;
  void writeWorstWindowCsv(std::ostream& os) const;
  void writeHistogramCsv(std::ostream& os) const;
  // The CSV files' header lines and rows (appended with '\n'), as write*Csv write them.
  static std::string eventsCsvHeader();
  static void appendEventCsvRow(std::string& out, const DroopEvent& e);
  static std::string traceCsvHeader(uint32_t numSms);
  static void appendTraceCsvRow(std::string& out, uint64_t startCycle, uint32_t cycles,
                                const double* smMinVolts, uint32_t numSms);
  // The worst-droop window's CSV: `length` rows from firstCycle (offsets from worstCycle);
  // volt(t, s) and amp(t, s) are SM s's voltage and current at row t.
  template <class Volt, class Amp>
  static std::string windowCsv(uint32_t numSms, uint64_t firstCycle, uint32_t length,
                               uint64_t worstCycle, Volt volt, Amp amp) {
    std::string out = windowCsvHeader(numSms);
    out.reserve(out.size() + size_t(length) * (24 + 2 * numSms * 12));
    for (uint32_t t = 0; t < length; ++t) {
      appendWindowCsvRow(out, firstCycle + t, worstCycle);
      for (uint32_t s = 0; s < numSms; ++s) {
        out += ',';
        appendNum(out, volt(t, s));
      }
      for (uint32_t s = 0; s < numSms; ++s) {
        out += ',';
        appendNum(out, amp(t, s));
      }
      out += '\n';
    }
    return out;
  }
  // A value as every CSV here writes it: up to 9 significant digits ("{:.9g}").
  static void appendNum(std::string& out, double v);

 private:
  struct Counts {
    uint64_t events = 0;
    uint64_t byClass[kNumDroopClasses] = {0, 0, 0};
    uint64_t local = 0;
    double worstPct[kNumDroopClasses] = {0, 0, 0};  // largest magnitude per class
    // attribution shares summed over attributed events, per class
    uint64_t attributed[kNumDroopClasses] = {0, 0, 0};
    double sumSelf[kNumDroopClasses] = {0, 0, 0};
    double sumCluster[kNumDroopClasses] = {0, 0, 0};
    double sumAll[kNumDroopClasses] = {0, 0, 0};
    void add(const DroopEvent& e);
    nlohmann::json toJson(double thresholdPct) const;
  };
  struct Pending {
    DroopEvent ev;
    double frac = 0.0;  // the worst droop as a fraction (thresholds are compared with it)
    bool decomposed = false;
  };

  size_t slot(uint64_t cycle) const { return size_t(cycle % ring_); }
  // Splits the drop of SM `sm` at `worst` into first- and second-order parts (fractions of the
  // supply) over the window available now; returns whether the window was cut by the run.
  bool decompose(uint32_t sm, uint64_t worst, double& first, double& second);
  void classify(DroopEvent& e, double first, double second) const;
  void closeEvent(uint64_t end);
  void spatial(DroopEvent& e) const;
  void finalize(Pending& p);
  void leadRises(DroopEvent& e) const;
  void processMaturities(uint64_t cycle);
  void captureWorstWindow();
  void flushTraceRow();
  bool inBlock(uint32_t node, uint32_t r0, uint32_t c0, uint32_t h, uint32_t w) const;
  template <class F>
  void forEachBlock(uint32_t node, F&& f) const;
  static std::string windowCsvHeader(uint32_t numSms);
  // A window row's first two columns: the cycle and its offset from worstCycle.
  static void appendWindowCsvRow(std::string& out, uint64_t cycle, uint64_t worstCycle);

  VoltageMonitorConfig cfg_;
  uint32_t n_;
  double supply_;
  double invSupply_;
  double clockHz_;
  GridLayout layout_;
  std::vector<double> thr_;  // thresholds as fractions
  double endBelow_;          // an event ends below this droop (fraction)
  double emergency_;         // emergency droop (fraction)
  double emergencyEnd_;

  // low-pass (2nd-order Butterworth, direct form I)
  double b0_ = 0, b1_ = 0, b2_ = 0, a1_ = 0, a2_ = 0;
  uint32_t pad_ = 0;
  std::vector<double> work_;

  // ring buffers of the last ring_ cycles: [slot * n + sm]
  uint32_t ring_;
  size_t ringPos_ = 0;  // slot of the last sample
  std::vector<double> ringV_, ringI_, ringE_;
  std::vector<double> droop_;  // this cycle's droops (fractions)

  bool started_ = false, finished_ = false;
  uint64_t firstCycle_ = 0, lastCycle_ = 0, samples_ = 0;

  // overall
  double minV_;
  double worst_ = 0.0;
  uint32_t worstSm_ = 0;
  uint64_t worstCycle_ = 0;
  bool windowPending_ = false;
  Window window_;
  std::vector<uint64_t> cyclesAbove_;
  uint64_t emergencies_ = 0, emergencyCycles_ = 0;
  bool inEmergency_ = false;

  // the open event
  bool open_ = false;
  DroopEvent cur_;
  double curWorst_ = 0.0;        // the open event's worst droop (fraction)
  std::vector<double> smWorst_;  // per-SM worst droop in the open event
  bool wantAttr_ = false;
  bool attrValid_ = false;
  std::vector<double> attrColumn_;  // contributions of each SM to the worst SM's drop (V)
  bool curDecomposed_ = false;      // the decomposition of cur_'s current worst is done
  double curFirst_ = 0, curSecond_ = 0;
  bool curTruncated_ = false;

  std::deque<Pending> pending_;  // closed events waiting for window_after cycles

  // classified events
  uint64_t finalized_ = 0;
  std::vector<Counts> perThreshold_;
  Counts large_;
  std::vector<uint64_t> histogram_;
  std::vector<DroopEvent> events_;
  uint64_t listed_ = 0;
  DroopSink* sink_ = nullptr;

  // voltage trace
  bool traceOpen_ = false;
  uint64_t traceBinStart_ = 0;
  uint32_t traceBinCycles_ = 0;
  std::vector<double> traceCur_;
  std::vector<uint64_t> traceStart_;
  std::vector<uint32_t> traceCycles_;
  std::vector<double> traceMin_;
};

}  // namespace gpusc::pdn
