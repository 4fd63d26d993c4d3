// The reference interpreter of the shader ISA (values only): runs a program at any compiler stage
// on one invocation's inputs. It is the oracle every compiler pass and the ShaderCore are checked
// against, so both execute instructions through `execute` below.
#pragma once

#include <cstdint>
#include <vector>

#include "shader/isa.hpp"

namespace gpusc::shader {

// Texture units: what a `tex` instruction returns for texture coordinates (u, v).
class TextureUnits {
 public:
  virtual ~TextureUnits() = default;
  virtual Vec4 sample(uint8_t unit, float u, float v) const = 0;
};

struct RegisterState {
  std::vector<Vec4> t, v, o, c;  // temporaries, input buffer, output buffer, constants
};

Vec4 readOperand(const Operand& o, const RegisterState& s);
// Executes one (non-branch) instruction.
void execute(const Instr& i, RegisterState& s, const TextureUnits& tex);
// The condition of a branch terminator: cond.x != 0.
bool branchTaken(const Terminator& t, const RegisterState& s);

struct InterpretResult {
  std::vector<Vec4> outputs;  // the output buffer at the end
  bool killed = false;
  uint64_t instructions = 0;  // executed instructions (without branch words)
  // Control-flow edges taken: edges[2 b] counts block b's jump or taken branch, edges[2 b + 1]
  // its branch's fall-through (false) edge.
  std::vector<uint64_t> edges;
};

// `inputs`: the input buffer, `constants`: the constant file (see constantFile),
// `outputEntries`: the output buffer's size (core.output_entries). Temporaries and the output
// buffer start at zero. InputError naming the program's file when it takes more than `maxSteps`
// steps (an instruction or a block's terminator each: an endless loop, even of empty blocks) or
// touches a register outside its file.
InterpretResult interpret(const Program& p, const std::vector<Vec4>& inputs,
                          const std::vector<Vec4>& constants, const TextureUnits& tex,
                          uint32_t outputEntries, uint64_t maxSteps = 1000000);

// The constant file of `p`: its literal constants, and `uniforms` (one Vec4 per register of
// every uniform binding, in binding order) at the uniforms' registers. InputError when
// `uniforms` does not have one value per uniform register.
std::vector<Vec4> constantFile(const Program& p, const std::vector<Vec4>& uniforms);

}  // namespace gpusc::shader
