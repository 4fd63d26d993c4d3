#include "shader/assembly.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <optional>

#include <fmt/format.h>

#include "common/error.hpp"
#include "common/strings.hpp"
#include "shader/analysis.hpp"

namespace gpusc::shader {

namespace {

const char kComp[] = "xyzw";

std::string swizzleText(const std::array<uint8_t, 4>& s) {
  if (s == std::array<uint8_t, 4>{0, 1, 2, 3}) return "";
  // Shortest form: trailing repeats of the last component are implied.
  int n = 4;
  while (n > 1 && s[size_t(n - 1)] == s[size_t(n - 2)]) --n;
  std::string out = ".";
  for (int i = 0; i < n; ++i) out += kComp[s[size_t(i)]];
  return out;
}

std::string maskText(uint8_t m) {
  if (m == 0xF) return "";
  std::string out = ".";
  for (int i = 0; i < 4; ++i)
    if (m & (1u << i)) out += kComp[i];
  return out;
}

std::string floatText(float f) { return fmt::format("{}", f); }

std::string termText(const Program& p, size_t b) {
  const Terminator& t = p.blocks[b].term;
  const int next = int(b) + 1;
  auto label = [&](int s) { return p.blocks[size_t(s)].label; };
  switch (t.kind) {
    case TermKind::Jump:
      return t.succ[0] == next ? "" : "bra " + label(t.succ[0]);
    case TermKind::Branch:
      if (t.succ[0] == t.succ[1]) return t.succ[0] == next ? "" : "bra " + label(t.succ[0]);
      if (t.succ[1] == next)
        return fmt::format("bnz {}, {}", printOperand(t.cond), label(t.succ[0]));
      if (t.succ[0] == next)
        return fmt::format("bz {}, {}", printOperand(t.cond), label(t.succ[1]));
      return fmt::format("bnz {}, {}\n  bra {}", printOperand(t.cond), label(t.succ[0]),
                         label(t.succ[1]));
    case TermKind::End:
      return "end";
    case TermKind::Kill:
      return "kil";
  }
  return "";
}

// ---- reading -----------------------------------------------------------------------------------

class Parser {
 public:
  Parser(const std::string& name) : name_(name) {}

  [[noreturn]] void fail(const std::string& msg) const {
    throw InputError(fmt::format("{}:{}: {}", name_, line_, msg));
  }

  Program run(const std::string& text) {
    prog_.name = name_;
    auto lines = split(text, '\n');
    for (size_t n = 0; n < lines.size(); ++n) {
      line_ = int(n + 1);
      std::string l(lines[n]);
      auto semi = l.find(';');
      if (semi != std::string::npos) l = l.substr(0, semi);
      std::string s(trim(l));
      if (s.empty()) continue;
      lastLine_ = line_;
      if (s[0] == '.') {
        directive(s);
        continue;
      }
      if (s.back() == ':') {
        label(s.substr(0, s.size() - 1));
        continue;
      }
      auto parts = splitBundle(s);
      if (parts.size() > 2) fail("a bundle holds at most two instructions");
      for (size_t k = 0; k < parts.size(); ++k) statement(std::string(trim(parts[k])), k == 1);
    }
    line_ = std::max(lastLine_, 1);
    if (prog_.blocks.empty()) fail("no code (a program needs at least one block)");
    line_ = int(lines.size());
    closeBlock(false);
    resolve();
    // The constant registers: those the .const and .uniform directives define.
    uint32_t consts = 0;
    for (const auto& c : prog_.constants) consts = std::max<uint32_t>(consts, c.first + 1u);
    for (const auto& u : prog_.uniforms)
      consts = std::max<uint32_t>(consts, uint32_t(u.index) + u.entries);
    prog_.constantCount = uint16_t(std::min<uint32_t>(consts, 65535));
    return std::move(prog_);
  }

 private:
  static std::vector<std::string> splitBundle(const std::string& s) {
    std::vector<std::string> out;
    size_t start = 0, pos;
    while ((pos = s.find("||", start)) != std::string::npos) {
      out.push_back(s.substr(start, pos - start));
      start = pos + 2;
    }
    out.push_back(s.substr(start));
    return out;
  }

  std::vector<std::string> words(const std::string& s) {
    std::vector<std::string> out;
    for (auto& w : split(s, ' '))
      if (!trim(w).empty()) out.emplace_back(trim(w));
    return out;
  }

  uint16_t number(const std::string& s, const char* what) {
    char* end = nullptr;
    long v = std::strtol(s.c_str(), &end, 10);
    if (s.empty() || *end != '\0' || v < 0 || v > 65535) fail(fmt::format("bad {} '{}'", what, s));
    return uint16_t(v);
  }

  float real(const std::string& s) {
    char* end = nullptr;
    float v = std::strtof(s.c_str(), &end);
    if (s.empty() || *end != '\0') fail(fmt::format("bad number '{}'", s));
    return v;
  }

  // "v3" -> (Input, 3)
  std::pair<File, uint16_t> reg(const std::string& s) {
    if (s.size() < 2) fail(fmt::format("bad register '{}'", s));
    File f;
    switch (s[0]) {
      case 't':
        f = File::Temp;
        break;
      case 'v':
        f = File::Input;
        break;
      case 'o':
        f = File::Output;
        break;
      case 'c':
        f = File::Const;
        break;
      default:
        fail(fmt::format("bad register '{}' (expected t, v, o or c and a number)", s));
    }
    return {f, number(s.substr(1), "register number")};
  }

  void directive(const std::string& s) {
    auto w = words(s);
    const std::string& d = w[0];
    auto binding = [&](File f, std::vector<Binding>& list) {
      if (w.size() < 3 || w.size() > 5) fail(d + ": expected REGISTER NAME [ENTRIES [COMPONENTS]]");
      auto [file, idx] = reg(w[1]);
      if (file != f) fail(fmt::format("{}: expected a {} register", d, fileLetter(f)));
      Binding b{w[2], idx, 1, 4, uint32_t(line_)};
      if (w.size() >= 4) b.entries = number(w[3], "entry count");
      if (w.size() == 5) b.components = uint8_t(number(w[4], "component count"));
      list.push_back(b);
    };
    if (d == ".shader") {
      if (w.size() < 2) fail(".shader: expected vertex or fragment");
      if (w[1] == "vertex")
        prog_.stage = Stage::Vertex;
      else if (w[1] == "fragment")
        prog_.stage = Stage::Fragment;
      else
        fail(".shader: expected vertex or fragment, got '" + w[1] + "'");
    } else if (d == ".input") {
      binding(File::Input, prog_.inputs);
    } else if (d == ".output") {
      binding(File::Output, prog_.outputs);
    } else if (d == ".uniform") {
      binding(File::Const, prog_.uniforms);
    } else if (d == ".sampler") {
      if (w.size() != 3 || w[1].size() < 2 || w[1][0] != 's') fail(".sampler: expected sN NAME");
      prog_.samplers.push_back(
          Binding{w[2], number(w[1].substr(1), "sampler"), 1, 4, uint32_t(line_)});
    } else if (d == ".const") {
      if (w.size() != 6) fail(".const: expected cN X Y Z W");
      auto [file, idx] = reg(w[1]);
      if (file != File::Const) fail(".const: expected a c register");
      prog_.constants.push_back({idx, Vec4{real(w[2]), real(w[3]), real(w[4]), real(w[5])}});
    } else if (d == ".allocated") {
      prog_.allocated = true;
    } else if (d == ".bundled") {
      prog_.bundled = true;
    } else {
      fail(fmt::format("unknown directive '{}'", d));
    }
  }

  void label(const std::string& l) {
    if (l.empty() || l.find(' ') != std::string::npos) fail(fmt::format("bad label '{}'", l));
    closeBlock(true);
    for (const auto& b : prog_.blocks)
      if (b.label == l) fail(fmt::format("label '{}' defined twice", l));
    prog_.blocks.push_back(Block{l, {}, {}});
    targets_.push_back({});
    targetLine_.push_back(0);
    open_ = true;
    termSeen_ = false;
  }

  Block& cur() { return prog_.blocks.back(); }

  void ensureBlock() {
    if (!open_) {
      prog_.blocks.push_back(Block{fmt::format("B{}", prog_.blocks.size()), {}, {}});
      targets_.push_back({});
      targetLine_.push_back(0);
      open_ = true;
      termSeen_ = false;
    }
  }

  // Ends the open block: without a terminator it falls through to the next block (when there is
  // one: `more`).
  void closeBlock(bool more) {
    if (!open_) return;
    if (!termSeen_) {
      if (!more) fail(fmt::format("block '{}' has no terminator (end, kil, bra)", cur().label));
      cur().term.kind = TermKind::Jump;
      targets_.back() = {"", ""};
    }
    open_ = false;
  }

  Operand operand(std::string s) {
    Operand o;
    if (!s.empty() && s[0] == '-') {
      o.neg = true;
      s = s.substr(1);
    }
    if (!s.empty() && s[0] == '|') {
      auto close = s.find('|', 1);
      if (close == std::string::npos) fail(fmt::format("unclosed '|' in '{}'", s));
      o.abs = true;
      s = s.substr(1, close - 1) + s.substr(close + 1);
    }
    auto dot = s.find('.');
    auto [f, idx] = reg(s.substr(0, dot));
    o.file = f;
    o.index = idx;
    if (dot != std::string::npos) {
      std::string sw = s.substr(dot + 1);
      if (sw.empty() || sw.size() > 4) fail(fmt::format("bad swizzle '{}'", sw));
      for (size_t i = 0; i < 4; ++i) {
        char c = sw[std::min(i, sw.size() - 1)];
        const char* p = std::strchr(kComp, c);
        if (!p || c == '\0') fail(fmt::format("bad swizzle '{}'", sw));
        o.swz[i] = uint8_t(p - kComp);
      }
    }
    return o;
  }

  Dest dest(const std::string& s) {
    Dest d;
    auto dot = s.find('.');
    auto [f, idx] = reg(s.substr(0, dot));
    if (f != File::Temp && f != File::Output)
      fail(fmt::format("'{}' cannot be written (only t and o registers)", s));
    d.file = f;
    d.index = idx;
    if (dot != std::string::npos) {
      d.mask = 0;
      int last = -1;
      for (char c : s.substr(dot + 1)) {
        const char* p = std::strchr(kComp, c);
        if (!p || c == '\0' || int(p - kComp) <= last)
          fail(fmt::format("bad write mask in '{}'", s));
        last = int(p - kComp);
        d.mask |= uint8_t(1u << last);
      }
      if (!d.mask) fail(fmt::format("empty write mask in '{}'", s));
    }
    return d;
  }

  void statement(const std::string& s, bool second) {
    if (s.empty()) fail("empty instruction in a bundle");
    if (termSeen_ && !pendingBra_)
      fail("instruction after the block's terminator (start a new block with a label)");
    ensureBlock();
    auto sp = s.find(' ');
    std::string mn = s.substr(0, sp);
    std::string rest = sp == std::string::npos ? "" : std::string(trim(s.substr(sp)));
    std::vector<std::string> args;
    if (!rest.empty())
      for (auto& a : split(rest, ',')) args.emplace_back(trim(a));
    auto need = [&](size_t n) {
      if (args.size() != n)
        fail(fmt::format("{}: expected {} operands, got {}", mn, n, args.size()));
    };
    Terminator& t = cur().term;
    if (mn == "end" || mn == "kil") {
      need(0);
      if (termSeen_) fail(mn + " after a branch");
      t.kind = mn == "end" ? TermKind::End : TermKind::Kill;
      t.pairPrev = second;
      termSeen_ = true;
      return;
    }
    if (mn == "bnz" || mn == "bz") {
      need(2);
      if (termSeen_) fail(mn + " after a branch");
      t.kind = TermKind::Branch;
      t.cond = operand(args[0]);
      t.line = uint32_t(line_);
      t.pairPrev = second;
      targets_.back() =
          mn == "bnz" ? std::pair{args[1], std::string()} : std::pair{std::string(), args[1]};
      targetLine_.back() = line_;
      termSeen_ = true;
      pendingBra_ = true;
      return;
    }
    if (mn == "bra") {
      need(1);
      if (termSeen_ && !pendingBra_) fail("bra after the block's terminator");
      if (pendingBra_) {
        // The false target of the preceding bnz (a bz's false target is the next block).
        auto& tg = targets_.back();
        if (tg.second.empty() && !tg.first.empty())
          tg.second = args[0];
        else
          fail("bra after bz");
        pendingBra_ = false;
        return;
      }
      t.kind = TermKind::Jump;
      t.pairPrev = second;
      targets_.back() = {args[0], ""};
      targetLine_.back() = line_;
      termSeen_ = true;
      return;
    }
    pendingBra_ = false;
    if (termSeen_)
      fail("instruction after the block's terminator (start a new block with a label)");
    Instr in;
    in.line = uint32_t(line_);
    bool found = false;
    for (int k = 0; k < int(Op::Count); ++k)
      if (mn == opInfo(Op(k)).name) {
        in.op = Op(k);
        found = true;
      }
    if (!found) fail(fmt::format("unknown instruction '{}'", mn));
    const OpInfo& info = opInfo(in.op);
    const size_t n = size_t(info.sources) + 1 + (in.op == Op::Tex ? 1 : 0);
    need(n);
    in.dst = dest(args[0]);
    for (size_t k = 0; k < info.sources; ++k) in.src[k] = operand(args[k + 1]);
    if (in.op == Op::Tex) {
      const std::string& u = args[2];
      if (u.size() < 2 || u[0] != 's') fail(fmt::format("tex: expected a sampler sN, got '{}'", u));
      in.unit = uint8_t(number(u.substr(1), "sampler"));
    }
    if (second) {
      if (cur().code.empty()) fail("'||' without a first instruction");
      cur().code.back().pairNext = true;
    }
    cur().code.push_back(in);
  }

  void resolve() {
    auto find = [&](const std::string& l) {
      int b = prog_.findBlock(l);
      if (b < 0) fail(fmt::format("no block labelled '{}'", l));
      return b;
    };
    for (size_t b = 0; b < prog_.blocks.size(); ++b) {
      if (targetLine_[b] > 0) line_ = targetLine_[b];
      Terminator& t = prog_.blocks[b].term;
      const int next = int(b) + 1;
      auto nextBlock = [&]() {
        if (next >= int(prog_.blocks.size()))
          fail(fmt::format("block '{}' falls through past the end", prog_.blocks[b].label));
        return next;
      };
      const auto& [a, c] = targets_[b];
      if (t.kind == TermKind::Jump) {
        t.succ[0] = a.empty() ? nextBlock() : find(a);
      } else if (t.kind == TermKind::Branch) {
        t.succ[0] = a.empty() ? nextBlock() : find(a);
        t.succ[1] = c.empty() ? nextBlock() : find(c);
      }
    }
  }

  std::string name_;
  int line_ = 0, lastLine_ = 0;
  Program prog_;
  bool open_ = false, termSeen_ = false, pendingBra_ = false;
  std::vector<std::pair<std::string, std::string>> targets_;  // per block: taken, false
  std::vector<int> targetLine_;                               // per block: its branch's line
};

}  // namespace

std::string printOperand(const Operand& o) {
  std::string r = fmt::format("{}{}", fileLetter(o.file), o.index);
  if (o.abs) r = "|" + r + "|";
  return (o.neg ? "-" : "") + r + swizzleText(o.swz);
}

std::string printInstr(const Instr& i) {
  const OpInfo& info = opInfo(i.op);
  std::string s = fmt::format("{} {}{}{}", info.name, fileLetter(i.dst.file), i.dst.index,
                              maskText(i.dst.mask));
  for (int k = 0; k < info.sources; ++k) s += ", " + printOperand(i.src[size_t(k)]);
  if (i.op == Op::Tex) s += fmt::format(", s{}", i.unit);
  return s;
}

namespace {

// A block's lines in the assembly form (bundles joined by "||"), without its label.
std::vector<std::string> blockLines(const Program& p, size_t b) {
  std::vector<std::string> out;
  const Block& blk = p.blocks[b];
  const std::string term = termText(p, b);
  bool termPrinted = false;
  const size_t n = blk.code.size();
  for (size_t k = 0; k < n;) {
    std::string line = printInstr(blk.code[k]);
    size_t last = k;
    if (blk.code[k].pairNext && k + 1 < n) {
      line += " || " + printInstr(blk.code[k + 1]);
      last = k + 1;
    } else if (k + 1 == n && blk.term.pairPrev && !term.empty()) {
      line += " || " + term;
      termPrinted = true;
    }
    for (const auto& l : split(line, '\n')) out.emplace_back(trim(l));  // bnz ... + bra
    k = last + 1;
  }
  if (!termPrinted && !term.empty())
    for (const auto& l : split(term, '\n')) out.emplace_back(trim(l));
  return out;
}

}  // namespace

std::string printAssembly(const Program& p) {
  std::string out = fmt::format("; {}\n.shader {}\n", p.name, stageName(p.stage));
  if (p.allocated) out += ".allocated\n";
  if (p.bundled) out += ".bundled\n";
  auto bindings = [&](const char* d, char letter, const std::vector<Binding>& list) {
    for (const auto& b : list)
      out += fmt::format("{} {}{} {} {} {}\n", d, letter, b.index, b.name, b.entries, b.components);
  };
  bindings(".input", 'v', p.inputs);
  bindings(".output", 'o', p.outputs);
  bindings(".uniform", 'c', p.uniforms);
  for (const auto& s : p.samplers) out += fmt::format(".sampler s{} {}\n", s.index, s.name);
  for (const auto& [idx, v] : p.constants)
    out += fmt::format(".const c{} {} {} {} {}\n", idx, floatText(v[0]), floatText(v[1]),
                       floatText(v[2]), floatText(v[3]));
  for (size_t b = 0; b < p.blocks.size(); ++b) {
    out += p.blocks[b].label + ":\n";
    for (const std::string& l : blockLines(p, b)) out += "  " + l + "\n";
  }
  return out;
}

std::string printCfgDot(const Program& p, const std::string& title, int registers) {
  auto escape = [](const std::string& s) {
    std::string e;
    for (char c : s) e += (c == '"' || c == '\\') ? std::string("\\") + c : std::string(1, c);
    return e;
  };
  const Liveness live = liveness(p);
  const Cfg cfg = analyseCfg(p);
  std::string out = fmt::format(
      "digraph \"{}\" {{\n  label=\"{}\"; labelloc=t;\n  node [shape=box, fontname=monospace];\n",
      escape(title), escape(title));
  for (size_t b = 0; b < p.blocks.size(); ++b) {
    const std::vector<int> pr = blockPressure(p, live, int(b));
    std::string label = fmt::format("{}: CMT {}, loop depth {}\\l", p.blocks[b].label,
                                    tunnel(pr, registers, 0, int(pr.size()) - 1), cfg.loopDepth[b]);
    for (const std::string& l : blockLines(p, b)) label += "  " + escape(l) + "\\l";
    out += fmt::format("  b{} [label=\"{}\"];\n", b, label);
  }
  for (size_t b = 0; b < p.blocks.size(); ++b) {
    const Terminator& t = p.blocks[b].term;
    if (t.kind == TermKind::Jump) out += fmt::format("  b{} -> b{};\n", b, t.succ[0]);
    if (t.kind == TermKind::Branch) {
      out += fmt::format("  b{} -> b{} [label=\"nz\"];\n", b, t.succ[0]);
      out += fmt::format("  b{} -> b{} [label=\"z\"];\n", b, t.succ[1]);
    }
  }
  return out + "}\n";
}

Program parseAssembly(const std::string& text, const std::string& name) {
  return Parser(name).run(text);
}

}  // namespace gpusc::shader
