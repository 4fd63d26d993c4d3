// The shader ISA's textual assembly form (docs/shader.md): print a program at any compiler stage
// and read it back. Reading checks every line and reports "file:line: message" (InputError).
#pragma once

#include <string>

#include "shader/isa.hpp"

namespace gpusc::shader {

std::string printOperand(const Operand& o);
std::string printInstr(const Instr& i);
std::string printAssembly(const Program& p);

// The control-flow graph as a Graphviz digraph: a node per block with its code, its code-motion
// tunnel (free registers of `registers`, the paper's CMT) and loop depth; edges labelled nz / z
// for a branch's taken and fall-through targets.
std::string printCfgDot(const Program& p, const std::string& title, int registers);

// `name` is used in messages (the file the text came from).
Program parseAssembly(const std::string& text, const std::string& name);

}  // namespace gpusc::shader
