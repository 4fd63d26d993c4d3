#include "support/shader_harness.hpp"

#include <cstring>

#include <fmt/format.h>

#include "common/rng.hpp"
#include "shader/analysis.hpp"

namespace gpusc::test {

using namespace shader;

Vec4 HashTextures::sample(uint8_t unit, float u, float v) const {
  uint32_t a, b;
  std::memcpy(&a, &u, 4);
  std::memcpy(&b, &v, 4);
  Rng r((uint64_t(a) << 32 | b) ^ (uint64_t(unit) * 0x9e3779b97f4a7c15ull));
  return {r.uniformf(0, 1), r.uniformf(0, 1), r.uniformf(0, 1), r.uniformf(0, 1)};
}

namespace {

class Generator {
 public:
  explicit Generator(uint64_t seed) : rng_(seed * 7919 + 17) {}

  // tight: few values live (recent ones only) and more branches, so that the code-motion
  // tunnels stay open and clusters move across blocks.
  Program run(uint64_t seed, bool tight) {
    tight_ = tight;
    p_.name = fmt::format("random{}.s", seed);
    p_.stage = Stage::Fragment;
    for (uint16_t k = 0; k < 6; ++k) p_.inputs.push_back(Binding{fmt::format("in{}", k), k, 1, 4});
    p_.outputs = {Binding{"out0", 0, 1, 4}, Binding{"out1", 1, 1, 4}};
    for (uint16_t k = 0; k < 6; ++k)
      p_.constants.push_back({k, Vec4{rng_.uniformf(-2, 2), rng_.uniformf(-2, 2),
                                      rng_.uniformf(-2, 2), rng_.uniformf(-2, 2)}});
    p_.constants.push_back({6, Vec4{0, 0, 0, 0}});
    p_.constants.push_back({7, Vec4{1, 1, 1, 1}});
    p_.constants.push_back({8, Vec4{float(2 + rng_.below(2)), 0, 0, 0}});
    p_.constantCount = 9;
    cur_ = newBlock();
    region(0);
    // The outputs at the end: written whole, in part or not at all, so that the writes inside
    // the program (and their order) show in the result.
    for (uint16_t o = 0; o < 2; ++o) {
      const uint32_t r = tight_ ? 2 + rng_.below(2) : rng_.below(4);
      if (r < 2) emit(Op::Add, Dest{File::Output, o, 0xF}, {src(), src()});
      if (r == 2)
        emit(Op::Mad, Dest{File::Output, o, uint8_t(1 + rng_.below(14))}, {src(), src(), src()});
    }
    block().term.kind = TermKind::End;
    return std::move(p_);
  }

 private:
  int newBlock() {
    p_.blocks.push_back(Block{fmt::format("B{}", p_.blocks.size()), {}, {}});
    return int(p_.blocks.size()) - 1;
  }
  Block& block() { return p_.blocks[size_t(cur_)]; }

  Operand src() {
    Operand o;
    const uint32_t r = rng_.below(100);
    if (r < 45 && !pool_.empty()) {
      // Mostly recent values, sometimes an old one: long live ranges, high pressure.
      const size_t n = pool_.size();
      const size_t pick = tight_ ? n - 1 - rng_.below(uint32_t(std::min<size_t>(n, 2)))
                          : rng_.below(100) < 94
                              ? n - 1 - rng_.below(uint32_t(std::min<size_t>(n, 7)))
                              : rng_.below(uint32_t(n));
      o.file = File::Temp;
      o.index = pool_[pick];
    } else if (r < 75) {
      o.file = File::Input;
      o.index = uint16_t(rng_.below(6));
    } else if (r < 80 && outputsWritten_) {
      o.file = File::Output;
      o.index = uint16_t(rng_.below(2));
    } else {
      o.file = File::Const;
      o.index = uint16_t(rng_.below(6));
    }
    if (rng_.below(2))
      for (auto& c : o.swz) c = uint8_t(rng_.below(4));
    o.neg = rng_.below(5) == 0;
    o.abs = rng_.below(8) == 0;
    return o;
  }

  void emit(Op op, Dest d, std::vector<Operand> s, uint8_t unit = 0) {
    Instr i;
    i.op = op;
    i.dst = d;
    for (size_t k = 0; k < s.size(); ++k) i.src[k] = s[k];
    i.unit = unit;
    block().code.push_back(i);
    if (d.file == File::Output) outputsWritten_ = true;
  }

  void instruction() {
    static const Op ops[] = {Op::Mov, Op::Add, Op::Mul, Op::Mad, Op::Min, Op::Max,
                             Op::Slt, Op::Sge, Op::Sel, Op::Frc, Op::Dp3, Op::Dp4,
                             Op::Rcp, Op::Ex2, Op::Sin, Op::Tex};
    const Op op = ops[rng_.below(sizeof(ops) / sizeof(ops[0]))];
    std::vector<Operand> s;
    for (int k = 0; k < opInfo(op).sources; ++k) s.push_back(src());
    if (rng_.below(100) < 12) {
      // An output-buffer write, sometimes partial.
      const uint8_t mask = uint8_t(1 + rng_.below(15));
      emit(op, Dest{File::Output, uint16_t(rng_.below(2)), mask}, s, uint8_t(rng_.below(2)));
      return;
    }
    const uint16_t t = next_++;
    if (rng_.below(100) < 15) {
      // Built in two parts: a full write, then a partial one.
      emit(Op::Mov, Dest{File::Temp, t, 0xF}, {src()});
      emit(op, Dest{File::Temp, t, uint8_t(1 + rng_.below(15))}, s, uint8_t(rng_.below(2)));
    } else {
      emit(op, Dest{File::Temp, t, 0xF}, s, uint8_t(rng_.below(2)));
    }
    pool_.push_back(t);
  }

  Operand condition() {
    if (rng_.below(4) == 0) {
      Operand o;
      o.file = File::Input;
      o.index = uint16_t(rng_.below(6));
      o.swz = {uint8_t(rng_.below(4)), 0, 0, 0};
      return o;  // a branch straight on an input (its DTO goes before the branch)
    }
    const uint16_t t = next_++;
    emit(Op::Slt, Dest{File::Temp, t, 0xF}, {src(), src()});
    Operand o;
    o.index = t;
    return o;
  }

  void straight() {
    const uint32_t n = 2 + rng_.below(7);
    for (uint32_t k = 0; k < n; ++k) instruction();
  }

  void region(int depth) {
    const uint32_t items = 1 + rng_.below(3);
    for (uint32_t it = 0; it < items; ++it) {
      straight();
      const uint32_t r = rng_.below(100);
      if (depth >= 2 || r < (tight_ ? 10u : 35u)) continue;
      if (r < 52)
        ifElse(depth);
      else if (r < 62)
        select();
      else if (r < 70)
        rewrite();
      else
        loop(depth);
    }
  }

  void ifElse(int depth) {
    const Operand c = condition();
    const int thenB = newBlock(), elseB = newBlock();
    Block& head = p_.blocks[size_t(cur_)];
    head.term.kind = TermKind::Branch;
    head.term.cond = c;
    head.term.succ = {thenB, elseB};
    const auto saved = pool_;
    const bool savedOut = outputsWritten_;
    cur_ = thenB;
    if (rng_.below(12) == 0) {
      straight();
      block().term.kind = TermKind::Kill;  // a discarded fragment
    } else {
      region(depth + 1);
    }
    const int thenEnd = cur_;
    pool_ = saved;
    outputsWritten_ = savedOut;
    cur_ = elseB;
    if (rng_.below(3)) region(depth + 1);
    const int elseEnd = cur_;
    pool_ = saved;
    // A phi: a temporary each side defines with a copy, mostly of an input (what the front end
    // makes of `x = cond ? a : b`), read after the join.
    if (rng_.below(100) < 40) {
      const uint16_t t = next_++;
      for (auto [first, last] : {std::pair{thenB, thenEnd}, std::pair{elseB, elseEnd}}) {
        if (p_.blocks[size_t(last)].term.kind == TermKind::Kill) continue;
        cur_ = last;
        Operand o;
        if (rng_.below(4) != 0) {
          o.file = File::Input;
          o.index = uint16_t(rng_.below(6));
        } else {
          o = src();
          o.neg = o.abs = false;
        }
        emit(Op::Mov, Dest{File::Temp, t, 0xF}, {o});
        if (o.file == File::Input && rng_.below(2)) {
          // At the top of the side instead (where code motion finds it first).
          auto& code = p_.blocks[size_t(last)].code;
          const Instr copy = code.back();
          code.pop_back();
          auto& top = p_.blocks[size_t(first)].code;
          top.insert(top.begin(), copy);
        }
      }
      pool_.push_back(t);
    }
    const int join = newBlock();
    for (int e : {thenEnd, elseEnd}) {
      Block& b = p_.blocks[size_t(e)];
      if (b.term.kind == TermKind::Kill) continue;
      b.term.kind = TermKind::Jump;
      b.term.succ = {join, -1};
    }
    cur_ = join;
  }

  // `x = cond ? a : b` as the front end lowers it: each side only copies an input (two different
  // ones; sometimes a value) into one temporary, read after the join by an instruction that
  // reads no input; the code after it starts a block of its own.
  void select() {
    const Operand c = condition();
    const int thenB = newBlock(), elseB = newBlock(), join = newBlock();
    Block& head = p_.blocks[size_t(cur_)];
    head.term.kind = TermKind::Branch;
    head.term.cond = c;
    head.term.succ = {thenB, elseB};
    const uint16_t t = next_++;
    const uint16_t first = uint16_t(rng_.below(6));
    for (int side : {thenB, elseB}) {
      cur_ = side;
      Operand o;
      if (side == thenB || rng_.below(5) != 0) {
        o.file = File::Input;
        o.index = side == thenB ? first : uint16_t((first + 1 + rng_.below(5)) % 6);
      } else {
        o = src();
        o.neg = o.abs = false;
      }
      emit(Op::Mov, Dest{File::Temp, t, 0xF}, {o});
      block().term.kind = TermKind::Jump;
      block().term.succ = {join, -1};
    }
    cur_ = join;
    const uint16_t u = next_++;
    emit(Op::Mul, Dest{File::Temp, u, 0xF},
         {Operand{File::Temp, t}, Operand{File::Const, uint16_t(rng_.below(6))}});
    pool_.push_back(t);
    pool_.push_back(u);
    const int after = newBlock();
    block().term.kind = TermKind::Jump;
    block().term.succ = {after, -1};
    cur_ = after;
  }

  // An output written, a branch, the same output written again, another branch: code motion
  // of the output buffer must keep the two writes in order.
  void rewrite() {
    const uint16_t o = uint16_t(rng_.below(2));
    emit(Op::Add, Dest{File::Output, o, 0xF}, {src(), src()});
    select();
    emit(Op::Mul, Dest{File::Output, o, uint8_t(rng_.below(3) ? 0xF : 1 + rng_.below(15))},
         {src(), src()});
    select();
  }

  void loop(int depth) {
    const uint16_t counter = next_++;
    emit(Op::Mov, Dest{File::Temp, counter, 0xF}, {Operand{File::Const, 6}});
    const int header = newBlock();
    Block& pre = p_.blocks[size_t(cur_)];
    pre.term.kind = TermKind::Jump;
    pre.term.succ = {header, -1};
    const auto saved = pool_;
    cur_ = header;
    region(depth + 1);
    emit(Op::Add, Dest{File::Temp, counter, 0xF},
         {Operand{File::Temp, counter}, Operand{File::Const, 7}});
    const uint16_t c = next_++;
    emit(Op::Slt, Dest{File::Temp, c, 0xF},
         {Operand{File::Temp, counter}, Operand{File::Const, 8, {0, 0, 0, 0}}});
    const int exit = newBlock();
    Block& latch = p_.blocks[size_t(cur_)];
    latch.term.kind = TermKind::Branch;
    latch.term.cond = Operand{File::Temp, c};
    latch.term.succ = {header, exit};
    pool_ = saved;
    cur_ = exit;
  }

  Rng rng_;
  Program p_;
  int cur_ = 0;
  uint16_t next_ = 0;
  std::vector<uint16_t> pool_;
  bool outputsWritten_ = false;
  bool tight_ = false;
};

}  // namespace

Program randomShaderProgram(uint64_t seed) {
  // Up to 13 values live at once: above the eight temporaries, within what the six free output
  // entries can hold.
  // Every third program keeps at most 5 live in at least four blocks: the code-motion tunnels
  // are open there, and clusters move across blocks.
  const bool tight = seed % 3 == 0;
  for (uint64_t attempt = 0;; ++attempt) {
    Program p = Generator(seed * 1000 + attempt).run(seed, tight);
    if (maxPressure(p) <= (tight ? 5 : 13) && (!tight || p.blocks.size() >= 4)) return p;
  }
}

}  // namespace gpusc::test
