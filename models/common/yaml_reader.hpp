// Reading a YAML file of our own format (launch specs, sweep specs): every message names the
// file, line and column and the key, and an unknown key gets the closest valid name.
#pragma once

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "common/config.hpp"
#include "common/error.hpp"
#include "common/strings.hpp"

namespace gpusc::config {

class YamlReader {
 public:
  explicit YamlReader(std::string file) : file_(std::move(file)) {}

  // "FILE:LINE:COL" of a node.
  std::string where(const YAML::Node& n) const { return markWhere(file_, n.Mark()); }
  // InputError "FILE:LINE:COL: KEY: message".
  [[noreturn]] void fail(const YAML::Node& n, const std::string& key,
                         const std::string& msg) const {
    throw InputError(fmt::format("{}: {}: {}", where(n), key, msg));
  }
  // `n` is a map whose keys are all in `allowed`, each once; `path` names it in messages.
  void keys(const YAML::Node& n, const std::string& path,
            const std::vector<std::string>& allowed) const {
    if (!n.IsMap()) fail(n, path.empty() ? "(top level)" : path, "expected a map");
    std::set<std::string> seen;
    for (auto it = n.begin(); it != n.end(); ++it) {
      const std::string k = it->first.Scalar();
      const std::string full = path.empty() ? k : path + "." + k;
      if (std::find(allowed.begin(), allowed.end(), k) == allowed.end())
        throw InputError(
            fmt::format("{}: unknown key '{}'{}", where(it->first), full, didYouMean(k, allowed)));
      if (!seen.insert(k).second) fail(it->first, full, "duplicate key");
    }
  }
  // `n` is a map of names (buffers, textures, ...): each key a single value, given once.
  void uniqueNames(const YAML::Node& n, const std::string& path) const {
    std::set<std::string> seen;
    for (auto it = n.begin(); it != n.end(); ++it) {
      if (!it->first.IsScalar()) fail(it->first, path, "expected a name");
      if (!seen.insert(it->first.Scalar()).second)
        fail(it->first, path + "." + it->first.Scalar(), "given twice");
    }
  }
  // A single value converted to T (convertScalar's message otherwise).
  template <class T>
  T scalar(const YAML::Node& n, const std::string& key) const {
    if (!n.IsScalar()) fail(n, key, "expected a single value");
    T v{};
    if (auto err = convertScalar(n, v)) fail(n, key, *err);
    return v;
  }
  const std::string& file() const { return file_; }

 private:
  std::string file_;
};

}  // namespace gpusc::config
