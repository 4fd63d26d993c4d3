#include "ptx/parser.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <exception>
#include <functional>
#include <map>
#include <unordered_map>

#include <fmt/format.h>

#include "common/error.hpp"
#include "common/strings.hpp"
#include "ptx/lexer.hpp"

namespace gpusc::ptx {

// ---- small tables ------------------------------------------------------------------------------

const char* spaceName(StateSpace s) {
  switch (s) {
    case StateSpace::Reg:
      return ".reg";
    case StateSpace::SReg:
      return ".sreg";
    case StateSpace::Global:
      return ".global";
    case StateSpace::Shared:
      return ".shared";
    case StateSpace::Local:
      return ".local";
    case StateSpace::Param:
      return ".param";
    case StateSpace::Const:
      return ".const";
    case StateSpace::Generic:
      return "generic";
  }
  return "?";
}

namespace {
struct TypeEntry {
  const char* name;
  Type type;
  unsigned bytes;
};
constexpr TypeEntry kTypes[] = {
    {".b8", Type::B8, 1},     {".b16", Type::B16, 2},       {".b32", Type::B32, 4},
    {".b64", Type::B64, 8},   {".b128", Type::B128, 16},    {".u8", Type::U8, 1},
    {".u16", Type::U16, 2},   {".u32", Type::U32, 4},       {".u64", Type::U64, 8},
    {".s8", Type::S8, 1},     {".s16", Type::S16, 2},       {".s32", Type::S32, 4},
    {".s64", Type::S64, 8},   {".f16", Type::F16, 2},       {".f16x2", Type::F16x2, 4},
    {".bf16", Type::BF16, 2}, {".bf16x2", Type::BF16x2, 4}, {".f32", Type::F32, 4},
    {".f64", Type::F64, 8},   {".pred", Type::Pred, 1},
};
}  // namespace

unsigned typeBytes(Type t) {
  for (const auto& e : kTypes)
    if (e.type == t) return e.bytes;
  return 0;
}

const char* typeName(Type t) {
  for (const auto& e : kTypes)
    if (e.type == t) return e.name;
  return "";
}

std::optional<Type> typeFromName(std::string_view n) {
  for (const auto& e : kTypes)
    if (n == e.name) return e.type;
  return std::nullopt;
}

bool isFloat(Type t) {
  return t == Type::F16 || t == Type::F16x2 || t == Type::BF16 || t == Type::BF16x2 ||
         t == Type::F32 || t == Type::F64;
}

bool isSigned(Type t) {
  return t == Type::S8 || t == Type::S16 || t == Type::S32 || t == Type::S64;
}

std::optional<SReg> sregFromName(std::string_view n) {
  static const std::unordered_map<std::string_view, SReg> table = {
      {"%tid.x", SReg::TidX},
      {"%tid.y", SReg::TidY},
      {"%tid.z", SReg::TidZ},
      {"%ntid.x", SReg::NtidX},
      {"%ntid.y", SReg::NtidY},
      {"%ntid.z", SReg::NtidZ},
      {"%ctaid.x", SReg::CtaidX},
      {"%ctaid.y", SReg::CtaidY},
      {"%ctaid.z", SReg::CtaidZ},
      {"%nctaid.x", SReg::NctaidX},
      {"%nctaid.y", SReg::NctaidY},
      {"%nctaid.z", SReg::NctaidZ},
      {"%laneid", SReg::LaneId},
      {"%warpid", SReg::WarpId},
      {"%nwarpid", SReg::NWarpId},
      {"%smid", SReg::SmId},
      {"%nsmid", SReg::NSmId},
      {"%gridid", SReg::GridId},
      {"%lanemask_eq", SReg::LaneMaskEq},
      {"%lanemask_le", SReg::LaneMaskLe},
      {"%lanemask_lt", SReg::LaneMaskLt},
      {"%lanemask_ge", SReg::LaneMaskGe},
      {"%lanemask_gt", SReg::LaneMaskGt},
      {"%clock", SReg::Clock},
      {"%clock64", SReg::Clock64},
      {"%globaltimer", SReg::GlobalTimer},
      {"%globaltimer_lo", SReg::GlobalTimerLo},
      {"%globaltimer_hi", SReg::GlobalTimerHi},
      {"%dynamic_smem_size", SReg::DynamicSmemSize},
      {"%total_smem_size", SReg::TotalSmemSize},
      {"%reserved_smem_offset_begin", SReg::ReservedSmemBegin},
      {"%reserved_smem_offset_end", SReg::ReservedSmemEnd},
      {"%reserved_smem_offset_cap", SReg::ReservedSmemCap},
      {"%reserved_smem_offset_0", SReg::ReservedSmemOffset0},
      {"%reserved_smem_offset_1", SReg::ReservedSmemOffset1},
      {"%aggr_smem_size", SReg::AggrSmemSize},
      {"%pm0", SReg::Pm0},
      {"%clusterid.x", SReg::ClusterIdX},
      {"%clusterid.y", SReg::ClusterIdY},
      {"%clusterid.z", SReg::ClusterIdZ},
      {"%nclusterid.x", SReg::NClusterIdX},
      {"%nclusterid.y", SReg::NClusterIdY},
      {"%nclusterid.z", SReg::NClusterIdZ},
      {"%cluster_ctaid.x", SReg::ClusterCtaIdX},
      {"%cluster_ctaid.y", SReg::ClusterCtaIdY},
      {"%cluster_ctaid.z", SReg::ClusterCtaIdZ},
      {"%cluster_nctaid.x", SReg::ClusterNCtaIdX},
      {"%cluster_nctaid.y", SReg::ClusterNCtaIdY},
      {"%cluster_nctaid.z", SReg::ClusterNCtaIdZ},
      {"%cluster_ctarank", SReg::ClusterCtaRank},
      {"%cluster_nctarank", SReg::ClusterNCtaRank},
      {"%is_explicit_cluster", SReg::IsExplicitCluster},
  };
  if (n.substr(0, 7) == "%envreg" && n.size() > 7 && n.size() <= 9) {
    uint32_t i = 0;
    for (char c : n.substr(7)) {
      if (c < '0' || c > '9') return std::nullopt;
      i = i * 10 + uint32_t(c - '0');
    }
    if (i > 31 || (n.size() == 9 && n[7] == '0')) return std::nullopt;
    return i == 1 ? SReg::EnvReg1 : i == 2 ? SReg::EnvReg2 : SReg::EnvRegZero;
  }
  auto it = table.find(n);
  if (it == table.end()) return std::nullopt;
  return it->second;
}

bool sregIsDynamic(SReg s) {
  return s == SReg::Clock || s == SReg::Clock64 || s == SReg::GlobalTimer ||
         s == SReg::GlobalTimerLo || s == SReg::GlobalTimerHi || s == SReg::Pm0;
}

const Function* Module::findFunction(std::string_view name) const {
  auto alias = aliases.find(std::string(name));
  if (alias != aliases.end()) name = alias->second;
  for (const auto& f : functions)
    if (f->name == name && !f->isExtern) return f.get();
  for (const auto& f : functions)
    if (f->name == name) return f.get();
  return nullptr;
}

const Variable* Module::findGlobal(std::string_view name) const {
  for (const auto& g : globals)
    if (g->name == name) return g.get();
  return nullptr;
}

std::string unsupportedMessage(const SourceLoc& loc, std::string_view text) {
  return fmt::format("unsupported PTX at {}: {}", loc.str(), trim(text));
}

// ---- parser ------------------------------------------------------------------------------------

namespace {

// The newest PTX ISA major version the parser reads (PTX ISA 9.0, as nvcc 13 writes).
constexpr unsigned kNewestPtxMajor = 9;

class Parser {
 public:
  Parser(std::string_view text, const std::string& fileName)
      : text_(text), file_(std::make_shared<const std::string>(fileName)) {
    toks_ = tokenize(text, file_);
    // Line starts, to quote the source line of an instruction in messages.
    lineStart_.push_back(0);
    for (size_t i = 0; i < text.size(); ++i)
      if (text[i] == '\n') lineStart_.push_back(i + 1);
  }

  std::unique_ptr<Module> run() {
    mod_ = std::make_unique<Module>();
    mod_->fileName = *file_;
    while (peek().kind != Tok::End) topLevel();
    for (const auto& [name, target] : mod_->aliases) {
      const Function* f = mod_->findFunction(target);
      if (f == nullptr || f->isExtern)
        throw InputError(fmt::format("{}: error: .alias: '{}' has no body in this module",
                                     aliasAt_.at(name).str(), target));
    }
    return std::move(mod_);
  }

 private:
  // ---- token helpers ----
  const Token& peek(size_t k = 0) const { return toks_[std::min(pos_ + k, toks_.size() - 1)]; }
  const Token& next() {
    const Token& t = toks_[pos_];
    if (pos_ + 1 < toks_.size()) ++pos_;
    return t;
  }
  SourceLoc locOf(const Token& t) const { return SourceLoc{file_, t.line, t.col}; }
  std::string lineText(uint32_t line) const {
    if (line == 0 || line > lineStart_.size()) return "";
    size_t b = lineStart_[line - 1];
    size_t e = line < lineStart_.size() ? lineStart_[line] : text_.size();
    return std::string(trim(text_.substr(b, e - b)));
  }

  [[noreturn]] void fail(const Token& t, const std::string& msg) const {
    throw InputError(fmt::format("{}: error: {}", locOf(t).str(), msg));
  }
  [[noreturn]] void unsupported(const Token& t) const {
    throw InputError(unsupportedMessage(locOf(t), lineText(t.line)));
  }
  static std::string describe(const Token& t) {
    return t.kind == Tok::End ? std::string("end of file") : "'" + t.text + "'";
  }
  void expectPunct(char c) {
    const Token& t = peek();
    if (!t.punct(c)) fail(t, fmt::format("expected '{}' but found {}", c, describe(t)));
    next();
  }
  bool acceptPunct(char c) {
    if (peek().punct(c)) {
      next();
      return true;
    }
    return false;
  }
  bool acceptDirective(std::string_view d) {
    if (peek().is(Tok::Directive, d)) {
      next();
      return true;
    }
    return false;
  }
  uint64_t expectInt() {
    bool neg = acceptPunct('-');
    const Token& t = peek();
    if (t.kind != Tok::Int) fail(t, "expected an integer but found " + describe(t));
    next();
    return neg ? uint64_t(0) - t.ival : t.ival;
  }

  // An integer constant expression (PTX ISA, "Constant Expressions"): literals, parentheses, the
  // unary + - ! ~, the binary * / % + - << >> < > <= >= == != & ^ | && || and ?:, with C's
  // precedence, evaluated in 64 bits. A value is unsigned when a literal above INT64_MAX made it
  // so (as a U suffix would), and / % >> and the comparisons then treat it as unsigned.
  struct ConstValue {
    uint64_t v = 0;
    bool isUnsigned = false;
    int64_t s() const { return static_cast<int64_t>(v); }
  };
  // Whether the operand starting here is an integer constant expression (not a float literal, a
  // register or a symbol).
  bool constExprStarts() const {
    const Token& t = peek();
    if (t.kind == Tok::Int || t.punct('(') || t.punct('~')) return true;
    if (t.punct('-') || t.punct('+') || t.punct('!'))
      return peek(1).kind == Tok::Int || peek(1).punct('(') || peek(1).punct('~') ||
             peek(1).punct('-');
    return false;
  }
  uint64_t constExpr() { return constTernary().v; }
  ConstValue constTernary() {
    ConstValue c = constBinary(0);
    if (!acceptPunct('?')) return c;
    ConstValue a = constTernary();
    expectPunct(':');
    ConstValue b = constTernary();
    return c.v != 0 ? a : b;
  }
  // The binary operator at the cursor with its precedence (higher binds tighter) and its token
  // count, or precedence -1.
  std::pair<int, int> binaryOperator(std::string* op) const {
    const Token& a = peek();
    if (a.kind != Tok::Punct) return {-1, 0};
    const Token& b = peek(1);
    const bool two = b.kind == Tok::Punct && b.adjacent;
    const char x = a.text[0], y = two ? b.text[0] : '\0';
    auto is = [&](const char* o, int prec, int n) {
      *op = o;
      return std::make_pair(prec, n);
    };
    if (x == '|' && y == '|') return is("||", 1, 2);
    if (x == '&' && y == '&') return is("&&", 2, 2);
    if (x == '=' && y == '=') return is("==", 6, 2);
    if (x == '!' && y == '=') return is("!=", 6, 2);
    if (x == '<' && y == '<') return is("<<", 8, 2);
    if (x == '>' && y == '>') return is(">>", 8, 2);
    if (x == '<' && y == '=') return is("<=", 7, 2);
    if (x == '>' && y == '=') return is(">=", 7, 2);
    switch (x) {
      case '|':
        return is("|", 3, 1);
      case '^':
        return is("^", 4, 1);
      case '&':
        return is("&", 5, 1);
      case '<':
        return is("<", 7, 1);
      case '>':
        return is(">", 7, 1);
      case '+':
        return is("+", 9, 1);
      case '-':
        return is("-", 9, 1);
      case '*':
        return is("*", 10, 1);
      case '/':
        return is("/", 10, 1);
      case '%':
        return is("%", 10, 1);
      default:
        return {-1, 0};
    }
  }
  ConstValue constBinary(int minPrec) {
    ConstValue l = constUnary();
    while (true) {
      std::string op;
      const auto [prec, n] = binaryOperator(&op);
      if (prec < 0 || prec < minPrec) return l;
      const Token& at = peek();
      for (int i = 0; i < n; ++i) next();
      const ConstValue r = constBinary(prec + 1);
      const bool u = l.isUnsigned || r.isUnsigned;
      ConstValue o;
      o.isUnsigned = u;
      if ((op == "/" || op == "%") && r.v == 0)
        fail(at, "division by zero in a constant expression");
      if (op == "*")
        o.v = l.v * r.v;
      else if (op == "/")
        o.v = u ? l.v / r.v : (l.s() == INT64_MIN && r.s() == -1) ? l.v : uint64_t(l.s() / r.s());
      else if (op == "%")
        o.v = u ? l.v % r.v : (r.s() == -1) ? 0 : uint64_t(l.s() % r.s());
      else if (op == "+")
        o.v = l.v + r.v;
      else if (op == "-")
        o.v = l.v - r.v;
      else if (op == "<<")
        o.v = r.v >= 64 ? 0 : l.v << r.v;
      else if (op == ">>")
        o.v = l.isUnsigned ? (r.v >= 64 ? 0 : l.v >> r.v)
                           : uint64_t(l.s() >> std::min<uint64_t>(r.v, 63));
      else if (op == "&")
        o.v = l.v & r.v;
      else if (op == "^")
        o.v = l.v ^ r.v;
      else if (op == "|")
        o.v = l.v | r.v;
      else {  // comparisons and logic: a signed 0 or 1
        o.isUnsigned = false;
        bool t = false;
        if (op == "&&")
          t = l.v != 0 && r.v != 0;
        else if (op == "||")
          t = l.v != 0 || r.v != 0;
        else if (op == "==")
          t = l.v == r.v;
        else if (op == "!=")
          t = l.v != r.v;
        else if (op == "<")
          t = u ? l.v < r.v : l.s() < r.s();
        else if (op == ">")
          t = u ? l.v > r.v : l.s() > r.s();
        else if (op == "<=")
          t = u ? l.v <= r.v : l.s() <= r.s();
        else
          t = u ? l.v >= r.v : l.s() >= r.s();
        o.v = t ? 1 : 0;
      }
      l = o;
    }
  }
  ConstValue constUnary() {
    const Token& t = peek();
    if (acceptPunct('-')) {
      ConstValue c = constUnary();
      c.v = uint64_t(0) - c.v;
      return c;
    }
    if (acceptPunct('+')) return constUnary();
    if (acceptPunct('~')) {
      ConstValue c = constUnary();
      c.v = ~c.v;
      return c;
    }
    if (acceptPunct('!')) {
      ConstValue c = constUnary();
      return {c.v == 0 ? 1u : 0u, false};
    }
    if (acceptPunct('(')) {
      ConstValue c = constTernary();
      expectPunct(')');
      return c;
    }
    if (t.kind != Tok::Int)
      fail(t, "expected an integer constant expression but found " + describe(t));
    next();
    return {t.ival, t.ival > uint64_t(INT64_MAX)};
  }
  std::string expectIdent(const char* what) {
    const Token& t = peek();
    if (t.kind != Tok::Ident) fail(t, fmt::format("expected {} but found {}", what, describe(t)));
    next();
    return t.text;
  }
  // Skips the rest of the current source line (for .loc / .file which have no ';').
  void skipLine(uint32_t line) {
    while (peek().kind != Tok::End && peek().line == line) next();
  }
  void skipToSemicolon() {
    while (peek().kind != Tok::End && !peek().punct(';')) next();
    acceptPunct(';');
  }
  void skipBraces() {
    expectPunct('{');
    int depth = 1;
    while (depth > 0) {
      const Token& t = next();
      if (t.kind == Tok::End) fail(t, "unterminated '{'");
      if (t.punct('{')) ++depth;
      if (t.punct('}')) --depth;
    }
  }

  // ---- module level ----
  // .version MAJOR.MINOR: PTX ISA versions up to 9.x are read (an instruction a later minor
  // version added is refused by name where it appears); a later major version is refused.
  void checkVersion(const Token& v) const {
    unsigned major = 0, minor = 0;
    char extra = 0;
    if (std::sscanf(v.text.c_str(), "%u.%u%c", &major, &minor, &extra) != 2)
      fail(v, fmt::format(".version: expected MAJOR.MINOR (as in .version 9.0) but found {}",
                          describe(v)));
    if (major > kNewestPtxMajor)
      fail(v, fmt::format(".version {}: PTX ISA {} is newer than the {}.x gpusc reads", v.text,
                          v.text, kNewestPtxMajor));
  }
  // .target: a GPU architecture PTX names (sm_XY, optionally with the 'a' or 'f' suffix of
  // architecture- and family-specific features, or compute_XY) and the target options.
  void checkTarget(const Token& t, const std::string& name) const {
    static constexpr const char* kOptions[] = {"texmode_unified", "texmode_independent", "debug",
                                               "map_f64_to_f32"};
    for (const char* o : kOptions)
      if (name == o) return;
    static constexpr unsigned kArchs[] = {10, 11, 12, 13, 20,  30,  32,  35,  37,  50,
                                          52, 53, 60, 61, 62,  70,  72,  75,  80,  86,
                                          87, 88, 89, 90, 100, 101, 103, 110, 120, 121};
    for (const char* prefix : {"sm_", "compute_"}) {
      const size_t n = std::strlen(prefix);
      if (name.compare(0, n, prefix) != 0) continue;
      std::string digits = name.substr(n);
      if (!digits.empty() && (digits.back() == 'a' || digits.back() == 'f')) digits.pop_back();
      if (!digits.empty() && digits.size() <= 3 &&
          digits.find_first_not_of("0123456789") == std::string::npos &&
          std::find(std::begin(kArchs), std::end(kArchs), unsigned(std::stoul(digits))) !=
              std::end(kArchs))
        return;
    }
    fail(t, fmt::format(".target: unknown target '{}' (a PTX architecture such as sm_86 or "
                        "compute_90a, or texmode_unified, texmode_independent, debug, "
                        "map_f64_to_f32)",
                        name));
  }

  void topLevel() {
    const Token& t = peek();
    if (t.kind != Tok::Directive)
      fail(t, "expected a directive at module scope but found " + describe(t));
    const std::string d = t.text;
    if (d == ".version") {
      next();
      const Token& v = next();
      if (versionLine_ != 0)
        fail(t, fmt::format("a second .version (the first at line {}): a module has one",
                            versionLine_));
      checkVersion(v);
      versionLine_ = t.line;
      mod_->version = v.text;
      return;
    }
    if (d == ".target") {
      next();
      std::vector<std::string> targets;
      do {
        const Token& n = peek();
        targets.push_back(expectIdent("a target name"));
        checkTarget(n, targets.back());
      } while (acceptPunct(','));
      mod_->target = join(targets, ",");
      return;
    }
    if (d == ".address_size") {
      next();
      mod_->addressSize = static_cast<unsigned>(expectInt());
      if (mod_->addressSize != 64) unsupported(t);
      return;
    }
    if (d == ".file" || d == ".loc") {
      next();
      skipLine(t.line);
      return;
    }
    if (d == ".section") {
      next();
      next();  // section name
      skipBraces();
      return;
    }
    if (d == ".pragma") {
      next();
      skipToSemicolon();
      return;
    }
    if (d == ".alias") {
      next();
      alias(t);
      return;
    }
    bool isExtern = false, isVisible = false, isWeak = false;
    while (peek().kind == Tok::Directive) {
      const std::string& l = peek().text;
      if (l == ".visible") {
        isVisible = true;
      } else if (l == ".extern") {
        isExtern = true;
      } else if (l == ".weak") {
        isWeak = true;
      } else if (l == ".common") {
      } else {
        break;
      }
      next();
    }
    const Token& k = peek();
    if (k.is(Tok::Directive, ".entry") || k.is(Tok::Directive, ".func")) {
      function(isExtern, isVisible, isWeak);
    } else if (k.is(Tok::Directive, ".global") || k.is(Tok::Directive, ".const") ||
               k.is(Tok::Directive, ".shared")) {
      auto vars = declaration(isExtern, 0);
      for (auto& v : vars) {
        if (globalsByName_.count(v->name))
          fail(k, fmt::format("module-level variable '{}' is defined twice (first at line {})",
                              v->name, globalsByName_[v->name]->loc.line));
        globalsByName_[v->name] = v.get();
        mod_->globals.push_back(std::move(v));
      }
    } else {
      unsupported(k);
    }
  }

  // .alias alias, aliasee; both are functions declared before, `alias` without a body and with
  // the same parameters and results as `aliasee`.
  void alias(const Token& at) {
    const Token& a = peek();
    std::string name = expectIdent("a function name");
    expectPunct(',');
    const Token& b = peek();
    std::string target = expectIdent("a function name");
    expectPunct(';');
    auto find = [&](const Token& tok, const std::string& n, bool prototype) {
      for (const auto& f : mod_->functions)
        if (f->name == n && !f->isEntry && (f->isExtern || !prototype)) return f.get();
      fail(tok, fmt::format(".alias: '{}' is not a {} declared before", n,
                            prototype ? "function prototype" : "function"));
    };
    const Function* fa = find(a, name, true);
    const Function* fb = find(b, target, false);
    auto same = [](const auto& x, const auto& y) {
      if (x.size() != y.size()) return false;
      for (size_t i = 0; i < x.size(); ++i)
        if (x[i]->sizeBytes() != y[i]->sizeBytes()) return false;
      return true;
    };
    if (!same(fa->params, fb->params) || !same(fa->returns, fb->returns))
      fail(at, fmt::format(".alias: '{}' and '{}' have different parameters", name, target));
    if (mod_->aliases.count(target)) fail(b, fmt::format(".alias: '{}' is an alias", target));
    mod_->aliases[name] = target;
    aliasAt_[name] = locOf(b);
  }

  // A declaration after its linkage words: space [.align N] [.vN] .type [.ptr...] names [= init];
  std::vector<std::unique_ptr<Variable>> declaration(bool isExtern, int scope) {
    const Token& first = next();
    StateSpace space;
    if (first.text == ".reg")
      space = StateSpace::Reg;
    else if (first.text == ".global")
      space = StateSpace::Global;
    else if (first.text == ".const")
      space = StateSpace::Const;
    else if (first.text == ".shared")
      space = StateSpace::Shared;
    else if (first.text == ".local")
      space = StateSpace::Local;
    else if (first.text == ".param")
      space = StateSpace::Param;
    else
      unsupported(first);
    Variable proto;
    proto.space = space;
    proto.isExtern = isExtern;
    proto.scope = scope;
    declAttributes(proto, first);
    std::vector<std::unique_ptr<Variable>> out;
    while (true) {
      const Token& nameTok = peek();
      std::string name = expectIdent("a variable name");
      auto v = std::make_unique<Variable>(proto);
      v->name = name;
      v->loc = locOf(nameTok);
      if (acceptPunct('<')) {
        // %r<60>: registers %r0 .. %r59
        const Token& countTok = peek();
        uint64_t n = expectInt();
        // Each register becomes a declaration; far more than any compiler emits is an error,
        // not a multi-gigabyte allocation.
        constexpr uint64_t kMaxRegisterRange = 65536;
        if (n > kMaxRegisterRange)
          fail(countTok, fmt::format("register range {}<{}> exceeds the supported {} registers",
                                     name, n, kMaxRegisterRange));
        expectPunct('>');
        for (uint64_t i = 0; i < n; ++i) {
          auto r = std::make_unique<Variable>(*v);
          r->name = name + std::to_string(i);
          out.push_back(std::move(r));
        }
      } else {
        while (acceptPunct('[')) {
          if (peek().punct(']')) {
            v->dims.push_back(0);
          } else {
            v->dims.push_back(expectInt());
          }
          expectPunct(']');
        }
        // An array past the 64-bit address space would wrap its size around.
        uint64_t bytes = v->elementBytes();
        for (uint64_t d : v->dims) {
          if (d != 0 && bytes > (uint64_t(1) << 62) / d)
            fail(nameTok, fmt::format("array '{}' is larger than the address space", name));
          bytes *= d;
        }
        if (acceptPunct('=')) initializer(*v);
        out.push_back(std::move(v));
      }
      if (!acceptPunct(',')) break;
    }
    expectPunct(';');
    return out;
  }

  void declAttributes(Variable& v, const Token& at) {
    while (peek().kind == Tok::Directive) {
      const Token& t = peek();
      if (t.text == ".align") {
        // After .ptr, .align is the alignment of the memory the pointer points to (nvcc 13
        // writes `.param .u64 .ptr .align 1 p` for sm_100 and later), not the parameter's.
        next();
        const Token& n = peek();
        const uint64_t align = expectInt();
        // A power of two (the PTX ISA's rule for .align), and no more than 2^31 bytes.
        if (align == 0 || (align & (align - 1)) != 0 || align > (uint64_t(1) << 31))
          fail(n, fmt::format(".align {}: expected a power of two up to 2^31 bytes", n.text));
        (v.isPtrParam ? v.pointeeAlign : v.align) = static_cast<unsigned>(align);
      } else if (t.text == ".v2" || t.text == ".v4" || t.text == ".v8") {
        next();
        v.vecWidth = static_cast<unsigned>(t.text[2] - '0');
      } else if (t.text == ".ptr") {
        next();
        v.isPtrParam = true;
      } else if (t.text == ".attribute") {
        // .attribute(.managed): a .global variable in managed memory (CUDA's __managed__), which
        // the host and the device reach at the same address.
        next();
        expectPunct('(');
        const Token& a = peek();
        if (!a.is(Tok::Directive, ".managed"))
          fail(a, "variable attribute " + describe(a) + " is not supported (only .managed)");
        next();
        expectPunct(')');
        if (v.space != StateSpace::Global) fail(t, ".attribute(.managed) applies to .global only");
        v.isManaged = true;
      } else if (v.isPtrParam && (t.text == ".global" || t.text == ".shared" ||
                                  t.text == ".const" || t.text == ".local")) {
        next();  // .ptr .global: pointee space, informative only
      } else if (auto ty = typeFromName(t.text)) {
        next();
        v.type = *ty;
      } else {
        break;
      }
    }
    if (v.type == Type::None)
      fail(peek(), "expected a type in the declaration started at " + locOf(at).str());
  }

  // = 5 | = {1, 2, {3}} | = 0f3F800000 | = sym | = generic(sym) | = sym+8
  void initializer(Variable& v) {
    const uint64_t elem = typeBytes(v.type);
    std::vector<uint8_t> bytes;
    auto scalar = [&]() {
      const Token& t = peek();
      bool neg = acceptPunct('-');
      const Token& n = peek();
      uint64_t raw = 0;
      if (n.kind == Tok::Int) {
        next();
        uint64_t x = neg ? uint64_t(0) - n.ival : n.ival;
        if (v.type == Type::F32) {
          float f = static_cast<float>(neg ? -double(n.ival) : double(n.ival));
          uint32_t b;
          std::memcpy(&b, &f, 4);
          raw = b;
        } else if (v.type == Type::F64) {
          double f = neg ? -double(n.ival) : double(n.ival);
          std::memcpy(&raw, &f, 8);
        } else {
          raw = x;
        }
      } else if (n.kind == Tok::Float) {
        next();
        double f = neg ? -n.fval : n.fval;
        if (v.type == Type::F32) {
          float ff = static_cast<float>(f);
          uint32_t b;
          std::memcpy(&b, &ff, 4);
          raw = (n.fbits == 32 && !neg) ? n.ival : b;
        } else if (v.type == Type::F64) {
          std::memcpy(&raw, &f, 8);
        } else {
          fail(n, "floating-point initialiser for an integer variable");
        }
      } else if (n.kind == Tok::Ident) {
        // address of a symbol, possibly generic(sym) and + offset
        std::string sym = next().text;
        if (sym == "generic") {
          expectPunct('(');
          sym = expectIdent("a symbol");
          expectPunct(')');
        }
        int64_t add = 0;
        if (acceptPunct('+')) add = static_cast<int64_t>(expectInt());
        v.initSymbols.push_back({bytes.size(), {sym, add}});
      } else {
        fail(t, "expected an initial value but found " + describe(t));
      }
      for (uint64_t i = 0; i < elem; ++i) bytes.push_back(static_cast<uint8_t>(raw >> (8 * i)));
    };
    std::function<void()> list = [&]() {
      if (acceptPunct('{')) {
        if (!peek().punct('}')) {
          list();
          while (acceptPunct(',')) list();
        }
        expectPunct('}');
      } else {
        scalar();
      }
    };
    list();
    uint64_t size = v.sizeBytes();
    if (!v.dims.empty() && v.dims.back() == 0 && v.dims.size() == 1) {
      v.dims[0] = bytes.size() / std::max<uint64_t>(1, v.elementBytes());
      size = v.sizeBytes();
    }
    if (bytes.size() > size) fail(peek(), "too many initial values for '" + v.name + "'");
    // The initial value is the whole variable, zero after the values given: a size the host
    // cannot hold is this variable's error, not the host's. Beyond 1 TiB (more than any device
    // holds) it is refused without trying.
    const auto tooLarge = [&] {
      fail(peek(), fmt::format("'{}' is initialised and takes {} bytes, more than the host can "
                               "hold",
                               v.name, size));
    };
    if (size > (uint64_t(1) << 40)) tooLarge();
    try {
      bytes.resize(size, 0);
    } catch (const std::exception&) {  // bad_alloc, length_error
      tooLarge();
    }
    v.init = std::move(bytes);
  }

  // `isWeak`: a .weak definition, which another definition of the name may accompany (nvcc emits
  // one copy of an inline function in each unit that uses it); two others of one name are an
  // error, as in ptxas.
  void function(bool isExtern, bool isVisible, bool isWeak) {
    const Token& kind = next();
    auto fn = std::make_unique<Function>();
    fn->isEntry = kind.text == ".entry";
    fn->isExtern = isExtern;
    fn->isVisible = isVisible;
    fn->loc = locOf(kind);
    if (!fn->isEntry && peek().punct('(')) {
      next();
      paramList(fn->returns, ')');
    }
    fn->name = expectIdent("a function name");
    if (acceptPunct('(')) paramList(fn->params, ')');
    // performance directives
    while (peek().kind == Tok::Directive) {
      const Token& d = next();
      if (d.text == ".maxntid" || d.text == ".reqntid") {
        uint32_t* dst = d.text == ".maxntid" ? fn->maxntid : fn->reqntid;
        dst[0] = static_cast<uint32_t>(expectInt());
        for (int i = 1; i < 3 && acceptPunct(','); ++i) dst[i] = static_cast<uint32_t>(expectInt());
      } else if (d.text == ".minnctapersm") {
        fn->minnctapersm = static_cast<uint32_t>(expectInt());
      } else if (d.text == ".maxnreg") {
        fn->maxnreg = static_cast<uint32_t>(expectInt());
      } else if (d.text == ".maxnctapersm" || d.text == ".maxclusterrank") {
        expectInt();
      } else if (d.text == ".reqnctapercluster") {
        // Every block is a cluster of one block: only a cluster size of 1 can be honoured.
        uint64_t n = expectInt();
        for (int i = 1; i < 3 && acceptPunct(','); ++i) n *= expectInt();
        if (n != 1)
          throw InputError(unsupportedMessage(locOf(d), lineText(d.line)) +
                           " (clusters are not modelled: every block is a cluster of one block)");
      } else if (d.text == ".explicitcluster") {
      } else if (d.text == ".noreturn") {
      } else if (d.text == ".pragma") {
        skipToSemicolon();
      } else {
        unsupported(d);
      }
    }
    if (acceptPunct(';')) {
      fn->isExtern = true;  // prototype
    } else {
      const auto first = definitions_.find(fn->name);
      if (first != definitions_.end() && !isWeak && !first->second.weak)
        fail(kind,
             fmt::format("'{}' is defined twice (first at line {})", fn->name, first->second.line));
      if (first == definitions_.end() || first->second.weak)
        definitions_[fn->name] = {kind.line, isWeak};
      body(*fn);
    }
    functionsByName_[fn->name] = fn.get();
    mod_->functions.push_back(std::move(fn));
  }

  // `unnamed`: the parameters are written `_` (a .callprototype).
  void paramList(std::vector<std::unique_ptr<Variable>>& out, char close, bool unnamed = false) {
    if (acceptPunct(close)) return;
    while (true) {
      const Token& t = peek();
      if (!t.is(Tok::Directive, ".param") && !t.is(Tok::Directive, ".reg"))
        fail(t, "expected a .param declaration but found " + describe(t));
      next();
      Variable v;
      v.space = t.text == ".reg" ? StateSpace::Reg : StateSpace::Param;
      declAttributes(v, t);
      const Token& nameTok = peek();
      if (unnamed) {
        expectPunct('_');
        v.name = "_";
      } else {
        v.name = expectIdent("a parameter name");
      }
      v.loc = locOf(nameTok);
      while (acceptPunct('[')) {
        v.dims.push_back(peek().punct(']') ? 0 : expectInt());
        expectPunct(']');
      }
      out.push_back(std::make_unique<Variable>(std::move(v)));
      if (acceptPunct(close)) return;
      expectPunct(',');
    }
  }

  // ---- function bodies ----
  struct Scope {
    std::unordered_map<std::string, const Variable*> names;
  };

  const Variable* lookup(const std::string& name) const {
    for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
      auto f = it->names.find(name);
      if (f != it->names.end()) return f->second;
    }
    auto g = globalsByName_.find(name);
    return g == globalsByName_.end() ? nullptr : g->second;
  }

  void body(Function& fn) {
    fn_ = &fn;
    scopes_.clear();
    scopes_.emplace_back();
    for (auto& p : fn.params) scopes_.back().names[p->name] = p.get();
    for (auto& r : fn.returns) scopes_.back().names[r->name] = r.get();
    expectPunct('{');
    int depth = 1;
    int scopeCounter = 0;
    while (depth > 0) {
      const Token& t = peek();
      if (t.kind == Tok::End) fail(t, "unterminated function body of '" + fn.name + "'");
      if (t.punct('{')) {
        next();
        ++depth;
        scopes_.emplace_back();
        ++scopeCounter;
        continue;
      }
      if (t.punct('}')) {
        next();
        --depth;
        scopes_.pop_back();
        continue;
      }
      if (t.kind == Tok::Directive) {
        if (t.text == ".reg" || t.text == ".local" || t.text == ".shared" || t.text == ".param" ||
            t.text == ".const" || t.text == ".global") {
          auto vars = declaration(false, scopeCounter);
          for (auto& v : vars) {
            const auto [it, added] = scopes_.back().names.emplace(v->name, v.get());
            if (!added)
              fail(t, fmt::format("'{}' is declared twice in one scope (first at line {})", v->name,
                                  it->second->loc.line));
            fn.locals.push_back(std::move(v));
          }
        } else if (t.text == ".loc" || t.text == ".file") {
          next();
          skipLine(t.line);
        } else if (t.text == ".pragma") {
          next();
          skipToSemicolon();
        } else {
          unsupported(t);
        }
        continue;
      }
      if (t.kind == Tok::Ident && peek(1).punct(':')) {
        std::string label = next().text;
        next();
        if (peek().is(Tok::Directive, ".branchtargets")) {
          next();
          std::vector<std::string> targets;
          targets.push_back(expectIdent("a label"));
          while (acceptPunct(',')) targets.push_back(expectIdent("a label"));
          expectPunct(';');
          fn.branchTargets[label] = std::move(targets);
          continue;
        }
        if (acceptDirective(".calltargets")) {
          std::vector<std::string> targets;
          targets.push_back(expectIdent("a function name"));
          while (acceptPunct(',')) targets.push_back(expectIdent("a function name"));
          expectPunct(';');
          fn.callTargets[label] = std::move(targets);
          continue;
        }
        if (acceptDirective(".callprototype")) {
          fn.callPrototypes[label] = callPrototype(t);
          continue;
        }
        Statement s;
        s.kind = Statement::Kind::Label;
        s.label = label;
        s.loc = locOf(t);
        fn.body.push_back(std::move(s));
        continue;
      }
      Statement s;
      s.kind = Statement::Kind::Instr;
      s.instr = instruction();
      s.loc = s.instr.loc;
      fn.body.push_back(std::move(s));
    }
    fn_ = nullptr;
  }

  // label: .callprototype [(.param ret)] _ [(.param arg, ...)] [.noreturn];
  CallPrototype callPrototype(const Token& at) {
    CallPrototype proto;
    proto.loc = locOf(at);
    auto sizes = [&](std::vector<uint64_t>& out) {
      std::vector<std::unique_ptr<Variable>> vars;
      paramList(vars, ')', true);
      for (const auto& v : vars) {
        if (v->space != StateSpace::Param)
          fail(at, "a .callprototype lists '.param <type> _' parameters");
        out.push_back(v->sizeBytes());
      }
    };
    if (acceptPunct('(')) sizes(proto.returns);
    expectPunct('_');
    if (acceptPunct('(')) sizes(proto.params);
    acceptDirective(".noreturn");
    expectPunct(';');
    return proto;
  }

  Instruction instruction() {
    Instruction in;
    const Token& start = peek();
    in.loc = locOf(start);
    in.text = lineText(start.line);
    if (acceptPunct('@')) {
      bool neg = acceptPunct('!');
      const Token& p = peek();
      std::string name = expectIdent("a predicate register");
      const Variable* v = lookup(name);
      if (!v || v->type != Type::Pred)
        fail(p, "'" + name + "' is not a declared predicate register");
      in.guard = v;
      in.guardNegated = neg;
    }
    const Token& op = peek();
    if (op.kind != Tok::Ident) fail(op, "expected an instruction but found " + describe(op));
    next();
    in.opcode = op.text;
    in.loc = locOf(op);
    while (peek().kind == Tok::Directive && peek().adjacent) in.mods.push_back(next().text);
    if (in.opcode == "call") {
      callOperands(in);
      return in;
    }
    if (operandsNotParsed(in)) {
      // An instruction family gpusc refuses with a reason when it decodes the kernel; its
      // operands (tensor coordinates, matrix descriptors) are skipped, not parsed.
      int depth = 0;
      while (peek().kind != Tok::End && !(depth == 0 && peek().punct(';'))) {
        const Token& t = next();
        if (t.punct('{') || t.punct('[') || t.punct('(')) ++depth;
        if (t.punct('}') || t.punct(']') || t.punct(')')) --depth;
      }
      if (!peek().punct(';'))
        fail(peek(), "expected ';' after the instruction but found " + describe(peek()));
      next();
      return in;
    }
    if (!peek().punct(';') && !peek().punct('}')) {
      in.ops.push_back(operand());
      while (acceptPunct(',')) in.ops.push_back(operand());
    }
    if (!peek().punct(';'))
      fail(peek(), "expected ';' after the instruction but found " + describe(peek()));
    next();
    return in;
  }

  static bool operandsNotParsed(const Instruction& in) {
    static const char* const families[] = {
        "wgmma", "tcgen05", "multimem", "tensormap", "clusterlaunchcontrol",
        "tld4",  "txq",     "sured",    "suq"};
    for (const char* f : families)
      if (in.opcode == f) return true;
    for (const auto& m : in.mods)
      if (m == ".tensor" || m == ".tensormap") return true;
    return false;
  }

  // call[.uni] [(ret, ...),] callee [, (arg, ...)] [, proto];
  void callOperands(Instruction& in) {
    if (acceptPunct('(')) {
      if (!acceptPunct(')')) {
        in.callRets.push_back(operand());
        while (acceptPunct(',')) in.callRets.push_back(operand());
        expectPunct(')');
      }
      expectPunct(',');
    }
    const Token& callee = peek();
    if (callee.kind != Tok::Ident)
      fail(callee, "expected a function name but found " + describe(callee));
    const bool indirect = lookup(callee.text) != nullptr;  // a function pointer register
    if (indirect)
      in.ops.push_back(operand());
    else
      in.callee = next().text;
    bool tableNext = false;
    if (acceptPunct(',')) {
      if (acceptPunct('(')) {
        if (!acceptPunct(')')) {
          in.callArgs.push_back(operand());
          while (acceptPunct(',')) in.callArgs.push_back(operand());
          expectPunct(')');
        }
        tableNext = acceptPunct(',');
      } else {
        tableNext = true;
      }
    }
    if (tableNext) {
      const Token& table = peek();
      in.callTable = expectIdent("a .callprototype or .calltargets label");
      if (!indirect) fail(table, "a direct call takes no .callprototype or .calltargets label");
    }
    if (indirect && in.callTable.empty())
      fail(peek(), "an indirect call needs a .callprototype or .calltargets label");
    expectPunct(';');
  }

  Operand operand() {
    Operand o = simpleOperand();
    if (peek().punct('|')) {
      next();
      Operand pair;
      pair.kind = Operand::Kind::Vector;
      pair.pipePair = true;
      pair.loc = o.loc;
      pair.elems.push_back(std::move(o));
      pair.elems.push_back(simpleOperand());
      return pair;
    }
    return o;
  }

  Operand simpleOperand() {
    const Token& t = peek();
    Operand o;
    o.loc = locOf(t);
    if (t.punct('[')) {
      next();
      o.kind = Operand::Kind::Address;
      if (peek().kind == Tok::Ident) {
        const Token& b = next();
        o.hasBase = true;
        o.name = b.text;
        o.var = lookup(b.text);
        if (o.var == nullptr && !functionsByName_.count(b.text))
          fail(b, "'" + b.text + "' is not declared");
        if (peek().punct('+') || peek().punct('-'))  // a constant expression: +8, -4, +2*16
          o.imm = static_cast<int64_t>(constExpr());
        // A texture fetch's [handle, {coordinates}].
        if (acceptPunct(',')) o.elems.push_back(simpleOperand());
      } else if (constExprStarts()) {
        o.imm = static_cast<int64_t>(constExpr());
      } else {
        fail(peek(), "expected an address but found " + describe(peek()));
      }
      expectPunct(']');
      return o;
    }
    if (t.punct('{')) {
      next();
      o.kind = Operand::Kind::Vector;
      if (!peek().punct('}')) {
        o.elems.push_back(simpleOperand());
        while (acceptPunct(',')) o.elems.push_back(simpleOperand());
      }
      expectPunct('}');
      return o;
    }
    if (t.punct('_')) {
      next();
      o.kind = Operand::Kind::Sink;
      return o;
    }
    if (t.punct('!')) {
      next();
      o = simpleOperand();
      if (o.kind != Operand::Kind::Reg || o.var->type != Type::Pred)
        fail(t, "'!' applies only to predicate registers");
      o.negate = true;
      return o;
    }
    if (t.punct('-') && peek(1).kind == Tok::Ident) {  // a negated register (vmad)
      next();
      o = simpleOperand();
      if (o.kind != Operand::Kind::Reg || o.var->type == Type::Pred)
        fail(t, "'-' before a name applies only to data registers");
      o.minus = true;
      o.loc = locOf(t);
      return o;
    }
    if (constExprStarts()) {
      o.kind = Operand::Kind::Imm;
      o.imm = static_cast<int64_t>(constExpr());
      return o;
    }
    if (t.punct('-') || t.kind == Tok::Int || t.kind == Tok::Float) {
      bool neg = acceptPunct('-');
      const Token& n = next();
      if (n.kind == Tok::Int) {
        o.kind = Operand::Kind::Imm;
        o.imm = neg ? -static_cast<int64_t>(n.ival) : static_cast<int64_t>(n.ival);
      } else if (n.kind == Tok::Float) {
        o.kind = Operand::Kind::FImm;
        o.fval = neg ? -n.fval : n.fval;
        o.fbits = n.fbits;
        o.fraw = n.ival;
        if (neg) o.fraw ^= (n.fbits == 32 ? 0x80000000ull : 0x8000000000000000ull);
      } else {
        fail(n, "expected a number after '-' but found " + describe(n));
      }
      return o;
    }
    if (t.kind == Tok::Ident) {
      next();
      std::string name = t.text;
      if (name[0] == '%') {
        // special registers with a component: %tid.x
        if (peek().kind == Tok::Directive && peek().adjacent) {
          std::string withComp = name + peek().text;
          if (sregFromName(withComp)) {
            next();
            name = withComp;
          }
        }
        if (const Variable* v = lookup(name)) {
          o.kind = Operand::Kind::Reg;
          o.var = v;
          o.name = name;
          videoSelector(o);
          return o;
        }
        if (auto s = sregFromName(name)) {
          o.kind = Operand::Kind::SReg;
          o.sreg = *s;
          o.name = name;
          return o;
        }
        if (startsWith(name, "%pm") || startsWith(name, "%reserved")) unsupported(t);
        fail(t, "'" + name + "' is not a declared register");
      }
      // WARP_SZ, the PTX ISA's predefined constant for the warp size (what CUDA's warpSize
      // compiles to): an immediate 32, unless the module declares a variable of that name.
      if (name == "WARP_SZ" && lookup(name) == nullptr) {
        o.kind = Operand::Kind::Imm;
        o.imm = 32;
        return o;
      }
      o.kind = Operand::Kind::Symbol;
      o.name = name;
      o.var = lookup(name);
      // A register whose name has no '%' (as in `{ .reg .pred P_OUT; ... }` of inline asm).
      if (o.var && o.var->space == StateSpace::Reg) {
        o.kind = Operand::Kind::Reg;
        videoSelector(o);
      }
      return o;  // labels and functions are resolved by the decoder
    }
    fail(t, "expected an operand but found " + describe(t));
  }

  // A sub-word selector or mask written right after a register: ".b0" .. ".b3", ".h0", ".h1",
  // ".h10", ".b3210" (video instructions; the decoder refuses it anywhere else).
  void videoSelector(Operand& o) {
    const Token& s = peek();
    if (s.kind != Tok::Directive || !s.adjacent || s.text.size() < 3) return;
    if (s.text[1] != 'b' && s.text[1] != 'h') return;
    for (size_t i = 2; i < s.text.size(); ++i)
      if (s.text[i] < '0' || s.text[i] > '9') return;
    o.sel = next().text;
  }

  std::string_view text_;
  std::shared_ptr<const std::string> file_;
  std::vector<Token> toks_;
  std::vector<size_t> lineStart_;
  size_t pos_ = 0;
  std::unique_ptr<Module> mod_;
  Function* fn_ = nullptr;
  std::vector<Scope> scopes_;
  std::map<std::string, SourceLoc> aliasAt_;  // where each .alias names its aliasee
  std::unordered_map<std::string, const Variable*> globalsByName_;
  std::unordered_map<std::string, const Function*> functionsByName_;
  // The first definition (a function with a body) of each name, preferring one not .weak: its
  // line, and whether it is .weak.
  struct Definition {
    uint32_t line = 0;
    bool weak = false;
  };
  std::unordered_map<std::string, Definition> definitions_;
  uint32_t versionLine_ = 0;  // the line of the module's .version (0: none yet)
};

}  // namespace

std::map<std::string, uint32_t> allocatedRegisters(std::string_view text,
                                                   const std::string& fileName) {
  std::map<std::string, uint32_t> out;
  constexpr std::string_view kPrefix = "// ptxas ";
  size_t lineNo = 0;
  for (size_t pos = 0; pos < text.size();) {
    const size_t end = std::min(text.find('\n', pos), text.size());
    const std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    ++lineNo;
    if (line.substr(0, kPrefix.size()) != kPrefix) continue;
    // "// ptxas <options>: <kernel> uses <n> registers"
    const size_t colon = line.find(": ");
    const auto bad = [&] {
      return InputError(
          fmt::format("{}:{}: error: expected '// ptxas <options>: <kernel> uses <n> registers'",
                      fileName, lineNo));
    };
    if (colon == std::string_view::npos) throw bad();
    // The kernel's name has no bound on its length (C++ templates mangle to thousands of
    // characters), so it is what comes before " uses ".
    const std::string_view rest = line.substr(colon + 2);
    const size_t uses = rest.find(" uses ");
    if (uses == 0 || uses == std::string_view::npos) throw bad();
    const std::string_view name = rest.substr(0, uses);
    if (name.find_first_of(" \t") != std::string_view::npos) throw bad();
    const std::string count(rest.substr(uses + 6));
    unsigned n = 0;
    char tail[16] = {};
    if (std::sscanf(count.c_str(), "%u %15s", &n, tail) != 2 ||
        std::strcmp(tail, "registers") != 0 || n == 0 || n > 255)
      throw bad();
    out[std::string(name)] = n;
  }
  return out;
}

std::unique_ptr<Module> parseModule(std::string_view text, const std::string& fileName) {
  return Parser(text, fileName).run();
}

}  // namespace gpusc::ptx
