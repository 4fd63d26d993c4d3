#include "common/config.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>

#include "common/strings.hpp"

namespace gpusc::config {

std::optional<std::string> check(const std::string& v, const OneOf& o) {
  for (const auto& n : o.names)
    if (n == v) return std::nullopt;
  return fmt::format("'{}' is not one of: {}{}", v, gpusc::join(o.names, ", "),
                     didYouMean(v, o.names));
}

std::optional<std::string> check(const std::vector<std::string>& v, const OneOf& o) {
  for (const auto& e : v)
    if (auto err = check(e, o)) return err;
  return std::nullopt;
}

std::optional<std::string> Reader::checkAt(const std::string& path, const std::string& value,
                                           const OneOf& o) const {
  auto it = src_.registered.find(path);
  if (it == src_.registered.end()) return check(value, o);
  OneOf all = o;
  for (const auto& n : it->second)
    if (std::find(all.names.begin(), all.names.end(), n) == all.names.end()) all.names.push_back(n);
  return check(value, all);
}

std::string KeyLister::describe(const OneOf& o) { return "one of " + gpusc::join(o.names, ", "); }

std::string Source::where(const std::string& path, const YAML::Mark& mark) const {
  // A value set on the command line is reported as such; its YAML mark would be meaningless.
  // An error at or below a --set key, or at a key a --set created a section under.
  for (const auto& [p, text] : overrides) {
    if (path == p || startsWith(path, p + ".") || startsWith(path, p + "[") ||
        startsWith(p, path + "."))
      return fmt::format("--set {}", text);
  }
  return markWhere(file, mark);
}

std::string KeyOrigins::locate(const std::string& message) const {
  const size_t colon = message.find(": ");
  if (colon == std::string::npos || colon == 0) return message;
  // The message begins with one key path or with a list of them ("a.b, c.d: ..."), as the
  // configuration's own rules name every key involved.
  std::vector<std::string> paths;
  for (size_t from = 0; from < colon;) {
    size_t to = message.find(", ", from);
    if (to == std::string::npos || to > colon) to = colon;
    paths.push_back(message.substr(from, to - from));
    from = to + 2;
  }
  for (const std::string& path : paths) {
    if (path.empty()) return message;
    for (char ch : path)
      if (!(std::isalnum(static_cast<unsigned char>(ch)) || ch == '_' || ch == '.' || ch == '[' ||
            ch == ']'))
        return message;
  }
  // A --set among the keys is named first (the user's last word), else the first key the file
  // writes.
  const std::string* found = nullptr;
  for (const std::string& path : paths)
    if (auto it = where.find(path); it != where.end()) {
      if (startsWith(it->second, "--set ")) return it->second + ": " + message;
      if (!found) found = &it->second;
    }
  if (found) return *found + ": " + message;
  // Keys the file leaves at their defaults: the file is still where they would go.
  if (paths.front().find('.') != std::string::npos) return file + ": " + message;
  return message;
}

std::string markWhere(const std::string& file, const YAML::Mark& mark) {
  if (mark.is_null() || mark.line < 0) return file;
  return fmt::format("{}:{}:{}", file, mark.line + 1, mark.column + 1);
}

namespace {

// The line (1-based) where a second YAML document starts, or 0: a document marker ("---" or
// "..." at a line's start, then a space or the line's end) after content, followed by more
// content. A marker cannot occur inside a scalar (the YAML spec forbids it), so lines suffice;
// yaml-cpp's Load reads only the first document, and its LoadAll can loop on damaged input.
size_t secondDocumentLine(const std::string& text) {
  const auto isMarker = [](std::string_view l) {
    return l.size() >= 3 && (l.substr(0, 3) == "---" || l.substr(0, 3) == "...") &&
           (l.size() == 3 || l[3] == ' ' || l[3] == '\t' || l[3] == '\r');
  };
  const auto hasContent = [](std::string_view l) {
    const size_t i = l.find_first_not_of(" \t\r");
    return i != std::string_view::npos && l[i] != '#';
  };
  bool content = false, ended = false;
  size_t line = 0, endLine = 0;
  for (size_t pos = 0; pos <= text.size();) {
    size_t eol = text.find('\n', pos);
    if (eol == std::string::npos) eol = text.size();
    const std::string_view l(text.data() + pos, eol - pos);
    ++line;
    if (isMarker(l)) {
      if (content && !ended) {
        ended = true;
        endLine = line;
      }
      // "--- value": the marker's own line may carry content.
      if (l.substr(0, 3) == "---" && hasContent(l.substr(3))) {
        if (ended) return endLine;
        content = true;
      }
    } else if (hasContent(l) && !(!content && l[0] == '%')) {  // %YAML directives come first
      if (ended) return endLine;
      content = true;
    }
    pos = eol + 1;
  }
  return 0;
}

}  // namespace

YAML::Node parseYaml(const std::string& text, const std::string& fileName) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw InputError(fmt::format("{}:{}:{}: invalid YAML: {}", fileName, e.mark.line + 1,
                                 e.mark.column + 1, e.msg));
  }
  // One configuration per file: a second document would be silently ignored.
  if (const size_t line = secondDocumentLine(text))
    throw InputError(
        fmt::format("{}:{}:1: a second YAML document; a file holds one "
                    "configuration (remove the '---' and what follows)",
                    fileName, line));
  return root;
}

void applyOverride(YAML::Node& root, Source& src, const std::string& assignment) {
  auto eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0)
    throw InputError(fmt::format("--set {}: expected key.path=value", assignment));
  std::string path(trim(std::string_view(assignment).substr(0, eq)));
  std::string text(trim(std::string_view(assignment).substr(eq + 1)));
  YAML::Node value;
  try {
    value = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw InputError(fmt::format("--set {}: invalid value: {}", assignment, e.msg));
  }
  if (!root.IsMap()) root = YAML::Node(YAML::NodeType::Map);
  auto parts = split(path, '.');
  YAML::Node cur;
  cur.reset(root);
  for (size_t i = 0; i < parts.size(); ++i) {
    const std::string& key = parts[i];
    if (key.empty()) throw InputError(fmt::format("--set {}: empty key in '{}'", assignment, path));
    if (i + 1 == parts.size()) {
      cur[key] = value;
    } else {
      YAML::Node next = cur[key];
      if (!next.IsDefined() || next.IsNull()) {
        cur[key] = YAML::Node(YAML::NodeType::Map);
        next.reset(cur[key]);
      } else if (!next.IsMap()) {
        throw InputError(fmt::format(
            "--set {}: '{}' is not a section", assignment,
            gpusc::join(std::vector<std::string>(parts.begin(), parts.begin() + i + 1), ".")));
      }
      cur.reset(next);
    }
  }
  src.overrides[path] = assignment;
}

// ---- scalars -----------------------------------------------------------------------------------

std::optional<std::string> convertScalar(const YAML::Node& n, bool& out) {
  std::string s = n.Scalar();
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (s == "true" || s == "yes" || s == "on") {
    out = true;
  } else if (s == "false" || s == "no" || s == "off") {
    out = false;
  } else {
    return fmt::format("expected true or false, got '{}'", n.Scalar());
  }
  return std::nullopt;
}

std::optional<std::string> convertScalar(const YAML::Node& n, std::string& out) {
  out = n.Scalar();
  return std::nullopt;
}

std::optional<std::string> convertScalar(const YAML::Node& n, double& out) {
  const std::string& s = n.Scalar();
  const char* b = s.c_str();
  char* end = nullptr;
  errno = 0;
  double v = std::strtod(b, &end);
  if (s.empty() || end != b + s.size() || errno == ERANGE || !std::isfinite(v))
    return fmt::format("expected a number, got '{}'", s);
  out = v;
  return std::nullopt;
}

namespace {
template <class I>
bool parseInteger(const std::string& s, I& out) {
  std::string_view t = s;
  int base = 10;
  bool neg = false;
  if (!t.empty() && (t[0] == '-' || t[0] == '+')) {
    neg = t[0] == '-';
    t.remove_prefix(1);
  }
  if (t.size() > 2 && t[0] == '0' && (t[1] == 'x' || t[1] == 'X')) {
    base = 16;
    t.remove_prefix(2);
  }
  uint64_t mag = 0;
  auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), mag, base);
  if (t.empty() || ec != std::errc() || p != t.data() + t.size()) return false;
  if constexpr (std::is_signed_v<I>) {
    if (mag > uint64_t(INT64_MAX) + (neg ? 1 : 0)) return false;
    out = neg ? static_cast<I>(0 - mag) : static_cast<I>(mag);
  } else {
    if (neg && mag != 0) return false;
    out = mag;
  }
  return true;
}
}  // namespace

std::optional<std::string> convertScalar(const YAML::Node& n, int64_t& out) {
  if (!parseInteger(n.Scalar(), out))
    return fmt::format("expected an integer, got '{}'", n.Scalar());
  return std::nullopt;
}

std::optional<std::string> convertScalar(const YAML::Node& n, uint64_t& out) {
  if (!parseInteger(n.Scalar(), out))
    return fmt::format("expected a non-negative integer, got '{}'", n.Scalar());
  return std::nullopt;
}

// ---- reader ------------------------------------------------------------------------------------

Reader::Reader(const YAML::Node& node, const Source& src, std::string path)
    : src_(src), path_(std::move(path)) {
  if (!node || node.IsNull()) return;
  mark_ = node.Mark();
  for (auto it = node.begin(); it != node.end(); ++it) {
    if (!it->first.IsScalar())
      throw InputError(fmt::format("{}: expected a key name", src_.where(path_, it->first.Mark())));
    std::string key = it->first.Scalar();
    if (entries_.count(key))
      throw InputError(fmt::format("{}: duplicate key '{}'",
                                   src_.where(join(key.c_str()), it->first.Mark()),
                                   join(key.c_str())));
    entries_[key] = Entry{it->first, it->second, false};
  }
}

void Reader::require(bool ok, const char* key, const std::string& message) {
  if (ok) return;
  const std::string path = join(key);
  YAML::Mark mark = mark_;
  if (auto it = entries_.find(key); it != entries_.end())
    mark = it->second.value.Mark();
  else if (auto m = src_.marks.find(path); m != src_.marks.end())
    mark = m->second;  // a key below this section, or a list entry ("noc.sm_positions[2]")
  fail(path, mark, message);
}

void Reader::require(bool ok, std::initializer_list<const char*> keys, const std::string& message) {
  if (ok) return;
  std::vector<std::string> paths;
  for (const char* k : keys) paths.push_back(join(k));
  // Reported where the user set one of them: a --set, else the first key's (or its section's)
  // place in the file.
  std::string where;
  for (const std::string& p : paths)
    if (src_.overrides.count(p)) {
      where = src_.where(p, YAML::Mark::null_mark());
      break;
    }
  if (where.empty()) {
    // The first key the file sets (its own line), else the section of the first one it names.
    for (const std::string& p : paths)
      if (auto m = src_.marks.find(p); m != src_.marks.end()) {
        where = src_.where(p, m->second);
        break;
      }
  }
  if (where.empty()) {
    YAML::Mark mark = mark_;
    for (const char* k : keys) {
      const std::string first = split(k, '.').front();
      if (auto it = entries_.find(first); it != entries_.end()) {
        mark = it->second.value.Mark();
        break;
      }
    }
    where = src_.where(paths.front(), mark);
  }
  throw InputError(fmt::format("{}: {}: {}", where, gpusc::join(paths, ", "), message));
}

void Reader::unused(const char* key, const std::string& why) {
  const std::string path = join(key);
  for (const auto& [p, text] : src_.overrides)
    if (p == path || startsWith(p, path + ".") || startsWith(p, path + "["))
      throw InputError(fmt::format("--set {}: {}: has no effect: {}", text, p, why));
}

void Reader::finish() {
  for (const auto& [key, e] : entries_) {
    if (e.used) continue;
    std::string path = join(key.c_str());
    throw InputError(fmt::format("{}: unknown key '{}'{}", src_.where(path, e.key.Mark()), path,
                                 didYouMean(key, keys_)));
  }
}

void Reader::fail(const std::string& path, const YAML::Mark& mark, const std::string& msg) const {
  throw InputError(fmt::format("{}: {}: {}", src_.where(path, mark), path, msg));
}

}  // namespace gpusc::config
