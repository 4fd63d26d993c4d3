// The VoltageMonitor: watches the supply voltage at every SM's node, cycle by cycle, for one
// launch at a time. It hands every sample to a DroopAnalyzer (events above the thresholds,
// emergencies, first/second-order and local/global classification, histogram, traces) and,
// when pdn.monitor.vcd_file names a file, traces each SM's voltage and current into a VCD file
// through sc_trace. The Pdn steps a cycle when simulated time has passed it, so cycle c's values
// appear at the start of cycle c + 1, and a stretch in which no SM evaluated a cycle appears at
// once, with the values of its last cycle.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <systemc>

#include "common/platform_config.hpp"
#include "pdn/droop_analyzer.hpp"

namespace gpusc::pdn {

// What a launch's voltage looked like: the analyzer's summary, its droop events, voltage trace
// and worst-droop window, and the histogram as CSV text. Without a VoltageSink all of it is kept;
// with one, the events and the trace stay empty (the sink got their rows) and so do the
// worst-droop window's fields (the sink saw them in finishLaunch), so that a launch record does
// not grow with the launch's length. eventsCsv(), traceCsv() and worstWindowCsv() below make the
// CSV text of the lists when it is asked for.
// The PDN is a linear network: its voltages follow the currents however large they are. A droop
// of more than half the supply is beyond what it models (no chip keeps switching that far
// down), and means the power parameters give currents no chip draws; reports say so.
constexpr double kLinearModelDroopLimitPct = 50.0;

struct VoltageReport {
  nlohmann::json summary;  // DroopAnalyzer::summary() plus the network's parameters
  uint32_t numSms = 0;
  double supplyVoltage = 0;
  double minVoltage = 0;
  double worstDroopPct = 0;
  bool beyondModel() const { return worstDroopPct > kLinearModelDroopLimitPct; }
  uint32_t worstSm = 0;
  uint64_t worstCycle = 0;
  uint64_t emergencies = 0;
  std::vector<uint64_t> eventsAbove;  // per pdn.monitor.thresholds_pct
  std::string histogramCsv;
  // The classified droop events (the first pdn.monitor.max_events), in order.
  std::vector<DroopEvent> events;
  // The voltage trace: row r covers cycles [traceStart[r], + traceCycles[r]) and holds each SM's
  // minimum voltage at traceMinVolts[r * numSms + s].
  std::vector<uint64_t> traceStart;
  std::vector<uint32_t> traceCycles;
  std::vector<double> traceMinVolts;
  // Around the worst droop: the cycles, and each SM's voltage and current at them ([sm][i]).
  std::vector<uint64_t> windowCycles;
  std::vector<std::vector<double>> windowVolts, windowAmps;
};
// The report's lists as the CSV files droops.csv, voltage.csv and worst_droop.csv hold them (each
// with its header line; a launch without the list gives the header alone, and worstWindowCsv an
// empty text).
std::string eventsCsv(const VoltageReport& r);
std::string traceCsv(const VoltageReport& r);
std::string worstWindowCsv(const VoltageReport& r);
nlohmann::json toJson(const VoltageReport& r);

// Where a run's voltage detail goes as it is produced (VoltageMonitor::setSink,
// Device::setVoltageSink): each launch's droop events and voltage-trace rows (DroopSink), and its
// report with the worst-droop window before the launch record keeps it without that window.
class VoltageSink : public DroopSink {
 public:
  // A launch starts; `launch` is the index its record will have in Device::launches().
  virtual void beginLaunch(size_t launch) = 0;
  // Whether the sink takes the worst-droop window of the launch ending now, whose worst droop is
  // `worstDroopPct`: asked just before finishLaunch, whose report has the window fields only when
  // the answer is yes (they are not even made otherwise). A sink answering yes may let go of a
  // window it holds at once. Default: yes.
  virtual bool takesWindow(double worstDroopPct) {
    (void)worstDroopPct;
    return true;
  }
  // The launch's report, complete; it may take the window fields (windowCycles, windowVolts,
  // windowAmps), which are cleared afterwards in any case.
  virtual void finishLaunch(VoltageReport& report) = 0;
};

class VoltageMonitor : public sc_core::sc_module {
 public:
  VoltageMonitor(const sc_core::sc_module_name& name, const PlatformConfig& cfg, GridLayout layout);
  ~VoltageMonitor() override;

  // Sends the following launches' events, trace rows and worst-droop windows to `sink`
  // (nullptr: they are kept in the reports). `sink` must outlive its use.
  void setSink(VoltageSink* sink) { sink_ = sink; }
  VoltageSink* sink() const { return sink_; }

  void beginLaunch();
  // One core cycle's voltages and currents at every SM's node, and the power the local droop
  // predictor estimates for each SM (W).
  void sample(uint64_t cycle, const double* smVolts, const double* smAmps,
              const double* smEstimateW);
  // The drop at every SM node caused by each SM (pdn.monitor.attribution).
  void attribute(const double* contrib) { analyzer_->attribute(contrib); }
  VoltageReport finishLaunch(const nlohmann::json& network);
  bool attribution() const { return cfg_.pdn.monitor.attribution; }
  // Closes the VCD file (pdn.monitor.vcd_file) now; later samples are not traced.
  void closeVcd();

 private:
  const PlatformConfig& cfg_;
  const GridLayout layout_;
  const uint32_t numSms_;
  std::unique_ptr<DroopAnalyzer> analyzer_;
  VoltageSink* sink_ = nullptr;
  VoltageSink* launchSink_ = nullptr;  // sink_ when the launch began
  sc_core::sc_trace_file* vcd_ = nullptr;
  std::vector<double> traceVolts_, traceAmps_;  // what the VCD file traces
};

}  // namespace gpusc::pdn
