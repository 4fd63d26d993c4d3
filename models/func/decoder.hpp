// Turns a parsed PTX entry (and every function it calls) into an executable Program.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "func/program.hpp"
#include "ptx/ast.hpp"

namespace gpusc::func {

// Where the module-scope variables of a loaded module live.
struct ModuleSymbols {
  std::map<std::string, uint64_t> globalAddress;  // .global variables: device addresses
  std::map<std::string, uint64_t> constOffset;    // .const variables: offsets in the const bank
  std::vector<uint8_t> constBank;                 // initial contents of the constant bank
};

// Lays out the const bank of `m` (offsets and initial bytes). Global variables are allocated by
// the caller, which owns device memory.
void layoutConstBank(const ptx::Module& m, ModuleSymbols& syms);

// The address of function `name` of `m` (aliases followed): kCodeWindow + kFunctionStride x its
// index in the module (a .func, or a kernel's .entry, which a launch from device code names);
// nothing for names that are not functions of `m`.
std::optional<uint64_t> functionAddress(const ptx::Module& m, std::string_view name);

// Decodes `entry`, with registers whose live ranges never overlap in one register row (see
// shareRegisterRows in cfg.hpp). Throws InputError "unsupported PTX at FILE:LINE:COL: ..." for
// constructs the engine does not execute, and "FILE:LINE:COL: error: ..." for invalid ones.
std::unique_ptr<Program> decodeKernel(const ptx::Module& m, const ptx::Function& entry,
                                      const ModuleSymbols& syms);

}  // namespace gpusc::func
