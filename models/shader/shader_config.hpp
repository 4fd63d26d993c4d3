// The shader-cluster platform (seed 004): the Cyclone shader cluster of You and Wang, "Energy-aware
// code motion for GPU shader processors" (Sec. 3 and 5.1), loaded from
// platforms/shader-cluster.yaml. Where the paper gives a number the default is the paper's; the
// others are ours and say so.
#pragma once

#include <memory>
#include <string>

#include "common/config.hpp"

namespace gpusc::shader {

class ShaderPolicies;  // shader/shader_policies.hpp

using config::OneOf;
using config::Range;

struct ShaderLatencyConfig : config::Section {
  uint32_t alu = 1;      // ours: a result is forwarded to the next bundle
  uint32_t sfu = 2;      // ours: the paper gives no special-function latency
  uint32_t texture = 8;  // ours: texture sampling from a small local texture cache
  template <class V>
  void visit(V& v) {
    v.field("alu", alu, "Cycles from issue until an ALU result can be used",
            Range<uint32_t>{1, 64});
    v.field("sfu", sfu, "Cycles from issue until a special-function result can be used",
            Range<uint32_t>{1, 64});
    v.field("texture", texture, "Cycles from issue until a texture sample can be used",
            Range<uint32_t>{1, 1000});
  }
};

struct ShaderCoreConfig : config::Section {
  uint32_t pipeline_stages = 5;  // the paper: a five-stage pipeline
  uint32_t temporaries = 8;      // the paper: eight temporary registers
  uint32_t input_entries = 8;    // the paper: an eight-entry read-only input buffer
  uint32_t output_entries = 8;   // the paper: an eight-entry read/write output buffer
  uint32_t branch_penalty = 2;   // ours: a taken branch resolves in the third stage
  ShaderLatencyConfig latency;
  template <class V>
  void visit(V& v) {
    v.field("pipeline_stages", pipeline_stages, "Pipeline stages (fill and drain per invocation)",
            Range<uint32_t>{2, 20});
    v.field("temporaries", temporaries, "Temporary registers", Range<uint32_t>{4, 64});
    v.field("input_entries", input_entries, "Input-buffer entries (read-only)",
            Range<uint32_t>{8, 8});
    v.field("output_entries", output_entries, "Output-buffer entries (read/write)",
            Range<uint32_t>{8, 8});
    v.field("branch_penalty", branch_penalty,
            "Cycles lost when control leaves the fall-through path", Range<uint32_t>{0, 16});
    v.field("latency", latency, "Result latencies");
  }
};

struct ShaderGatingConfig : config::Section {
  std::string input = "none";
  std::string output = "none";
  uint32_t wake_cycles = 1;  // the paper: one extra cycle to turn the gated clock on
  uint32_t idle_cycles = 4;  // ours, for idle-timeout
  template <class V>
  void visit(V& v) {
    const OneOf policies{{"none", "immediate", "idle-timeout"}};
    v.field("input", input, "Clock gating of the input buffer", policies);
    v.field("output", output, "Clock gating of the output buffer", policies);
    v.field(
        "wake_cycles", wake_cycles,
        "Cycles a gated buffer's clock takes to start before an access (hidden by an operand wait)",
        Range<uint32_t>{0, 16});
    v.field("idle_cycles", idle_cycles, "idle-timeout: idle cycles before a buffer is gated",
            Range<uint32_t>{0, 1000});
  }
};

// The input controller and the cluster's shared buffers (Fig. 3). The paper gives no transfer
// rates; ours move one vec4 entry or instruction word per cycle.
struct ShaderControllerConfig : config::Section {
  uint32_t load_cycles_per_word = 1;       // ours
  uint32_t fill_cycles_per_entry = 1;      // ours
  uint32_t writeout_cycles_per_entry = 1;  // ours
  template <class V>
  void visit(V& v) {
    const Range<uint32_t> r{0, 1000};
    v.field("load_cycles_per_word", load_cycles_per_word,
            "Instruction/constant buffer: cycles per instruction word or constant loaded when "
            "the program changes",
            r);
    v.field("fill_cycles_per_entry", fill_cycles_per_entry,
            "Input controller: cycles per input-buffer entry it fills before starting a core", r);
    v.field("writeout_cycles_per_entry", writeout_cycles_per_entry,
            "Output buffer: cycles per entry written out after an invocation", r);
  }
};

// Table VI of the paper: dynamic power of a Cyclone shader core in its units, per clocked cycle.
struct ShaderEnergyConfig : config::Section {
  double input_buffer = 3.28;
  double output_buffer = 5.51;
  double temporaries = 5.51;  // eight temporaries cost what the output buffer does (Sec. 5.2.3)
  double core = 21.69;        // the rest of "others" (27.20 - 5.51)
  double input_access = 0.0;  // ours: extra energy per access (the paper folds it into the above)
  double output_access = 0.0;
  template <class V>
  void visit(V& v) {
    const Range<double> r{0.0, 1e6};
    v.field("input_buffer", input_buffer, "Input buffer, per clocked cycle (units)", r);
    v.field("output_buffer", output_buffer, "Output buffer, per clocked cycle (units)", r);
    v.field("temporaries", temporaries, "Eight temporaries, per cycle (scales with their count)",
            r);
    v.field("core", core, "The rest of the core, per cycle", r);
    v.field("input_access", input_access, "Input buffer, per access cycle, on top", r);
    v.field("output_access", output_access, "Output buffer, per access cycle, on top", r);
  }
};

struct ShaderCompilerConfig : config::Section {
  std::string input_motion = "none";
  std::string output_motion = "none";
  std::string branch_policy = "large-cluster";
  std::string join_policy = "duplication-allowed";
  template <class V>
  void visit(V& v) {
    const OneOf motions{{"none", "local", "global", "naive"}};
    v.field("input_motion", input_motion, "Code motion of input-buffer accesses", motions);
    v.field("output_motion", output_motion, "Code motion of output-buffer accesses", motions);
    v.field("branch_policy", branch_policy, "Global code motion at a branch point",
            OneOf{{"large-cluster", "small-cluster", "zero-or-all"}});
    v.field("join_policy", join_policy, "Global code motion at a join point",
            OneOf{{"duplication-allowed", "duplication-forbidden"}});
  }
};

struct ShaderPlatformConfig : config::Section {
  std::string name = "shader-cluster";
  std::string description = "Cyclone shader cluster: two VLIW shader cores at 200 MHz (seed 004)";
  uint32_t cores = 2;      // the paper: two shader cores
  double clock_mhz = 200;  // the paper: 200 MHz
  ShaderCoreConfig core;
  ShaderControllerConfig controller;
  ShaderGatingConfig gating;
  ShaderEnergyConfig energy;
  ShaderCompilerConfig compiler;
  // The buffer gating policies gating.input and gating.output name: null means the built-in
  // ones. Set by loadShaderPlatform(..., policies) for a testbench's own; not a YAML key.
  std::shared_ptr<const ShaderPolicies> policies;
  template <class V>
  void visit(V& v) {
    v.field("name", name, "Platform name");
    v.field("description", description, "One-line description");
    v.field("cores", cores, "Shader cores in the cluster", Range<uint32_t>{1, 16});
    v.field("clock_mhz", clock_mhz, "Core clock in MHz", Range<double>{1.0, 10000.0});
    v.field("core", core, "Shader core");
    v.field("controller", controller, "Input controller and shared buffers");
    v.field("gating", gating, "I/O buffer clock gating");
    v.field("energy", energy, "Dynamic energy (Table VI)");
    v.field("compiler", compiler, "Energy-aware code motion");
  }
};

// A built-in shader platform name or a YAML file.
ShaderPlatformConfig loadShaderPlatform(const std::string& nameOrFile,
                                        const std::vector<std::string>& sets = {});
// The same with a testbench's policies (shader/shader_policies.hpp): gating.input and
// gating.output may name the buffer gating policies registered in `policies`.
ShaderPlatformConfig loadShaderPlatform(const std::string& nameOrFile,
                                        const std::vector<std::string>& sets,
                                        std::shared_ptr<const ShaderPolicies> policies);

}  // namespace gpusc::shader
