// The shader ISA, modelled on the Cyclone shader core (You and Wang, "Energy-aware code motion
// for GPU shader processors", Sec. 3): vec4 registers in four files (8 temporaries t, an 8-entry
// read-only input buffer v, an 8-entry read/write output buffer o, constants c), no loads or
// stores, texture sampling as an instruction, branches, and 2-slot VLIW bundles.
//
// One representation serves every compiler stage. Before register allocation temporaries are
// virtual (any index); afterwards they are below the core's temporary count and some live in free
// output-buffer entries. A program is a list of basic blocks, each ending in a terminator; the
// bundler marks which instructions issue together. docs/shader.md describes the assembly form.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace gpusc::shader {

using Vec4 = std::array<float, 4>;

enum class File : uint8_t { Temp, Input, Output, Const };
char fileLetter(File f);  // t v o c

enum class Op : uint8_t {
  Mov,
  Add,
  Mul,
  Mad,
  Min,
  Max,
  Slt,  // d = a < b ? 1 : 0, per component
  Sge,
  Seq,
  Sne,
  Sel,  // d = a != 0 ? b : c, per component
  Flr,
  Frc,
  Trc,  // round toward zero
  Dp2,
  Dp3,
  Dp4,
  Rcp,  // scalar (first swizzled component), result in every component
  Rsq,
  Sqrt,
  Ex2,
  Lg2,
  Sin,
  Cos,
  Tex,  // d = sample(unit, a.xy)
  Count
};

enum class OpKind : uint8_t { Componentwise, Dot, Scalar, Texture };
enum class Unit : uint8_t { Alu, Sfu, Texture };

struct OpInfo {
  const char* name;
  uint8_t sources;
  OpKind kind;
  Unit unit;
};
const OpInfo& opInfo(Op op);

struct Operand {
  File file = File::Temp;
  uint16_t index = 0;
  std::array<uint8_t, 4> swz{0, 1, 2, 3};
  bool neg = false;
  bool abs = false;

  bool identity() const { return swz == std::array<uint8_t, 4>{0, 1, 2, 3} && !neg && !abs; }
  bool sameRegister(File f, uint16_t i) const { return file == f && index == i; }
};

struct Dest {
  File file = File::Temp;  // Temp or Output
  uint16_t index = 0;
  uint8_t mask = 0xF;  // bit i: component i written
};

struct Instr {
  Op op = Op::Mov;
  Dest dst;
  std::array<Operand, 3> src{};
  uint8_t unit = 0;       // texture unit (Tex)
  bool pairNext = false;  // issues in one bundle with the next instruction (set by the bundler)
  uint32_t line = 0;      // the assembly line it was read from (0: made by a pass or SPIR-V)

  uint8_t sources() const { return opInfo(op).sources; }
  // Components of source `s` the instruction reads (bit mask over the register's components,
  // after the swizzle).
  uint8_t readMask(int s) const;
};

enum class TermKind : uint8_t { Jump, Branch, End, Kill };

// A block's last word: jump to succ[0]; branch to succ[0] when cond.x != 0, else to succ[1];
// end the invocation; or kill it (a discarded fragment).
struct Terminator {
  TermKind kind = TermKind::End;
  Operand cond;
  std::array<int, 2> succ{-1, -1};
  bool pairPrev = false;  // the branch word issues with the block's last instruction
  uint32_t line = 0;      // the assembly line it was read from (0: made by a pass or SPIR-V)
};

struct Block {
  std::string label;
  std::vector<Instr> code;
  Terminator term;
  std::vector<int> successors() const;
};

enum class Stage : uint8_t { Vertex, Fragment };
const char* stageName(Stage s);

// A named range of one register file (an attribute, varying, output, uniform or sampler).
struct Binding {
  std::string name;
  uint16_t index = 0;
  uint16_t entries = 1;    // registers it occupies (mat4: 4)
  uint8_t components = 4;  // components that carry data (vec2 attribute: 2)
  uint32_t line = 0;       // the assembly line of its directive (0: from SPIR-V)
};

struct Program {
  std::string name;  // for messages: the source file
  Stage stage = Stage::Fragment;
  std::vector<Block> blocks;  // blocks[0] is the entry
  std::vector<Binding> inputs, outputs, uniforms, samplers;
  std::vector<std::pair<uint16_t, Vec4>> constants;  // literal constants: c index -> value
  uint16_t constantCount = 0;                        // c registers used (uniforms + literals)
  bool allocated = false;                            // temporaries are physical
  bool bundled = false;

  int findBlock(const std::string& label) const;
  uint16_t temporaryCount() const;  // 1 + the highest temporary index used
  size_t instructionCount() const;  // including branch words
};

// The entries of a core's input and output buffers (core.input_entries, core.output_entries).
struct BufferSizes {
  uint32_t input = 0, output = 0;
};

// InputError naming the program's file (and line, for assembly) when a binding or a register an
// instruction or branch uses lies outside the buffers, a constant register is beyond the constant
// file, or the program has no block.
void checkProgram(const Program& p, const BufferSizes& sizes);

// True when `i` reads or writes register (file, index).
bool reads(const Instr& i, File f, uint16_t index);
bool writes(const Instr& i, File f, uint16_t index);

// Data-transfer operations (Sec. 4.1): `mov tX, vK` writing every component (input side) and
// `mov oK[.mask], tX` (output side: DTO insertion keeps the original write's mask), with identity
// swizzles.
bool isInputDto(const Instr& i);
bool isOutputDto(const Instr& i);

// The branch words a terminator needs when block `self` is followed by block `next` in the
// layout: none for a jump to the next block, one for a jump, for a branch with one target next
// (bnz / bz) and for end / kil, two for a branch with neither target next.
int branchWords(const Terminator& t, int self);

}  // namespace gpusc::shader
