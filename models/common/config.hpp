// Typed, validated configuration.
//
// A configuration section is a struct deriving from config::Section with a member template
//
//   template <class V> void visit(V& v) {
//     v.field("num_sms", num_sms, "Number of streaming multiprocessors", config::Range<uint32_t>{1,
//     1024}); v.field("l1d", l1d, "Per-SM L1 data cache");            // nested section
//     v.require(max_warps * 32 >= max_threads, "max_warps", "too few warps for max_threads");
//   }
//
// The same visit() drives every visitor: the YAML reader (types, ranges, unknown keys, all with
// file:line), the YAML and JSON writers of the resolved configuration, and the key reference
// printed by `gpusc list keys`. Defaults are the member initialisers; there are no others.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>
#include <nlohmann/json.hpp>

#include "common/error.hpp"

namespace gpusc::config {

struct Section {};

template <class T>
inline constexpr bool kIsSection = std::is_base_of_v<Section, T>;

template <class T>
struct IsVector : std::false_type {};
template <class T>
struct IsVector<std::vector<T>> : std::true_type {};

// ---- constraints -------------------------------------------------------------------------------

template <class T>
struct Range {
  T lo, hi;
};
template <class T>
Range(T, T) -> Range<T>;

struct OneOf {
  std::vector<std::string> names;
};

struct PowerOfTwo {};

// Above zero (with a Range from 0: a bound the range's lowest value does not meet).
struct Positive {};

// Each check returns an error message, or nothing when the value is fine.
template <class T, class U>
std::optional<std::string> check(const T& v, const Range<U>& r) {
  if constexpr (std::is_arithmetic_v<T>) {
    if (v < static_cast<T>(r.lo) || v > static_cast<T>(r.hi))
      return fmt::format("{} is out of range [{}, {}]", v, r.lo, r.hi);
  } else if constexpr (IsVector<T>::value) {
    for (const auto& e : v)
      if (auto err = check(e, r)) return err;
  }
  return std::nullopt;
}

std::optional<std::string> check(const std::string& v, const OneOf& o);
std::optional<std::string> check(const std::vector<std::string>& v, const OneOf& o);

template <class T>
std::optional<std::string> check(const T& v, const PowerOfTwo&) {
  if constexpr (std::is_integral_v<T>) {
    if (v == 0 || (v & (v - 1)) != 0) return fmt::format("{} is not a power of two", v);
  }
  return std::nullopt;
}

template <class T>
std::optional<std::string> check(const T& v, const Positive&) {
  if constexpr (std::is_arithmetic_v<T>) {
    if (!(v > 0)) return fmt::format("{} is not above 0", v);
  } else if constexpr (IsVector<T>::value) {
    for (const auto& e : v)
      if (auto err = check(e, Positive{})) return err;
  }
  return std::nullopt;
}

// ---- where values come from --------------------------------------------------------------------

// Overrides from the command line (--set a.b=c): path -> the text the user typed.
using Overrides = std::map<std::string, std::string>;

// Names a testbench registered beside the built-in policies, per key path ("sm.scheduler"): a
// OneOf field at that path accepts them too (see gpu/policies.hpp).
using RegisteredNames = std::map<std::string, std::vector<std::string>>;

struct Source {
  std::string file;     // file name used in messages
  Overrides overrides;  // applied --set options, for messages
  RegisteredNames registered;
  // Where each key path the reader read was written (sections, list entries and values): filled
  // as the reader goes, so a rule between keys and an error after loading can name the line.
  mutable std::map<std::string, YAML::Mark> marks;
  std::string where(const std::string& path, const YAML::Mark& mark) const;
};

// Where a loaded configuration's keys came from, for errors found after loading (while the model
// is built from it, or as it runs): each key path's "FILE:LINE:COL" or "--set TEXT".
struct KeyOrigins {
  std::string file;                          // the configuration file
  std::map<std::string, std::string> where;  // key path -> its place

  // `message` with the place of the key it begins with ("a.b.c: ...") put in front: that key's
  // place, or just the file for a key the file leaves at its default. Unchanged when it does not
  // begin with a key path.
  std::string locate(const std::string& message) const;
};

// Applies `path=value` to a YAML tree (creating maps on the way) and records it in `src`.
void applyOverride(YAML::Node& root, Source& src, const std::string& assignment);

// "FILE:LINE:COL" of a YAML mark (just FILE when the node has none), for messages.
std::string markWhere(const std::string& file, const YAML::Mark& mark);
// Parses YAML text; a syntax error is an InputError "FILE:LINE:COL: invalid YAML: ...".
YAML::Node parseYaml(const std::string& text, const std::string& fileName);

// ---- scalar conversion -------------------------------------------------------------------------

// Converts a YAML scalar to T or returns an error message ("expected an integer, got 'x'").
std::optional<std::string> convertScalar(const YAML::Node& n, bool& out);
std::optional<std::string> convertScalar(const YAML::Node& n, std::string& out);
std::optional<std::string> convertScalar(const YAML::Node& n, double& out);
std::optional<std::string> convertScalar(const YAML::Node& n, int64_t& out);
std::optional<std::string> convertScalar(const YAML::Node& n, uint64_t& out);

template <class T>
std::optional<std::string> convertScalar(const YAML::Node& n, T& out) {
  static_assert(std::is_integral_v<T>, "unsupported configuration type");
  if constexpr (std::is_signed_v<T>) {
    int64_t v = 0;
    if (auto e = convertScalar(n, v)) return e;
    if (v < int64_t(std::numeric_limits<T>::min()) || v > int64_t(std::numeric_limits<T>::max()))
      return fmt::format("{} does not fit the field's type", v);
    out = static_cast<T>(v);
  } else {
    uint64_t v = 0;
    if (auto e = convertScalar(n, v)) return e;
    if (v > uint64_t(std::numeric_limits<T>::max()))
      return fmt::format("{} does not fit the field's type", v);
    out = static_cast<T>(v);
  }
  return std::nullopt;
}

template <class T>
const char* typeName() {
  if constexpr (std::is_same_v<T, bool>)
    return "bool";
  else if constexpr (std::is_same_v<T, std::string>)
    return "string";
  else if constexpr (std::is_floating_point_v<T>)
    return "number";
  else if constexpr (std::is_integral_v<T> && std::is_signed_v<T>)
    return "integer";
  else if constexpr (std::is_integral_v<T>)
    return "unsigned integer";
  else if constexpr (kIsSection<T>)
    return "section";
  else if constexpr (IsVector<T>::value)
    return "list";
  else
    return "value";
}

// ---- the reader --------------------------------------------------------------------------------

class Reader {
 public:
  // `node` is the section's map (may be null: all defaults). `path` is the dotted prefix.
  Reader(const YAML::Node& node, const Source& src, std::string path);

  template <class T, class... C>
  void field(const char* key, T& value, const char* doc, const C&... checks) {
    (void)doc;
    keys_.emplace_back(key);
    const std::string path = join(key);
    auto it = entries_.find(key);
    if (it != entries_.end()) {
      it->second.used = true;
      read(path, it->second.value, value);
    }
    std::optional<std::string> err;
    ((err = err ? err : checkAt(path, value, checks)), ...);
    if (err)
      fail(path, it != entries_.end() ? it->second.value.Mark() : YAML::Mark::null_mark(), *err);
  }

  // A rule that involves several fields; reported at `key`.
  void require(bool ok, const char* key, const std::string& message);
  // A rule between several keys (relative to this section, dotted paths allowed), reported with
  // every one's path ("memory.dram.tRC, memory.dram.tRAS: ...") at the first one a --set gave, or
  // else at the first one's place in the file.
  void require(bool ok, std::initializer_list<const char*> keys, const std::string& message);

  // A key (or section) this configuration does not use, e.g. the settings of a network or
  // regulator other than the chosen one: a --set at or below it is refused with `why` (a
  // platform file may carry such keys: it can describe both and choose by another key).
  void unused(const char* key, const std::string& why);

  // Errors for keys that no field consumed, with the closest valid key.
  void finish();

 private:
  struct Entry {
    YAML::Node key;
    YAML::Node value;
    bool used = false;
  };

  std::string join(const char* key) const { return path_.empty() ? key : path_ + "." + key; }
  template <class T, class C>
  std::optional<std::string> checkAt(const std::string&, const T& value, const C& c) const {
    return check(value, c);
  }
  // A policy name: the built-in names, and those registered for this key.
  std::optional<std::string> checkAt(const std::string& path, const std::string& value,
                                     const OneOf& o) const;
  [[noreturn]] void fail(const std::string& path, const YAML::Mark& mark,
                         const std::string& msg) const;

  template <class T>
  void read(const std::string& path, const YAML::Node& n, T& value) {
    src_.marks.emplace(path, n.Mark());
    if constexpr (kIsSection<T>) {
      if (!n.IsMap() && !n.IsNull()) fail(path, n.Mark(), "expected a map of keys (a section)");
      Reader sub(n, src_, path);
      value.visit(sub);
      sub.finish();
    } else if constexpr (IsVector<T>::value) {
      using E = typename T::value_type;
      if (!n.IsSequence()) fail(path, n.Mark(), "expected a list");
      T out;
      for (size_t i = 0; i < n.size(); ++i) {
        E e{};
        read(fmt::format("{}[{}]", path, i), n[i], e);
        out.push_back(std::move(e));
      }
      value = std::move(out);
    } else {
      if (!n.IsScalar())
        fail(path, n.Mark(), fmt::format("expected a single value ({})", typeName<T>()));
      if (auto err = convertScalar(n, value)) fail(path, n.Mark(), *err);
    }
  }

  const Source& src_;
  std::string path_;
  YAML::Mark mark_;
  std::map<std::string, Entry> entries_;
  std::vector<std::string> keys_;
};

// ---- writers -----------------------------------------------------------------------------------

// Emits the resolved configuration as commented YAML (loadable again as a platform file).
class YamlWriter {
 public:
  explicit YamlWriter(YAML::Emitter& out) : out_(out) {}

  template <class T, class... C>
  void field(const char* key, const T& value, const char* doc, const C&...) {
    out_ << YAML::Key << key;
    if constexpr (kIsSection<T>) {
      out_ << YAML::Comment(doc) << YAML::Value << YAML::BeginMap;
      const_cast<T&>(value).visit(*this);
      out_ << YAML::EndMap;
    } else {
      out_ << YAML::Value;
      emit(value);
      out_ << YAML::Comment(doc);
    }
  }
  void require(bool, const char*, const std::string&) {}
  void require(bool, std::initializer_list<const char*>, const std::string&) {}
  void unused(const char*, const std::string&) {}

 private:
  template <class T>
  void emit(const T& v) {
    if constexpr (kIsSection<T>) {
      out_ << YAML::BeginMap;
      const_cast<T&>(v).visit(*this);
      out_ << YAML::EndMap;
    } else if constexpr (IsVector<T>::value) {
      if constexpr (kIsSection<typename T::value_type>) {
        out_ << YAML::BeginSeq;
      } else {
        out_ << YAML::Flow << YAML::BeginSeq;
      }
      for (const auto& e : v) emit(e);
      out_ << YAML::EndSeq;
    } else if constexpr (std::is_same_v<T, bool>) {
      out_ << (v ? "true" : "false");
    } else if constexpr (std::is_floating_point_v<T>) {
      out_ << fmt::format("{}", v);
    } else if constexpr (std::is_same_v<T, std::string>) {
      out_ << v;
    } else {
      out_ << v;
    }
  }
  YAML::Emitter& out_;
};

class JsonWriter {
 public:
  explicit JsonWriter(nlohmann::json& out) : out_(out) {}

  template <class T, class... C>
  void field(const char* key, const T& value, const char*, const C&...) {
    out_[key] = toJson(value);
  }
  void require(bool, const char*, const std::string&) {}
  void require(bool, std::initializer_list<const char*>, const std::string&) {}
  void unused(const char*, const std::string&) {}

 private:
  template <class T>
  static nlohmann::json toJson(const T& v) {
    if constexpr (kIsSection<T>) {
      nlohmann::json j = nlohmann::json::object();
      JsonWriter w(j);
      const_cast<T&>(v).visit(w);
      return j;
    } else if constexpr (IsVector<T>::value) {
      nlohmann::json j = nlohmann::json::array();
      for (const auto& e : v) j.push_back(toJson(e));
      return j;
    } else {
      return nlohmann::json(v);
    }
  }
  nlohmann::json& out_;
};

// One row per key for the configuration reference (`gpusc list keys`, docs/configuration.md).
// The constraint is also given field by field, for tools that draw values (the configuration
// fuzzer, `gpusc list keys --json`): the range's bounds (empty: none), whether the value must be a
// power of two, and the names a OneOf key accepts.
struct KeyInfo {
  std::string path, type, defaultValue, constraint, doc;
  std::string lo, hi;
  bool powerOfTwo = false;
  std::vector<std::string> choices;
};

class KeyLister {
 public:
  KeyLister(std::vector<KeyInfo>& out, std::string path) : out_(out), path_(std::move(path)) {}

  template <class T, class... C>
  void field(const char* key, const T& value, const char* doc, const C&... checks) {
    std::string path = path_.empty() ? key : path_ + "." + key;
    if constexpr (kIsSection<T>) {
      KeyLister sub(out_, path);
      const_cast<T&>(value).visit(sub);
    } else {
      KeyInfo k;
      k.path = path;
      k.type = typeName<T>();
      k.defaultValue = render(value);
      k.doc = doc;
      ((k.constraint += (k.constraint.empty() ? "" : "; ") + describe(checks)), ...);
      (note(k, checks), ...);
      out_.push_back(std::move(k));
    }
  }
  void require(bool, const char*, const std::string&) {}
  void require(bool, std::initializer_list<const char*>, const std::string&) {}
  void unused(const char*, const std::string&) {}

 private:
  template <class T>
  static std::string render(const T& v) {
    if constexpr (IsVector<T>::value) {
      if constexpr (kIsSection<typename T::value_type>) {
        return fmt::format("{} entries", v.size());
      } else {
        std::string s = "[";
        for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + render(v[i]);
        return s + "]";
      }
    } else if constexpr (std::is_same_v<T, bool>) {
      return v ? "true" : "false";
    } else {
      return fmt::format("{}", v);
    }
  }
  template <class U>
  static std::string describe(const Range<U>& r) {
    return fmt::format("{} .. {}", r.lo, r.hi);
  }
  static std::string describe(const OneOf& o);
  static std::string describe(const PowerOfTwo&) { return "power of two"; }
  static std::string describe(const Positive&) { return "above 0"; }
  template <class U>
  static void note(KeyInfo& k, const Range<U>& r) {
    k.lo = fmt::format("{}", r.lo);
    k.hi = fmt::format("{}", r.hi);
  }
  static void note(KeyInfo& k, const OneOf& o) { k.choices = o.names; }
  static void note(KeyInfo& k, const PowerOfTwo&) { k.powerOfTwo = true; }
  static void note(KeyInfo&, const Positive&) {}

  std::vector<KeyInfo>& out_;
  std::string path_;
};

// ---- entry points ------------------------------------------------------------------------------

// Loads a whole configuration of type T from YAML text. Throws InputError with file:line.
// `registered`: policy names a testbench added, accepted by the OneOf field at each key path.
// `origins`, if given, receives where each key came from.
template <class T>
T load(const std::string& text, const std::string& fileName, const std::vector<std::string>& sets,
       const RegisteredNames& registered = {}, KeyOrigins* origins = nullptr) {
  YAML::Node root = parseYaml(text, fileName);
  if (!root.IsMap() && !root.IsNull())
    throw InputError(fmt::format("{}:1:1: expected a map of keys at the top level", fileName));
  Source src;
  src.file = fileName;
  src.registered = registered;
  for (const auto& s : sets) applyOverride(root, src, s);
  T cfg;
  Reader r(root, src, "");
  cfg.visit(r);
  r.finish();
  if (origins) {
    origins->file = fileName;
    for (const auto& [path, mark] : src.marks) origins->where[path] = src.where(path, mark);
  }
  return cfg;
}

template <class T>
std::string toYaml(const T& cfg) {
  YAML::Emitter out;
  out << YAML::BeginMap;
  YamlWriter w(out);
  const_cast<T&>(cfg).visit(w);
  out << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

template <class T>
nlohmann::json toJson(const T& cfg) {
  nlohmann::json j = nlohmann::json::object();
  JsonWriter w(j);
  const_cast<T&>(cfg).visit(w);
  return j;
}

// The keys with the values of `cfg` as their defaults (a loaded platform's).
template <class T>
std::vector<KeyInfo> listKeys(const T& cfg) {
  std::vector<KeyInfo> out;
  KeyLister l(out, "");
  const_cast<T&>(cfg).visit(l);
  return out;
}
template <class T>
std::vector<KeyInfo> listKeys() {
  std::vector<KeyInfo> out;
  T cfg;
  KeyLister l(out, "");
  cfg.visit(l);
  return out;
}

}  // namespace gpusc::config
