#include "gpu/launch_files.hpp"

#include <utility>

#include "gpu/report.hpp"

namespace gpusc {

LaunchFiles::LaunchFiles(std::filesystem::path folder, size_t bufferBytes)
    : folder_(std::move(folder)), bufferBytes_(bufferBytes) {}

void LaunchFiles::launchDone(size_t launch, const LaunchRecord& record) {
  if (!record.timing) return;
  const gpu::TimingResult& t = *record.timing;
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
