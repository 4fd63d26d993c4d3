// The SPIR-V front end on the shader benchmarks: every committed SPIR-V lowers, its draw
// prepares, and every code-motion variant, under every pair of global code motion's policies,
// keeps every program's outputs bit-identical on the draw's own invocations (a set of them that
// takes every control-flow edge the whole draw takes). Unsupported SPIR-V is an error naming the
// file and the instruction.
#include <cstring>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "common/error.hpp"
#include "shader/analysis.hpp"
#include "shader/assembly.hpp"
#include "shader/compiler.hpp"
#include "shader_catalog.hpp"

using namespace gpusc;
using namespace gpusc::shader;

namespace {

const ShaderPlatformConfig kPlatform;
const uint32_t kOutputs = kPlatform.core.output_entries;
const BufferSizes kSizes{kPlatform.core.input_entries, kPlatform.core.output_entries};

std::string errorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

// Invocations of `work` that take every control-flow edge the whole draw takes in `ref`: every
// 7th, and each other one that takes an edge those do not.
std::vector<size_t> coveringInvocations(const Program& ref, const std::vector<Invocation>& work,
                                        const std::vector<Vec4>& consts, const TextureUnits& tex) {
  std::vector<size_t> picked;
  std::vector<bool> taken(2 * ref.blocks.size(), false);
  auto take = [&](size_t k, bool always) {
    const InterpretResult r = interpret(ref, work[k], consts, tex, kOutputs);
    bool fresh = false;
    for (size_t e = 0; e < r.edges.size(); ++e)
      if (r.edges[e] > 0 && !taken[e]) fresh = taken[e] = true;
    if (always || fresh) picked.push_back(k);
  };
  for (size_t k = 0; k < work.size(); k += 7) take(k, true);
  for (size_t k = 0; k < work.size(); ++k)
    if (k % 7 != 0) take(k, false);
  return picked;
}

void expectSame(const Program& ref, const Program& p, const std::vector<Invocation>& work,
                const std::vector<size_t>& which, const std::vector<Vec4>& uniforms,
                const TextureUnits& tex, const std::string& what) {
  const std::vector<Vec4> refConsts = constantFile(ref, uniforms),
                          consts = constantFile(p, uniforms);
  size_t n = 0;
  for (const auto& o : ref.outputs) n = std::max<size_t>(n, o.index + o.entries);
  for (size_t k : which) {
    const InterpretResult a = interpret(ref, work[k], refConsts, tex, kOutputs);
    const InterpretResult b = interpret(p, work[k], consts, tex, kOutputs);
    ASSERT_EQ(a.killed, b.killed) << what << " invocation " << k;
    if (a.killed) continue;
    for (size_t o = 0; o < n; ++o)
      ASSERT_EQ(std::memcmp(a.outputs[o].data(), b.outputs[o].data(), sizeof(Vec4)), 0)
          << what << " invocation " << k << " o" << o << "\n"
          << printAssembly(p);
  }
}

TEST(ShaderFrontend, EveryBenchmarkLowersAndKeepsItsMeaningUnderEveryVariant) {
  ASSERT_GE(shaders::names().size(), 12u);
  size_t extra = 0;  // invocations beyond every 7th needed to take every edge
  for (const auto& name : shaders::names()) {
    SCOPED_TRACE(name);
    const shaders::ShaderBenchmark b = shaders::load(name);
    const DrawWork w = prepareDraw(b.draw, b.vertex, b.fragment, kSizes);
    EXPECT_EQ(w.vertices.size(), size_t((b.draw.grid + 1) * (b.draw.grid + 1)));
    std::vector<size_t> which[2];
    for (int stage = 0; stage < 2; ++stage) {
      const Program& src = stage ? b.fragment : b.vertex;
      const auto& work = stage ? w.fragments : w.vertices;
      which[stage] = coveringInvocations(
          src, work, constantFile(src, stage ? w.fragmentUniforms : w.vertexUniforms), *w.textures);
      extra += which[stage].size() - (work.size() + 6) / 7;
    }
    for (const char* v : {"none", "local", "global", "naive"})
      for (const char* branch : {"large-cluster", "small-cluster", "zero-or-all"})
        for (const char* join : {"duplication-allowed", "duplication-forbidden"}) {
          if (std::string(v) != "global" && (std::string(branch) != "large-cluster" ||
                                             std::string(join) != "duplication-allowed"))
            continue;  // the policies only matter to global code motion
          CompileOptions o;
          o.inputMotion = o.outputMotion = v;
          o.branchPolicy = branch;
          o.joinPolicy = join;
          for (int stage = 0; stage < 2; ++stage) {
            const Program& src = stage ? b.fragment : b.vertex;
            CompileResult r;
            try {
              r = compile(src, o);
            } catch (const InputError& e) {
              ASSERT_EQ(std::string(v), "naive") << e.what();
              continue;
            }
            expectSame(src, r.program, stage ? w.fragments : w.vertices, which[stage],
                       stage ? w.fragmentUniforms : w.vertexUniforms, *w.textures,
                       fmt::format("{} {} {} {}", stageName(src.stage), v, branch, join));
          }
        }
  }
  // Every 7th invocation alone does not take every path of every benchmark: these were added.
  RecordProperty("extra_invocations", int(extra));
}

TEST(ShaderFrontend, ProgramsHaveThePapersShape) {
  // POM's fragment program loops and needs more than eight registers; the blurs are straight
  // lines; SimpleTex branches and kills.
  const auto pom = shaders::load("pom");
  const Cfg c = analyseCfg(pom.fragment);
  int loops = 0;
  for (int d : c.loopDepth) loops += d > 0;
  EXPECT_GT(loops, 0);
  EXPECT_GT(maxPressure(pom.fragment), 8);
  EXPECT_EQ(shaders::load("blur0").fragment.blocks.size(), 1u);
  const auto st = shaders::load("simple_tex");
  EXPECT_GT(st.fragment.blocks.size(), 5u);
  bool kills = false;
  for (const auto& blk : st.fragment.blocks) kills = kills || blk.term.kind == TermKind::Kill;
  EXPECT_TRUE(kills);
  // Inputs are read straight from the input buffer, as the Cyclone core does.
  bool direct = false;
  for (const auto& blk : shaders::load("blur0").fragment.blocks)
    for (const auto& i : blk.code) direct = direct || reads(i, File::Input, 0);
  EXPECT_TRUE(direct);
}

TEST(ShaderFrontend, UnsupportedSpirvNamesFileAndInstruction) {
  // tests/data/dynamic_index.frag.spv: glslang's output for a uniform array indexed by a varying.
  const std::string path = std::string(GPUSC_SOURCE_DIR) + "/tests/data/dynamic_index.frag.spv";
  const std::string e = errorOf([&] { shaders::loadSpirvFile(path); });
  EXPECT_NE(e.find("dynamic_index.frag.spv: unsupported SPIR-V instruction '"), std::string::npos)
      << e;
  EXPECT_NE(e.find("OpAccessChain"), std::string::npos) << e;
  EXPECT_NE(e.find("non-constant index"), std::string::npos) << e;
  EXPECT_EQ(
      errorOf([] { shaders::load("pomm"); }),
      "--shader pomm: no such shader benchmark (did you mean 'pom'?) (known: " +
          [] {
            std::string s;
            for (const auto& n : shaders::names()) s += (s.empty() ? "" : ", ") + n;
            return s;
          }() +
          ")");
  const std::string junk = std::string(GPUSC_SOURCE_DIR) + "/tests/data/bad_platform.yaml";
  EXPECT_NE(
      errorOf([&] { shaders::loadSpirvFile(junk); }).find("bad_platform.yaml: not a SPIR-V module"),
      std::string::npos);
}

TEST(ShaderFrontend, SamplingWithOffsetsOrGradientsIsRefusedNotDropped) {
  // tests/data/shader/*.frag.spv: glslang's output for the GLSL ES 3.10 beside each.
  const std::string dir = std::string(GPUSC_SOURCE_DIR) + "/tests/data/shader/";
  for (const char* f : {"lod_offset", "grad"}) {
    const std::string e = errorOf([&] { shaders::loadSpirvFile(dir + f + ".frag.spv"); });
    EXPECT_NE(e.find(std::string(f) + ".frag.spv: unsupported SPIR-V instruction '"),
              std::string::npos)
        << e;
    EXPECT_NE(e.find("OpImageSampleExplicitLod"), std::string::npos) << e;
    EXPECT_NE(e.find("': offsets or gradients (only an explicit level of detail is lowered)"),
              std::string::npos)
        << e;
  }
  // An explicit level of detail alone lowers to a plain sample: our textures have one level.
  const Program lod = shaders::loadSpirvFile(dir + "lod.frag.spv");
  int samples = 0;
  for (const auto& blk : lod.blocks)
    for (const auto& i : blk.code) samples += i.op == Op::Tex;
  EXPECT_EQ(samples, 1);
  // GLSL ES 1.00 sources are checked as ES 1.00: its ES 3 sampling functions are errors.
  EXPECT_EQ(errorOf([&] { shaders::loadShaderFile(dir + "es3_builtin.frag"); }),
            dir +
                "es3_builtin.frag:7: 'textureLodOffset' : no matching overloaded function "
                "found (glslang, GLSL ES 1.00)");
}

}  // namespace

namespace {

TEST(ShaderDraw, CellsPerFragmentThinsTheFragments) {
  // A 4 x 4 mesh with a fragment in every third cell (row by row): cells 0, 3, 6, 9, 12, 15.
  const auto b = shaders::load("blur0");
  DrawSpec d = parseDrawSpec("grid: 4\nfragments_per_cell: 1\ncells_per_fragment: 3\n", "d.yaml");
  d.uniforms = b.draw.uniforms;
  d.textures = b.draw.textures;
  const DrawWork w = prepareDraw(d, b.vertex, b.fragment, kSizes);
  EXPECT_EQ(w.vertices.size(), 25u);
  EXPECT_EQ(w.fragments.size(), 6u);
  EXPECT_EQ(errorOf([] {
              parseDrawSpec("grid: 4\nfragments_per_cell: 2\ncells_per_fragment: 3\n", "d.yaml");
            }),
            "d.yaml:3:21: cells_per_fragment: 3 needs fragments_per_cell: 1 (a mesh finer than "
            "the fragments)");
}

}  // namespace
