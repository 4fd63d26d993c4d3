#include "cudart/ptx_link.hpp"

#include <cctype>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "common/error.hpp"

namespace gpusc::cudart {

namespace {

std::string linkTrim(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t\r") + 1 - b);
}

bool linkStartsWith(const std::string& s, const char* p) { return s.rfind(p, 0) == 0; }

// "9.0" -> 90: PTX ISA versions compare by major, then minor.
unsigned linkVersion(const std::string& v) {
  unsigned major = 0, minor = 0;
  std::sscanf(v.c_str(), "%u.%u", &major, &minor);
  return major * 100 + minor;
}

// Brace depth change of a line, ignoring comments.
int linkBraceDelta(const std::string& line) {
  int d = 0;
  for (size_t i = 0; i < line.size(); ++i) {
    if (line[i] == '/' && i + 1 < line.size() && line[i + 1] == '/') break;
    d += line[i] == '{' ? 1 : line[i] == '}' ? -1 : 0;
  }
  return d;
}

// A module-level variable: a .global, .const or .shared definition.
bool isVariable(const std::string& t) {
  static const std::regex var(R"(^(?:\.visible\s+|\.weak\s+)?\.(?:global|const|shared)\b)");
  return std::regex_search(t, var);
}

// The module-level names a file defines: `internal` those without .visible, .weak or .extern
// (string constants such as $str, static functions), `all` every definition.
void definedNames(const std::string& text, std::set<std::string>& internal,
                  std::set<std::string>& all) {
  static const std::regex def(
      R"(^(\.visible\s+|\.weak\s+)?(?:\.(?:func|entry)\s*(?:\([^)]*\))?\s*([A-Za-z_$%][\w$]*)|\.(?:global|const|shared)\b[^=;\[]*?([A-Za-z_$%][\w$]*)\s*(?:\[|=|;)))");
  std::istringstream in(text);
  std::string line;
  int depth = 0;
  while (std::getline(in, line)) {
    const std::string t = linkTrim(line);
    std::smatch m;
    if (depth == 0 && std::regex_search(t, m, def)) {
      const std::string name = m[2].matched ? m[2].str() : m[3].str();
      all.insert(name);
      if (!m[1].matched) internal.insert(name);
    }
    depth += linkBraceDelta(line);
  }
}

bool identifierChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$';
}

// `text` with every identifier in `renamed` replaced by its new name.
std::string renameIdentifiers(const std::string& text,
                              const std::map<std::string, std::string>& renamed) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const char c = text[i];
    const bool starts =
        (std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == '$' || c == '%') &&
        (i == 0 || (!identifierChar(text[i - 1]) && text[i - 1] != '.' && text[i - 1] != '%'));
    if (!starts) {
      out += c;
      ++i;
      continue;
    }
    size_t j = i + 1;
    while (j < text.size() && identifierChar(text[j])) ++j;
    const std::string word = text.substr(i, j - i);
    const auto it = renamed.find(word);
    out += it == renamed.end() ? word : it->second;
    i = j;
  }
  return out;
}

}  // namespace

std::string linkPtx(const std::vector<std::string>& files, const std::string& what) {
  static const std::regex weakName(
      R"(^\.weak\s+(?:\.func|\.entry)\s*(?:\([^)]*\))?\s*([A-Za-z_$%][\w$]*)|^\.weak\s+\.(?:global|const)\b[^=;\[]*?([A-Za-z_$%][\w$]*)\s*(?:\[|=|;))");
  static const std::regex externFunc(R"(^\.extern\s+\.func\b)");
  std::string version, target, addressSize, variables, body;
  std::set<std::string> weakSeen;
  // A file's internal names that another file also defines get the file's number: each file
  // keeps its own string constants and static functions.
  std::vector<std::set<std::string>> internal(files.size()), all(files.size());
  for (size_t f = 0; f < files.size(); ++f) definedNames(files[f], internal[f], all[f]);
  for (size_t f = 0; f < files.size(); ++f) {
    std::map<std::string, std::string> renamed;
    for (const std::string& name : internal[f])
      for (size_t g = 0; g < files.size(); ++g)
        if (g != f && all[g].count(name)) renamed[name] = fmt::format("{}$file{}", name, f + 1);
    std::istringstream in(renamed.empty() ? files[f] : renameIdentifiers(files[f], renamed));
    std::string line;
    int depth = 0;
    // What the statement being skipped waits for: its ';' (a declaration or variable) or the
    // brace that closes its body (a function).
    enum class Skip { None, ToSemicolon, ToBody } skip = Skip::None;
    int skipDepth = 0;
    bool skipOpened = false;
    while (std::getline(in, line)) {
      const std::string t = linkTrim(line);
      if (skip != Skip::None) {
        const int before = depth;
        depth += linkBraceDelta(line);
        if (skip == Skip::ToSemicolon && depth == 0 && t.find(';') != std::string::npos)
          skip = Skip::None;
        if (skip == Skip::ToBody) {
          if (depth > skipDepth) skipOpened = true;
          if (skipOpened && depth == skipDepth) skip = Skip::None;
          if (!skipOpened && before == 0 && t.find(';') != std::string::npos) skip = Skip::None;
        }
        continue;
      }
      if (depth == 0) {
        if (linkStartsWith(t, ".version")) {
          const std::string v = linkTrim(t.substr(8));
          if (version.empty() || linkVersion(v) > linkVersion(version)) version = v;
          continue;
        }
        if (linkStartsWith(t, ".target")) {
          if (!target.empty() && target != t)
            throw InputError(fmt::format(
                "{}: its files' PTX is for different targets ('{}' and '{}'): build every file "
                "for the same architecture",
                what, target, t));
          target = t;
          continue;
        }
        if (linkStartsWith(t, ".address_size")) {
          addressSize = t;
          continue;
        }
        if (std::regex_search(t, externFunc)) {
          // A prototype instead: the function is defined in this file or another one.
          line.replace(line.find(".extern"), 7, ".visible");
          body += line;
          body += '\n';
          continue;
        }
        if (linkStartsWith(t, ".extern")) {  // a variable, defined in another file
          skip = t.find(';') != std::string::npos ? Skip::None : Skip::ToSemicolon;
          continue;
        }
        if (isVariable(t)) {  // every file's variables come before every function that uses them
          std::string* to = &variables;
          std::smatch m;
          if (linkStartsWith(t, ".weak") && std::regex_search(t, m, weakName) &&
              !weakSeen.insert(m[1].matched ? m[1].str() : m[2].str()).second)
            to = nullptr;  // a second definition of a .weak variable
          while (true) {
            if (to != nullptr) *to += line + '\n';
            if (line.find(';') != std::string::npos || !std::getline(in, line)) break;
          }
          continue;
        }
        std::smatch m;
        if (linkStartsWith(t, ".weak") && std::regex_search(t, m, weakName)) {
          const std::string name = m[1].matched ? m[1].str() : m[2].str();
          if (!weakSeen.insert(name).second) {
            const bool function =
                t.find(".func") != std::string::npos || t.find(".entry") != std::string::npos;
            skip = function ? Skip::ToBody : Skip::ToSemicolon;
            skipDepth = 0;
            skipOpened = false;
            depth += linkBraceDelta(line);
            if (function && depth > 0) skipOpened = true;
            if (!function && t.find(';') != std::string::npos) skip = Skip::None;
            continue;
          }
        }
      }
      depth += linkBraceDelta(line);
      body += line;
      body += '\n';
    }
  }
  return fmt::format(".version {}\n{}\n{}\n\n{}\n{}", version.empty() ? "9.0" : version,
                     target.empty() ? ".target sm_75" : target,
                     addressSize.empty() ? ".address_size 64" : addressSize, variables, body);
}

}  // namespace gpusc::cudart
