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

// What a module-level line defines: its name, whether it is a function (or kernel), and its
// linkage. `name` is empty for any other line (.extern declarations included).
struct Definition {
  std::string name;
  bool function = false;
  bool weak = false;      // .weak: a template instantiated in several files
  bool internal = false;  // neither .visible nor .weak: string constants such as $str, statics
};

Definition definitionOf(const std::string& t) {
  static const std::regex def(
      R"(^(\.visible\s+|\.weak\s+)?(?:\.(?:func|entry)\s*(?:\([^)]*\))?\s*([A-Za-z_$%][\w$]*)|\.(?:global|const|shared)\b[^=;\[]*?([A-Za-z_$%][\w$]*)\s*(?:\[|=|;)))");
  std::smatch m;
  Definition d;
  if (!std::regex_search(t, m, def)) return d;
  d.function = m[2].matched;
  d.name = d.function ? m[2].str() : m[3].str();
  d.weak = m[1].matched && linkStartsWith(m[1].str(), ".weak");
  d.internal = !m[1].matched;
  return d;
}

// The module-level names a file defines: `internal` those without .visible or .weak, `all`
// every one.
void definedNames(const std::string& text, std::set<std::string>& internal,
                  std::set<std::string>& all) {
  std::istringstream in(text);
  std::string line;
  int depth = 0;
  while (std::getline(in, line)) {
    if (depth == 0) {
      const Definition d = definitionOf(linkTrim(line));
      if (!d.name.empty()) {
        all.insert(d.name);
        if (d.internal) internal.insert(d.name);
      }
    }
    depth += linkBraceDelta(line);
  }
}

// The statement that starts on `line`, read on from `in` to its end: a function's body closing
// (or a prototype's ';'), any other statement's ';'.
std::string statement(std::istream& in, std::string line, bool function) {
  std::string text;
  int depth = 0;
  bool opened = false;
  while (true) {
    text += line + '\n';
    depth += linkBraceDelta(line);
    opened = opened || depth > 0;
    const bool ends = function && opened ? depth == 0 : line.find(';') != std::string::npos;
    if (ends || !std::getline(in, line)) return text;
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
  static const std::regex externFunc(R"(^\.extern\s+\.func\b)");
  static const std::regex externShared(R"(^\.extern\s+\.shared\b[^;\[]*?([A-Za-z_$%][\w$]*)\s*\[)");
  std::string version, target, addressSize, variables, body;
  std::set<std::string> weakSeen;      // .weak definitions and dynamic shared memory kept
  std::set<std::string> weakDeclared;  // .weak functions whose prototype is kept
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
    int depth = 0;  // inside a function's body when above 0
    while (std::getline(in, line)) {
      const std::string t = linkTrim(line);
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
          body += line + '\n';
          continue;
        }
        std::smatch shared;
        if (std::regex_search(t, shared, externShared)) {
          // Dynamic shared memory (extern __shared__): every file declares it; one declaration
          // of each name stays.
          const std::string text = statement(in, line, false);
          if (weakSeen.insert(shared[1].str()).second) variables += text;
          continue;
        }
        if (linkStartsWith(t, ".extern")) {  // a variable, defined in another file
          statement(in, line, false);
          continue;
        }
        const Definition d = definitionOf(t);
        if (d.weak && d.function) {
          // A template's function or kernel, instantiated in several files: one definition
          // stays, and one prototype before it (nvcc declares a function before its definition
          // where another calls it first: mutual recursion), which must not take the place of
          // the definition.
          const std::string text = statement(in, line, true);
          const bool prototype = text.find('{') == std::string::npos;
          if (prototype ? weakSeen.count(d.name) == 0 && weakDeclared.insert(d.name).second
                        : weakSeen.insert(d.name).second)
            body += text;
          continue;
        }
        if (d.weak && !weakSeen.insert(d.name).second) {  // a second copy of a .weak variable
          statement(in, line, false);
          continue;
        }
        if (!d.name.empty() && !d.function) {
          // Every file's variables come before every function that may use them.
          variables += statement(in, line, false);
          continue;
        }
      }
      depth += linkBraceDelta(line);
      body += line + '\n';
    }
  }
  return fmt::format(".version {}\n{}\n{}\n\n{}\n{}", version.empty() ? "9.0" : version,
                     target.empty() ? ".target sm_75" : target,
                     addressSize.empty() ? ".address_size 64" : addressSize, variables, body);
}

}  // namespace gpusc::cudart
