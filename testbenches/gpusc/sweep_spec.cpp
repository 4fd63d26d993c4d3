#include "sweep_spec.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "catalog.hpp"
#include "cli_options.hpp"
#include "common/config.hpp"
#include "common/error.hpp"
#include "common/file_io.hpp"
#include "common/host_workers.hpp"
#include "common/platform_config.hpp"
#include "common/rng.hpp"
#include "common/strings.hpp"
#include "common/yaml_reader.hpp"
#include "gpu/launch_spec.hpp"
#include "results_folder.hpp"
#include "sha256.hpp"

namespace gpusc::cli {

namespace fs = std::filesystem;

namespace {

constexpr size_t kMaxAxisValues = 100000;
constexpr size_t kMaxPoints = 1000000;

class Reader : public config::YamlReader {
 public:
  using YamlReader::YamlReader;

  std::string text(const YAML::Node& n, const std::string& key) const {
    if (!n.IsScalar()) fail(n, key, "expected a single value");
    return n.Scalar();
  }
  // A scalar or a list of scalars.
  std::vector<YAML::Node> list(const YAML::Node& n, const std::string& key) const {
    std::vector<YAML::Node> out;
    if (n.IsScalar()) {
      out.push_back(n);
    } else if (n.IsSequence() && n.size() > 0) {
      for (size_t i = 0; i < n.size(); ++i) out.push_back(n[i]);
    } else {
      fail(n, key, "expected a value or a non-empty list of values");
    }
    return out;
  }
};

// A value as the text of a --set (sequences in YAML flow style).
std::string valueText(const Reader& r, const YAML::Node& n, const std::string& key) {
  if (n.IsScalar()) return n.Scalar();
  if (n.IsSequence()) {
    YAML::Emitter e;
    e << YAML::Flow << n;
    return e.c_str();
  }
  r.fail(n, key, "expected a value or a list of values");
}

// A value for the results table: a number when the text is one.
nlohmann::json tableValue(const std::string& text) {
  int64_t i = 0;
  double d = 0;
  YAML::Node n(text);
  if (!config::convertScalar(n, i)) return i;
  if (!config::convertScalar(n, d)) return d;
  return text;
}

bool validName(const std::string& s) {
  // "." and ".." name the folder itself or its parent, not a folder of their own.
  if (s.empty() || s == "." || s == "..") return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.'))
      return false;
  return true;
}

const std::vector<std::string>& platformKeys() {
  static const std::vector<std::string> keys = [] {
    std::vector<std::string> k;
    for (const auto& info : config::listKeys<PlatformConfig>()) k.push_back(info.path);
    return k;
  }();
  return keys;
}

// A platform key named in the spec (the `platform` axis when `allowPlatform`).
void checkKey(const Reader& r, const YAML::Node& keyNode, const std::string& path,
              bool allowPlatform) {
  const std::string k = keyNode.Scalar();
  if (allowPlatform && k == "platform") return;
  const auto& keys = platformKeys();
  if (std::find(keys.begin(), keys.end(), k) == keys.end())
    r.fail(keyNode, path,
           fmt::format("unknown platform key '{}'{} (gpusc list keys names every key)", k,
                       didYouMean(k, keys)));
}

// `set:` of the spec or of a variant: a map key: value, or a list of "key=value".
std::vector<SpecOverride> readSets(const Reader& r, const YAML::Node& n, const std::string& path) {
  std::vector<SpecOverride> out;
  if (n.IsMap()) {
    std::set<std::string> seen;
    for (auto it = n.begin(); it != n.end(); ++it) {
      const std::string k = it->first.Scalar();
      checkKey(r, it->first, path, false);
      if (!seen.insert(k).second) r.fail(it->first, path + "." + k, "duplicate key");
      out.push_back({k + "=" + valueText(r, it->second, path + "." + k), r.where(it->second),
                     path + "." + k});
    }
  } else if (n.IsSequence()) {
    std::set<std::string> seen;
    for (size_t i = 0; i < n.size(); ++i) {
      const std::string key = fmt::format("{}[{}]", path, i);
      const std::string s = r.text(n[i], key);
      const size_t eq = s.find('=');
      if (eq == std::string::npos || eq == 0) r.fail(n[i], key, "expected key=value");
      const std::string k(trim(std::string_view(s).substr(0, eq)));
      const auto& keys = platformKeys();
      if (std::find(keys.begin(), keys.end(), k) == keys.end())
        r.fail(n[i], key, fmt::format("unknown platform key '{}'{}", k, didYouMean(k, keys)));
      if (!seen.insert(k).second) r.fail(n[i], key, fmt::format("'{}' is set twice", k));
      out.push_back({s, r.where(n[i]), key});
    }
  } else {
    r.fail(n, path, "expected a map of platform keys, or a list of key=value");
  }
  return out;
}

struct AxisValue {
  std::string text;
  std::string where;
};

std::string numberText(double v) {
  // Twelve significant digits: 0.1 + 0.2 steps print as 0.3.
  std::string s = fmt::format("{:.12g}", v);
  return s;
}

// An axis's values: a list, or a range {from, to, step} / {from, to, factor}.
std::vector<AxisValue> axisValues(const Reader& r, const YAML::Node& n, const std::string& path) {
  std::vector<AxisValue> out;
  if (n.IsSequence()) {
    if (n.size() == 0) r.fail(n, path, "expected at least one value");
    for (size_t i = 0; i < n.size(); ++i)
      out.push_back({valueText(r, n[i], fmt::format("{}[{}]", path, i)), r.where(n[i])});
    return out;
  }
  if (n.IsScalar()) return {{n.Scalar(), r.where(n)}};
  if (!n.IsMap()) r.fail(n, path, "expected a list of values or a range {from, to, step}");
  r.keys(n, path, {"from", "to", "step", "factor"});
  for (const char* k : {"from", "to"})
    if (!n[k]) r.fail(n, path, fmt::format("a range needs '{}'", k));
  if (bool(n["step"]) == bool(n["factor"]))
    r.fail(n, path, "a range needs either 'step' or 'factor'");
  const double from = r.scalar<double>(n["from"], path + ".from");
  const double to = r.scalar<double>(n["to"], path + ".to");
  int64_t i64 = 0;
  const auto isInt = [&](const YAML::Node& x) { return !config::convertScalar(x, i64); };
  const std::string where = r.where(n);
  if (to < from) r.fail(n["to"], path + ".to", "must not be below 'from'");
  if (n["step"]) {
    const double step = r.scalar<double>(n["step"], path + ".step");
    if (!(step > 0)) r.fail(n["step"], path + ".step", "must be above 0");
    const bool ints = isInt(n["from"]) && isInt(n["to"]) && isInt(n["step"]);
    const double count = std::floor((to - from) / step + 1e-9) + 1;
    if (count > double(kMaxAxisValues))
      r.fail(n, path, fmt::format("more than {} values", kMaxAxisValues));
    for (size_t i = 0; i < size_t(count); ++i) {
      const double v = from + double(i) * step;
      out.push_back({ints ? fmt::format("{}", int64_t(std::llround(v))) : numberText(v), where});
    }
  } else {
    const double factor = r.scalar<double>(n["factor"], path + ".factor");
    if (!(factor > 1)) r.fail(n["factor"], path + ".factor", "must be above 1");
    if (!(from > 0)) r.fail(n["from"], path + ".from", "a geometric range starts above 0");
    const bool ints = isInt(n["from"]) && isInt(n["factor"]);
    for (double v = from; v <= to * (1 + 1e-12); v *= factor) {
      if (out.size() == kMaxAxisValues)
        r.fail(n, path, fmt::format("more than {} values", kMaxAxisValues));
      out.push_back({ints ? fmt::format("{}", int64_t(std::llround(v))) : numberText(v), where});
    }
  }
  return out;
}

AxisCombo single(const std::string& key, const AxisValue& v, const std::string& origin) {
  AxisCombo c;
  if (key == "platform") {
    c.platform = v.text;
    c.platformWhere = v.where;
  } else {
    c.sets.push_back({key + "=" + v.text, v.where, origin});
  }
  c.values[key] = tableValue(v.text);
  return c;
}

AxisCombo merge(const AxisCombo& a, const AxisCombo& b) {
  AxisCombo c = a;
  c.sets.insert(c.sets.end(), b.sets.begin(), b.sets.end());
  if (!b.platform.empty()) {
    c.platform = b.platform;
    c.platformWhere = b.platformWhere;
  }
  for (const auto& [k, v] : b.values.items()) c.values[k] = v;
  return c;
}

std::vector<AxisCombo> product(const std::vector<AxisCombo>& a, const std::vector<AxisCombo>& b,
                               const Reader& r, const YAML::Node& at) {
  if (double(a.size()) * double(b.size()) > double(kMaxPoints))
    r.fail(at, "axes", fmt::format("more than {} combinations", kMaxPoints));
  std::vector<AxisCombo> out;
  for (const auto& x : a)
    for (const auto& y : b) out.push_back(merge(x, y));
  return out;
}

struct Axes {
  std::vector<AxisCombo> combos{AxisCombo{}};
  std::vector<std::string> keys;
};

void addKey(const Reader& r, Axes& axes, const YAML::Node& keyNode, const std::string& path) {
  checkKey(r, keyNode, path, true);
  const std::string k = keyNode.Scalar();
  if (std::find(axes.keys.begin(), axes.keys.end(), k) != axes.keys.end())
    r.fail(keyNode, path, fmt::format("'{}' is already an axis", k));
  axes.keys.push_back(k);
}

Axes readAxes(const Reader& r, const YAML::Node& n) {
  Axes axes;
  r.keys(n, "axes", {"grid", "zip", "random"});
  if (const YAML::Node g = n["grid"]) {
    if (!g.IsMap()) r.fail(g, "axes.grid", "expected a map of platform keys to values");
    for (auto it = g.begin(); it != g.end(); ++it) {
      const std::string path = "axes.grid." + it->first.Scalar();
      addKey(r, axes, it->first, path);
      std::vector<AxisCombo> one;
      for (const auto& v : axisValues(r, it->second, path))
        one.push_back(single(it->first.Scalar(), v, path));
      axes.combos = product(axes.combos, one, r, it->first);
    }
  }
  if (const YAML::Node z = n["zip"]) {
    if (!z.IsMap()) r.fail(z, "axes.zip", "expected a map of platform keys to values");
    std::vector<AxisCombo> rows;
    size_t length = 0;
    for (auto it = z.begin(); it != z.end(); ++it) {
      const std::string path = "axes.zip." + it->first.Scalar();
      addKey(r, axes, it->first, path);
      const auto values = axisValues(r, it->second, path);
      if (it == z.begin()) {
        length = values.size();
        rows.resize(length);
      } else if (values.size() != length) {
        r.fail(it->second, path,
               fmt::format("{} values, but the first zip axis has {} (zip pairs values by "
                           "position)",
                           values.size(), length));
      }
      for (size_t i = 0; i < length; ++i)
        rows[i] = merge(rows[i], single(it->first.Scalar(), values[i], path));
    }
    axes.combos = product(axes.combos, rows, r, z);
  }
  if (const YAML::Node s = n["random"]) {
    r.keys(s, "axes.random", {"samples", "seed", "keys"});
    if (!s["samples"]) r.fail(s, "axes.random", "missing key 'samples'");
    if (!s["keys"] || !s["keys"].IsMap())
      r.fail(s, "axes.random", "missing key 'keys' (a map of platform keys to values)");
    const uint64_t samples = r.scalar<uint64_t>(s["samples"], "axes.random.samples");
    const uint64_t seed = s["seed"] ? r.scalar<uint64_t>(s["seed"], "axes.random.seed") : 1;
    std::vector<std::pair<std::string, std::vector<AxisValue>>> space;
    double total = 1;
    for (auto it = s["keys"].begin(); it != s["keys"].end(); ++it) {
      const std::string path = "axes.random.keys." + it->first.Scalar();
      addKey(r, axes, it->first, path);
      space.push_back({it->first.Scalar(), axisValues(r, it->second, path)});
      total *= double(space.back().second.size());
    }
    if (samples == 0 || double(samples) > total)
      r.fail(s["samples"], "axes.random.samples",
             fmt::format("expected 1 to {:.0f} (the number of distinct combinations)", total));
    // Distinct combinations drawn with our own generator: the same seed gives the same points
    // on every machine.
    Rng rng(seed);
    std::set<std::vector<uint32_t>> drawn;
    std::vector<AxisCombo> rows;
    while (rows.size() < samples) {
      std::vector<uint32_t> pick;
      for (const auto& [k, values] : space)
        pick.push_back(rng.below(static_cast<uint32_t>(values.size())));
      if (!drawn.insert(pick).second) continue;
      AxisCombo c;
      for (size_t i = 0; i < space.size(); ++i)
        c = merge(c, single(space[i].first, space[i].second[pick[i]],
                            "axes.random.keys." + space[i].first));
      rows.push_back(c);
    }
    axes.combos = product(axes.combos, rows, r, s);
  }
  return axes;
}

std::string absolute(const std::string& baseDir, const std::string& p) {
  return fs::absolute(fs::path(baseDir) / p).lexically_normal().string();
}

}  // namespace

SweepSpec parseSweepSpec(const std::string& text, const std::string& fileName,
                         const std::string& baseDir) {
  const YAML::Node root = config::parseYaml(text, fileName);
  Reader r(fileName);
  if (!root.IsMap()) throw InputError(fmt::format("{}:1:1: expected a map of keys", fileName));
  r.keys(root, "",
         {"name", "platform", "mode", "kernels", "sizes", "set", "limits", "variants", "axes"});
  SweepSpec s;
  s.file = fileName;
  s.name = fs::path(fileName).stem().string();
  if (root["name"]) s.name = r.text(root["name"], "name");
  if (!validName(s.name))
    r.fail(root["name"] ? root["name"] : root, "name",
           fmt::format("'{}': use letters, digits, '.', '_' and '-', not '.' or '..' alone (it "
                       "names a folder)",
                       s.name));
  if (root["platform"]) {
    s.platform = r.text(root["platform"], "platform");
    s.platformWhere = r.where(root["platform"]);
  } else {
    s.platform = kDefaultPlatform;
    s.platformWhere = fileName;
  }
  if (fs::is_regular_file(fs::path(baseDir) / s.platform))
    s.platform = absolute(baseDir, s.platform);
  if (root["mode"]) {
    s.mode = r.text(root["mode"], "mode");
    if (s.mode != "timing" && s.mode != "functional")
      r.fail(root["mode"], "mode",
             fmt::format("expected timing or functional{}",
                         didYouMean(s.mode, {"timing", "functional"})));
  }

  std::vector<std::string> sizes{"default"};
  if (root["sizes"]) {
    sizes.clear();
    for (const auto& n : r.list(root["sizes"], "sizes")) {
      const std::string sz = r.text(n, "sizes");
      try {
        catalog::parseSize(sz);
      } catch (const InputError& e) {
        r.fail(n, "sizes", e.what());
      }
      sizes.push_back(sz);
    }
  }
  if (!root["kernels"]) r.fail(root, "kernels", "missing: name at least one kernel");
  const YAML::Node ks = root["kernels"];
  if (!ks.IsSequence() || ks.size() == 0)
    r.fail(ks, "kernels",
           "expected a list of catalog kernels, {launch: FILE} or {exec: [PROGRAM, ARGS...]}");
  std::set<std::string> kernelIds;
  for (size_t i = 0; i < ks.size(); ++i) {
    const std::string key = fmt::format("kernels[{}]", i);
    const YAML::Node k = ks[i];
    std::vector<SweepKernel> entries;
    if (k.IsScalar() || (k.IsMap() && k["kernel"])) {
      const YAML::Node nameNode = k.IsScalar() ? k : k["kernel"];
      std::vector<std::string> ksizes = sizes;
      if (k.IsMap()) {
        r.keys(k, key, {"kernel", "sizes"});
        if (k["sizes"]) {
          ksizes.clear();
          for (const auto& n : r.list(k["sizes"], key + ".sizes")) {
            const std::string sz = r.text(n, key + ".sizes");
            try {
              catalog::parseSize(sz);
            } catch (const InputError& e) {
              r.fail(n, key + ".sizes", e.what());
            }
            ksizes.push_back(sz);
          }
        }
      }
      const std::string name = r.text(nameNode, key);
      const catalog::CatalogEntry* entry = nullptr;
      try {
        entry = &catalog::find(name);
      } catch (const InputError& e) {
        r.fail(nameNode, key, e.what());
      }
      // Checked here, not when its points run: every point would fail.
      for (const auto& sz : ksizes)
        if (catalog::parseSize(sz) == catalog::Size::Large && !entry->large)
          r.fail(nameNode, key,
                 fmt::format("{} has no large size, which sizes asks for (kernels with one: {})",
                             name, join(catalog::largeNames(), ", ")));
      for (const auto& sz : ksizes) entries.push_back({name, sz, "", r.where(nameNode)});
    } else if (k.IsMap() && k["launch"]) {
      r.keys(k, key, {"launch"});
      const std::string path = absolute(baseDir, r.text(k["launch"], key + ".launch"));
      if (!fs::is_regular_file(path))
        r.fail(k["launch"], key + ".launch", fmt::format("no such file '{}'", path));
      entries.push_back({fs::path(path).stem().string(), "", path, r.where(k["launch"])});
    } else if (k.IsMap() && k["exec"]) {
      // A CUDA program: a path (relative to the spec) or a name on PATH, then its arguments.
      r.keys(k, key, {"exec"});
      std::vector<std::string> argv;
      if (k["exec"].IsScalar()) {
        argv.push_back(r.text(k["exec"], key + ".exec"));
      } else {
        for (const auto& n : r.list(k["exec"], key + ".exec"))
          argv.push_back(r.text(n, key + ".exec"));
      }
      if (argv.empty() || argv[0].empty())
        r.fail(k["exec"], key + ".exec", "expected [PROGRAM, ARGS...]");
      if (argv[0].find('/') != std::string::npos) {
        argv[0] = absolute(baseDir, argv[0]);
        if (!fs::is_regular_file(argv[0]))
          r.fail(k["exec"], key + ".exec", fmt::format("no such program '{}'", argv[0]));
      }
      // Named by the program and its arguments: "bfs_levels", "app_-n_64".
      std::string name = fs::path(argv[0]).filename().string();
      for (size_t a = 1; a < argv.size(); ++a) name += "_" + argv[a];
      for (char& c : name)
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-' && c != '.')
          c = '_';
      SweepKernel e{name, "", "", r.where(k["exec"])};
      e.exec = argv;
      entries.push_back(e);
    } else {
      r.fail(k, key,
             "expected a catalog kernel name, {kernel: NAME, sizes: [...]}, {launch: FILE} or "
             "{exec: [PROGRAM, ARGS...]}");
    }
    for (auto& e : entries) {
      const std::string id = !e.exec.empty()    ? "exec " + join(e.exec, " ")
                             : e.launch.empty() ? e.name + "@" + e.size
                                                : e.launch;
      if (!kernelIds.insert(id).second)
        r.fail(
            k, key,
            fmt::format("{} is listed twice", e.launch.empty() || !e.exec.empty() ? id : e.launch));
      s.kernels.push_back(e);
    }
  }

  if (root["set"]) s.sets = readSets(r, root["set"], "set");
  if (const YAML::Node l = root["limits"]) {
    r.keys(l, "limits", {"max_cycles", "max_warp_instructions", "timeout_seconds"});
    for (auto it = l.begin(); it != l.end(); ++it) {
      const std::string k = it->first.Scalar();
      if (k == "max_cycles" && s.mode == "functional")
        r.fail(it->first, "limits.max_cycles",
               "functional mode has no cycles; use max_warp_instructions or timeout_seconds");
      s.sets.push_back({"limits." + k + "=" + r.text(it->second, "limits." + k),
                        r.where(it->second), "limits." + k});
    }
  }

  if (const YAML::Node vs = root["variants"]) {
    if (!vs.IsSequence() || vs.size() == 0)
      r.fail(vs, "variants", "expected a list of {name, platform, set}");
    std::set<std::string> names;
    for (size_t i = 0; i < vs.size(); ++i) {
      const std::string key = fmt::format("variants[{}]", i);
      r.keys(vs[i], key, {"name", "platform", "set"});
      if (!vs[i]["name"]) r.fail(vs[i], key, "missing key 'name'");
      SweepVariant v;
      v.name = r.text(vs[i]["name"], key + ".name");
      if (!validName(v.name))
        r.fail(vs[i]["name"], key + ".name",
               fmt::format("'{}': use letters, digits, '.', '_' and '-'", v.name));
      if (!names.insert(v.name).second)
        r.fail(vs[i]["name"], key + ".name", fmt::format("'{}' is named twice", v.name));
      if (vs[i]["platform"]) {
        v.platform = r.text(vs[i]["platform"], key + ".platform");
        v.platformWhere = r.where(vs[i]["platform"]);
        if (fs::is_regular_file(fs::path(baseDir) / v.platform))
          v.platform = absolute(baseDir, v.platform);
      }
      if (vs[i]["set"]) v.sets = readSets(r, vs[i]["set"], key + ".set");
      s.variants.push_back(v);
    }
  } else {
    s.variants.push_back(SweepVariant{"base", "", "", {}});
  }

  if (root["axes"]) {
    Axes a = readAxes(r, root["axes"]);
    s.combos = std::move(a.combos);
    s.axisKeys = std::move(a.keys);
  } else {
    s.combos.push_back(AxisCombo{});
  }
  const double points =
      double(s.kernels.size()) * double(s.variants.size()) * double(s.combos.size());
  if (points > double(kMaxPoints))
    r.fail(root, "axes", fmt::format("{:.0f} points: more than {}", points, kMaxPoints));
  return s;
}

SweepSpec loadSweepSpec(const std::string& path) {
  const std::optional<std::string> text =
      fs::is_directory(path) ? std::nullopt : readInputFile(path, "sweep spec");
  if (!text) throw InputError(fmt::format("{}: cannot read the sweep spec", path));
  return parseSweepSpec(*text, path, fs::path(path).parent_path().string());
}

std::vector<std::string> SweepPoint::runArgs() const {
  std::vector<std::string> a{"--platform", platform, "--mode", mode};
  if (!exec.empty()) {
  } else if (launch.empty()) {
    a.insert(a.end(), {"--kernel", kernel, "--size", size});
  } else {
    a.insert(a.end(), {"--launch", launch});
  }
  // Its overrides apply in order, a later one winning; gpusc run refuses a key set twice.
  std::vector<std::string> assignments;
  for (const auto& s : sets) assignments.push_back(s.assignment);
  for (const auto& s : cli::lastOfEachKey(assignments)) a.insert(a.end(), {"--set", s});
  if (!exec.empty()) {
    a.push_back("--");
    a.insert(a.end(), exec.begin(), exec.end());
  }
  return a;
}

nlohmann::json pointToJson(const SweepPoint& p) {
  std::vector<std::string> sets;
  for (const auto& s : p.sets) sets.push_back(s.assignment);
  return {{"label", p.label},     {"kernel", p.kernel},     {"size", p.size}, {"launch", p.launch},
          {"variant", p.variant}, {"platform", p.platform}, {"mode", p.mode}, {"axes", p.axes},
          {"sets", sets},         {"config", p.configYaml}, {"hash", p.hash}, {"exec", p.exec}};
}

SweepPoint pointFromJson(const nlohmann::json& j) {
  SweepPoint p;
  p.label = j.at("label");
  p.kernel = j.at("kernel");
  p.size = j.at("size");
  p.launch = j.at("launch");
  p.variant = j.at("variant");
  p.platform = j.at("platform");
  p.mode = j.at("mode");
  p.axes = j.at("axes");
  for (const auto& s : j.at("sets")) p.sets.push_back({s.get<std::string>(), "", ""});
  p.configYaml = j.at("config");
  p.hash = j.at("hash");
  p.exec = j.value("exec", std::vector<std::string>{});
  return p;
}

namespace {
std::string fileContents(const std::string& path, const std::string& what) {
  std::optional<std::string> text = readInputFile(path, what);
  if (!text) throw InputError(fmt::format("{}: cannot read {}", path, what));
  return std::move(*text);
}
}  // namespace

std::string workIdentity(const SweepKernel& k) {
  if (!k.exec.empty()) {
    // The program by its contents (when it is a file) and its arguments.
    std::string text = "program";
    if (fs::is_regular_file(k.exec[0])) {
      Sha256 h;
      h.update(fileContents(k.exec[0], "program"));
      text += " contents: " + h.hexDigest();
    } else {
      text += ": " + k.exec[0];
    }
    for (size_t a = 1; a < k.exec.size(); ++a) text += "\nargument: " + k.exec[a];
    return text + "\n";
  }
  if (k.launch.empty()) return fmt::format("kernel: {}\nsize: {}\n", k.name, k.size);
  // The launch spec by its contents and those of every file it reads, not by its path.
  const LaunchSpec spec = loadLaunchSpec(k.launch);
  Sha256 h;
  const auto add = [&](const std::string& role, const std::string& path) {
    const std::string data = fileContents(path, role);
    h.update(fmt::format("{} {}\n", role, data.size()));
    h.update(data);
  };
  add("launch spec", k.launch);
  add("ptx", spec.ptxPath);
  for (const auto& b : spec.buffers)
    if (!b.file.empty()) add("buffer " + b.name, b.file);
  for (const auto& e : spec.expects) add("expect " + e.buffer, e.file);
  return fmt::format("launch spec contents: {}\n", h.hexDigest());
}

std::string pointIdentity(const SweepPoint& p, const std::string& work) {
  return fmt::format("gpusc sweep point 1\nmode: {}\n{}config.yaml:\n{}", p.mode, work,
                     p.configYaml);
}

namespace {

// Resolves a point's configuration (as `gpusc run` will) and hashes it. A value a key rejects
// is reported at the override's place in the spec.
void resolve(SweepPoint& p, const std::string& platformWhere, const std::string& work) {
  std::vector<std::string> assignments;
  for (const auto& s : p.sets) assignments.push_back(s.assignment);
  PlatformConfig cfg;
  try {
    cfg = loadPlatform(p.platform, assignments);
  } catch (const InputError& e) {
    const std::string msg = e.what();
    for (const auto& s : p.sets) {
      const std::string prefix = "--set " + s.assignment + ": ";
      if (startsWith(msg, prefix))
        throw InputError(fmt::format("{}: {}: {}", s.where, s.origin, msg.substr(prefix.size())));
    }
    if (startsWith(msg, "--platform "))
      throw InputError(fmt::format("{}: platform: {}", platformWhere, msg));
    throw;
  }
  // What `gpusc run` refuses after loading: sampling in functional mode (named where the spec
  // sets sampling.mode, else where the point's platform file does).
  if (cfg.sampling.enabled() && p.mode == "functional") {
    const std::string why =
        "sampling chooses what the timing model simulates, and the sweep runs in functional "
        "mode (mode: timing)";
    for (const auto& s : p.sets)
      if (startsWith(s.assignment, "sampling.mode="))
        throw InputError(fmt::format("{}: {}: {}", s.where, s.origin, why));
    throw InputError(
        fmt::format("{}: platform: {}", platformWhere, cfg.locate("sampling.mode: " + why)));
  }
  // The configuration the run will resolve and write as its config.yaml.
  p.configYaml = configYaml(config::toYaml(cfg));
  p.hash = sha256Hex(pointIdentity(p, work));
}

}  // namespace

std::vector<SweepPoint> expandPoints(const SweepSpec& spec) {
  std::vector<SweepPoint> points;
  std::vector<std::string> works;       // per kernel
  std::vector<size_t> kernelOf;         // per point
  std::vector<std::string> platformAt;  // per point: where its platform was named
  std::set<std::string> labels;
  for (const auto& k : spec.kernels) {
    try {
      works.push_back(workIdentity(k));
    } catch (const InputError& e) {
      throw InputError(fmt::format("{}: {}", k.where, e.what()));
    }
    for (const auto& v : spec.variants)
      for (const auto& c : spec.combos) {
        SweepPoint p;
        p.kernel = k.name;
        p.size = k.size;
        p.launch = k.launch;
        p.exec = k.exec;
        p.variant = v.name;
        p.mode = spec.mode;
        p.axes = c.values;
        std::string platformWhere = spec.platformWhere;
        p.platform = spec.platform;
        if (!v.platform.empty()) {
          p.platform = v.platform;
          platformWhere = v.platformWhere;
        }
        if (!c.platform.empty()) {
          p.platform = c.platform;
          platformWhere = c.platformWhere;
        }
        p.sets = spec.sets;
        p.sets.insert(p.sets.end(), v.sets.begin(), v.sets.end());
        p.sets.insert(p.sets.end(), c.sets.begin(), c.sets.end());
        std::vector<std::string> axisText;
        for (const auto& key : spec.axisKeys)
          if (c.values.contains(key)) {
            const auto& val = c.values[key];
            axisText.push_back(key + "=" + (val.is_string() ? val.get<std::string>() : val.dump()));
          }
        p.label = fmt::format("{}{}/{}", k.name, k.size.empty() ? "" : "@" + k.size, v.name);
        if (!axisText.empty()) p.label += "/" + join(axisText, ",");
        if (!labels.insert(p.label).second)
          throw InputError(fmt::format("{}: two points are both '{}'", spec.file, p.label));
        points.push_back(std::move(p));
        kernelOf.push_back(works.size() - 1);
        platformAt.push_back(platformWhere);
      }
  }
  // Resolving is most of the cost (parsing and writing YAML): one thread per core, each
  // taking every n-th point. The error reported is the first point's, as if serial.
  const size_t n =
      std::max<size_t>(1, std::min<size_t>(HostWorkers::available(), points.size() / 16));
  std::vector<std::exception_ptr> errors(points.size());
  const auto work = [&](size_t first) {
    for (size_t i = first; i < points.size(); i += n) try {
        resolve(points[i], platformAt[i], works[kernelOf[i]]);
      } catch (...) {
        errors[i] = std::current_exception();
      }
  };
  std::vector<std::thread> threads;
  for (size_t t = 1; t < n; ++t) threads.emplace_back(work, t);
  work(0);
  for (auto& t : threads) t.join();
  for (const auto& e : errors)
    if (e) std::rethrow_exception(e);
  return points;
}

}  // namespace gpusc::cli
