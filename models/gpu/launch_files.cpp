#include "gpu/launch_files.hpp"

#include <utility>

#include <fmt/format.h>

#include "gpu/report.hpp"

namespace gpusc {

LaunchFiles::LaunchFiles(std::filesystem::path folder, size_t bufferBytes)
    : folder_(std::move(folder)), bufferBytes_(bufferBytes) {}

void LaunchFiles::launchDone(size_t launch, LaunchRecord& record) {
  // The record's stats.json entry: an array element's lines are its own dump's, indented by the
  // array's depth (4 spaces).
  if (!stats_)
    stats_ = std::make_unique<SpoolFile>(
        fmt::format("the launches of '{}'", (folder_ / "stats.json").string()), bufferBytes_);
  const std::string one = toJson(record).dump(2);
  std::string element = launches_ ? ",\n    " : "    ";
  element.reserve(element.size() + one.size() + one.size() / 8);
  for (char c : one) {
    element += c;
    if (c == '\n') element += "    ";
  }
  stats_->write(element);
  ++launches_;
  if (!record.timing) return;
  gpu::TimingResult& t = *record.timing;
  t.memory = memoryTotalsJson(t.memory);
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
  const std::string text = stats.dump(2) + "\n";
  const std::string slot = "\n  \"launches\": []";
  const size_t at = text.find(slot);
  if (at == std::string::npos || launches_ == 0) {
    writeFileAtomically(path.string(), text);
    return;
  }
  StreamedFile out(path.string(), bufferBytes_);
  out.write(std::string_view(text).substr(0, at));
  out.write("\n  \"launches\": [\n");
  stats_->copyTo(out);
  out.write("\n  ]");
  out.write(std::string_view(text).substr(at + slot.size()));
  out.commit();
}

}  // namespace gpusc
