#include "pdn/voltage_files.hpp"

#include <utility>
#include <vector>

#include <fmt/format.h>

namespace gpusc::pdn {

VoltageFiles::VoltageFiles(std::filesystem::path folder, uint32_t numSms, size_t bufferBytes)
    : folder_(std::move(folder)), numSms_(numSms), bufferBytes_(bufferBytes) {}

void VoltageFiles::beginLaunch(size_t launch) {
  launch_ = launch;
  prefix_ = fmt::format("{},", launch);
  if (droops_) return;
  trace_ = std::make_unique<StreamedFile>((folder_ / "voltage.csv").string(), bufferBytes_);
  droops_ = std::make_unique<StreamedFile>((folder_ / "droops.csv").string(), bufferBytes_);
  trace_->write("launch," + DroopAnalyzer::traceCsvHeader(numSms_));
  droops_->write("launch," + DroopAnalyzer::eventsCsvHeader());
}

void VoltageFiles::droopEvent(const DroopEvent& e) {
  row_.assign(prefix_);
  DroopAnalyzer::appendEventCsvRow(row_, e);
  droops_->write(row_);
}

void VoltageFiles::traceRow(uint64_t startCycle, uint32_t cycles, const double* smMinVolts) {
  row_.assign(prefix_);
  DroopAnalyzer::appendTraceCsvRow(row_, startCycle, cycles, smMinVolts, numSms_);
  trace_->write(row_);
}

bool VoltageFiles::takesWindow(double worstDroopPct) {
  if (worst_ && !(worstDroopPct > worst_->worstDroopPct)) return false;
  if (worst_) {  // replaced by the coming launch's (finishLaunch): its window is not needed
    worst_->windowCycles = std::vector<uint64_t>();
    worst_->windowVolts = worst_->windowAmps = std::vector<std::vector<double>>();
  }
  return true;
}

void VoltageFiles::finishLaunch(VoltageReport& report) {
  if (worst_ && !(report.worstDroopPct > worst_->worstDroopPct)) return;
  // The figures of the worst droop and its window; not the summary, which the record keeps.
  VoltageReport w;
  w.numSms = report.numSms;
  w.supplyVoltage = report.supplyVoltage;
  w.minVoltage = report.minVoltage;
  w.worstDroopPct = report.worstDroopPct;
  w.worstSm = report.worstSm;
  w.worstCycle = report.worstCycle;
  w.emergencies = report.emergencies;
  w.eventsAbove = report.eventsAbove;
  w.windowCycles = std::move(report.windowCycles);
  w.windowVolts = std::move(report.windowVolts);
  w.windowAmps = std::move(report.windowAmps);
  worst_ = std::move(w);
  worstLaunch_ = launch_;
}

void VoltageFiles::commit() {
  if (trace_) trace_->commit();
  if (droops_) droops_->commit();
}

const VoltageReport* VoltageFiles::worst(size_t* launch) const {
  if (!worst_) return nullptr;
  if (launch) *launch = worstLaunch_;
  return &*worst_;
}

}  // namespace gpusc::pdn
