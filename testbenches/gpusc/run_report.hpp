// The HTML report of one run (`gpusc run --report`, or `gpusc report FOLDER` for a results folder
// written earlier): the run's summary and headline figures, power over time by block, every
// SM's supply voltage with the droop events marked, resident warps per SM over time (the CTA
// timeline), the interconnect's link utilisation drawn on the mesh (or per crossbar port), the
// launches, and links to the folder's files. Everything comes from the folder's files
// (stats.json, summary.txt and the CSVs), so a report can be rebuilt from archived results.
#pragma once

#include <filesystem>
#include <string>

namespace gpusc::cli {

// The page for the results folder `folder`. InputError when the folder has no readable
// stats.json, or a CSV in it is malformed (naming the file and line).
std::string runReportHtml(const std::filesystem::path& folder);

}  // namespace gpusc::cli
