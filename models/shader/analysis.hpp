// Analyses the shader compiler's passes share: liveness of temporaries per component, register
// pressure at every point of a block, the code-motion tunnel (free registers, the paper's CMT),
// dominators, post-dominators, descendants and loop depth.
#pragma once

#include <cstdint>
#include <vector>

#include "shader/isa.hpp"

namespace gpusc::shader {

// Live components of every temporary (bit i: component i) at each block's entry and exit.
struct Liveness {
  std::vector<std::vector<uint8_t>> in, out;  // [block][temporary]
};
Liveness liveness(const Program& p);

// Temporaries live at each point of block b: point k is just before instruction k, point
// code.size() just before the terminator (so it counts the branch condition).
std::vector<int> blockPressure(const Program& p, const Liveness& l, int b);
// The highest pressure anywhere in the program: the register requirement.
int maxPressure(const Program& p);

// The code-motion tunnel between points `from` and `to` (inclusive) of block b: the registers
// free at every one of them, `registers` minus the highest pressure there.
int tunnel(const std::vector<int>& pressure, int registers, int from, int to);

// Control-flow facts about the CFG. Blocks that end in end/kil lead to a virtual exit.
struct Cfg {
  std::vector<std::vector<int>> succ, pred;
  std::vector<std::vector<bool>> dom;      // dom[b][d]: d dominates b (b itself included)
  std::vector<std::vector<bool>> postdom;  // postdom[b][d]: d post-dominates b (b included)
  std::vector<std::vector<bool>> desc;     // desc[b][d]: d is reachable from b in >= 1 edge
  std::vector<int> loopDepth;              // natural loops containing the block
  std::vector<bool> reachable;

  bool strictlyDominates(int d, int b) const { return d != b && dom[size_t(b)][size_t(d)]; }
  bool postDominates(int d, int b) const { return postdom[size_t(b)][size_t(d)]; }
};
Cfg analyseCfg(const Program& p);

}  // namespace gpusc::shader
