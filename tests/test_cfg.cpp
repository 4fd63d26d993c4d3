// Control-flow analysis: immediate post-dominators on hand-made CFGs (if/else, nested loops,
// early exit, break out of a loop, an endless loop), reconvergence points of decoded branches,
// the register-pressure estimate, and which registers share a register row.
#include <set>
#include <string>

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

// Straight-line code: three values live at once beside a 64-bit pointer.
const char* kStraightLine = R"(
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
)";

TEST(RegisterEstimate, CountsLiveValuesIn32BitUnits) {
  Device dev(test::platform());
  Module& m = dev.loadModule(test::module(kStraightLine), "regs.ptx");
  // Most pressure just before the first add: %r1 %r2 %r3 and the 64-bit %rd1 = 5 units.
  EXPECT_EQ(m.kernel("k").program->regsPerThread, 5u);
}

// Rows of the kernel above: registers live at once have rows of their own; one whose live range
// starts after another's ends may take its row.
TEST(RegisterRows, RegistersLiveAtOnceHaveDistinctRowsAndDeadOnesAreReused) {
  Device dev(test::platform());
  Module& m = dev.loadModule(test::module(kStraightLine), "rows.ptx");
  const Program& p = *m.kernel("k").program;
  const uint32_t rd1 = p.code[0].dst[0], r1 = p.code[1].dst[0], r2 = p.code[2].dst[0],
                 r3 = p.code[3].dst[0], r4 = p.code[4].dst[0], r5 = p.code[5].dst[0];
  for (uint32_t row : {rd1, r1, r2, r3, r4, r5}) EXPECT_LT(row, p.numRegRows);
  // Live together: %rd1 %r1 %r2 %r3; then %rd1 %r3 %r4; then %rd1 %r5.
  const std::vector<uint32_t> together = {rd1, r1, r2, r3};
  EXPECT_EQ(std::set<uint32_t>(together.begin(), together.end()).size(), 4u);
  for (uint32_t other : {rd1, r3}) EXPECT_NE(r4, other);
  EXPECT_NE(r5, rd1);
  // An instruction's destination never shares a row with its sources.
  for (uint32_t src : {r1, r2}) EXPECT_NE(r4, src);
  for (uint32_t src : {r4, r3}) EXPECT_NE(r5, src);
  // %r5 reuses a row (of %r1 or %r2, dead by then): six registers in fewer rows.
  EXPECT_TRUE(r5 == r1 || r5 == r2);
  EXPECT_LT(p.numRegRows, 6u);
  // The timing model still sees PTX registers, numbered as declared (%r0-%r5, %rd0, %rd1).
  EXPECT_EQ(p.numRegSlots, 8u);
  EXPECT_EQ(p.info[0].regWrites, std::vector<uint32_t>{7});
  EXPECT_EQ(p.info[1].regWrites, std::vector<uint32_t>{1});
  EXPECT_EQ(p.info[5].regWrites, std::vector<uint32_t>{5});
  EXPECT_EQ(p.info[5].regReads, (std::vector<uint32_t>{4, 3}));
}

// Immediates are rows of the program that every warp reads (Program::constRows), not slots of
// each warp: a warp's slots are its register rows, its special registers and a scratch row.
TEST(RegisterRows, ImmediatesAreConstantRowsSharedByEveryWarp) {
  Device dev(test::platform());
  Module& m = dev.loadModule(test::module(R"(
.visible .entry k(.param .u64 out)
{
  .reg .b32 %r<6>;
  .reg .b64 %rd<3>;
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, %tid.x;
  add.u32 %r2, %r1, 7;
  mul.lo.u32 %r3, %r2, 3;
  add.u32 %r4, %r3, 7;
  mul.wide.u32 %rd2, %r1, 4;
  add.u64 %rd2, %rd1, %rd2;
  st.global.u32 [%rd2], %r4;
  ret;
}
)"),
                             "consts.ptx");
  const Program& p = *m.kernel("k").program;
  const uint32_t seven = p.code[2].src[1], three = p.code[3].src[1];
  EXPECT_GE(seven, kConstSlotBase);
  EXPECT_GE(three, kConstSlotBase);
  EXPECT_NE(seven, three);
  EXPECT_EQ(p.code[4].src[1], seven);                    // the same value, the same row
  EXPECT_GE(p.code[0].src[0], kConstSlotBase);           // the address of the parameter `out`
  EXPECT_EQ(p.constRows.size(), size_t(4) * kWarpSize);  // it, 7, 3 and 4
  for (int l = 0; l < kWarpSize; ++l) {
    EXPECT_EQ(p.constRows[size_t(seven - kConstSlotBase) * kWarpSize + size_t(l)], 7u);
    EXPECT_EQ(p.constRows[size_t(three - kConstSlotBase) * kWarpSize + size_t(l)], 3u);
  }
  EXPECT_EQ(p.numSlots, p.numRegRows + p.sregSlots.size() + 1);  // + the scratch slot
  // Each of two warps' threads stores (tid + 7) * 3 + 7.
  DevPtr out = dev.malloc(64 * 4);
  dev.launch(m.kernel("k"), {1}, {64}, 0, KernelArgs().ptr(out));
  const std::vector<uint32_t> got = dev.download<uint32_t>(out, 64);
  for (uint32_t t = 0; t < 64; ++t) EXPECT_EQ(got[t], (t + 7) * 3 + 7) << "thread " << t;
}

// A register read before it is written (0 in a kernel; in a function, what the previous call left)
// keeps a row no other register uses, even one whose live range it does not meet.
TEST(RegisterRows, RegistersReadBeforeWrittenKeepRowsOfTheirOwn) {
  Device dev(test::platform());
  Module& m = dev.loadModule(test::module(R"(
.func (.param .b32 r) f(.param .b32 a)
{
  .reg .b32 %r<4>;
  ld.param.b32 %r1, [a];
  add.u32 %r2, %r3, %r1;
  mov.u32 %r3, %r2;
  st.param.b32 [r], %r2;
  ret;
}
.visible .entry k(.param .u64 out)
{
  .reg .b32 %r<4>;
  .reg .b64 %rd<2>;
  ld.param.u64 %rd1, [out];
  {
  .param .b32 a;
  .param .b32 r;
  st.param.b32 [a], 5;
  call (r), f, (a);
  ld.param.b32 %r1, [r];
  }
  st.global.u32 [%rd1], %r1;
  ret;
}
)"),
                             "rows.ptx");
  const Program& p = *m.kernel("k").program;
  ASSERT_EQ(p.functions.size(), 2u);
  const FunctionInfo& f = p.functions[1];
  // In f, %r3 is read by the add before the mov writes it: it carries a value from call to call.
  uint32_t r3 = kNoPc;
  std::set<uint32_t> others;
  for (uint32_t pc = f.begin; pc < f.end; ++pc) {
    const std::string& op = p.info[pc].opcode;
    if (op.rfind("add", 0) == 0) r3 = p.code[pc].src[0];
    if (op.rfind("ld.param", 0) == 0 || op.rfind("add", 0) == 0) others.insert(p.code[pc].dst[0]);
  }
  ASSERT_NE(r3, kNoPc);
  EXPECT_EQ(others.count(r3), 0u);
  // The function's rows are not the kernel's: a call keeps its caller's values.
  for (uint32_t pc = p.functions[0].begin; pc < p.functions[0].end; ++pc)
    if (!p.info[pc].regWrites.empty()) {
      EXPECT_NE(p.code[pc].dst[0], r3);
      EXPECT_EQ(others.count(p.code[pc].dst[0]), 0u);
    }
  // The kernel runs: f's %r3 reads 0 at its first call, so it returns 0 + 5.
  DevPtr out = dev.malloc(4);
  dev.launch(m.kernel("k"), {1}, {1}, 0, KernelArgs().ptr(out));
  EXPECT_EQ(dev.download<uint32_t>(out, 1)[0], 5u);
}

// Declared registers no instruction names take no row, so a large `.reg .b32 %r<N>` costs
// nothing per warp; past 8,192 registers named in one function, each keeps a row of its own (the
// interference matrix grows as their square), and the kernel still runs.
TEST(RegisterRows, UnnamedRegistersTakeNoRowAndLargeFunctionsKeepARowEach) {
  Device dev(test::platform());
  Module& sparse = dev.loadModule(test::module(R"(
.visible .entry k(.param .u64 out)
{
  .reg .b32 %r<60000>;
  .reg .b64 %rd<2>;
  ld.param.u64 %rd1, [out];
  mov.u32 %r59998, 7;
  st.global.u32 [%rd1], %r59998;
  ret;
}
)"),
                                  "sparse.ptx");
  const Program& ps = *sparse.kernel("k").program;
  EXPECT_EQ(ps.numRegSlots, 60002u);
  EXPECT_LE(ps.numRegRows, 2u);

  constexpr uint32_t kNamed = 8200;
  std::string body = ".visible .entry k(.param .u64 out)\n{\n  .reg .b32 %r<" +
                     std::to_string(kNamed) +
                     ">;\n  .reg .b64 %rd<2>;\n  ld.param.u64 %rd1, [out];\n";
  for (uint32_t i = 0; i < kNamed; ++i)
    body += "  mov.u32 %r" + std::to_string(i) + ", " + std::to_string(i) +
            ";\n  st.global.u32 [%rd1], %r" + std::to_string(i) + ";\n";
  body += "  ret;\n}\n";
  Module& large = dev.loadModule(test::module(body), "large.ptx");
  const Program& pl = *large.kernel("k").program;
  EXPECT_EQ(pl.numRegRows, kNamed + 1);  // %r0-%r8199 and %rd1, a row each
  DevPtr out = dev.malloc(4);
  dev.launch(large.kernel("k"), {1}, {32}, 0, KernelArgs().ptr(out));
  EXPECT_EQ(dev.download<uint32_t>(out, 1)[0], kNamed - 1);
}

}  // namespace
