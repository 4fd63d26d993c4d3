// The per-launch series of a whole run written while it runs: a LaunchSink that streams every
// timing-mode launch's power time series into power.csv and its CTA timeline into
// cta_timeline.csv (the files of `gpusc run`, byte for byte powerTimeSeriesCsv and
// ctaTimelineCsv of the launch records), through bounded buffers into temporary files that
// commit() renames. What it holds does not grow with the run's length.
#pragma once

#include <cstddef>
#include <filesystem>
#include <memory>
#include <string>

#include "common/file_io.hpp"
#include "gpu/device.hpp"

namespace gpusc {

class LaunchFiles : public LaunchSink {
 public:
  // The files go into `folder` when the first timing-mode launch ends (InputError naming the
  // file when it cannot be created); each buffers up to `bufferBytes`.
  explicit LaunchFiles(std::filesystem::path folder, size_t bufferBytes = size_t(1) << 16);

  void launchDone(size_t launch, const LaunchRecord& record) override;

  // Whether a launch had power figures, i.e. whether commit() writes power.csv.
  bool hasPower() const { return power_ != nullptr; }
  // Completes cta_timeline.csv (its header alone when no timing-mode launch ended) and
  // power.csv (when a launch had power figures); InputError naming a file that could not be
  // written.
  void commit();

 private:
  std::filesystem::path folder_;
  size_t bufferBytes_;
  std::string row_;  // one row's text, reused
  std::unique_ptr<StreamedFile> timeline_, power_;
};

}  // namespace gpusc
