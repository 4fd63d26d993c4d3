#include "support/random_ptx.hpp"

#include <algorithm>
#include <climits>
#include <functional>
#include <stdexcept>

#include <fmt/format.h>

#include "common/rng.hpp"

namespace gpusc::test {

namespace {

// ---- the program tree ----------------------------------------------------------------------

enum class Op : uint8_t {
  Add,
  Sub,
  MulLo,
  MulHiU,
  MulHiS,
  Mad,
  MinU,
  MinS,
  MaxU,
  MaxS,
  And,
  Or,
  Xor,
  Not,
  Cnot,
  Neg,
  Abs,
  Shl,
  ShrU,
  ShrS,
  Popc,
  Clz,
  Brev,
  BfeU,
  BfeS,
  Bfi,
  DivU,
  RemU,
  DivS,
  RemS,
  AddSatS,
  Sad,
  Lop3,
  Prmt,
  ShfLWrap,
  ShfRClamp,
  WideMulShr,
  VAdd4Sat,      // per byte, unsigned, clamped to [0, 255]
  VAbsDiff4Add,  // c plus the four bytes' absolute differences
  VMax2S,        // per signed half-word
  VAddSatS,      // scalar, clamped to the int32 range
  Count
};

struct OpInfo {
  const char* ptx;
  int nsrc;
  bool isSigned;  // immediates printed as signed numbers
};

constexpr OpInfo kOps[] = {
    {"add.u32", 2, false},
    {"sub.u32", 2, false},
    {"mul.lo.u32", 2, false},
    {"mul.hi.u32", 2, false},
    {"mul.hi.s32", 2, true},
    {"mad.lo.u32", 3, false},
    {"min.u32", 2, false},
    {"min.s32", 2, true},
    {"max.u32", 2, false},
    {"max.s32", 2, true},
    {"and.b32", 2, false},
    {"or.b32", 2, false},
    {"xor.b32", 2, false},
    {"not.b32", 1, false},
    {"cnot.b32", 1, false},
    {"neg.s32", 1, true},
    {"abs.s32", 1, true},
    {"shl.b32", 2, false},
    {"shr.u32", 2, false},
    {"shr.s32", 2, false},
    {"popc.b32", 1, false},
    {"clz.b32", 1, false},
    {"brev.b32", 1, false},
    {"bfe.u32", 3, false},
    {"bfe.s32", 3, false},
    {"bfi.b32", 4, false},
    {"div.u32", 2, false},
    {"rem.u32", 2, false},
    {"div.s32", 2, true},
    {"rem.s32", 2, true},
    {"add.sat.s32", 2, true},
    {"sad.u32", 3, false},
    {"lop3.b32", 3, false},
    {"prmt.b32", 3, false},
    {"shf.l.wrap.b32", 3, false},
    {"shf.r.clamp.b32", 3, false},
    {"mul.wide.u32", 2, false},
    {"vadd4.u32.u32.u32.sat", 3, false},
    {"vabsdiff4.u32.u32.u32.add", 3, false},
    {"vmax2.s32.s32.s32", 3, true},
    {"vadd.s32.s32.s32.sat", 2, true},
};
static_assert(sizeof(kOps) / sizeof(kOps[0]) == size_t(Op::Count));

enum class Cmp : uint8_t { Eq, Ne, LtU, LeU, GtU, GeU, LtS, LeS, GtS, GeS, Count };
constexpr const char* kCmps[] = {"eq.u32", "ne.u32", "lt.u32", "le.u32", "gt.u32",
                                 "ge.u32", "lt.s32", "le.s32", "gt.s32", "ge.s32"};

enum class Shfl : uint8_t { Up, Down, Bfly, Idx, Count };
constexpr const char* kShfl[] = {"up", "down", "bfly", "idx"};

// Global atomics: counter k always takes the same commutative operation.
constexpr const char* kRed[] = {"add.u32", "xor.b32", "or.b32",  "min.u32",
                                "max.u32", "and.b32", "add.u32", "max.s32"};
constexpr uint32_t kRedInit[] = {0, 0, 0, 0xffffffffu, 0, 0xffffffffu, 7, 0x80000000u};

struct Src {
  bool imm = false;
  uint32_t value = 0;  // immediate
  int reg = 0;         // frame register
};

struct Stmt {
  enum class Kind : uint8_t {
    Alu,
    Guarded,
    Selp,
    Load,
    Store,
    Red,
    If,
    UniformIf,
    Loop,
    DivLoop,
    Call,
    Exchange,
    SharedAtomic,
    Shuffle,
    Ballot
  } kind = Kind::Alu;
  Op op = Op::Add;
  int dst = 0;
  Src src[4];
  uint32_t imm = 0;   // lop3's function, mul.wide's shift, slot, counter, trips, xor mask, lane
  Cmp cmp = Cmp::Eq;  // conditions: ca compared with cb
  Src ca, cb;
  bool negate = false;
  Shfl shfl = Shfl::Bfly;
  int fn = 0;  // Call: the callee, or (indirect) none: fn[src[0] % functions] per thread
  bool indirect = false;
  std::vector<Stmt> then, other;
};

struct Function {
  std::vector<Stmt> body;
  uint32_t init[4] = {0, 0, 0, 0};  // %x0-%x3 before the body
};

}  // namespace

struct RandomProgram::Tree {
  std::vector<Stmt> body;
  std::vector<Function> functions;
  uint32_t init[8] = {};  // %v4-%v7 (the first four come from the thread and the input)
};

namespace {

// ---- PTX semantics, written out for the reference --------------------------------------------

int32_t s(uint32_t v) { return static_cast<int32_t>(v); }
uint32_t u(int64_t v) { return static_cast<uint32_t>(v); }
uint32_t bit(uint32_t v, uint32_t i) { return (v >> i) & 1u; }

uint32_t bfe(uint32_t a, uint32_t b, uint32_t c, bool isSigned) {
  const uint32_t pos = b & 0xff, len = c & 0xff;
  const uint32_t sbit = (isSigned && len > 0) ? bit(a, std::min(pos + len - 1, 31u)) : 0;
  uint32_t d = 0;
  for (uint32_t i = 0; i < 32; ++i) {
    const uint32_t x = (i < len && pos + i <= 31) ? bit(a, pos + i) : sbit;
    d |= x << i;
  }
  return d;
}

uint32_t bfi(uint32_t a, uint32_t b, uint32_t c, uint32_t e) {
  const uint32_t pos = c & 0xff, len = e & 0xff;
  uint32_t d = b;
  for (uint32_t i = 0; i < len && pos + i <= 31; ++i)
    d = (d & ~(1u << (pos + i))) | (bit(a, i) << (pos + i));
  return d;
}

uint32_t prmt(uint32_t a, uint32_t b, uint32_t c) {
  const uint64_t bytes = (uint64_t(b) << 32) | a;
  uint32_t d = 0;
  for (int i = 0; i < 4; ++i) {
    const uint32_t sel = (c >> (4 * i)) & 0xf;
    uint32_t byte = (bytes >> (8 * (sel & 7))) & 0xff;
    if (sel & 8) byte = (byte & 0x80) ? 0xff : 0;
    d |= byte << (8 * i);
  }
  return d;
}

uint32_t eval(Op op, uint32_t a, uint32_t b, uint32_t c, uint32_t e, uint32_t imm) {
  switch (op) {
    case Op::Add:
      return a + b;
    case Op::Sub:
      return a - b;
    case Op::MulLo:
      return a * b;
    case Op::MulHiU:
      return u((uint64_t(a) * b) >> 32);
    case Op::MulHiS:
      return u((int64_t(s(a)) * s(b)) >> 32);
    case Op::Mad:
      return a * b + c;
    case Op::MinU:
      return std::min(a, b);
    case Op::MinS:
      return u(std::min(s(a), s(b)));
    case Op::MaxU:
      return std::max(a, b);
    case Op::MaxS:
      return u(std::max(s(a), s(b)));
    case Op::And:
      return a & b;
    case Op::Or:
      return a | b;
    case Op::Xor:
      return a ^ b;
    case Op::Not:
      return ~a;
    case Op::Cnot:
      return a == 0 ? 1 : 0;
    case Op::Neg:
      return 0u - a;
    case Op::Abs:
      return s(a) < 0 ? 0u - a : a;
    case Op::Shl:
      return b >= 32 ? 0 : a << b;
    case Op::ShrU:
      return b >= 32 ? 0 : a >> b;
    case Op::ShrS:
      return u(s(a) >> std::min(b, 31u));
    case Op::Popc: {
      uint32_t n = 0;
      for (uint32_t i = 0; i < 32; ++i) n += bit(a, i);
      return n;
    }
    case Op::Clz: {
      uint32_t n = 0;
      while (n < 32 && !bit(a, 31 - n)) ++n;
      return n;
    }
    case Op::Brev: {
      uint32_t d = 0;
      for (uint32_t i = 0; i < 32; ++i) d |= bit(a, i) << (31 - i);
      return d;
    }
    case Op::BfeU:
      return bfe(a, b, c, false);
    case Op::BfeS:
      return bfe(a, b, c, true);
    case Op::Bfi:
      return bfi(a, b, c, e);
    // Division by zero and the one overflowing quotient as docs/ptx-support.md defines them.
    case Op::DivU:
      return b == 0 ? 0xffffffffu : a / b;
    case Op::RemU:
      return b == 0 ? a : a % b;
    case Op::DivS:
      if (b == 0) return s(a) >= 0 ? 0xffffffffu : 1u;
      if (s(a) == INT32_MIN && s(b) == -1) return a;
      return u(s(a) / s(b));
    case Op::RemS:
      if (b == 0) return a;
      if (s(a) == INT32_MIN && s(b) == -1) return 0;
      return u(s(a) % s(b));
    case Op::AddSatS:
      return u(std::clamp<int64_t>(int64_t(s(a)) + s(b), INT32_MIN, INT32_MAX));
    case Op::Sad:
      return c + (a > b ? a - b : b - a);
    case Op::Lop3: {
      uint32_t d = 0;
      for (uint32_t i = 0; i < 32; ++i)
        d |= bit(imm, (bit(a, i) << 2) | (bit(b, i) << 1) | bit(c, i)) << i;
      return d;
    }
    case Op::Prmt:
      return prmt(a, b, c);
    case Op::ShfLWrap:
      return u(((((uint64_t(b) << 32) | a) << (c & 31)) >> 32));
    case Op::ShfRClamp: {
      const uint64_t n = std::min(c, 32u);
      return u((((uint64_t(b) << 32) | a) >> n));
    }
    case Op::WideMulShr:
      return u((uint64_t(a) * b) >> imm);
    case Op::VAdd4Sat: {
      uint32_t d = 0;
      for (uint32_t i = 0; i < 32; i += 8)
        d |= std::min<uint32_t>(((a >> i) & 0xff) + ((b >> i) & 0xff), 0xff) << i;
      return d;
    }
    case Op::VAbsDiff4Add: {
      uint32_t d = c;
      for (uint32_t i = 0; i < 32; i += 8) {
        const int32_t x = int32_t((a >> i) & 0xff), y = int32_t((b >> i) & 0xff);
        d += u(x > y ? x - y : y - x);
      }
      return d;
    }
    case Op::VMax2S: {  // c is the merge source, unused with the default mask (both halves)
      const int16_t lo = std::max(int16_t(a & 0xffff), int16_t(b & 0xffff));
      const int16_t hi = std::max(int16_t(a >> 16), int16_t(b >> 16));
      return uint32_t(uint16_t(lo)) | uint32_t(uint16_t(hi)) << 16;
    }
    case Op::VAddSatS:
      return u(std::clamp<int64_t>(int64_t(s(a)) + s(b), INT32_MIN, INT32_MAX));
    case Op::Count:
      break;
  }
  throw std::logic_error("random_ptx: unknown op");
}

bool compare(Cmp c, uint32_t a, uint32_t b) {
  switch (c) {
    case Cmp::Eq:
      return a == b;
    case Cmp::Ne:
      return a != b;
    case Cmp::LtU:
      return a < b;
    case Cmp::LeU:
      return a <= b;
    case Cmp::GtU:
      return a > b;
    case Cmp::GeU:
      return a >= b;
    case Cmp::LtS:
      return s(a) < s(b);
    case Cmp::LeS:
      return s(a) <= s(b);
    case Cmp::GtS:
      return s(a) > s(b);
    case Cmp::GeS:
      return s(a) >= s(b);
    case Cmp::Count:
      break;
  }
  throw std::logic_error("random_ptx: unknown comparison");
}

uint32_t red(int k, uint32_t old, uint32_t v) {
  switch (k) {
    case 0:
    case 6:
      return old + v;
    case 1:
      return old ^ v;
    case 2:
      return old | v;
    case 3:
      return std::min(old, v);
    case 4:
      return std::max(old, v);
    case 5:
      return old & v;
    case 7:
      return u(std::max(s(old), s(v)));
    default:
      break;
  }
  throw std::logic_error("random_ptx: unknown counter");
}

// ---- the generator --------------------------------------------------------------------------

constexpr int kEntryRegs = 8;     // %v0-%v7
constexpr int kFunctionRegs = 6;  // %a %b %x0-%x3
constexpr int kMaxDepth = 3;

struct Context {
  bool inFunction = false;
  bool uniform = true;  // every thread of the CTA runs here
  int depth = 0;        // nesting of ifs and loops
  int regs = kEntryRegs;
};

class Generator {
 public:
  Generator(uint64_t seed, int functions) : rng_(seed), functions_(functions) {}

  std::vector<Stmt> block(const Context& c, int n) {
    std::vector<Stmt> out;
    for (int i = 0; i < n; ++i) out.push_back(stmt(c));
    return out;
  }

  uint32_t value() {
    switch (rng_.below(4)) {
      case 0:
        return rng_.below(8);
      case 1:
        return rng_.below(64);
      case 2:
        return 0xffffffffu - rng_.below(4);
      default:
        return rng_.next32();
    }
  }
  Rng& rng() { return rng_; }

 private:
  Src reg(const Context& c) {
    Src x;
    x.reg = static_cast<int>(rng_.below(c.regs));
    return x;
  }
  Src regOrImm(const Context& c, bool isSigned) {
    if (rng_.below(3)) return reg(c);
    Src x;
    x.imm = true;
    x.value = isSigned ? u(int32_t(rng_.below(256)) - 128) : value();
    return x;
  }

  Stmt alu(const Context& c) {
    Stmt st;
    st.kind = Stmt::Kind::Alu;
    st.op = static_cast<Op>(rng_.below(uint32_t(Op::Count)));
    st.dst = reg(c).reg;
    const OpInfo& info = kOps[int(st.op)];
    for (int i = 0; i < info.nsrc; ++i) st.src[i] = i == 0 ? reg(c) : regOrImm(c, info.isSigned);
    if (st.op == Op::Shl || st.op == Op::ShrU || st.op == Op::ShrS) {
      if (st.src[1].imm) st.src[1].value = rng_.below(40);  // amounts past 32 included
    }
    if (st.op == Op::Lop3) {
      st.src[2] = reg(c);
      st.imm = rng_.below(256);
    }
    if (st.op == Op::WideMulShr) st.imm = rng_.below(64);
    return st;
  }

  void condition(const Context& c, Stmt& st) {
    st.cmp = static_cast<Cmp>(rng_.below(uint32_t(Cmp::Count)));
    st.ca = reg(c);
    st.cb = regOrImm(c, st.cmp >= Cmp::LtS);
    st.negate = rng_.below(2);
  }

  Stmt stmt(const Context& c) {
    const bool entry = !c.inFunction, nest = c.depth < kMaxDepth;
    const bool cta = entry && c.uniform;  // the whole CTA is here: barriers, shuffles allowed
    struct Choice {
      Stmt::Kind kind;
      uint32_t weight;
      bool allowed;
    };
    const Choice choices[] = {
        {Stmt::Kind::Alu, 30, true},
        {Stmt::Kind::Guarded, 5, true},
        {Stmt::Kind::Selp, 4, true},
        {Stmt::Kind::Load, 5, entry},
        {Stmt::Kind::Store, 5, entry},
        {Stmt::Kind::Red, 3, entry},
        {Stmt::Kind::If, 6, nest},
        {Stmt::Kind::UniformIf, 3, nest && cta},
        {Stmt::Kind::Loop, 3, nest},
        {Stmt::Kind::DivLoop, 3, nest},
        {Stmt::Kind::Call, 4, entry && functions_ > 0},
        {Stmt::Kind::Exchange, 4, cta},
        {Stmt::Kind::SharedAtomic, 2, cta},
        {Stmt::Kind::Shuffle, 5, cta},
        {Stmt::Kind::Ballot, 3, cta},
    };
    uint32_t total = 0;
    for (const auto& ch : choices) total += ch.allowed ? ch.weight : 0;
    uint32_t pick = rng_.below(total);
    Stmt::Kind kind = Stmt::Kind::Alu;
    for (const auto& ch : choices) {
      if (!ch.allowed) continue;
      if (pick < ch.weight) {
        kind = ch.kind;
        break;
      }
      pick -= ch.weight;
    }
    Context inner = c;
    inner.depth = c.depth + 1;
    Stmt st;
    switch (kind) {
      case Stmt::Kind::Alu:
        return alu(c);
      case Stmt::Kind::Guarded:
        st = alu(c);
        st.kind = kind;
        condition(c, st);
        return st;
      case Stmt::Kind::Selp:
        st.dst = reg(c).reg;
        st.src[0] = reg(c);
        st.src[1] = regOrImm(c, false);
        condition(c, st);
        st.negate = false;  // selp picks its first operand when the comparison holds
        break;
      case Stmt::Kind::Load:
      case Stmt::Kind::Store:
      case Stmt::Kind::Red:
        st.dst = reg(c).reg;
        st.src[0] = reg(c);
        st.imm = rng_.below(kind == Stmt::Kind::Red ? kCounters : 8);
        break;
      case Stmt::Kind::If:
        condition(c, st);
        inner.uniform = false;
        st.then = block(inner, 1 + rng_.below(4));
        if (rng_.below(2)) st.other = block(inner, 1 + rng_.below(4));
        break;
      case Stmt::Kind::UniformIf:  // on the CTA's index: every thread of a CTA goes one way
        st.cmp = static_cast<Cmp>(rng_.below(6));
        st.imm = rng_.below(4);
        st.then = block(inner, 1 + rng_.below(4));
        if (rng_.below(2)) st.other = block(inner, 1 + rng_.below(4));
        break;
      case Stmt::Kind::Loop:  // a fixed trip count, the same for every thread
        st.imm = 1 + rng_.below(4);
        st.then = block(inner, 1 + rng_.below(4));
        break;
      case Stmt::Kind::DivLoop:  // (src & 3) + 1 trips: lanes leave the loop at different times
        st.src[0] = reg(c);
        inner.uniform = false;
        st.then = block(inner, 1 + rng_.below(4));
        break;
      case Stmt::Kind::Call:
        st.fn = static_cast<int>(rng_.below(functions_));
        st.dst = reg(c).reg;
        st.src[0] = reg(c);
        st.src[1] = reg(c);
        st.indirect = rng_.below(3) == 0;  // through the function table, callees diverge
        break;
      case Stmt::Kind::Exchange:
      case Stmt::Kind::SharedAtomic:
        st.dst = reg(c).reg;
        st.src[0] = reg(c);
        st.imm = rng_.below(128);  // partner = tid ^ (imm mod threads)
        break;
      case Stmt::Kind::Shuffle:
        st.shfl = static_cast<Shfl>(rng_.below(uint32_t(Shfl::Count)));
        st.dst = reg(c).reg;
        st.src[0] = reg(c);
        st.imm = rng_.below(32);
        break;
      case Stmt::Kind::Ballot:
        st.dst = reg(c).reg;
        st.src[0] = reg(c);
        st.imm = rng_.below(32);  // the predicate: bit imm of src
        break;
    }
    st.kind = kind;
    return st;
  }

  Rng rng_;
  int functions_;
};

// ---- printing PTX ---------------------------------------------------------------------------

class Printer {
 public:
  Printer(const RandomProgram& p, bool inFunction) : p_(p), inFunction_(inFunction) {}

  std::string reg(int r) const {
    if (!inFunction_) return fmt::format("%v{}", r);
    return r == 0 ? "%a" : r == 1 ? "%b" : fmt::format("%x{}", r - 2);
  }
  std::string src(const Src& x, bool isSigned) const {
    if (!x.imm) return reg(x.reg);
    return isSigned ? fmt::format("{}", s(x.value)) : fmt::format("{}", x.value);
  }

  void block(const std::vector<Stmt>& b, int depth) {
    for (const auto& st : b) stmt(st, depth);
  }

  std::string text;

 private:
  void line(const std::string& l) { text += "  " + l + "\n"; }

  void alu(const Stmt& st, const std::string& guard) {
    const OpInfo& info = kOps[int(st.op)];
    const std::string d = reg(st.dst);
    std::string ops;
    for (int i = 0; i < info.nsrc; ++i) ops += ", " + src(st.src[i], info.isSigned);
    if (st.op == Op::Lop3) ops += fmt::format(", {}", st.imm);
    if (st.op == Op::WideMulShr) {
      line(guard + "mul.wide.u32 %q0" + ops + ";");
      line(guard + fmt::format("shr.u64 %q0, %q0, {};", st.imm));
      line(guard + "cvt.u32.u64 " + d + ", %q0;");
      return;
    }
    line(guard + info.ptx + " " + d + ops + ";");
  }

  void stmt(const Stmt& st, int depth) {
    switch (st.kind) {
      case Stmt::Kind::Alu:
        alu(st, "");
        break;
      case Stmt::Kind::Guarded:
        condition(st);
        alu(st, st.negate ? "@!%ps " : "@%ps ");
        break;
      case Stmt::Kind::Selp:
        condition(st);
        line(fmt::format("selp.b32 {}, {}, {}, %ps;", reg(st.dst), src(st.src[0], false),
                         src(st.src[1], false)));
        break;
      case Stmt::Kind::Load:
        line(fmt::format("and.b32 %t0, {}, {};", reg(st.src[0].reg), kInWords - 1));
        line("mul.wide.u32 %q0, %t0, 4;");
        line("add.s64 %q0, %rdin, %q0;");
        line(fmt::format("ld.global.u32 {}, [%q0];", reg(st.dst)));
        break;
      case Stmt::Kind::Store:
        line(fmt::format("st.global.u32 [%rdout+{}], {};", 4 * st.imm, reg(st.src[0].reg)));
        break;
      case Stmt::Kind::Red:
        line(fmt::format("red.global.{} [%rdcnt+{}], {};", kRed[st.imm], 4 * st.imm,
                         reg(st.src[0].reg)));
        break;
      case Stmt::Kind::If: {
        const int n = label_++;
        condition(st);
        line(fmt::format("{} bra ELSE{};", st.negate ? "@%ps" : "@!%ps", n));
        block(st.then, depth + 1);
        line(fmt::format("bra END{};", n));
        text += fmt::format("ELSE{}:\n", n);
        block(st.other, depth + 1);
        text += fmt::format("END{}:\n", n);
        break;
      }
      case Stmt::Kind::UniformIf: {
        const int n = label_++;
        line(fmt::format("setp.{} %ps, %cta, {};", kCmps[int(st.cmp)], st.imm));
        line(fmt::format("@!%ps bra.uni ELSE{};", n));
        block(st.then, depth + 1);
        line(fmt::format("bra.uni END{};", n));
        text += fmt::format("ELSE{}:\n", n);
        block(st.other, depth + 1);
        text += fmt::format("END{}:\n", n);
        break;
      }
      case Stmt::Kind::Loop:
      case Stmt::Kind::DivLoop: {
        const int n = label_++;
        if (st.kind == Stmt::Kind::Loop) {
          line(fmt::format("mov.u32 %lb{}, {};", depth, st.imm));
        } else {
          line(fmt::format("and.b32 %lb{}, {}, 3;", depth, reg(st.src[0].reg)));
          line(fmt::format("add.u32 %lb{0}, %lb{0}, 1;", depth));
        }
        line(fmt::format("mov.u32 %lc{}, 0;", depth));
        text += fmt::format("LOOP{}:\n", n);
        block(st.then, depth + 1);
        line(fmt::format("add.u32 %lc{0}, %lc{0}, 1;", depth));
        line(fmt::format("setp.lt.u32 %ps, %lc{0}, %lb{0};", depth));
        line(fmt::format("@%ps bra{} LOOP{};", st.kind == Stmt::Kind::Loop ? ".uni" : "", n));
        break;
      }
      case Stmt::Kind::Call:
        line("{");
        line("  .param .b32 pa;");
        line("  .param .b32 pb;");
        line("  .param .b32 pr;");
        line(fmt::format("  st.param.b32 [pa], {};", reg(st.src[0].reg)));
        line(fmt::format("  st.param.b32 [pb], {};", reg(st.src[1].reg)));
        if (st.indirect) {
          const int n = label_++;
          line(
              fmt::format("  rem.u32 %t0, {}, {};", reg(st.src[0].reg), p_.tree->functions.size()));
          line("  mul.wide.u32 %q0, %t0, 8;");
          line("  mov.u64 %q1, fntab;");
          line("  add.s64 %q0, %q0, %q1;");
          line("  ld.global.u64 %q0, [%q0];");
          line(
              fmt::format("  proto{}: .callprototype (.param .b32 _) _ (.param .b32 _, .param "
                          ".b32 _);",
                          n));
          line(fmt::format("  call (pr), %q0, (pa, pb), proto{};", n));
        } else {
          line(fmt::format("  call (pr), fn{}, (pa, pb);", st.fn));
        }
        line(fmt::format("  ld.param.b32 {}, [pr];", reg(st.dst)));
        line("}");
        break;
      case Stmt::Kind::Exchange:
        line(fmt::format("st.shared.u32 [%shown], {};", reg(st.src[0].reg)));
        line("bar.sync 0;");
        line(fmt::format("xor.b32 %t0, %ti, {};", st.imm % p_.threads));
        line("shl.b32 %t0, %t0, 2;");
        line("add.u32 %t0, %t0, %shbase;");
        line(fmt::format("ld.shared.u32 {}, [%t0];", reg(st.dst)));
        line("bar.sync 0;");
        break;
      case Stmt::Kind::SharedAtomic:
        line(fmt::format("red.shared.add.u32 [shcount], {};", reg(st.src[0].reg)));
        line("bar.sync 0;");
        line(fmt::format("ld.shared.u32 {}, [shcount];", reg(st.dst)));
        line("bar.sync 0;");
        break;
      case Stmt::Kind::Shuffle:
        line(fmt::format("shfl.sync.{}.b32 {}, {}, {}, {}, -1;", kShfl[int(st.shfl)], reg(st.dst),
                         reg(st.src[0].reg), st.imm, st.shfl == Shfl::Up ? 0 : 31));
        break;
      case Stmt::Kind::Ballot:
        line(fmt::format("bfe.u32 %t0, {}, {}, 1;", reg(st.src[0].reg), st.imm));
        line("setp.ne.u32 %ps, %t0, 0;");
        line(fmt::format("vote.sync.ballot.b32 {}, %ps, -1;", reg(st.dst)));
        break;
    }
  }

  void condition(const Stmt& st) {
    line(fmt::format("setp.{} %ps, {}, {};", kCmps[int(st.cmp)], src(st.ca, false),
                     src(st.cb, st.cmp >= Cmp::LtS)));
  }

  const RandomProgram& p_;
  bool inFunction_;
  int label_ = 0;  // labels are local to a function
};

const char* kScratch =
    "  .reg .b32 %t<2>, %lc<4>, %lb<4>;\n"
    "  .reg .b64 %q<2>;\n"
    "  .reg .pred %ps;\n";

std::string print(const RandomProgram& p) {
  const auto& tree = *p.tree;
  std::string out = fmt::format(
      "// random program, seed {}: {} CTAs of {} threads\n"
      ".version 9.0\n.target sm_75\n.address_size 64\n\n",
      p.seed, p.ctas, p.threads);
  for (size_t f = 0; f < tree.functions.size(); ++f) {
    Printer pr(p, true);
    pr.block(tree.functions[f].body, 0);
    out += fmt::format(".func (.param .b32 r) fn{}(.param .b32 a, .param .b32 b)\n{{\n", f);
    out += "  .reg .b32 %a, %b, %x<4>;\n";
    out += kScratch;
    out += "  ld.param.b32 %a, [a];\n  ld.param.b32 %b, [b];\n";
    for (int i = 0; i < 4; ++i)
      out += fmt::format("  mov.u32 %x{}, {};\n", i, tree.functions[f].init[i]);
    out += pr.text;
    out += "  st.param.b32 [r], %x0;\n  ret;\n}\n\n";
  }
  if (!tree.functions.empty()) {  // the table indirect calls go through
    out += fmt::format(".global .align 8 .u64 fntab[{}] = {{", tree.functions.size());
    for (size_t f = 0; f < tree.functions.size(); ++f)
      out += fmt::format("{}fn{}", f ? ", " : "", f);
    out += "};\n\n";
  }
  Printer pr(p, false);
  pr.block(tree.body, 0);
  out +=
      ".visible .entry random_kernel(.param .u64 in, .param .u64 out, .param .u64 counters)\n{\n";
  out += "  .reg .b32 %v<8>, %ti, %cta, %gtid, %shown, %shbase;\n";
  out += "  .reg .b64 %rdin, %rdout, %rdcnt;\n";
  out += kScratch;
  out += fmt::format("  .shared .align 4 .b32 sh[{}];\n", p.threads);
  out += "  .shared .align 4 .u32 shcount;\n";
  out += "  ld.param.u64 %rdin, [in];\n  ld.param.u64 %rdout, [out];\n";
  out += "  ld.param.u64 %rdcnt, [counters];\n";
  out += "  cvta.to.global.u64 %rdin, %rdin;\n  cvta.to.global.u64 %rdout, %rdout;\n";
  out += "  cvta.to.global.u64 %rdcnt, %rdcnt;\n";
  out += "  mov.u32 %ti, %tid.x;\n  mov.u32 %cta, %ctaid.x;\n";
  out += fmt::format("  mad.lo.u32 %gtid, %cta, {}, %ti;\n", p.threads);
  out += fmt::format("  mul.wide.u32 %q0, %gtid, {};\n", 4 * kOutSlots);
  out += "  add.s64 %rdout, %rdout, %q0;\n";
  out += "  mov.u32 %shbase, sh;\n  shl.b32 %shown, %ti, 2;\n  add.u32 %shown, %shown, %shbase;\n";
  out += "  setp.eq.u32 %ps, %ti, 0;\n  @%ps st.shared.u32 [shcount], 0;\n  bar.sync 0;\n";
  out += "  mov.u32 %v0, %ti;\n  mov.u32 %v1, %cta;\n";
  out += "  mul.wide.u32 %q0, %gtid, 4;\n  add.s64 %q0, %rdin, %q0;\n";
  out += "  ld.global.u32 %v2, [%q0];\n  ld.global.u32 %v3, [%q0+2048];\n";
  for (int i = 4; i < 8; ++i) out += fmt::format("  mov.u32 %v{}, {};\n", i, tree.init[i]);
  out += pr.text;
  for (int i = 0; i < 8; ++i)
    out += fmt::format("  st.global.u32 [%rdout+{}], %v{};\n", 4 * (8 + i), i);
  out += "  ret;\n}\n";
  return out;
}

// ---- the reference --------------------------------------------------------------------------

struct Thread {
  uint32_t tid = 0, cta = 0;
  uint32_t v[kEntryRegs] = {};
};

class Reference {
 public:
  Reference(const RandomProgram& p, MemoryResult& mem) : p_(p), tree_(*p.tree), mem_(mem) {}

  void runCta(uint32_t cta) {
    std::vector<Thread> threads(p_.threads);
    shared_.assign(p_.threads, 0);
    shcount_ = 0;
    for (uint32_t t = 0; t < p_.threads; ++t) {
      Thread& th = threads[t];
      th.tid = t;
      th.cta = cta;
      const uint32_t g = cta * p_.threads + t;
      th.v[0] = t;
      th.v[1] = cta;
      th.v[2] = p_.in[g];
      th.v[3] = p_.in[g + 512];
      for (int i = 4; i < 8; ++i) th.v[i] = tree_.init[i];
    }
    std::vector<Thread*> all;
    for (auto& t : threads) all.push_back(&t);
    block(tree_.body, all);
    for (const Thread& th : threads)
      for (int i = 0; i < 8; ++i) out(th, 8 + i) = th.v[i];
  }

 private:
  uint32_t& out(const Thread& th, uint32_t slot) {
    return mem_.out[(th.cta * p_.threads + th.tid) * kOutSlots + slot];
  }

  static uint32_t srcValue(const Src& x, const uint32_t* regs) {
    return x.imm ? x.value : regs[x.reg];
  }

  static bool cond(const Stmt& st, const uint32_t* regs) {
    return compare(st.cmp, srcValue(st.ca, regs), srcValue(st.cb, regs)) != st.negate;
  }

  static void alu(const Stmt& st, uint32_t* regs) {
    regs[st.dst] = eval(st.op, srcValue(st.src[0], regs), srcValue(st.src[1], regs),
                        srcValue(st.src[2], regs), srcValue(st.src[3], regs), st.imm);
  }

  // Statements of a function: one thread at a time.
  static void local(const std::vector<Stmt>& b, uint32_t* regs) {
    for (const auto& st : b) {
      switch (st.kind) {
        case Stmt::Kind::Alu:
          alu(st, regs);
          break;
        case Stmt::Kind::Guarded:
          if (cond(st, regs)) alu(st, regs);
          break;
        case Stmt::Kind::Selp:
          regs[st.dst] = cond(st, regs) ? regs[st.src[0].reg] : srcValue(st.src[1], regs);
          break;
        case Stmt::Kind::If:
          local(cond(st, regs) ? st.then : st.other, regs);
          break;
        case Stmt::Kind::Loop:
          for (uint32_t i = 0; i < st.imm; ++i) local(st.then, regs);
          break;
        case Stmt::Kind::DivLoop: {
          const uint32_t n = (regs[st.src[0].reg] & 3) + 1;
          for (uint32_t i = 0; i < n; ++i) local(st.then, regs);
          break;
        }
        default:
          throw std::logic_error("random_ptx: statement not allowed in a function");
      }
    }
  }

  uint32_t call(int fn, uint32_t a, uint32_t b) const {
    const Function& f = tree_.functions.at(fn);
    uint32_t regs[kFunctionRegs] = {a, b, f.init[0], f.init[1], f.init[2], f.init[3]};
    local(f.body, regs);
    return regs[2];
  }

  // Statements of the entry: each one for every active thread before the next one, which is
  // how the race-free programs' results come out on any schedule.
  void block(const std::vector<Stmt>& b, const std::vector<Thread*>& active) {
    for (const auto& st : b) stmt(st, active);
  }

  void stmt(const Stmt& st, const std::vector<Thread*>& active) {
    switch (st.kind) {
      case Stmt::Kind::Alu:
      case Stmt::Kind::Guarded:
      case Stmt::Kind::Selp:
        for (Thread* t : active) local({st}, t->v);
        break;
      case Stmt::Kind::Load:
        for (Thread* t : active) t->v[st.dst] = p_.in[t->v[st.src[0].reg] & (kInWords - 1)];
        break;
      case Stmt::Kind::Store:
        for (Thread* t : active) out(*t, st.imm) = t->v[st.src[0].reg];
        break;
      case Stmt::Kind::Red:
        for (Thread* t : active)
          mem_.counters[st.imm] = red(int(st.imm), mem_.counters[st.imm], t->v[st.src[0].reg]);
        break;
      case Stmt::Kind::If:
      case Stmt::Kind::UniformIf: {
        std::vector<Thread*> yes, no;
        for (Thread* t : active) {
          const bool c =
              st.kind == Stmt::Kind::If ? cond(st, t->v) : compare(st.cmp, t->cta, st.imm);
          (c ? yes : no).push_back(t);
        }
        if (!yes.empty()) block(st.then, yes);
        if (!no.empty()) block(st.other, no);
        break;
      }
      case Stmt::Kind::Loop:
        for (uint32_t i = 0; i < st.imm; ++i) block(st.then, active);
        break;
      case Stmt::Kind::DivLoop: {
        std::vector<uint32_t> trips;
        for (Thread* t : active) trips.push_back((t->v[st.src[0].reg] & 3) + 1);
        for (uint32_t i = 0;; ++i) {
          std::vector<Thread*> still;
          for (size_t k = 0; k < active.size(); ++k)
            if (i < trips[k]) still.push_back(active[k]);
          if (still.empty()) break;
          block(st.then, still);
        }
        break;
      }
      case Stmt::Kind::Call:
        for (Thread* t : active) {
          const uint32_t a = t->v[st.src[0].reg];
          const int fn = st.indirect ? int(a % uint32_t(tree_.functions.size())) : st.fn;
          t->v[st.dst] = call(fn, a, t->v[st.src[1].reg]);
        }
        break;
      case Stmt::Kind::Exchange:
        for (Thread* t : active) shared_[t->tid] = t->v[st.src[0].reg];
        for (Thread* t : active) t->v[st.dst] = shared_[t->tid ^ (st.imm % p_.threads)];
        break;
      case Stmt::Kind::SharedAtomic:
        for (Thread* t : active) shcount_ += t->v[st.src[0].reg];
        for (Thread* t : active) t->v[st.dst] = shcount_;
        break;
      case Stmt::Kind::Shuffle: {
        std::vector<uint32_t> before(active.size());
        for (size_t k = 0; k < active.size(); ++k) before[k] = active[k]->v[st.src[0].reg];
        for (size_t k = 0; k < active.size(); ++k) {
          const int lane = int(active[k]->tid % 32), b = int(st.imm);
          int j = lane;
          bool in = true;
          switch (st.shfl) {
            case Shfl::Up:
              j = lane - b, in = j >= 0;
              break;
            case Shfl::Down:
              j = lane + b, in = j <= 31;
              break;
            case Shfl::Bfly:
              j = lane ^ b;
              break;
            case Shfl::Idx:
              j = b;
              break;
            case Shfl::Count:
              break;
          }
          if (!in) j = lane;
          active[k]->v[st.dst] = before[k - lane + j];  // the warp's lanes are consecutive
        }
        break;
      }
      case Stmt::Kind::Ballot: {
        std::vector<uint32_t> mask(p_.threads / 32, 0);
        for (Thread* t : active)
          if (bit(t->v[st.src[0].reg], st.imm)) mask[t->tid / 32] |= 1u << (t->tid % 32);
        for (Thread* t : active) t->v[st.dst] = mask[t->tid / 32];
        break;
      }
    }
  }

  const RandomProgram& p_;
  const RandomProgram::Tree& tree_;
  MemoryResult& mem_;
  std::vector<uint32_t> shared_;
  uint32_t shcount_ = 0;
};

}  // namespace

RandomProgram generateProgram(uint64_t seed) {
  RandomProgram p;
  p.seed = seed;
  Rng setup(seed ^ 0x5eed5eed5eedull);
  p.ctas = 1 + setup.below(4);
  p.threads = 32u << setup.below(3);
  p.in.resize(kInWords);
  p.outWords = p.ctas * p.threads * kOutSlots;
  p.counters.assign(kRedInit, kRedInit + kCounters);

  const int functions = static_cast<int>(setup.below(3));
  Generator gen(seed, functions);
  for (auto& w : p.in) w = gen.value();
  auto tree = std::make_shared<RandomProgram::Tree>();
  for (int i = 4; i < 8; ++i) tree->init[i] = gen.value();
  for (int f = 0; f < functions; ++f) {
    Function fn;
    for (auto& v : fn.init) v = gen.value();
    Context c;
    c.inFunction = true;
    c.uniform = false;
    c.regs = kFunctionRegs;
    fn.body = gen.block(c, 2 + static_cast<int>(gen.rng().below(6)));
    tree->functions.push_back(std::move(fn));
  }
  tree->body = gen.block(Context{}, 6 + static_cast<int>(gen.rng().below(14)));
  p.tree = tree;
  p.ptx = print(p);
  return p;
}

size_t topLevelStatements(const RandomProgram& p) { return p.tree->body.size(); }

RandomProgram withoutStatement(const RandomProgram& p, size_t index) {
  RandomProgram q = p;
  auto tree = std::make_shared<RandomProgram::Tree>(*p.tree);
  tree->body.erase(tree->body.begin() + static_cast<std::ptrdiff_t>(index));
  q.tree = tree;
  q.ptx = print(q);
  return q;
}

MemoryResult referenceRun(const RandomProgram& p) {
  MemoryResult mem;
  mem.out.assign(p.outWords, 0);
  mem.counters = p.counters;
  Reference ref(p, mem);
  for (uint32_t c = 0; c < p.ctas; ++c) ref.runCta(c);
  return mem;
}

}  // namespace gpusc::test
