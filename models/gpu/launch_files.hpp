// The per-launch detail of a whole run written while it runs: a LaunchSink that streams every
// timing-mode launch's power time series into power.csv and its CTA timeline into
// cta_timeline.csv (the files of `gpusc run`, byte for byte powerTimeSeriesCsv and
// ctaTimelineCsv of the launch records kept without a sink), through bounded buffers into
// temporary files that commit() renames, and sets every launch's stats.json entry aside in an
// unnamed temporary file for writeStats(): its full entry (toJson of its record), its summary
// (launchSummaryJson), or both while the form is auto and the run has had at most
// kFullStatsLaunches launches. The records then keep their memory statistics' totals only
// (memoryTotalsJson), besides losing their timeline and power samples: what the sink and the
// records hold grows by a few KB per launch, whatever its length.
#pragma once

#include <cstddef>
#include <filesystem>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "common/file_io.hpp"
#include "gpu/device.hpp"
#include "gpu/report.hpp"

namespace gpusc {

class LaunchFiles : public LaunchSink {
 public:
  // The files go into `folder` when the first timing-mode launch ends (InputError naming the
  // file when it cannot be created); each buffers up to `bufferBytes`.
  explicit LaunchFiles(std::filesystem::path folder, StatsForm form = StatsForm::Auto,
                       size_t bufferBytes = size_t(1) << 16);

  void launchDone(size_t launch, LaunchRecord& record) override;

  // Whether a launch had power figures, i.e. whether commit() writes power.csv.
  bool hasPower() const { return power_ != nullptr; }
  // Completes cta_timeline.csv (its header alone when no timing-mode launch ended) and
  // power.csv (when a launch had power figures); InputError naming a file that could not be
  // written.
  void commit();
  // The form writeStats() writes: Full or Summary (Auto resolved by the launches so far).
  StatsForm form() const;
  // Writes stats.json to `path`: `stats`, whose "launches" is an empty array, as
  // stats.dump(2) + "\n" writes it with that array holding every launch's entry in form()
  // (so that the file's text and all launches' trees are never in memory together).
  // InputError naming `path` when it cannot be written.
  void writeStats(const std::filesystem::path& path, const nlohmann::json& stats);

 private:
  std::filesystem::path folder_;
  size_t bufferBytes_;
  std::string row_;  // one row's text, reused
  std::unique_ptr<StreamedFile> timeline_, power_;
  StatsForm form_;
  // The launches' stats.json entries, "," between them: full, and summaries.
  std::unique_ptr<SpoolFile> full_, summary_;
  size_t launches_ = 0;
};

}  // namespace gpusc
