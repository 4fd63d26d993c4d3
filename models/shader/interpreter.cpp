#include "shader/interpreter.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "common/error.hpp"

namespace gpusc::shader {

namespace {

const std::vector<Vec4>& fileOf(const Operand& o, const RegisterState& s) {
  switch (o.file) {
    case File::Temp:
      return s.t;
    case File::Input:
      return s.v;
    case File::Output:
      return s.o;
    case File::Const:
      return s.c;
  }
  return s.t;
}

float dot(const Vec4& a, const Vec4& b, int n) {
  float r = a[0] * b[0];
  for (int i = 1; i < n; ++i) r += a[size_t(i)] * b[size_t(i)];
  return r;
}

}  // namespace

Vec4 readOperand(const Operand& o, const RegisterState& s) {
  const auto& f = fileOf(o, s);
  if (o.index >= f.size())
    throw InputError(fmt::format("register {}{} is outside its file ({} registers)",
                                 fileLetter(o.file), o.index, f.size()));
  const Vec4& r = f[o.index];
  Vec4 v{r[o.swz[0]], r[o.swz[1]], r[o.swz[2]], r[o.swz[3]]};
  for (float& x : v) {
    if (o.abs) x = std::fabs(x);
    if (o.neg) x = -x;
  }
  return v;
}

void execute(const Instr& in, RegisterState& s, const TextureUnits& tex) {
  const int n = in.sources();
  Vec4 a{}, b{}, c{};
  if (n > 0) a = readOperand(in.src[0], s);
  if (n > 1) b = readOperand(in.src[1], s);
  if (n > 2) c = readOperand(in.src[2], s);
  Vec4 r{};
  auto each = [&](auto f) {
    for (size_t i = 0; i < 4; ++i) r[i] = f(a[i], b[i], c[i]);
  };
  auto scalar = [&](float x) { r = {x, x, x, x}; };
  switch (in.op) {
    case Op::Mov:
      r = a;
      break;
    case Op::Add:
      each([](float x, float y, float) { return x + y; });
      break;
    case Op::Mul:
      each([](float x, float y, float) { return x * y; });
      break;
    case Op::Mad:
      each([](float x, float y, float z) { return x * y + z; });
      break;
    case Op::Min:
      each([](float x, float y, float) { return std::fmin(x, y); });
      break;
    case Op::Max:
      each([](float x, float y, float) { return std::fmax(x, y); });
      break;
    case Op::Slt:
      each([](float x, float y, float) { return x < y ? 1.0f : 0.0f; });
      break;
    case Op::Sge:
      each([](float x, float y, float) { return x >= y ? 1.0f : 0.0f; });
      break;
    case Op::Seq:
      each([](float x, float y, float) { return x == y ? 1.0f : 0.0f; });
      break;
    case Op::Sne:
      each([](float x, float y, float) { return x != y ? 1.0f : 0.0f; });
      break;
    case Op::Sel:
      each([](float x, float y, float z) { return x != 0.0f ? y : z; });
      break;
    case Op::Flr:
      each([](float x, float, float) { return std::floor(x); });
      break;
    case Op::Frc:
      each([](float x, float, float) { return x - std::floor(x); });
      break;
    case Op::Trc:
      each([](float x, float, float) { return std::trunc(x); });
      break;
    case Op::Dp2:
      scalar(dot(a, b, 2));
      break;
    case Op::Dp3:
      scalar(dot(a, b, 3));
      break;
    case Op::Dp4:
      scalar(dot(a, b, 4));
      break;
    case Op::Rcp:
      scalar(1.0f / a[0]);
      break;
    case Op::Rsq:
      scalar(1.0f / std::sqrt(std::fabs(a[0])));
      break;
    case Op::Sqrt:
      scalar(std::sqrt(std::fabs(a[0])));
      break;
    case Op::Ex2:
      scalar(std::exp2(a[0]));
      break;
    case Op::Lg2:
      scalar(std::log2(std::fabs(a[0])));
      break;
    case Op::Sin:
      scalar(std::sin(a[0]));
      break;
    case Op::Cos:
      scalar(std::cos(a[0]));
      break;
    case Op::Tex:
      r = tex.sample(in.unit, a[0], a[1]);
      break;
    case Op::Count:
      throw InternalError("shader: bad opcode");
  }
  std::vector<Vec4>& f = in.dst.file == File::Temp ? s.t : s.o;
  if (in.dst.index >= f.size())
    throw InputError(fmt::format("register {}{} is outside its file ({} registers)",
                                 fileLetter(in.dst.file), in.dst.index, f.size()));
  for (size_t i = 0; i < 4; ++i)
    if (in.dst.mask & (1u << i)) f[in.dst.index][i] = r[i];
}

bool branchTaken(const Terminator& t, const RegisterState& s) {
  return readOperand(t.cond, s)[0] != 0.0f;
}

InterpretResult interpret(const Program& p, const std::vector<Vec4>& inputs,
                          const std::vector<Vec4>& constants, const TextureUnits& tex,
                          uint32_t outputEntries, uint64_t maxSteps) {
  if (p.blocks.empty()) throw InputError(fmt::format("{}: no code", p.name));
  RegisterState s;
  s.t.assign(std::max<size_t>(p.temporaryCount(), 1), Vec4{});
  s.v = inputs;
  s.o.assign(outputEntries, Vec4{});
  s.c = constants;
  InterpretResult r;
  r.edges.assign(2 * p.blocks.size(), 0);
  uint64_t steps = 0;
  int b = 0;
  try {
    while (true) {
      const Block& blk = p.blocks[size_t(b)];
      for (const Instr& in : blk.code) execute(in, s, tex);
      r.instructions += blk.code.size();
      if ((steps += blk.code.size() + 1) > maxSteps)
        throw InputError(fmt::format("did not finish within {} steps", maxSteps));
      const Terminator& t = blk.term;
      if (t.kind == TermKind::End || t.kind == TermKind::Kill) {
        r.killed = t.kind == TermKind::Kill;
        break;
      }
      const bool taken = t.kind == TermKind::Jump || branchTaken(t, s);
      ++r.edges[2 * size_t(b) + (taken ? 0 : 1)];
      b = t.succ[taken ? 0 : 1];
    }
  } catch (const InputError& e) {
    throw InputError(fmt::format("{}: {}", p.name, e.what()));
  }
  r.outputs = std::move(s.o);
  return r;
}

std::vector<Vec4> constantFile(const Program& p, const std::vector<Vec4>& uniforms) {
  std::vector<Vec4> c(std::max<size_t>(p.constantCount, 1), Vec4{});
  for (const auto& [idx, v] : p.constants) {
    if (idx >= c.size()) c.resize(idx + 1u, Vec4{});
    c[idx] = v;
  }
  size_t k = 0;
  for (const auto& u : p.uniforms) k += u.entries;
  if (k != uniforms.size())
    throw InputError(
        fmt::format("{}: {} uniform registers, {} values given", p.name, k, uniforms.size()));
  k = 0;
  for (const auto& u : p.uniforms)
    for (uint16_t e = 0; e < u.entries; ++e) {
      if (u.index + e >= int(c.size())) c.resize(size_t(u.index + e + 1), Vec4{});
      c[size_t(u.index + e)] = uniforms[k++];
    }
  return c;
}

}  // namespace gpusc::shader
