// Control-flow analysis of decoded functions: basic blocks, immediate post-dominators (the
// SIMT reconvergence points of branches) and register liveness.
#pragma once

#include <cstdint>
#include <vector>

#include "func/program.hpp"

namespace gpusc::func {

struct BasicBlock {
  uint32_t begin = 0, end = 0;  // pc range [begin, end)
  std::vector<uint32_t> succs;  // block indices; kExitBlock for the virtual exit
};

inline constexpr uint32_t kExitBlock = 0xffffffffu;

// Basic blocks of one function, in pc order.
std::vector<BasicBlock> buildBlocks(const Program& p, const FunctionInfo& f);

// Immediate post-dominator of each block (index into blocks, or kExitBlock).
std::vector<uint32_t> immediatePostDominators(const std::vector<BasicBlock>& blocks);

// Sets Inst::reconv of every branch in `f` to the first pc of its block's immediate
// post-dominator (kNoPc when only the function exit post-dominates it).
void computeReconvergence(Program& p, const FunctionInfo& f);

// Estimated registers per thread: the largest number of 32-bit register units live at once in
// the entry, plus the largest in any callee. `widths[s]` is 1 or 2 units for register slot s.
uint32_t estimateRegisters(const Program& p, const std::vector<uint8_t>& widths);

// Register rows for `p`, decoded with a row per PTX register: rowOf[r] for each PTX register r,
// and their number in `numRows`. Registers of one function whose per-thread live ranges never
// overlap share a row: a handler writes only its active lanes, and a lane's cells are touched
// only by that lane's own instructions, so what one register leaves in a row is dead for every
// lane by the time another writes it. Registers read before any write keep their own rows, and
// each function has rows of its own; a declared register no instruction names gets none (its
// rowOf is 0, never used). Function fi's registers are
// [firstRegOfFunction[fi], firstRegOfFunction[fi + 1]); its rows are
// [firstRowOfFunction[fi], firstRowOfFunction[fi + 1]) when that is given.
std::vector<uint32_t> shareRegisterRows(const Program& p,
                                        const std::vector<uint32_t>& firstRegOfFunction,
                                        uint32_t& numRows,
                                        std::vector<uint32_t>* firstRowOfFunction = nullptr);

}  // namespace gpusc::func
