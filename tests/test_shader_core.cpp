// The shader core's cycles, derived from the pipeline configuration: one bundle per cycle plus
// the pipeline's drain, operand waits for texture results, the wake cycle of a gated buffer and
// the branch penalty; and its values equal the reference interpreter's.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "common/error.hpp"
#include "shader/assembly.hpp"
#include "shader/shader_core.hpp"
#include "support/shader_harness.hpp"

using namespace gpusc;
using namespace gpusc::shader;

namespace {

CoreStats cycles(const std::string& text, const std::string& in, const std::string& out,
                 const ShaderPlatformConfig& cfg = {}) {
  Program p = parseAssembly(text, "core.s");
  p.allocated = p.bundled = true;
  ShaderGatingConfig g = cfg.gating;
  g.input = in;
  g.output = out;
  auto ig = gatingPolicies().create(in, g), og = gatingPolicies().create(out, g);
  test::HashTextures tex;
  std::vector<Vec4> consts(4, Vec4{1, 1, 1, 1});
  for (const auto& [i, v] : p.constants) consts[i] = v;
  return runInvocation(p, Invocation(cfg.core.input_entries, Vec4{1, 2, 3, 4}), consts, tex, cfg,
                       *ig, *og)
      .stats;
}

TEST(ShaderCore, StraightLineCyclesFollowTheConfiguration) {
  const ShaderPlatformConfig cfg;
  const uint64_t drain = cfg.core.pipeline_stages - 1;
  // Three bundles (two pairs and an add with the end word): 3 issue cycles + drain.
  const std::string prog =
      "B0:\n  mov t0, v0 || mov t1, v1\n  add t2, c0, c1 || mul t3, c0, c1\n  add o0, t2, t3 || "
      "end\n";
  CoreStats s = cycles(prog, "none", "none");
  EXPECT_EQ(s.cycles, 3 + drain);
  EXPECT_EQ(s.inputClockedCycles, s.cycles);  // never gated
  // Gated input buffer: the first access waits one wake cycle, and the buffer's clock runs only
  // then and in its access cycle.
  s = cycles(prog, "immediate", "immediate");
  EXPECT_EQ(s.cycles, 3 + drain + 2 * cfg.gating.wake_cycles);  // input at cycle 0, output at 2
  EXPECT_EQ(s.inputClockedCycles, 1 + cfg.gating.wake_cycles);
  EXPECT_EQ(s.outputClockedCycles, 1 + cfg.gating.wake_cycles);
}

TEST(ShaderCore, WakeOverlapsAnOperandWait) {
  const ShaderPlatformConfig cfg;
  const uint64_t drain = cfg.core.pipeline_stages - 1;
  const uint32_t wake = cfg.gating.wake_cycles;
  ASSERT_LT(wake, cfg.core.latency.texture);
  // The add waits for the texture sample; the input buffer's clock starts meanwhile.
  const std::string waits = "B0:\n  tex t0, c0, s0\n  add o0, t0, v0 || end\n";
  CoreStats s = cycles(waits, "immediate", "none");
  EXPECT_EQ(s.cycles, 1 + cfg.core.latency.texture + drain);
  EXPECT_EQ(s.wakeCycles, 0u);
  EXPECT_EQ(s.inputWakes, 1u);
  EXPECT_EQ(s.inputClockedCycles, 1 + wake);
  // Without the wait the wake delays the access.
  s = cycles("B0:\n  mov t0, c0\n  add o0, t0, v0 || end\n", "immediate", "none");
  EXPECT_EQ(s.cycles, 2 + wake + drain);
  EXPECT_EQ(s.wakeCycles, wake);
  // A bundle reading both buffers when only the output buffer must wake (wake = 1 below): o1 is
  // written at cycle 1 after its wake, v0 read at 3 after its own, and the add, ready at 4, waits
  // for the output buffer (idle since 1) until 5; the input buffer (read at 3) stays clocked
  // meanwhile.
  s = cycles("B0:\n  mov o1, c0\n  mov t0, v0\n  add o0, o1, v1 || end\n", "immediate",
             "immediate");
  EXPECT_EQ(s.inputWakes, 1u);
  EXPECT_EQ(s.outputWakes, 2u);
  EXPECT_EQ(s.cycles, 3 + 3 * wake + drain);
  EXPECT_EQ(s.inputClockedCycles, (wake + 1) + (wake + 1));  // (wake, read) + (wait, read)
  EXPECT_EQ(s.outputClockedCycles, 2 * (1 + wake));
}

TEST(ShaderCore, TextureLatencyAndBranchPenalty) {
  const ShaderPlatformConfig cfg;
  const uint64_t drain = cfg.core.pipeline_stages - 1;
  // tex at cycle 0; its user waits until cycle 0 + texture latency.
  CoreStats s = cycles("B0:\n  tex t0, c0, s0\n  add o0, t0, c1 || end\n", "none", "none");
  EXPECT_EQ(s.cycles, 1 + cfg.core.latency.texture + drain);
  // A loop taken twice: the back edge leaves the fall-through path twice.
  s = cycles(
      ".const c2 2 2 2 2\n.const c3 0 0 0 0\nB0:\n  mov t0, c3\nL:\n  add t0, t0, c0\n  slt t1, "
      "t0, c2\n  bnz t1.x, "
      "L\nE:\n  mov o0, t0 || end\n",
      "none", "none");
  // bundles: mov; then per iteration add, slt, bnz (slt and add are dependent: no pairs; bnz
  // depends on slt) = 3 per iteration x 2; then mov||end. slt waits for add: alu latency 1 = none.
  EXPECT_EQ(s.bundles, 1u + 3u * 2u + 1u);
  EXPECT_EQ(s.branchPenaltyCycles, cfg.core.branch_penalty * 1u);
  EXPECT_EQ(s.cycles, s.bundles + s.branchPenaltyCycles + drain);
}

TEST(ShaderCore, TakenBnzSkipsItsBraWord) {
  const ShaderPlatformConfig cfg;
  const uint64_t drain = cfg.core.pipeline_stages - 1;
  // L0 ends in `bnz t0.x, T` + `bra F` (neither target is next). Taken, the bra word never
  // issues: mov, bnz, then T's mov and end.
  auto prog = [](const char* cond) {
    return fmt::format(
        ".const c0 1 1 1 1\n.const c1 0 0 0 0\nL0:\n  mov t0, {}\n  bnz t0.x, T\n  bra F\n"
        "M:\n  mov o1, c0\n  end\nT:\n  mov o0, c0\n  end\nF:\n  mov o0, c1\n  end\n",
        cond);
  };
  CoreStats s = cycles(prog("c0"), "none", "none");
  EXPECT_EQ(s.bundles, 4u);
  EXPECT_EQ(s.words, 4u);
  EXPECT_EQ(s.branchPenaltyCycles, cfg.core.branch_penalty);
  EXPECT_EQ(s.cycles, 4 + cfg.core.branch_penalty + drain);
  // Not taken: the bra word issues, and leaves the fall-through path too.
  s = cycles(prog("c1"), "none", "none");
  EXPECT_EQ(s.bundles, 5u);
  EXPECT_EQ(s.cycles, 5 + cfg.core.branch_penalty + drain);
}

TEST(ShaderCore, PartialWriteKeepsAPendingTextureResultPending) {
  const ShaderPlatformConfig cfg;
  const uint64_t drain = cfg.core.pipeline_stages - 1;
  // t0.x is rewritten by a quick mov while t0.y still waits for the texture sample: a read of
  // t0.y waits for the sample, a read of t0.x only for the mov.
  CoreStats s =
      cycles("B0:\n  tex t0, c0, s0\n  mov t0.x, c1\n  add o0, t0.y, c1 || end\n", "none", "none");
  EXPECT_EQ(s.cycles, 1 + cfg.core.latency.texture + drain);
  s = cycles("B0:\n  tex t0, c0, s0\n  mov t0.x, c1\n  add o0, t0.x, c1 || end\n", "none", "none");
  EXPECT_EQ(s.cycles, 2 + 1 + drain);  // the add waits one ALU latency after the mov
}

TEST(ShaderCore, IdleTimeoutWakesOnlyAStoppedClock) {
  ShaderPlatformConfig cfg;
  cfg.gating.wake_cycles = 2;
  cfg.gating.idle_cycles = 4;
  const uint64_t drain = cfg.core.pipeline_stages - 1;
  // An input access at cycle 2 (after the first wake), `gap` cycles without one, another access.
  auto prog = [](int gap) {
    std::string t = "B0:\n  mov t0, v0\n";
    for (int k = 0; k < gap; ++k) t += fmt::format("  mov t{}, c0\n", k + 1);
    return t + "  add o0, t0, v1 || end\n";
  };
  // Five idle cycles: the clock stops after four, but the second access's wake would start two
  // cycles before it, while the clock still runs: it never stops, and nothing waits.
  CoreStats s = cycles(prog(5), "idle-timeout", "none", cfg);
  EXPECT_EQ(s.inputWakes, 1u);
  EXPECT_EQ(s.wakeCycles, 2u);
  EXPECT_EQ(s.cycles, 2 + 7 + drain);
  EXPECT_EQ(s.inputClockedCycles, 3 + 5 + 1 + std::min<uint64_t>(drain, 4));
  // Six: the clock stopped (after four) before the wake would start: the access waits for it.
  s = cycles(prog(6), "idle-timeout", "none", cfg);
  EXPECT_EQ(s.inputWakes, 2u);
  EXPECT_EQ(s.wakeCycles, 4u);
  EXPECT_EQ(s.cycles, 2 + 8 + 2 + drain);
  EXPECT_EQ(s.inputClockedCycles, 3 + 4 + 3 + std::min<uint64_t>(drain, 4));
}

TEST(ShaderCore, LoopsOfEmptyBlocksEnd) {
  try {
    cycles(".output o0 c 1 4\nL0:\n  mov o0, v0\nL1:\n  bra L1\n", "none", "none");
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), "core.s: did not finish within 1000000 steps");
  }
}

TEST(ShaderCore, EnergyFollowsTheEventCounts) {
  ShaderPlatformConfig cfg;
  CoreStats s;
  s.cycles = 100;
  s.inputClockedCycles = 10;
  s.outputClockedCycles = 20;
  s.inputAccessCycles = 5;
  s.outputAccessCycles = 7;
  cfg.energy.input_access = 1.5;
  cfg.energy.output_access = 0.25;
  cfg.core.temporaries = 16;
  const ShaderEnergyConfig& k = cfg.energy;
  const CoreEnergy e = energyOf(s, cfg);
  EXPECT_DOUBLE_EQ(e.inputBuffer, k.input_buffer * 10 + k.input_access * 5);
  EXPECT_DOUBLE_EQ(e.outputBuffer, k.output_buffer * 20 + k.output_access * 7);
  EXPECT_DOUBLE_EQ(e.temporaries, k.temporaries * 16.0 / 8.0 * 100);  // scales with the count
  EXPECT_DOUBLE_EQ(e.core, k.core * 100);
  EXPECT_DOUBLE_EQ(e.total(), e.inputBuffer + e.outputBuffer + e.temporaries + e.core);
}

}  // namespace

namespace {

TEST(ShaderPlatform, BuiltinFileMatchesTheDefaultsAndBadKeysNameThemselves) {
  const ShaderPlatformConfig c = loadShaderPlatform("shader-cluster");
  EXPECT_EQ(config::toJson(c), config::toJson(ShaderPlatformConfig{}));
  EXPECT_EQ(loadShaderPlatform("shader-cluster", {"gating.input=immediate"}).gating.input,
            "immediate");
  try {
    loadShaderPlatform("shader-cluster", {"core.temporaries=2"});
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "--set core.temporaries=2: core.temporaries: 2 is out of range [4, 64]");
  }
  EXPECT_THROW(loadShaderPlatform("shader-clustr"), InputError);
}

}  // namespace
