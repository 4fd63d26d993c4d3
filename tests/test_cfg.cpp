// Control-flow analysis: immediate post-dominators on hand-made CFGs (if/else, nested loops,
// early exit, break out of a loop, an endless loop), reconvergence points of decoded branches,
// and the register-pressure estimate.
#include <gtest/gtest.h>

#include "func/cfg.hpp"
#include "support/ptx_harness.hpp"

using namespace gpusc;
using namespace gpusc::func;

namespace {

constexpr uint32_t X = kExitBlock;

std::vector<BasicBlock> graph(const std::vector<std::vector<uint32_t>>& succs) {
  std::vector<BasicBlock> b(succs.size());
  for (size_t i = 0; i < succs.size(); ++i) {
    b[i].begin = static_cast<uint32_t>(i);
    b[i].end = static_cast<uint32_t>(i + 1);
    b[i].succs = succs[i];
  }
  return b;
}

TEST(PostDominators, IfElseDiamond) {
  auto ip = immediatePostDominators(graph({{1, 2}, {3}, {3}, {X}}));
  EXPECT_EQ(ip, (std::vector<uint32_t>{3, 3, 3, X}));
}

TEST(PostDominators, IfWithoutElse) {
  auto ip = immediatePostDominators(graph({{1, 2}, {2}, {X}}));
  EXPECT_EQ(ip, (std::vector<uint32_t>{2, 2, X}));
}

TEST(PostDominators, NestedLoops) {
  // 0 -> 1 (outer header) -> 2 (inner header) -> 3 (inner body) -> 2; 2 -> 4 (outer latch) -> 1;
  // 1 -> 5 (exit block).
  auto ip = immediatePostDominators(graph({{1}, {2, 5}, {3, 4}, {2}, {1}, {X}}));
  EXPECT_EQ(ip, (std::vector<uint32_t>{1, 5, 4, 2, 1, X}));
}

TEST(PostDominators, EarlyExit) {
  // Block 1 returns; the branch in 0 reconverges only at the function exit.
  auto ip = immediatePostDominators(graph({{1, 2}, {X}, {3}, {X}}));
  EXPECT_EQ(ip, (std::vector<uint32_t>{X, X, 3, X}));
}

TEST(PostDominators, BreakOutOfLoop) {
  // 1: loop condition (to 2 or out to 4); 2: break test (to 3 or 4); 3: latch back to 1.
  auto ip = immediatePostDominators(graph({{1}, {2, 4}, {3, 4}, {1}, {X}}));
  EXPECT_EQ(ip, (std::vector<uint32_t>{1, 4, 4, 1, X}));
}

TEST(PostDominators, EndlessLoopStillHasPostDominators) {
  auto ip = immediatePostDominators(graph({{1, 2}, {1}, {X}}));
  EXPECT_EQ(ip[0], X);
  EXPECT_EQ(ip[1], X);
}

// The reconvergence pc of the decoded branch is the first instruction of the join block.
TEST(Reconvergence, DecodedBranchesPointAtTheirJoin) {
  Device dev(test::platform());
  Module& m = dev.loadModule(test::module(R"(
.visible .entry k(.param .u32 n)
{
  .reg .b32 %r<4>;
  .reg .pred %p<3>;
  ld.param.u32 %r1, [n];
  setp.eq.u32 %p1, %r1, 0;
  @%p1 bra ELSE;
  add.u32 %r2, %r1, 1;
  bra.uni JOIN;
ELSE:
  add.u32 %r2, %r1, 2;
JOIN:
  setp.lt.u32 %p2, %r2, 10;
LOOP:
  add.u32 %r2, %r2, 1;
  setp.lt.u32 %p2, %r2, 10;
  @%p2 bra LOOP;
  ret;
}
)"),
                             "cfg.ptx");
  const Program& p = *m.kernel("k").program;
  // pcs: 0 ld, 1 setp, 2 @p bra ELSE, 3 add, 4 bra JOIN, 5 ELSE: add, 6 JOIN: setp, 7 LOOP: add,
  //      8 setp, 9 @p bra LOOP, 10 ret, 11 implicit exit
  ASSERT_EQ(p.code[2].flow, Flow::Branch);
  EXPECT_EQ(p.code[2].target, 5u);
  EXPECT_EQ(p.code[2].reconv, 6u);
  EXPECT_EQ(p.code[4].target, 6u);
  EXPECT_EQ(p.code[9].target, 7u);
  EXPECT_EQ(p.code[9].reconv, 10u);  // the loop's exit
}

TEST(RegisterEstimate, CountsLiveValuesIn32BitUnits) {
  Device dev(test::platform());
  Module& m = dev.loadModule(test::module(R"(
.visible .entry k(.param .u64 out)
{
  .reg .b32 %r<6>;
  .reg .b64 %rd<2>;
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, 1;
  mov.u32 %r2, 2;
  mov.u32 %r3, 3;
  add.u32 %r4, %r1, %r2;
  add.u32 %r5, %r4, %r3;
  st.global.u32 [%rd1], %r5;
  ret;
}
)"),
                             "regs.ptx");
  // Most pressure just before the first add: %r1 %r2 %r3 and the 64-bit %rd1 = 5 units.
  EXPECT_EQ(m.kernel("k").program->regsPerThread, 5u);
}

}  // namespace
