#include "shader/isa.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "common/error.hpp"

namespace gpusc::shader {

namespace {
constexpr OpInfo kOps[] = {
    {"mov", 1, OpKind::Componentwise, Unit::Alu}, {"add", 2, OpKind::Componentwise, Unit::Alu},
    {"mul", 2, OpKind::Componentwise, Unit::Alu}, {"mad", 3, OpKind::Componentwise, Unit::Alu},
    {"min", 2, OpKind::Componentwise, Unit::Alu}, {"max", 2, OpKind::Componentwise, Unit::Alu},
    {"slt", 2, OpKind::Componentwise, Unit::Alu}, {"sge", 2, OpKind::Componentwise, Unit::Alu},
    {"seq", 2, OpKind::Componentwise, Unit::Alu}, {"sne", 2, OpKind::Componentwise, Unit::Alu},
    {"sel", 3, OpKind::Componentwise, Unit::Alu}, {"flr", 1, OpKind::Componentwise, Unit::Alu},
    {"frc", 1, OpKind::Componentwise, Unit::Alu}, {"trc", 1, OpKind::Componentwise, Unit::Alu},
    {"dp2", 2, OpKind::Dot, Unit::Alu},           {"dp3", 2, OpKind::Dot, Unit::Alu},
    {"dp4", 2, OpKind::Dot, Unit::Alu},           {"rcp", 1, OpKind::Scalar, Unit::Sfu},
    {"rsq", 1, OpKind::Scalar, Unit::Sfu},        {"sqrt", 1, OpKind::Scalar, Unit::Sfu},
    {"ex2", 1, OpKind::Scalar, Unit::Sfu},        {"lg2", 1, OpKind::Scalar, Unit::Sfu},
    {"sin", 1, OpKind::Scalar, Unit::Sfu},        {"cos", 1, OpKind::Scalar, Unit::Sfu},
    {"tex", 1, OpKind::Texture, Unit::Texture},
};
static_assert(sizeof(kOps) / sizeof(kOps[0]) == size_t(Op::Count));
}  // namespace

char fileLetter(File f) {
  switch (f) {
    case File::Temp:
      return 't';
    case File::Input:
      return 'v';
    case File::Output:
      return 'o';
    case File::Const:
      return 'c';
  }
  return '?';
}

const OpInfo& opInfo(Op op) {
  if (op >= Op::Count) throw InternalError("shader: bad opcode");
  return kOps[size_t(op)];
}

const char* stageName(Stage s) { return s == Stage::Vertex ? "vertex" : "fragment"; }

uint8_t Instr::readMask(int s) const {
  const OpInfo& info = opInfo(op);
  if (s >= info.sources) return 0;
  const Operand& o = src[size_t(s)];
  int comps = 0;  // how many swizzle positions are read
  uint8_t positions = 0;
  switch (info.kind) {
    case OpKind::Componentwise:
      positions = dst.mask;
      break;
    case OpKind::Dot:
      comps = op == Op::Dp2 ? 2 : op == Op::Dp3 ? 3 : 4;
      positions = uint8_t((1u << comps) - 1u);
      break;
    case OpKind::Scalar:
      positions = 1;
      break;
    case OpKind::Texture:
      positions = 3;
      break;
  }
  uint8_t m = 0;
  for (int i = 0; i < 4; ++i)
    if (positions & (1u << i)) m |= uint8_t(1u << o.swz[size_t(i)]);
  return m;
}

std::vector<int> Block::successors() const {
  switch (term.kind) {
    case TermKind::Jump:
      return {term.succ[0]};
    case TermKind::Branch:
      if (term.succ[0] == term.succ[1]) return {term.succ[0]};
      return {term.succ[0], term.succ[1]};
    default:
      return {};
  }
}

int Program::findBlock(const std::string& label) const {
  for (size_t i = 0; i < blocks.size(); ++i)
    if (blocks[i].label == label) return int(i);
  return -1;
}

uint16_t Program::temporaryCount() const {
  int top = -1;
  for (const auto& b : blocks) {
    for (const auto& i : b.code) {
      if (i.dst.file == File::Temp) top = std::max(top, int(i.dst.index));
      for (int s = 0; s < i.sources(); ++s)
        if (i.src[size_t(s)].file == File::Temp) top = std::max(top, int(i.src[size_t(s)].index));
    }
    if (b.term.kind == TermKind::Branch && b.term.cond.file == File::Temp)
      top = std::max(top, int(b.term.cond.index));
  }
  return uint16_t(top + 1);
}

size_t Program::instructionCount() const {
  size_t n = 0;
  for (size_t b = 0; b < blocks.size(); ++b)
    n += blocks[b].code.size() + size_t(branchWords(blocks[b].term, int(b)));
  return n;
}

bool reads(const Instr& i, File f, uint16_t index) {
  for (int s = 0; s < i.sources(); ++s)
    if (i.src[size_t(s)].sameRegister(f, index)) return true;
  return false;
}

bool writes(const Instr& i, File f, uint16_t index) {
  return i.dst.file == f && i.dst.index == index;
}

bool isInputDto(const Instr& i) {
  return i.op == Op::Mov && i.dst.file == File::Temp && i.dst.mask == 0xF &&
         i.src[0].file == File::Input && i.src[0].identity();
}

bool isOutputDto(const Instr& i) {
  return i.op == Op::Mov && i.dst.file == File::Output && i.src[0].file == File::Temp &&
         i.src[0].identity();
}

void checkProgram(const Program& p, const BufferSizes& sizes) {
  auto at = [&](uint32_t line) { return line ? fmt::format("{}:{}", p.name, line) : p.name; };
  if (p.blocks.empty())
    throw InputError(fmt::format("{}: no code (a program needs at least one block)", p.name));
  const bool position =
      p.stage == Stage::Vertex && std::any_of(p.outputs.begin(), p.outputs.end(), [](auto& b) {
        return b.name == "gl_Position" && b.index == 0;
      });
  for (const Binding& b : p.inputs)
    if (uint32_t(b.index) + b.entries > sizes.input)
      throw InputError(
          fmt::format("{}: {} '{}' (v{}, {} entr{}) does not fit the core's {}-entry input buffer "
                      "(core.input_entries)",
                      at(b.line), p.stage == Stage::Vertex ? "attribute" : "varying", b.name,
                      b.index, b.entries, b.entries == 1 ? "y" : "ies", sizes.input));
  for (const Binding& b : p.outputs)
    if (uint32_t(b.index) + b.entries > sizes.output)
      throw InputError(fmt::format(
          "{}: output '{}' (o{}, {} entr{}) does not fit the core's {}-entry output buffer "
          "(core.output_entries){}",
          at(b.line), b.name, b.index, b.entries, b.entries == 1 ? "y" : "ies", sizes.output,
          position ? fmt::format(": gl_Position takes o0, so a vertex program has room for {} "
                                 "varying entries",
                                 sizes.output - 1)
                   : ""));
  uint32_t consts = p.constantCount;
  for (const auto& c : p.constants) consts = std::max<uint32_t>(consts, c.first + 1u);
  for (const Binding& u : p.uniforms)
    consts = std::max<uint32_t>(consts, uint32_t(u.index) + u.entries);
  auto check = [&](File f, uint16_t index, const std::string& what, uint32_t line) {
    const uint32_t n = f == File::Input    ? sizes.input
                       : f == File::Output ? sizes.output
                       : f == File::Const  ? consts
                                           : UINT32_MAX;
    if (index >= n)
      throw InputError(fmt::format("{}: {} uses {}{}, outside the {} ({} register{})", at(line),
                                   what, fileLetter(f), index,
                                   f == File::Input    ? "input buffer (core.input_entries)"
                                   : f == File::Output ? "output buffer (core.output_entries)"
                                                       : "constants the program defines",
                                   n, n == 1 ? "" : "s"));
  };
  for (const Block& b : p.blocks) {
    for (const Instr& i : b.code) {
      const std::string what = fmt::format("'{}'", opInfo(i.op).name);
      check(i.dst.file, i.dst.index, what, i.line);
      for (int s = 0; s < i.sources(); ++s)
        check(i.src[size_t(s)].file, i.src[size_t(s)].index, what, i.line);
    }
    if (b.term.kind == TermKind::Branch)
      check(b.term.cond.file, b.term.cond.index, fmt::format("the branch of block '{}'", b.label),
            b.term.line);
  }
}

int branchWords(const Terminator& t, int self) {
  switch (t.kind) {
    case TermKind::Jump:
      return t.succ[0] == self + 1 ? 0 : 1;
    case TermKind::Branch:
      if (t.succ[0] == t.succ[1]) return t.succ[0] == self + 1 ? 0 : 1;
      return t.succ[0] == self + 1 || t.succ[1] == self + 1 ? 1 : 2;  // bnz / bz, or both
    default:
      return 1;  // end / kil
  }
}

}  // namespace gpusc::shader
