// The shader cluster as a SystemC design: the input controller loads each program, fills an idle
// core's input buffer one invocation at a time and starts it; the cores run and write out. The
// length of a small draw follows from the configuration, the fragments are made from the
// vertex outputs the cores computed, and every output equals the reference interpreter's.
#include <cstring>

#include <gtest/gtest.h>

#include "shader/assembly.hpp"
#include "shader/compiler.hpp"
#include "shader/shader_cluster.hpp"
#include "shader_catalog.hpp"

using namespace gpusc;
using namespace gpusc::shader;

namespace {

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
  const DrawWork ref = prepareDraw(d, b.vertex, b.fragment);
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
    const InterpretResult want = interpret(b.fragment, ref.fragments[k], consts, *ref.textures);
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
