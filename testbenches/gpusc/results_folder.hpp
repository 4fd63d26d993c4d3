// The results folder of a run (`gpusc run`, `gpusc shader run`) and the files written into it.
#pragma once

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "common/error.hpp"
#include "common/file_io.hpp"
#include "common/result_files.hpp"

namespace gpusc::cli {

// Creates the folder `dir` (with its parents) that option `option` names, or throws InputError
// naming both; a folder already there is fine.
inline void makeFolder(const std::filesystem::path& dir, const std::string& option) {
  std::error_code ec;
  if (std::filesystem::create_directories(dir, ec) || std::filesystem::is_directory(dir, ec))
    return;
  throw InputError(fmt::format("{} {}: cannot create the folder: {}", option, dir.string(),
                               ec ? ec.message() : std::string("a file of that name exists")));
}

// Throws InputError naming `option` unless the file `path` can be written (its folder exists
// and takes a new file, and the path is not a folder): checked before a long command's work,
// so it does not fail at its end. Leaves nothing behind.
inline void checkWritable(const std::filesystem::path& path, const std::string& option) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw InputError(fmt::format("{} {}: is a folder; name a file", option, path.string()));
  const std::filesystem::path probe = path.string() + ".tmp-probe";
  std::FILE* f = std::fopen(probe.c_str(), "wb");
  if (f == nullptr)
    throw InputError(
        fmt::format("{} {}: cannot write there: {}", option, path.string(), std::strerror(errno)));
  std::fclose(f);
  std::filesystem::remove(probe, ec);
}

using gpusc::ownedResultFiles;  // common/result_files.hpp

// The folder a run writes its results into, created:
// - `out` empty: gpusc-results/<work>-<platform>, or, when that already holds files,
//   the first of <work>-<platform>-2, -3, ... that does not: a run never writes into an
//   earlier run's folder by default.
// - `out` given: used as it is if empty or new. A folder with files is refused (InputError)
//   unless `force`; with `force` the files gpusc runs write there (ownedResultFiles, and
//   temporary files of an interrupted write) are removed first, and nothing else is touched.
// `created` (when given) receives the folders this made (the folder and any missing parents,
// deepest first), for a RemoveIfEmpty to undo if the command fails before writing.
inline std::filesystem::path resultsFolder(const std::string& out, const std::string& work,
                                           const std::string& platform, bool force = false,
                                           std::vector<std::filesystem::path>* created = nullptr) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const auto holdsFiles = [&](const fs::path& d) {
    return fs::exists(d, ec) && !(fs::is_directory(d, ec) && fs::is_empty(d, ec));
  };
  fs::path dir;
  if (out.empty()) {
    // One folder inside gpusc-results whatever the names hold (a platform's name is free text:
    // "GTX480 w/ 30 SMs", "../x"): characters other than letters, digits, '.', '-', '_' and
    // '+' become '_', and the name does not start with '.'.
    std::string name = fmt::format("{}-{}", work, platform);
    for (char& c : name)
      if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_' ||
            c == '+'))
        c = '_';
    if (name.empty() || name[0] == '.') name.insert(name.begin(), '_');
    const fs::path base = fs::path("gpusc-results") / name;
    dir = base;
    for (int n = 2; holdsFiles(dir); ++n) dir = fmt::format("{}-{}", base.string(), n);
  } else {
    dir = out;
    if (fs::exists(dir, ec) && !fs::is_directory(dir, ec))
      throw InputError(fmt::format("--out {}: exists and is not a folder", out));
    if (holdsFiles(dir)) {
      if (!force)
        throw InputError(fmt::format(
            "--out {}: the folder is not empty (an earlier run's results?); pass --force to "
            "replace the files gpusc writes there, or name another folder",
            out));
      for (const auto& f : ownedResultFiles()) fs::remove(dir / f, ec);
      for (const auto& e : fs::directory_iterator(dir, ec))
        if (e.path().filename().string().find(".tmp-") != std::string::npos)
          fs::remove(e.path(), ec);
    }
  }
  if (created)
    for (fs::path p = dir; !p.empty() && !fs::exists(p, ec); p = p.parent_path())
      created->push_back(p);
  fs::create_directories(dir, ec);
  if (ec)
    throw InputError(
        fmt::format("--out {}: cannot create the folder: {}", dir.string(), ec.message()));
  return dir;
}

// Removes, when it goes out of scope, the folders a command created that are still empty
// (deepest first): a run refused after its results folder was made (a launch spec's error, a
// model it cannot build) leaves no empty folder behind; one that wrote anything keeps it.
class RemoveIfEmpty {
 public:
  RemoveIfEmpty() = default;
  RemoveIfEmpty(const RemoveIfEmpty&) = delete;
  RemoveIfEmpty& operator=(const RemoveIfEmpty&) = delete;
  ~RemoveIfEmpty() {
    std::error_code ec;
    for (const auto& p : folders)
      if (!std::filesystem::is_empty(p, ec) || ec || !std::filesystem::remove(p, ec)) break;
  }
  std::vector<std::filesystem::path> folders;  // deepest first
};

// Whole or not at all (a temporary file renamed over the target).
inline void writeFile(const std::filesystem::path& p, const std::string& text) {
  writeFileAtomically(p.string(), text);
}

// The resolved configuration, loadable again with --platform.
inline std::string configYaml(const std::string& yaml) {
  return "# Resolved configuration of this run (loadable with --platform)\n" + yaml;
}

}  // namespace gpusc::cli
