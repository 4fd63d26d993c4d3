// The results folder of a run (`gpusc run`, `gpusc shader run`) and the files written into it.
#pragma once

#include <filesystem>
#include <fstream>
#include <string>

#include <fmt/format.h>

#include "common/error.hpp"

namespace gpusc::cli {

// `out`, or gpusc-results/<work>-<platform> when it is empty; created. InputError when it
// cannot be.
inline std::filesystem::path resultsFolder(const std::string& out, const std::string& work,
                                           const std::string& platform) {
  const std::filesystem::path dir =
      out.empty() ? std::filesystem::path("gpusc-results") / fmt::format("{}-{}", work, platform)
                  : std::filesystem::path(out);
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec)
    throw InputError(
        fmt::format("--out {}: cannot create the folder: {}", dir.string(), ec.message()));
  return dir;
}

inline void writeFile(const std::filesystem::path& p, const std::string& text) {
  std::ofstream out(p);
  if (!out || !(out << text)) throw InputError(fmt::format("cannot write '{}'", p.string()));
}

// The resolved configuration, loadable again with --platform.
inline std::string configYaml(const std::string& yaml) {
  return "# Resolved configuration of this run (loadable with --platform)\n" + yaml;
}

}  // namespace gpusc::cli
