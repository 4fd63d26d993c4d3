// The shader compiler: the assembly form reads back what it prints; the paper's worked examples
// of local code motion (Fig. 7) and of the cluster placement analysis and global code motion
// (Fig. 8, Tables I-IV) on hand-built programs; register allocation spills to the output buffer;
// and every pass keeps the program's meaning: on randomly generated programs with branches,
// loops and high register pressure, the interpreter's outputs are bit-identical before and after
// each stage of every code-motion variant.
#include <cstring>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "common/error.hpp"
#include "common/rng.hpp"
#include "shader/analysis.hpp"
#include "shader/assembly.hpp"
#include "shader/compiler.hpp"
#include "shader/interpreter.hpp"
#include "support/shader_harness.hpp"

using namespace gpusc;
using namespace gpusc::shader;
using gpusc::test::HashTextures;

namespace {

const ShaderPlatformConfig kPlatform;
const uint32_t kOutputs = kPlatform.core.output_entries;
const BufferSizes kSizes{kPlatform.core.input_entries, kPlatform.core.output_entries};

std::vector<std::string> codeOf(const Program& p, int b) {
  std::vector<std::string> out;
  for (const auto& i : p.blocks[size_t(b)].code) out.push_back(printInstr(i));
  return out;
}

TEST(ShaderAssembly, PrintsWhatItReads) {
  const std::string text = R"(.shader fragment
.input v0 v_uv 1 2
.output o0 gl_FragColor 1 4
.uniform c1 u_step 1 2
.sampler s0 u_tex
.const c0 0.5 0.25 -1 2
top:
  tex t1, v0.xy, s0
  mad t2.xyz, -t1.zyxw, c0.x, |v0|
  slt t3, t2.x, c1.y || add t4, t1, c1
  bz t3.x, done
body:
  mul o0, t4, t2
  bnz t4.y, top
  bra done
done:
  end
)";
  const Program p = parseAssembly(text, "test.s");
  ASSERT_EQ(p.blocks.size(), 3u);
  EXPECT_EQ(p.blocks[0].term.kind, TermKind::Branch);
  EXPECT_EQ(p.blocks[0].term.succ[0], 1);  // bz: taken when zero, so "non-zero" falls through
  EXPECT_EQ(p.blocks[0].term.succ[1], 2);
  EXPECT_TRUE(p.blocks[0].code[2].pairNext);
  EXPECT_EQ(printInstr(p.blocks[0].code[1]), "mad t2.xyz, -t1.zyxw, c0.x, |v0|");
  const std::string printed = printAssembly(p);
  EXPECT_EQ(printAssembly(parseAssembly(printed, "test.s")), printed);
}

TEST(ShaderAssembly, ProgramsWithoutCodeOrBeyondTheBuffersNameFileAndLine) {
  auto err = [](const std::string& text) {
    try {
      compile(parseAssembly(text, "bad.s"), CompileOptions{});
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(err(""), "bad.s:1: no code (a program needs at least one block)");
  EXPECT_EQ(err(".shader fragment\n.input v0 a 1 4\n\n"),
            "bad.s:2: no code (a program needs at least one block)");
  CompileOptions o;
  EXPECT_EQ(err(".shader vertex\n.input v300 a_position\nB0:\n  mov o0, v300\n  end\n"),
            fmt::format("bad.s:2: attribute 'a_position' (v300, 1 entry) does not fit the core's "
                        "{}-entry input buffer (core.input_entries)",
                        o.inputEntries));
  EXPECT_EQ(err(".shader fragment\n.input v7 v_x 2 4\nB0:\n  mov o0, v7\n  end\n"),
            "bad.s:2: varying 'v_x' (v7, 2 entries) does not fit the core's 8-entry input buffer "
            "(core.input_entries)");
  EXPECT_EQ(
      err("B0:\n  mov t0, v0\n  add o9, t0, v1\n  end\n"),
      "bad.s:3: 'add' uses o9, outside the output buffer (core.output_entries) (8 registers)");
  EXPECT_EQ(err("B0:\n  bnz v12.x, B1\nB1:\n  end\n"),
            "bad.s:2: the branch of block 'B0' uses v12, outside the input buffer "
            "(core.input_entries) (8 registers)");
  EXPECT_EQ(err(".const c0 1 1 1 1\nB0:\n  add o0, c0, c3\n  end\n"),
            "bad.s:3: 'add' uses c3, outside the constants the program defines (1 register)");
  // Eight varyings: legal GLSL ES 1.00, but gl_Position takes o0 of the eight entries.
  std::string eight = ".shader vertex\n.output o0 gl_Position 1 4\n";
  for (int k = 1; k <= 8; ++k) eight += fmt::format(".output o{} v{} 1 4\n", k, k - 1);
  eight += "B0:\n  mov o0, v0\n  end\n";
  EXPECT_EQ(err(eight),
            "bad.s:10: output 'v7' (o8, 1 entry) does not fit the core's 8-entry output buffer "
            "(core.output_entries): gl_Position takes o0, so a vertex program has room for 7 "
            "varying entries");
}

TEST(ShaderInterpreter, LoopsOfEmptyBlocksEnd) {
  // `L1: bra L1` executes no instruction: every block counts as a step.
  const Program p = parseAssembly(".output o0 c 1 4\nL0:\n  mov o0, v0\nL1:\n  bra L1\n", "loop.s");
  HashTextures tex;
  try {
    interpret(p, {{1, 2, 3, 4}}, {Vec4{}}, tex, kOutputs, 1000);
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), "loop.s: did not finish within 1000 steps");
  }
}

TEST(ShaderAssembly, BadInputNamesFileAndLine) {
  auto err = [](const std::string& text) {
    try {
      parseAssembly(text, "bad.s");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(err("B0:\n  frob t0, t1\n  end\n"), "bad.s:2: unknown instruction 'frob'");
  EXPECT_EQ(err("B0:\n  mov v0, t1\n  end\n"),
            "bad.s:2: 'v0' cannot be written (only t and o registers)");
  EXPECT_EQ(err("B0:\n  add t0, t1\n  end\n"), "bad.s:2: add: expected 3 operands, got 2");
  EXPECT_EQ(err("B0:\n  bra nowhere\n"), "bad.s:2: no block labelled 'nowhere'");
  EXPECT_EQ(err("B0:\n  mov t0, t1.xq\n  end\n"), "bad.s:2: bad swizzle 'xq'");
}

// ---- Fig. 7: local code motion
// -------------------------------------------------------------------
//
// Five DTOs; I4 transfers v2 again (as I2 does) and is merged into I2 (t58 becomes t56). Then the
// clusters move up bottom to top: C4 (I5) cannot pass its tunnel, C3 (I3) joins C2, and the
// grown C2 joins C1. Long-lived values t1-t4 fix the tunnels, as the figure's register pressure
// does.
const char* kFig7 = R"(.shader fragment
B0:
  mov t1, c0
  mov t2, c0
  mov t3, c0
  mov t50, v0
  add t10, t50, t1
  mov t56, v2
  add t11, t56, t2
  mov t5, c0
  mov t57, v1
  add t12, t57, t3
  mov t58, v2
  add t13, t58, t1
  mov t59, v3
  add t14, t59, t10
  add t15, t11, t12
  add t16, t13, t14
  add t17, t5, t5
  add t18, t15, t16
  add o0, t18, t17
  add o1, t1, t2
  end
)";

TEST(ShaderCodeMotion, Fig7LocalCodeMotion) {
  Program p = parseAssembly(kFig7, "fig7.s");
  const int R = 8;
  // The paper's conditions hold in this block: a free register between I2 (5) and I4 (10);
  // once I4 is gone, none between I3 (8) and I5 (11), one between I2 and I3, two between I1 and
  // I2.
  {
    const auto pr = blockPressure(p, liveness(p), 0);
    EXPECT_EQ(tunnel(pr, R, 6, 10), 1);  // CMT(I2, I4)
  }
  localCodeMotion(p, Buffer::Input, R);
  EXPECT_EQ(codeOf(p, 0),
            (std::vector<std::string>{"mov t50, v0", "mov t56, v2", "mov t57, v1", "mov t1, c0",
                                      "mov t2, c0", "mov t3, c0", "add t10, t50, t1",
                                      "add t11, t56, t2", "mov t5, c0", "add t12, t57, t3",
                                      "add t13, t56, t1", "mov t59, v3", "add t14, t59, t10",
                                      "add t15, t11, t12", "add t16, t13, t14", "add t17, t5, t5",
                                      "add t18, t15, t16", "add o0, t18, t17", "add o1, t1, t2"}));
  EXPECT_LE(maxPressure(p), R);  // code motion never needs a register the core lacks
}

// ---- Fig. 8 and Tables I-IV: global code motion
// --------------------------------------------------
//
// B1 branches to B2 and B3, both reach B4, which loops back to B2 or leaves through B5. The
// clusters at the tops of B1..B4 are C1, C2, C4, C5 (one DTO each); the long-lived values
// t1-t7 give CMT(B1..B4) = 3, 1, 2, 2 with eight registers, as in Table I.
const char* kFig8 = R"(.shader fragment
.const c0 1 1 1 1
.const c1 3 3 3 3
B1:
  mov t20, v0
  mov t1, c0
  mov t2, c0
  mov t3, c0
  mov t8, c0
  add t30, t20, t1
  bnz v1.x, B2
  bra B3
B2:
  mov t21, v2
  mov t4, t21
  mov t5, c0
  add t8, t8, t5
  add t9, t4, t5
  add t30, t30, t9
  bra B4
B3:
  mov t22, v0
  mov t6, t22
  add t30, t30, t6
  bra B4
B4:
  mov t23, v3
  add t30, t30, t23
  add t8, t8, c0
  slt t7, t8, c1
  bnz t7.x, B2
B5:
  add o0, t30, t1
  add o1, t2, t3
  end
)";

std::vector<std::vector<int>> row(const PlacementAnalysis::Iteration& it, bool in) {
  std::vector<std::vector<int>> out;
  for (int b = 0; b < 4; ++b) out.push_back(in ? it.in[size_t(b)] : it.out[size_t(b)]);
  return out;
}

TEST(ShaderCodeMotion, Fig8ClusterPlacementTables) {
  const Program p = parseAssembly(kFig8, "fig8.s");
  auto large = branchPointPolicies().create("large-cluster");
  const PlacementAnalysis a = clusterPlacement(p, Buffer::Input, 8, *large);
  // Cluster names: C1 = 0 (B1), C2 = 1 (B2), C4 = 2 (B3), C5 = 3 (B4).
  EXPECT_EQ(std::vector<int>(a.tunnel.begin(), a.tunnel.begin() + 4),
            (std::vector<int>{3, 1, 2, 2}));
  ASSERT_EQ(a.iterations.size(), 4u);  // converges in the fourth iteration
  using V = std::vector<std::vector<int>>;
  // Table I.
  EXPECT_EQ(row(a.iterations[0], true), (V{{0, 1, 2, 3}, {1, 3}, {2, 3}, {3}}));
  EXPECT_EQ(row(a.iterations[0], false), (V{{1, 2, 3}, {3}, {3}, {}}));
  // Table II.
  EXPECT_EQ(row(a.iterations[1], true), (V{{0, 1, 2, 3}, {1}, {1, 2, 3}, {1, 3}}));
  EXPECT_EQ(row(a.iterations[1], false), (V{{1, 2, 3}, {}, {1, 3}, {1, 3}}));
  // Table III (third and fourth iterations).
  for (int k : {2, 3}) {
    EXPECT_EQ(row(a.iterations[size_t(k)], true), (V{{0, 1, 2, 3}, {1}, {1, 2, 3}, {1, 3}}));
    EXPECT_EQ(row(a.iterations[size_t(k)], false), (V{{1, 2, 3}, {}, {1, 3}, {1}}));
  }
}

TEST(ShaderCodeMotion, Fig8GlobalCodeMotionTableIV) {
  for (const char* join : {"duplication-forbidden", "duplication-allowed"}) {
    SCOPED_TRACE(join);
    Program p = parseAssembly(kFig8, "fig8.s");
    const Program before = p;
    auto large = branchPointPolicies().create("large-cluster");
    auto j = joinPointPolicies().create(join);
    const PlacementAnalysis a = globalCodeMotion(p, Buffer::Input, 8, *large, *j);
    // Table IV: GCM(B1) = {C4}, every other GCM set empty.
    EXPECT_EQ(a.placement[0], (std::vector<int>{2}));
    for (int b = 1; b < 5; ++b) EXPECT_TRUE(a.placement[size_t(b)].empty()) << b;
    // Fig. 8(c): C4 (`mov t22, v0`) moves to the top of B1, right after C1, transfers v0 as C1
    // does and merges into it: B1 keeps its code, B3 loses its DTO and reads t20.
    EXPECT_EQ(codeOf(p, 0), codeOf(before, 0));
    EXPECT_EQ(codeOf(p, 2), (std::vector<std::string>{"mov t6, t20", "add t30, t30, t6"}));
    EXPECT_EQ(codeOf(p, 1)[0], "mov t21, v2");  // C2 stays: B2 is entered from below (B4)
    EXPECT_EQ(codeOf(p, 3)[0], "mov t23, v3");  // C5 cannot pass B2's tunnel
    HashTextures tex;
    for (float x : {0.0f, 1.0f}) {
      std::vector<Vec4> in{{1, 2, 3, 4}, {x, 0, 0, 0}, {5, 6, 7, 8}, {9, 10, 11, 12}};
      const auto c = constantFile(before, {});
      EXPECT_EQ(interpret(before, in, c, tex, kOutputs).outputs,
                interpret(p, in, c, tex, kOutputs).outputs);
    }
  }
}

// The programs of the next tests under every pair of global code motion's policies: the
// interpreter's outputs before and after, for inputs that take each path.
void expectEveryPolicyKeepsOutputs(const std::string& text, const char* name, Buffer buffer,
                                   const std::vector<std::vector<Vec4>>& inputs) {
  const Program lowered = parseAssembly(text, name);
  HashTextures tex;
  for (const char* branch : {"large-cluster", "small-cluster", "zero-or-all"})
    for (const char* join : {"duplication-allowed", "duplication-forbidden"}) {
      SCOPED_TRACE(fmt::format("{} {}", branch, join));
      CompileOptions o;
      (buffer == Buffer::Input ? o.inputMotion : o.outputMotion) = "global";
      o.branchPolicy = branch;
      o.joinPolicy = join;
      const CompileResult r = compile(lowered, o);
      const auto c = constantFile(lowered, {});
      for (const auto& in : inputs)
        for (const auto& st : r.stages)
          ASSERT_EQ(interpret(lowered, in, c, tex, kOutputs).outputs,
                    interpret(st.program, in, c, tex, kOutputs).outputs)
              << st.name << "\n"
              << printAssembly(st.program);
    }
}

TEST(ShaderCodeMotion, PhiCopiesOfInputsStayOnTheirPaths) {
  // `x = cond ? v0 : v1; color = x`, as the front end lowers it: two copies of inputs into one
  // temporary. Each is a DTO of its own, or both would be hoisted into the branch block, one
  // after the other, and the second would always win.
  const char* phi = R"(.shader fragment
.output o0 gl_FragColor 1 4
L0:
  bnz v2.x, L1
  bra L2
L1:
  mov t0, v0
  bra L3
L2:
  mov t0, v1
L3:
  mov o0, t0
  end
)";
  const std::vector<std::vector<Vec4>> inputs{{{1, 2, 3, 4}, {5, 6, 7, 8}, {1, 0, 0, 0}},
                                              {{1, 2, 3, 4}, {5, 6, 7, 8}, {0, 0, 0, 0}}};
  expectEveryPolicyKeepsOutputs(phi, "phi.s", Buffer::Input, inputs);
  // A temporary read before its only definition (temporaries start at zero) on the other path:
  // its `mov t1, v0` must not move above the branch either.
  const char* early = R"(.shader fragment
.output o0 gl_FragColor 1 4
L0:
  bnz v2.x, L1
  bra L2
L1:
  mov t1, v0
  mov o0, t1
  end
L2:
  add o0, t1, v1
  end
)";
  expectEveryPolicyKeepsOutputs(early, "early.s", Buffer::Input, inputs);
}

TEST(ShaderCodeMotion, TwoWritesOfOneOutputKeepTheirOrder) {
  // v_a is written, then written again after a branch; another branch follows. Both writes'
  // DTOs must not end up in the last block in the wrong order (the first write would win).
  const char* twice = R"(.shader vertex
.input v0 a_position 1 4
.input v1 a_texcoord 1 2
.input v2 a_color 1 4
.output o0 gl_Position 1 4
.output o1 v_a 1 4
.output o2 v_b 1 4
.const c0 2 2 2 2
.const c1 0.5 0.5 0.5 0.5
.const c2 3 3 3 3
L0:
  mul o1, v2, c0
  slt t0, c1, v1.x
  bnz t0.x, L1
  bra L2
L1:
  mul t1, v0, v2
  bra L3
L2:
  add t1, v0, v2
L3:
  mul o1, t1, v0
  slt t2, c1, v1.y
  bnz t2.x, L4
  bra L5
L4:
  mul t3, v2, c2
  bra L6
L5:
  add t3, v2, c2
L6:
  mov o2, t3
  mov o0, v0
  end
)";
  std::vector<std::vector<Vec4>> inputs;
  for (float x : {0.25f, 0.75f})
    for (float y : {0.25f, 0.75f}) inputs.push_back({{1, 2, 3, 4}, {x, y, 0, 0}, {-1, 5, 6, 7}});
  expectEveryPolicyKeepsOutputs(twice, "twice.s", Buffer::Output, inputs);
}

TEST(ShaderCodeMotion, BranchPointPolicies) {
  auto large = branchPointPolicies().create("large-cluster");
  auto small = branchPointPolicies().create("small-cluster");
  auto zero = branchPointPolicies().create("zero-or-all");
  EXPECT_EQ(large->choose({1, 3, 2}), 1);
  EXPECT_EQ(small->choose({2, 1, 3}), 1);
  EXPECT_EQ(zero->choose({1, 2}), -1);
  EXPECT_EQ(large->choose({}), -1);
  EXPECT_THROW(branchPointPolicies().create("largest"), InputError);
}

TEST(ShaderBackend, SpillsToFreeOutputEntries) {
  // Twelve values live at once: four of them go to output entries o1..o4 (o0 is the output).
  std::string text = ".shader fragment\n.output o0 color 1 4\nB0:\n";
  for (int k = 0; k < 12; ++k) text += fmt::format("  add t{}, v0, c{}\n", k, k);
  text += "  add t20, t0, t1\n";
  for (int k = 2; k < 12; ++k) text += fmt::format("  add t20, t20, t{}\n", k);
  text += "  mov o0, t20\n  end\n";
  Program p = parseAssembly(text, "spill.s");
  std::vector<Vec4> consts;
  for (int k = 0; k < 12; ++k) consts.push_back({float(k), 0.5f * k, 1, 2});
  HashTextures tex;
  const std::vector<Vec4> in{{1, 2, 3, 4}};
  const auto before = interpret(p, in, consts, tex, kOutputs);
  const AllocationResult r = allocateRegisters(p, 8, 8);
  EXPECT_EQ(r.requirement, 12);
  EXPECT_EQ(r.spilled, 4);
  EXPECT_LE(p.temporaryCount(), 8);
  EXPECT_EQ(interpret(p, in, consts, tex, kOutputs).outputs[0], before.outputs[0]);
  // With only o0 and o1..o2 free the program does not fit: a clear error.
  Program q = parseAssembly(text, "spill.s");
  try {
    allocateRegisters(q, 8, 3);
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("spill.s: register allocation failed"), std::string::npos);
  }
}

TEST(ShaderBackend, CopiesOntoTheSameRegisterVanish) {
  // t1 = t0 is a copy whose two ends do not interfere: both get one register, the copy goes.
  // The negated copy t3 = -t2 stays.
  Program p = parseAssembly(R"(B0:
  add t0, v0, c0
  mov t1, t0
  mov t2, t1
  mov t3, -t2
  add o0, t3, c0
  end
)",
                            "copy.s");
  allocateRegisters(p, 8, 8);
  std::vector<std::string> ops;
  for (const auto& i : p.blocks[0].code) ops.push_back(printInstr(i));
  ASSERT_EQ(ops.size(), 3u) << fmt::format("{}", fmt::join(ops, "; "));
  EXPECT_EQ(ops[1], "mov t0, -t0");
}

TEST(ShaderBackend, BundlesIndependentNeighbours) {
  Program p = parseAssembly(R"(B0:
  mov t0, v0
  mov t1, v1
  add t2, t0, t1
  tex t3, t2, s0
  tex t4, t2, s1
  rcp t5, t3.x
  add o0, t4, t5
  end
)",
                            "b.s");
  bundle(p);
  const auto& c = p.blocks[0].code;
  EXPECT_TRUE(c[0].pairNext);              // two independent moves
  EXPECT_FALSE(c[2].pairNext);             // add -> tex: data dependency
  EXPECT_FALSE(c[3].pairNext);             // two texture fetches: one texture unit
  EXPECT_TRUE(c[4].pairNext);              // tex and rcp: independent, different units
  EXPECT_TRUE(p.blocks[0].term.pairPrev);  // end issues with the last, unpaired instruction
}

// ---- every pass keeps the program's meaning
// --------------------------------------------------------

bool sameBits(const std::vector<Vec4>& a, const std::vector<Vec4>& b, size_t n) {
  for (size_t k = 0; k < n; ++k)
    if (std::memcmp(a[k].data(), b[k].data(), sizeof(Vec4)) != 0) return false;
  return true;
}

void expectSameOutputs(const Program& ref, const Program& p, const std::string& what,
                       uint64_t seed) {
  HashTextures tex;
  Rng rng(seed);
  for (int run = 0; run < 6; ++run) {
    std::vector<Vec4> in(8);
    for (auto& v : in)
      for (float& x : v) x = rng.uniformf(-2.0f, 2.0f);
    std::vector<Vec4> uniforms;
    for (const auto& u : ref.uniforms)
      for (int e = 0; e < u.entries; ++e)
        uniforms.push_back({rng.uniformf(-1, 1), 0.5f, 2.0f, -1.0f});
    const auto c = constantFile(ref, uniforms);
    const InterpretResult a = interpret(ref, in, c, tex, kOutputs),
                          b = interpret(p, in, c, tex, kOutputs);
    ASSERT_EQ(a.killed, b.killed) << what;
    if (a.killed) continue;
    size_t n = 0;
    for (const auto& o : ref.outputs) n = std::max<size_t>(n, o.index + o.entries);
    ASSERT_TRUE(sameBits(a.outputs, b.outputs, n)) << what << "\n" << printAssembly(p);
  }
}

void checkAllVariants(const Program& lowered, uint64_t seed) {
  for (const char* in : {"none", "local", "global", "naive"})
    for (const char* out : {"none", "local", "global", "naive"})
      for (const char* branch : {"large-cluster", "small-cluster", "zero-or-all"})
        for (const char* join : {"duplication-allowed", "duplication-forbidden"}) {
          if ((std::string(branch) != "large-cluster" ||
               std::string(join) != "duplication-allowed") &&
              std::string(in) != "global" && std::string(out) != "global")
            continue;  // the policies only matter to global code motion
          CompileOptions o;
          o.inputMotion = in;
          o.outputMotion = out;
          o.branchPolicy = branch;
          o.joinPolicy = join;
          CompileResult r;
          try {
            r = compile(lowered, o);
          } catch (const InputError& e) {
            // Naive code motion fails beyond eight registers, as in the paper; nothing else may.
            ASSERT_TRUE(std::string(in) == "naive" || std::string(out) == "naive") << e.what();
            continue;
          }
          for (const auto& st : r.stages)
            expectSameOutputs(lowered, st.program,
                              fmt::format("{}/{}/{}/{}: {}", in, out, branch, join, st.name), seed);
        }
}

TEST(ShaderCodeMotion, EveryPassKeepsRandomProgramsMeaning) {
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    SCOPED_TRACE(seed);
    const Program p = test::randomShaderProgram(seed);
    checkAllVariants(p, seed);
    if (HasFatalFailure()) return;
  }
}

TEST(ShaderCodeMotion, RandomProgramsExerciseTheFramework) {
  // The generator makes what the passes are for: loops, branches, pressure above eight, DTOs
  // that merge and move.
  int loops = 0, spills = 0, moved = 0;
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    const Program p = test::randomShaderProgram(seed);
    const Cfg cfg = analyseCfg(p);
    for (int d : cfg.loopDepth) loops += d > 0;
    CompileOptions o;
    o.inputMotion = "global";
    o.outputMotion = "global";
    const CompileResult r = compile(p, o);
    spills += r.allocation.spilled > 0;
    const auto &local = r.stages[2].program, global = r.stages[3].program;
    moved += printAssembly(local) != printAssembly(global);
  }
  EXPECT_GT(loops, 20);
  EXPECT_GT(spills, 5);
  EXPECT_GT(moved, 5);
}

}  // namespace
