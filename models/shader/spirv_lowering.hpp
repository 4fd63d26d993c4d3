// The SPIR-V front end: reads a SPIR-V module (as glslang -G -Os writes it for our GLSL ES shaders:
// one entry point, one function, SSA values with OpPhi) and lowers it to the shader ISA with
// virtual temporaries. Inputs become input-buffer operands of the instructions that use them (as
// the Cyclone core reads its input buffer directly), outputs output-buffer destinations, uniforms
// and literals constant registers, samplers texture units. Anything else is an InputError naming
// the file and the instruction (as spirv-dis prints it): never a wrong program.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "shader/isa.hpp"

namespace gpusc::shader {

// `name` is used in messages. Vertex outputs: gl_Position in o0, varyings at location L in
// o(L+1); fragment outputs at their locations; inputs at their locations.
Program lowerSpirv(const std::vector<uint32_t>& words, const std::string& name);

// The words of a SPIR-V binary file's bytes (little-endian). InputError for a size that is not
// a multiple of four or a wrong magic number.
std::vector<uint32_t> spirvWords(const std::string& bytes, const std::string& name);

}  // namespace gpusc::shader
