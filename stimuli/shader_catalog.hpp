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

// GLSL ES 1.00 (a .vert or .frag file) to SPIR-V with glslang, as stimuli/shaders/regen_spirv.sh
// does: glslangValidator must be installed (Debian glslang-tools). InputError with glslang's
// first message, naming the file and line, when it rejects the source.
std::vector<uint32_t> compileGlsl(const std::string& path);

// A shader program from a file, by its extension: GLSL ES 1.00 (.vert, .frag), SPIR-V (.spv) or
// the shader ISA's assembly form (.s: taken as written, before any compiler pass).
shader::Program loadShaderFile(const std::string& path);

}  // namespace gpusc::shaders
