// The shader cluster as a SystemC design: the input controller loads each program, fills an idle
// core's input buffer one invocation at a time and starts it; the cores run and write out. The
// length of a small draw follows from the configuration, the fragments are made from the
// vertex outputs the cores computed, and every output equals the reference interpreter's.
#include <cstdio>
#include <cstring>

#include <gtest/gtest.h>

#include "common/error.hpp"
#include "shader/assembly.hpp"
#include "shader/compiler.hpp"
#include "shader/shader_cluster.hpp"
#include "shader_catalog.hpp"

using namespace gpusc;
using namespace gpusc::shader;

namespace {

const ShaderPlatformConfig kPlatform;
const uint32_t kOutputs = kPlatform.core.output_entries;
const BufferSizes kSizes{kPlatform.core.input_entries, kPlatform.core.output_entries};

// Both programs are written allocated and bundled, so their cycles are plain to see.
// Vertex: one bundle (two moves) and the end word: 2 issue cycles.
const char* kVertex = R"(.shader vertex
.input v0 a_position 1 4
.output o0 gl_Position 1 4
.output o1 v_pos 1 4
B0:
  mov o0, v0 || mov o1, v0
  end
)";
// Fragment: one add paired with the end word: 1 issue cycle.
const char* kFragment = R"(.shader fragment
.input v0 v_pos 1 4
.output o0 gl_FragColor 1 4
B0:
  add o0, v0, v0 || end
)";

Program ready(const char* text, const char* name) {
  Program p = parseAssembly(text, name);
  p.allocated = p.bundled = true;
  return p;
}

// The last of n invocations ends this long after the phase's first fill, when the controller
// fills one core at a time (f cycles) and each invocation keeps its core c cycles (c >= f):
// one core:  n (f + c);
// two cores: core 0 takes invocations 0, 2, 4, ... and core 1 the others, each fill starting
//            when its core is free: invocation 2m ends at (m + 1)(f + c), 2m + 1 at
//            (m + 2) f + (m + 1) c.
uint64_t phaseLength(uint64_t n, uint64_t f, uint64_t c, uint32_t cores) {
  if (cores == 1) return n * (f + c);
  const uint64_t last = n - 1, m = last / 2;
  return last % 2 == 0 ? (m + 1) * (f + c) : (m + 2) * f + (m + 1) * c;
}

TEST(ShaderCluster, DrawLengthFollowsTheConfiguration) {
  const Program vs = ready(kVertex, "v.s"), fs = ready(kFragment, "f.s");
  const DrawSpec d = parseDrawSpec("grid: 2\nfragments_per_cell: 1\n", "draw.yaml");
  for (uint32_t cores : {2u, 1u}) {
    SCOPED_TRACE(cores);
    ShaderPlatformConfig cfg;
    cfg.cores = cores;
    cfg.controller.fill_cycles_per_entry = 2;
    const uint64_t drain = cfg.core.pipeline_stages - 1;
    const auto& ctl = cfg.controller;
    // Vertex phase: load 3 words (two instructions and the end word), 9 vertices, one input
    // entry each, 2 issue cycles + drain, two output entries written out.
    const uint64_t vLoad = 3 * ctl.load_cycles_per_word;
    const uint64_t vCore = 2 + drain + 2 * ctl.writeout_cycles_per_entry;
    const uint64_t vEnd = vLoad + phaseLength(9, ctl.fill_cycles_per_entry, vCore, cores);
    // Fragment phase: load 2 words, 4 fragments (2 x 2 cells, one each), 1 issue cycle + drain,
    // one output entry.
    const uint64_t fLoad = 2 * ctl.load_cycles_per_word;
    const uint64_t fCore = 1 + drain + 1 * ctl.writeout_cycles_per_entry;
    const uint64_t end = vEnd + fLoad + phaseLength(4, ctl.fill_cycles_per_entry, fCore, cores);

    const ClusterRun r = simulateDraw(cfg, d, vs, fs);
    ASSERT_EQ(r.phases.size(), 2u);
    EXPECT_EQ(r.phases[0].endCycle, vEnd);
    EXPECT_EQ(r.phases[1].startCycle, vEnd);
    EXPECT_EQ(r.cycles, end);
    EXPECT_EQ(r.phases[0].fillCycles, 9 * ctl.fill_cycles_per_entry);
    EXPECT_EQ(r.stats[size_t(Stage::Vertex)].invocations, 9u);
    EXPECT_EQ(r.stats[size_t(Stage::Vertex)].cycles, 9 * (2 + drain));
    EXPECT_EQ(r.stats[size_t(Stage::Fragment)].cycles, 4 * (1 + drain));
    uint64_t busy = 0;
    for (uint64_t b : r.coreBusy) busy += b;
    EXPECT_EQ(busy, 9 * vCore + 4 * fCore);
    if (cores == 2) {
      EXPECT_GT(r.coreBusy[1], 0u);  // both cores work
    }
    // Fragments interpolate what the cores computed: fragment k sits in the middle of cell k,
    // so its v_pos is the mean of the cell's corners' positions.
    const auto& frag = r.phases[1];
    ASSERT_EQ(frag.inputs.size(), 4u);
    EXPECT_FLOAT_EQ(frag.inputs[0][0][0], -0.5f);        // x of cell (0, 0): mean of -1 and 0
    EXPECT_FLOAT_EQ(frag.inputs[3][0][1], 0.5f);         // y of cell (1, 1)
    EXPECT_FLOAT_EQ(frag.runs[0].outputs[0][0], -1.0f);  // v_pos + v_pos
  }
}

TEST(ShaderCluster, BadInputStopsTheDrawWithItsErrorAndLeavesNoContextBehind) {
  const Program vs = ready(kVertex, "v.s"), fs = ready(kFragment, "f.s");
  const DrawSpec d = parseDrawSpec("grid: 2\nfragments_per_cell: 1\n", "draw.yaml");
  const ShaderPlatformConfig cfg;
  sc_core::sc_simcontext* const before = sc_core::sc_get_curr_simcontext();
  const uint64_t cycles = simulateDraw(cfg, d, vs, fs).cycles;
  auto error = [&](const Program& v, const Program& f) {
    try {
      simulateDraw(cfg, d, v, f);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  // Found inside the simulation: a fragment program that never ends (a loop of an empty block).
  const Program loop = ready(R"(.shader fragment
.input v0 v_pos 1 4
.output o0 gl_FragColor 1 4
B0:
  mov o0, v0
L1:
  bra L1
)",
                             "loop.s");
  EXPECT_EQ(error(vs, loop), "loop.s: did not finish within 1000000 steps");
  // Found before it starts: an attribute no draw generates, a varying no vertex output gives,
  // a binding outside the buffers.
  std::string text = kVertex;
  const Program unknown = ready(text.replace(text.find("a_position"), 10, "a_pos").c_str(), "u.s");
  EXPECT_EQ(error(unknown, fs),
            "draw.yaml: vertex input 'a_pos' (u.s): no generator (known: a_position, a_normal, "
            "a_tangent, a_texcoord, a_color)");
  text = kFragment;
  const Program other = ready(text.replace(text.find("v_pos"), 5, "v_uv").c_str(), "g.s");
  EXPECT_EQ(error(vs, other),
            "draw.yaml: fragment input 'v_uv' (g.s) is not an output of the vertex program (v.s)");
  text = kVertex;
  const Program far = ready(text.replace(text.find("o1 v_pos"), 2, "o9").c_str(), "far.s");
  EXPECT_EQ(error(far, fs),
            "far.s:4: output 'v_pos' (o9, 1 entry) does not fit the core's 8-entry output buffer "
            "(core.output_entries): gl_Position takes o0, so a vertex program has room for 7 "
            "varying entries");
  // Each draw's context is gone when it ends, the caller's is current again, and the next
  // draw is as the first.
  EXPECT_EQ(sc_core::sc_get_curr_simcontext(), before);
  EXPECT_EQ(simulateDraw(cfg, d, vs, fs).cycles, cycles);
}

TEST(ShaderCluster, BenchmarkOutputsEqualTheReferenceInterpreter) {
  // A compiled benchmark (register allocation, bundling, clock gating with global code motion
  // on both buffers) on the cluster against the lowered programs in the interpreter.
  const shaders::ShaderBenchmark b = shaders::load("simple_tex_light");
  DrawSpec d = b.draw;
  d.grid = 2;
  d.fragmentsPerCell = 4;
  CompileOptions o;
  o.inputMotion = o.outputMotion = "global";
  const Program vs = compile(b.vertex, o).program, fs = compile(b.fragment, o).program;
  ShaderPlatformConfig cfg;
  cfg.gating.input = cfg.gating.output = "immediate";
  const ClusterRun r = simulateDraw(cfg, d, vs, fs);
  const DrawWork ref = prepareDraw(d, b.vertex, b.fragment, kSizes);
  ASSERT_EQ(r.phases[0].runs.size(), ref.vertices.size());
  for (size_t k = 0; k < ref.vertices.size(); ++k)
    for (const auto& o : b.vertex.outputs)
      EXPECT_EQ(std::memcmp(r.phases[0].runs[k].outputs[o.index].data(),
                            ref.vertexOutputs[k][o.index].data(), sizeof(Vec4)),
                0)
          << "vertex " << k;
  const auto consts = constantFile(b.fragment, ref.fragmentUniforms);
  ASSERT_EQ(r.phases[1].runs.size(), ref.fragments.size());
  for (size_t k = 0; k < ref.fragments.size(); ++k) {
    const InterpretResult want =
        interpret(b.fragment, ref.fragments[k], consts, *ref.textures, kOutputs);
    ASSERT_EQ(r.phases[1].runs[k].killed, want.killed);
    if (!want.killed) {
      EXPECT_EQ(
          std::memcmp(r.phases[1].runs[k].outputs[0].data(), want.outputs[0].data(), sizeof(Vec4)),
          0)
          << "fragment " << k;
    }
  }
  // The clusters of global code motion leave the gated buffers clocked for a fraction of the
  // cycles.
  const CoreStats& s = r.stats[size_t(Stage::Fragment)];
  EXPECT_LT(s.inputClockedCycles, s.cycles / 2);
  EXPECT_GT(s.wakeCycles, 0u);
}

}  // namespace

namespace {

long residentKiB() {
  FILE* f = std::fopen("/proc/self/statm", "r");
  long pages = 0, resident = 0;
  if (!f || std::fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
  if (f) std::fclose(f);
  return resident * 4;
}

// What simulateDraw did before each draw had a context of its own that is deleted: a new context
// per draw, made current and never deleted.
uint64_t drawInAContextLeftBehind(const ShaderPlatformConfig& cfg, const DrawSpec& d,
                                  const Program& vs, const Program& fs) {
  const std::unique_ptr<TextureUnits> tex = drawTextures(d, vs, fs);
  const std::vector<Invocation> vertices = vertexInvocations(d, vs, cfg.core.input_entries);
  std::vector<ShaderPhase> phases(2);
  phases[0].program = &vs;
  phases[0].constants = constantFile(vs, uniformValues(d, vs));
  phases[0].invocations = [&](const std::vector<InvocationRun>&) { return vertices; };
  phases[1].program = &fs;
  phases[1].constants = constantFile(fs, uniformValues(d, fs));
  phases[1].invocations = [&](const std::vector<InvocationRun>& runs) {
    std::vector<std::vector<Vec4>> outputs;
    for (const InvocationRun& v : runs) outputs.push_back(v.outputs);
    return fragmentInvocations(d, vs, fs, outputs, cfg.core.input_entries);
  };
  sc_core::sc_curr_simcontext = new sc_core::sc_simcontext;
  sc_core::sc_default_global_context = sc_core::sc_curr_simcontext;
  auto cluster = std::make_unique<ShaderCluster>("shader_cluster", cfg, std::move(phases), *tex);
  sc_core::sc_start();
  return cluster->controller().cycles();
}

// A measurement for docs/shader.md, not a check (resident memory is the allocator's to keep):
// build/tests/test_shader_cluster --gtest_also_run_disabled_tests --gtest_filter='*Memory*'
TEST(ShaderCluster, DISABLED_MemoryPerDraw) {
  for (const char* name : {"blur0", "pom"}) {
    const shaders::ShaderBenchmark b = shaders::load(name);
    const Program vs = compile(b.vertex, CompileOptions{}).program,
                  fs = compile(b.fragment, CompileOptions{}).program;
    const ShaderPlatformConfig cfg;
    for (bool leftBehind : {false, true}) {
      const int warmup = 10, draws = 200;
      long before = 0;
      for (int k = 0; k < warmup + draws; ++k) {
        if (k == warmup) before = residentKiB();
        if (leftBehind)
          drawInAContextLeftBehind(cfg, b.draw, vs, fs);
        else
          simulateDraw(cfg, b.draw, vs, fs);
      }
      std::printf("%s, %s: resident %ld KiB -> %ld KiB over %d draws (%.1f KiB per draw)\n", name,
                  leftBehind ? "a context per draw left behind" : "simulateDraw", before,
                  residentKiB(), draws, double(residentKiB() - before) / draws);
    }
  }
}

}  // namespace
