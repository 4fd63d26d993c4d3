// Machine-readable results: statistics as JSON, written beside every run.
#pragma once

#include <nlohmann/json.hpp>

#include "gpu/device.hpp"

namespace gpusc {

nlohmann::json toJson(const func::ExecStats& s);
nlohmann::json toJson(const LaunchRecord& l);
// toJson(l), with the launch's memory statistics moved into the result instead of copied
// (l.timing->memory is left null): for a sink that keeps only their totals afterwards.
nlohmann::json takeJson(LaunchRecord& l);
// The energy of every launch with power figures (timing mode, power.enabled) together.
struct RunEnergy {
  bool any = false;
  power::EnergyBreakdown total;  // the launches' breakdowns added
  double seconds = 0;            // their simulated time
  double supplyVoltage = 0;
};
RunEnergy runEnergy(const std::vector<LaunchRecord>& launches);
// The launch with the worst droop (null when no launch has voltage figures); `index` gets its
// position in `launches`.
const pdn::VoltageReport* worstVoltageLaunch(const std::vector<LaunchRecord>& launches,
                                             size_t* index = nullptr);
// What a whole run did, over all its launches: launches and whether all completed, cycles,
// instructions and IPC, energy by block and average power, the worst droop and the droop
// events, the power-gating shares. Timing-only parts are absent in functional mode, power and
// voltage parts when the energy model or the PDN are off. stats.json's "run". `timingRun`: the run
// was in timing mode, so it has cycles (0) even without a launch.
nlohmann::json runTotalsJson(const std::vector<LaunchRecord>& launches, const PlatformConfig& cfg,
                             bool timingRun = false);
nlohmann::json toJson(const Dim3& d);
// The launch's memory statistics (TimingResult::memory) without the detail per SM, slice,
// partition or link: each part's figures and its "totals" (what the run's summary uses).
nlohmann::json memoryTotalsJson(const nlohmann::json& memory);

// The two forms of stats.json's launches: "full" (every launch's entry as toJson gives it) and
// "summary" (launchSummaryJson of each: its headline figures and totals). "auto" is full for a
// run of at most kFullStatsLaunches launches, summary beyond.
enum class StatsForm { Auto, Full, Summary };
inline constexpr size_t kFullStatsLaunches = 16;
StatsForm parseStatsForm(const std::string& name);  // InputError naming --stats
const char* statsFormName(StatsForm f);
// A launch's entry in the summary form, from its full entry: everything but the detail per SM,
// per cache slice, memory partition and link, per-SM power and the PDN's description (its
// memory statistics are memoryTotalsJson's). Every value it keeps is the full entry's, at the
// same path.
nlohmann::json launchSummaryJson(nlohmann::json full);

nlohmann::json toJson(const gpu::TimingResult& t);

// Average active threads per warp instruction (SIMD utilisation), from the lane histogram.
double averageActiveLanes(const func::ExecStats& s);

// Scheduler outcomes (issued and each stall reason) summed over the SMs' schedulers.
std::array<uint64_t, sm::kNumStalls> stallTotals(const gpu::TimingResult& t);
sm::SmCounters counterTotals(const gpu::TimingResult& t);

// The power time series of every timing-mode launch as CSV (empty when there is none): launch,
// kernel, start_cycle, cycles, then the average power in W over the sample of each SM (its blocks
// and L1D) and of each memory-side block, and the total. (power.csv; LaunchFiles streams it.)
std::string powerTimeSeriesCsv(const std::vector<LaunchRecord>& launches);
// Its parts: the header (the columns of `p`'s SMs and blocks), and the row of sample `s` of
// launch `launch` (its index) of kernel `kernel`, appended to `out`.
std::string powerCsvHeader(const power::PowerReport& p);
void appendPowerCsvRow(std::string& out, size_t launch, const std::string& kernel,
                       const power::PowerSample& s);

// The CTA timeline of every timing-mode launch as CSV: launch, sm, cta, x, y, z, start, end.
// (cta_timeline.csv; LaunchFiles streams it.)
std::string ctaTimelineCsv(const std::vector<LaunchRecord>& launches);
// Its parts: the header, a launch's CTAs in the file's order (by linear CTA id), and one CTA's
// row appended to `out`.
extern const char* const kCtaTimelineCsvHeader;
std::vector<sm::CtaRecord> ctaTimelineRows(const gpu::TimingResult& t);
void appendCtaTimelineCsvRow(std::string& out, size_t launch, const std::string& kernel,
                             const sm::CtaRecord& r);

}  // namespace gpusc
