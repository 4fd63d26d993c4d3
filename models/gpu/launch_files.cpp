#include "gpu/launch_files.hpp"

#include <utility>

#include <fmt/format.h>

#include "common/json_text.hpp"
#include "gpu/report.hpp"

namespace gpusc {

LaunchFiles::LaunchFiles(std::filesystem::path folder, StatsForm form, size_t bufferBytes)
    : folder_(std::move(folder)), bufferBytes_(bufferBytes), form_(form) {}

StatsForm LaunchFiles::form() const {
  if (form_ != StatsForm::Auto) return form_;
  return launches_ > kFullStatsLaunches ? StatsForm::Summary : StatsForm::Full;
}

void LaunchFiles::launchDone(size_t launch, LaunchRecord& record) {
  // The record's stats.json entry: an element of the array two levels deep (4 spaces).
  const auto spool = [&](std::unique_ptr<SpoolFile>& f, const nlohmann::json& entry) {
    if (!f)
      f = std::make_unique<SpoolFile>(
          fmt::format("the launches of '{}'", (folder_ / "stats.json").string()), bufferBytes_);
    row_.assign(launches_ ? ",\n    " : "    ");
    appendJson(row_, entry, 2, 4);
    f->write(row_);
  };
  nlohmann::json entry = takeJson(record);
  const size_t n = launches_ + 1;  // the launches with this one
  if (form_ == StatsForm::Auto && n > kFullStatsLaunches) full_.reset();  // past the last full
  if (form_ == StatsForm::Full || (form_ == StatsForm::Auto && n <= kFullStatsLaunches))
    spool(full_, entry);
  if (form_ != StatsForm::Full) spool(summary_, launchSummaryJson(entry));
  launches_ = n;
  if (!record.timing) return;
  gpu::TimingResult& t = *record.timing;
  t.memory = memoryTotalsJson(entry["timing"]["memory"]);
  if (!timeline_) {
    timeline_ =
        std::make_unique<StreamedFile>((folder_ / "cta_timeline.csv").string(), bufferBytes_);
    timeline_->write(kCtaTimelineCsvHeader);
  }
  for (const sm::CtaRecord& r : ctaTimelineRows(t)) {
    row_.clear();
    appendCtaTimelineCsvRow(row_, launch, record.kernel, r);
    timeline_->write(row_);
  }
  if (!t.power) return;
  if (!power_) {
    power_ = std::make_unique<StreamedFile>((folder_ / "power.csv").string(), bufferBytes_);
    power_->write(powerCsvHeader(*t.power));
  }
  for (const power::PowerSample& s : t.power->samples) {
    row_.clear();
    appendPowerCsvRow(row_, launch, record.kernel, s);
    power_->write(row_);
  }
}

void LaunchFiles::commit() {
  if (!timeline_) {
    timeline_ =
        std::make_unique<StreamedFile>((folder_ / "cta_timeline.csv").string(), bufferBytes_);
    timeline_->write(kCtaTimelineCsvHeader);
  }
  timeline_->commit();
  if (power_) power_->commit();
}

}  // namespace gpusc

namespace gpusc {

void LaunchFiles::writeStats(const std::filesystem::path& path, const nlohmann::json& stats) {
  std::string text;
  appendJson(text, stats);
  text += '\n';
  const std::string slot = "\n  \"launches\": []";
  const size_t at = text.find(slot);
  if (at == std::string::npos || launches_ == 0) {
    writeFileAtomically(path.string(), text);
    return;
  }
  SpoolFile& entries = form() == StatsForm::Full ? *full_ : *summary_;
  StreamedFile out(path.string(), bufferBytes_);
  out.write(std::string_view(text).substr(0, at));
  out.write("\n  \"launches\": [\n");
  entries.copyTo(out);
  out.write("\n  ]");
  out.write(std::string_view(text).substr(at + slot.size()));
  out.commit();
}

}  // namespace gpusc
