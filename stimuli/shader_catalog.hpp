// The shader benchmarks (stimuli/shaders/<name>/): each a vertex and fragment program pair as
// SPIR-V made by glslang from our GLSL ES 1.00 sources (embedded in the binary), lowered to the
// shader ISA, with the draw that runs it.
#pragma once

#include <string>
#include <vector>

#include "shader/draw.hpp"
#include "shader/isa.hpp"

namespace gpusc::shaders {

struct ShaderBenchmark {
  std::string name;
  shader::DrawSpec draw;
  shader::Program vertex, fragment;  // lowered, virtual temporaries
};

std::vector<std::string> names();
// InputError (with the closest name) for an unknown benchmark.
ShaderBenchmark load(const std::string& name);

// A SPIR-V file from disk, lowered (InputError naming the file for anything unsupported).
shader::Program loadSpirvFile(const std::string& path);

}  // namespace gpusc::shaders
