// The PTX instructions the decoder accepts: every opcode with the modifiers and types it may
// carry. The decoder rejects any opcode, modifier or type not listed here before it looks at the
// instruction further (so this list is what the engine supports, not a description of it);
// `gpusc list ptx --markdown` prints it for docs/ptx-support.md.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace gpusc::func {

struct PtxOpcodeInfo {
  std::string_view group;      // "Integer", "Bits", ...
  std::string_view opcode;     // "add"
  std::string_view modifiers;  // space-separated, e.g. ".cc .sat"; "hints" = memory hints
  std::string_view types;      // space-separated type modifiers, e.g. ".u32 .s32"
};

const std::vector<PtxOpcodeInfo>& ptxOpcodes();
const PtxOpcodeInfo* findPtxOpcode(std::string_view opcode);
// Whether `mod` (a modifier or a type, with its dot) may appear on `op`.
bool ptxModifierAllowed(const PtxOpcodeInfo& op, std::string_view mod);
// The cache, eviction, ordering and scope qualifiers that have no functional effect.
bool isMemoryHint(std::string_view mod);
// Why an instruction outside the table is left out (empty when there is no specific reason):
// the graphics, architecture-specific and cluster features gpusc does not model.
std::string ptxUnsupportedReason(std::string_view opcode, const std::vector<std::string>& mods);
// The table as markdown (one row per opcode).
std::string ptxSupportMarkdown();

}  // namespace gpusc::func
