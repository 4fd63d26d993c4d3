// The voltage detail of a whole run written while it runs: a VoltageSink that streams every
// launch's droop events into droops.csv and its voltage trace into voltage.csv (the files of
// `gpusc run`, docs/pdn.md: each row led by the launch's index, one header), through bounded
// buffers, and keeps only the worst launch's worst-droop window (for worst_droop.csv and the
// plot). What it holds does not grow with the run's length.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "common/file_io.hpp"
#include "pdn/voltage_monitor.hpp"

namespace gpusc::pdn {

class VoltageFiles : public VoltageSink {
 public:
  // The files go into `folder` when the first launch begins (InputError naming the file when
  // it cannot be created); `numSms` gives voltage.csv's columns; each file buffers up to
  // `bufferBytes`.
  VoltageFiles(std::filesystem::path folder, uint32_t numSms, size_t bufferBytes = size_t(1) << 16);

  void beginLaunch(size_t launch) override;
  void droopEvent(const DroopEvent& e) override;
  void traceRow(uint64_t startCycle, uint32_t cycles, const double* smMinVolts) override;
  // Yes for a launch worse than every earlier one (then the earlier worst window goes at once).
  bool takesWindow(double worstDroopPct) override;
  void finishLaunch(VoltageReport& report) override;

  // Whether any launch began, i.e. whether there are files to commit.
  bool any() const { return droops_ != nullptr; }
  // Completes voltage.csv and droops.csv (InputError naming a file that could not be written).
  void commit();
  // The worst droop of the launches so far (the first of equals, as worstVoltageLaunch): that
  // launch's report without its summary (the figures and the window fields), and its index;
  // null before any launch finished.
  const VoltageReport* worst(size_t* launch = nullptr) const;

 private:
  std::filesystem::path folder_;
  uint32_t numSms_;
  size_t bufferBytes_;
  size_t launch_ = 0;
  std::string prefix_;  // "<launch>,"
  std::string row_;     // the row being written
  std::unique_ptr<StreamedFile> droops_, trace_;
  std::optional<VoltageReport> worst_;
  size_t worstLaunch_ = 0;
};

}  // namespace gpusc::pdn
