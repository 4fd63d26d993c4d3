// Helpers for the shader tests: a deterministic texture and a generator of random shader
// programs (virtual temporaries) with branches, loops, kills, output writes inside control flow
// and register pressure above the core's eight temporaries.
#pragma once

#include <cstdint>

#include "shader/interpreter.hpp"

namespace gpusc::test {

// Texels from a hash of the unit and the coordinates' bits.
class HashTextures : public shader::TextureUnits {
 public:
  shader::Vec4 sample(uint8_t unit, float u, float v) const override;
};

// A fragment program reading v0..v5 and c0..c8 and writing o0 and o1: inside the program (also
// twice, around branches) and at its end, whole, in part or not at all. Every temporary is
// written before it is read on every path; `x = cond ? va : vb` diamonds and phi-like copies of
// inputs on both sides of branches; at most 13 values live at once, at most 5 in every third
// program (open code-motion tunnels).
shader::Program randomShaderProgram(uint64_t seed);

}  // namespace gpusc::test
