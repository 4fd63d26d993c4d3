// PTX parser: text as nvcc 13 emits it (PTX ISA 9.x) into a ptx::Module.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "ptx/ast.hpp"

namespace gpusc::ptx {

// Parses `text`; `fileName` appears in messages. Throws InputError
// "FILE:LINE:COL: error: ..." for malformed input and
// "unsupported PTX at FILE:LINE:COL: ..." for valid PTX the model does not handle.
std::unique_ptr<Module> parseModule(std::string_view text, const std::string& fileName);

// The registers per thread ptxas allocated for each kernel, as the file records them in comment
// lines of the form
//   // ptxas -arch=sm_75: <kernel> uses <n> registers
// (stimuli/regen_ptx.sh writes one per entry). A line that starts so but does not parse is an
// InputError naming FILE:LINE.
std::map<std::string, uint32_t> allocatedRegisters(std::string_view text,
                                                   const std::string& fileName);

// Formats the error for a construct the model does not support.
std::string unsupportedMessage(const SourceLoc& loc, std::string_view text);

}  // namespace gpusc::ptx
