// PTX parser: text as nvcc 13 emits it (PTX ISA 9.x) into a ptx::Module.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "ptx/ast.hpp"

namespace gpusc::ptx {

// Parses `text`; `fileName` appears in messages. Throws InputError
// "FILE:LINE:COL: error: ..." for malformed input and
// "unsupported PTX at FILE:LINE:COL: ..." for valid PTX the model does not handle.
std::unique_ptr<Module> parseModule(std::string_view text, const std::string& fileName);

// Formats the error for a construct the model does not support.
std::string unsupportedMessage(const SourceLoc& loc, std::string_view text);

}  // namespace gpusc::ptx
