// The voltage side of the command-line tool: the supply-voltage summary and result files of a
// run, and `gpusc pdn`, which prints the power-delivery network's impedance profile.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "gpu/device.hpp"
#include "pdn/voltage_files.hpp"

namespace gpusc::cli {

// Appends the "voltage" lines of the run summary to `out` (nothing when no launch has a voltage
// report).
void appendVoltageSummary(std::string& out, const std::vector<LaunchRecord>& launches);
// Completes voltage.csv and droops.csv, which `files` (the Device's voltage sink) wrote into
// `outDir` during the run, and writes droop_histogram.csv, worst_droop.csv and worst_droop.svg
// beside them; returns the names written (none when no launch has a voltage report).
std::vector<std::string> writeVoltageResults(const std::vector<LaunchRecord>& launches,
                                             pdn::VoltageFiles& files,
                                             const std::filesystem::path& outDir);

struct PdnOptions {
  std::string what;  // impedance
  std::string platform;
  std::vector<std::string> sets;
  std::string out = "gpusc-results/pdn";
  double minHz = 1e5, maxHz = 1e9;
  unsigned pointsPerDecade = 40;
};
int cmdPdn(const PdnOptions& o);

}  // namespace gpusc::cli
