#include "rtl/rtl_waves.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <unordered_map>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "common/error.hpp"

namespace gpusc::rtl {

RtlWaves::Stream& RtlWaves::addStream(std::string scope) {
  streams_.push_back(Stream{std::move(scope), {}, {}});
  return streams_.back();
}

namespace {

// A VCD identifier code for variable number `n`: printable characters '!' .. '~'.
std::string codeOf(uint64_t n) {
  std::string s;
  do {
    s.push_back(char('!' + n % 94));
    n /= 94;
  } while (n);
  return s;
}

// A VCD text split into whitespace-separated tokens, read in order.
class Tokens {
 public:
  explicit Tokens(const std::string& text) : text_(text) {}
  bool next(std::string& t) {
    while (at_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[at_]))) ++at_;
    if (at_ >= text_.size()) return false;
    const size_t from = at_;
    while (at_ < text_.size() && !std::isspace(static_cast<unsigned char>(text_[at_]))) ++at_;
    t.assign(text_, from, at_ - from);
    return true;
  }

 private:
  const std::string& text_;
  size_t at_ = 0;
};

// One VCD text parsed: its declarations (scopes and variables, codes renamed) and its value
// changes grouped by time (in femtoseconds).
struct ParsedVcd {
  std::string declarations;
  std::vector<std::pair<uint64_t, std::string>> changes;  // in time order
};

// Femtoseconds per unit of a `$timescale` text such as "1fs", "1 ps" or "10 ns".
uint64_t femtosecondsPer(const std::string& timescale, const std::string& what) {
  size_t i = 0;
  while (i < timescale.size() && std::isdigit(static_cast<unsigned char>(timescale[i]))) ++i;
  const uint64_t n = i ? std::stoull(timescale.substr(0, i)) : 0;
  const std::string unit = timescale.substr(i);
  const std::map<std::string, uint64_t> units = {
      {"fs", 1}, {"ps", 1000}, {"ns", 1000000}, {"us", 1000000000}};
  const auto u = units.find(unit);
  if (!n || u == units.end())
    throw InputError(fmt::format("{}: timescale '{}' is not in fs, ps, ns or us", what, timescale));
  return n * u->second;
}

using CodeMap = std::unordered_map<std::string, std::string>;

// Parses `text`; variable codes are renamed through `codes`, new ones from `nextCode` on (a
// stream of a scope already seen, such as a block made anew for each kernel, reuses that
// scope's map: the same variables). `stream`: a block's stream, whose times are femtoseconds
// whatever its $timescale says, and whose outermost scope named top or TOP (Verilator's wrapper
// of the block) is left out.
ParsedVcd parse(const std::string& text, uint64_t& nextCode, bool stream, const std::string& what,
                CodeMap& codes) {
  const bool dropTop = stream;
  ParsedVcd p;
  Tokens in(text);
  std::string t;
  uint64_t scale = 1;
  int depth = 0;
  std::vector<bool> dropped;  // per open scope: left out
  // Declarations.
  while (in.next(t)) {
    if (t == "$enddefinitions") {
      while (in.next(t) && t != "$end") {
      }
      break;
    }
    if (t == "$scope") {
      std::string kind, name;
      in.next(kind);
      in.next(name);
      while (in.next(t) && t != "$end") {
      }
      const bool drop = dropTop && depth == 0 && (name == "top" || name == "TOP");
      dropped.push_back(drop);
      ++depth;
      if (!drop) p.declarations += fmt::format("$scope {} {} $end\n", kind, name);
    } else if (t == "$upscope") {
      while (in.next(t) && t != "$end") {
      }
      if (!dropped.empty()) {
        if (!dropped.back()) p.declarations += "$upscope $end\n";
        dropped.pop_back();
      }
      --depth;
    } else if (t == "$var") {
      std::string type, size, code, rest;
      in.next(type);
      in.next(size);
      in.next(code);
      while (in.next(t) && t != "$end") rest += " " + t;
      auto [it, added] = codes.emplace(code, std::string());
      if (added) it->second = codeOf(nextCode++);
      p.declarations += fmt::format("$var {} {} {}{} $end\n", type, size, it->second, rest);
    } else if (t == "$timescale") {
      std::string ts;
      while (in.next(t) && t != "$end") ts += t;
      if (!stream) scale = femtosecondsPer(ts, what);
    } else if (!t.empty() && t[0] == '$') {  // $date, $version, $comment: skipped
      while (in.next(t) && t != "$end") {
      }
    }
  }
  // Value changes.
  uint64_t time = 0;
  std::string* cur = nullptr;
  const auto code = [&](const std::string& c) -> const std::string& {
    const auto it = codes.find(c);
    if (it == codes.end())
      throw InputError(fmt::format("{}: a value change of undeclared variable '{}'", what, c));
    return it->second;
  };
  const auto section = [&]() -> std::string& {
    if (!cur) {
      p.changes.emplace_back(time, std::string());
      cur = &p.changes.back().second;
    }
    return *cur;
  };
  while (in.next(t)) {
    if (t[0] == '#') {
      const uint64_t next = std::stoull(t.substr(1)) * scale;
      if (next != time || p.changes.empty()) {
        time = next;
        cur = nullptr;
      }
    } else if (t == "$comment") {
      while (in.next(t) && t != "$end") {
      }
    } else if (t[0] == '$') {  // $dumpvars, $dumpall, $dumpon, $dumpoff, $end
    } else if (t[0] == 'b' || t[0] == 'B' || t[0] == 'r' || t[0] == 'R') {
      std::string c;
      in.next(c);
      section() += t + " " + code(c) + "\n";
    } else {
      section() += t.substr(0, 1) + code(t.substr(1)) + "\n";
    }
  }
  return p;
}

// The scope tree of the streams: each node a scope name, leaves the streams' declarations.
struct ScopeNode {
  std::map<std::string, std::unique_ptr<ScopeNode>> children;
  std::string declarations;
};

void emit(const ScopeNode& n, std::string& out) {
  out += n.declarations;
  for (const auto& [name, child] : n.children) {
    out += fmt::format("$scope module {} $end\n", name);
    emit(*child, out);
    out += "$upscope $end\n";
  }
}

// Keeps the changes in [fromFs, untilFs) (untilFs 0: no end); the last value of each variable
// before fromFs is set at fromFs.
void window(ParsedVcd& p, uint64_t fromFs, uint64_t untilFs) {
  std::vector<std::pair<uint64_t, std::string>> kept;
  std::map<std::string, std::string> before;  // code -> its last change line
  for (auto& [time, text] : p.changes) {
    if (untilFs && time >= untilFs) break;
    if (time >= fromFs) {
      kept.emplace_back(time, std::move(text));
      continue;
    }
    std::stringstream lines(text);
    for (std::string line; std::getline(lines, line);) {
      const size_t space = line.find(' ');
      before[space == std::string::npos ? line.substr(1) : line.substr(space + 1)] = line;
    }
  }
  if (!before.empty()) {
    std::string snapshot;
    for (const auto& [code, line] : before) snapshot += line + "\n";
    if (!kept.empty() && kept.front().first == fromFs)
      kept.front().second = snapshot + kept.front().second;
    else
      kept.insert(kept.begin(), {fromFs, snapshot});
  }
  p.changes = std::move(kept);
}

std::string readFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw InputError(fmt::format("the VCD file '{}' cannot be read", path));
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

}  // namespace

void RtlWaves::mergeInto(const std::string& path, uint64_t fromFs, uint64_t untilFs) {
  for (Stream& s : streams_)
    if (s.flush) s.flush();
  uint64_t nextCode = 0;
  CodeMap baseCodes;
  const ParsedVcd base = parse(readFile(path), nextCode, false, path, baseCodes);
  ScopeNode root;
  std::vector<ParsedVcd> parsed;
  parsed.reserve(streams_.size());
  std::map<std::string, CodeMap> scopes;
  for (const Stream& s : streams_) {
    const auto [it, first] = scopes.emplace(s.scope, CodeMap());
    parsed.push_back(parse(s.vcd, nextCode, true, "rtl." + s.scope, it->second));
    window(parsed.back(), fromFs, untilFs);
    if (!first) continue;  // declared by the scope's first stream
    ScopeNode* n = &root;
    std::stringstream parts("rtl." + s.scope);
    for (std::string part; std::getline(parts, part, '.');) {
      auto& child = n->children[part];
      if (!child) child = std::make_unique<ScopeNode>();
      n = child.get();
    }
    n->declarations += parsed.back().declarations;
  }

  // Every stream's changes and the base's, in time order (the base first at equal times).
  std::vector<const std::pair<uint64_t, std::string>*> all;
  for (const auto& c : base.changes) all.push_back(&c);
  for (const ParsedVcd& p : parsed)
    for (const auto& c : p.changes) all.push_back(&c);
  std::stable_sort(all.begin(), all.end(),
                   [](const auto* a, const auto* b) { return a->first < b->first; });

  const std::string tmp = path + ".merging";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw InputError(fmt::format("the VCD file '{}' cannot be written", tmp));
    std::string head =
        "$version gpusc: the model's signals (SystemC) and the RTL blocks' (Verilator) $end\n"
        "$timescale 1 fs $end\n";
    head += base.declarations;
    emit(root, head);
    head += "$enddefinitions $end\n";
    out << head;
    bool first = true;
    uint64_t time = 0;
    for (const auto* c : all) {
      if (first || c->first != time) {
        out << '#' << c->first << '\n';
        time = c->first;
        first = false;
      }
      out << c->second;
    }
    if (!out) throw InputError(fmt::format("the VCD file '{}' cannot be written", tmp));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0)
    throw InputError(fmt::format("the VCD file '{}' cannot be replaced", path));
}

}  // namespace gpusc::rtl
