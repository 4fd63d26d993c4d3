// The files a run writes into its results folder (gpusc run, gpusc shader run): what --force
// clears, so a run never leaves an earlier run's files beside its own, and what a launch spec's
// dump may not name.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

namespace gpusc {

inline const std::vector<std::string>& ownedResultFiles() {
  static const std::vector<std::string> files{
      "stats.json",      "config.yaml", "cta_timeline.csv",    "power.csv",
      "voltage.csv",     "droops.csv",  "droop_histogram.csv", "worst_droop.csv",
      "worst_droop.svg", "voltage.vcd", "state_dump.txt",      "vertex.s",
      "fragment.s",      "printf.log",  "summary.txt",         "report.html"};
  return files;
}

inline bool isOwnedResultFile(const std::string& name) {
  const auto& f = ownedResultFiles();
  return std::find(f.begin(), f.end(), name) != f.end();
}

}  // namespace gpusc
