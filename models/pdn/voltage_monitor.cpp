#include "pdn/voltage_monitor.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <sstream>

#include <fmt/format.h>

#include "common/error.hpp"

namespace gpusc::pdn {

nlohmann::json toJson(const VoltageReport& r) { return r.summary; }

std::string eventsCsv(const VoltageReport& r) {
  std::string out = DroopAnalyzer::eventsCsvHeader();
  for (const DroopEvent& e : r.events) DroopAnalyzer::appendEventCsvRow(out, e);
  return out;
}

std::string traceCsv(const VoltageReport& r) {
  std::string out = DroopAnalyzer::traceCsvHeader(r.numSms);
  for (size_t i = 0; i < r.traceStart.size(); ++i)
    DroopAnalyzer::appendTraceCsvRow(out, r.traceStart[i], r.traceCycles[i],
                                     r.traceMinVolts.data() + i * r.numSms, r.numSms);
  return out;
}

std::string worstWindowCsv(const VoltageReport& r) {
  if (r.windowCycles.empty() && r.windowVolts.empty()) return {};
  return DroopAnalyzer::windowCsv(
      r.numSms, r.windowCycles.empty() ? 0 : r.windowCycles.front(),
      static_cast<uint32_t>(r.windowCycles.size()), r.worstCycle,
      [&](uint32_t t, uint32_t s) { return r.windowVolts[s][t]; },
      [&](uint32_t t, uint32_t s) { return r.windowAmps[s][t]; });
}

VoltageMonitor::VoltageMonitor(const sc_core::sc_module_name& name, const PlatformConfig& cfg,
                               GridLayout layout)
    : sc_core::sc_module(name),
      cfg_(cfg),
      layout_(std::move(layout)),
      numSms_(cfg.gpu.num_sms),
      traceVolts_(numSms_, cfg.power.supply_voltage),
      traceAmps_(numSms_, 0.0) {
  std::string path = cfg.pdn.monitor.vcd_file;
  if (path.empty()) return;
  // sc_create_vcd_trace_file appends ".vcd".
  if (path.size() > 4 && path.compare(path.size() - 4, 4, ".vcd") == 0)
    path.resize(path.size() - 4);
  // SystemC opens the file only at the first traced time step, and reports a file it cannot
  // create from inside sc_start, as an error of no process: try it here, where the key is known.
  if (std::FILE* f = std::fopen((path + ".vcd").c_str(), "w"))
    std::fclose(f);
  else
    throw InputError(fmt::format("pdn.monitor.vcd_file: cannot create '{}.vcd': {}", path,
                                 std::strerror(errno)));
  vcd_ = sc_core::sc_create_vcd_trace_file(path.c_str());
  if (!vcd_) throw InputError(fmt::format("pdn.monitor.vcd_file: cannot create '{}.vcd'", path));
  // The simulation's resolution: a clock period (1 428 571 fs at 700 MHz) is exact in it.
  vcd_->set_time_unit(1, sc_core::SC_FS);
  const auto& m = cfg.pdn.monitor;
  std::vector<uint32_t> sms = m.vcd_sms;
  if (sms.empty())
    for (uint32_t i = 0; i < numSms_; ++i) sms.push_back(i);
  std::vector<bool> listed(numSms_, false);
  for (uint32_t i : sms) {
    if (i >= numSms_)
      throw InputError(
          fmt::format("pdn.monitor.vcd_sms: sm{} does not exist (gpu.num_sms = {})", i, numSms_));
    if (listed[i])
      throw InputError(fmt::format(
          "pdn.monitor.vcd_sms: sm{} is listed twice (the VCD would hold its signals twice)", i));
    listed[i] = true;
    if (m.vcd_signals != "amps")
      sc_core::sc_trace(vcd_, traceVolts_[i], fmt::format("sm{}_volts", i));
    if (m.vcd_signals != "volts")
      sc_core::sc_trace(vcd_, traceAmps_[i], fmt::format("sm{}_amps", i));
  }
}

VoltageMonitor::~VoltageMonitor() { closeVcd(); }

void VoltageMonitor::closeVcd() {
  if (vcd_) sc_core::sc_close_vcd_trace_file(vcd_);
  vcd_ = nullptr;
}

void VoltageMonitor::beginLaunch() {
  analyzer_ = std::make_unique<DroopAnalyzer>(cfg_.pdn.monitor, numSms_, cfg_.power.supply_voltage,
                                              cfg_.gpu.clocks.core_mhz * 1e6, layout_);
  launchSink_ = sink_;
  analyzer_->setSink(launchSink_);
}

void VoltageMonitor::sample(uint64_t cycle, const double* smVolts, const double* smAmps,
                            const double* smEstimateW) {
  analyzer_->sample(cycle, smVolts, smAmps, smEstimateW);
  // Outside the window the traced values stay as they are, so the VCD records no change.
  const auto& m = cfg_.pdn.monitor;
  if (vcd_ && cycle >= m.vcd_start_cycle && (m.vcd_end_cycle == 0 || cycle < m.vcd_end_cycle)) {
    std::copy(smVolts, smVolts + numSms_, traceVolts_.begin());
    std::copy(smAmps, smAmps + numSms_, traceAmps_.begin());
  }
}

VoltageReport VoltageMonitor::finishLaunch(const nlohmann::json& network) {
  DroopAnalyzer& a = *analyzer_;
  a.finish();
  VoltageReport r;
  r.summary = a.summary();
  r.summary["network"] = network;
  r.supplyVoltage = cfg_.power.supply_voltage;
  r.minVoltage = a.minVoltage();
  r.worstDroopPct = a.worstDroopPct();
  r.worstSm = a.worstSm();
  r.worstCycle = a.worstCycle();
  r.emergencies = a.emergencies();
  for (size_t i = 0; i < cfg_.pdn.monitor.thresholds_pct.size(); ++i)
    r.eventsAbove.push_back(a.eventsAbove(i));
  std::ostringstream hi;
  a.writeHistogramCsv(hi);
  r.histogramCsv = hi.str();
  r.numSms = numSms_;
  if (!launchSink_) {  // else the sink has had their rows
    r.events = a.takeEvents();
    a.takeTrace(r.traceStart, r.traceCycles, r.traceMinVolts);
  }
  // With a sink, the window is made only for a launch whose window the sink takes (the worst so
  // far), so that no more than one is held at a time.
  if (!launchSink_ || launchSink_->takesWindow(r.worstDroopPct)) {
    const DroopAnalyzer::Window& w = a.worstWindow();
    r.windowVolts.assign(numSms_, {});
    r.windowAmps.assign(numSms_, {});
    r.windowCycles.reserve(w.length);
    for (uint32_t s = 0; s < numSms_; ++s) {
      r.windowVolts[s].reserve(w.length);
      r.windowAmps[s].reserve(w.length);
    }
    for (uint32_t t = 0; t < w.length; ++t) {
      r.windowCycles.push_back(w.firstCycle + t);
      for (uint32_t s = 0; s < numSms_; ++s) {
        r.windowVolts[s].push_back(w.volts[size_t(t) * numSms_ + s]);
        r.windowAmps[s].push_back(w.amps[size_t(t) * numSms_ + s]);
      }
    }
  }
  if (launchSink_) {
    launchSink_->finishLaunch(r);
    r.windowCycles = std::vector<uint64_t>();
    r.windowVolts = r.windowAmps = std::vector<std::vector<double>>();
  }
  analyzer_.reset();  // its ring buffers and window: the next launch makes its own
  return r;
}

}  // namespace gpusc::pdn
