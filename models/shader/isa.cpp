#include "shader/isa.hpp"

#include <algorithm>

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
