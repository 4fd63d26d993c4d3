// The shader ISA's textual assembly form (docs/shader.md): print a program at any compiler stage
// and read it back. Reading checks every line and reports "file:line: message" (InputError).
#pragma once

#include <string>

#include "shader/isa.hpp"

namespace gpusc::shader {

std::string printOperand(const Operand& o);
std::string printInstr(const Instr& i);
std::string printAssembly(const Program& p);

// `name` is used in messages (the file the text came from).
Program parseAssembly(const std::string& text, const std::string& name);

}  // namespace gpusc::shader
