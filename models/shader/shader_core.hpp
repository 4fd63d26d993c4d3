// ShaderCore: one Cyclone shader core (seed 004). In-order, one bundle of up to two instruction
// words per cycle through a five-stage pipeline; results are ready `latency` cycles after issue
// (a bundle waits for its operands); leaving the fall-through path costs the branch penalty.
// The input and output buffers' clocks are gated by a named policy: a gated buffer's clock starts
// `wake_cycles` before an access, from the cycle the bundle is decoded, so the wake delays the
// bundle only by what an operand wait does not hide. Values are computed by the reference
// interpreter's `execute`, so the core and the interpreter agree bit for bit.
//
// The module takes invocations from the cluster's input controller (ShaderCluster) and spends
// their cycles in simulated time; its statistics count every cycle and buffer event.
#pragma once

#include <exception>
#include <memory>
#include <string>
#include <vector>

#include <systemc>

#include "common/registry.hpp"
#include "shader/draw.hpp"
#include "shader/shader_config.hpp"

namespace gpusc::shader {

// When a buffer's clock runs. Cycles are issue cycles of one invocation.
class GatingPolicy {
 public:
  virtual ~GatingPolicy() = default;
  // Whether the clock is off when an access in `cycle` (the previous one was in `last`, or -1
  // for none) would start waking it, wakeCycles() before the access: then the access waits for
  // the wake, else the clock has run since `last`.
  virtual bool stopped(int64_t cycle, int64_t last) const = 0;
  virtual uint32_t wakeCycles() const = 0;
  // Of `rest` idle cycles after an access, those in which the clock still runs before it stops
  // (or the invocation ends).
  virtual uint64_t clockedAfter(int64_t rest) const = 0;
  virtual bool gates() const { return true; }
};
const Registry<GatingPolicy, const ShaderGatingConfig&>& gatingPolicies();

struct CoreStats {
  uint64_t invocations = 0, killed = 0;
  uint64_t cycles = 0, bundles = 0, words = 0;
  uint64_t stallCycles = 0, wakeCycles = 0, branchPenaltyCycles = 0;
  uint64_t inputAccessCycles = 0, outputAccessCycles = 0;
  uint64_t inputClockedCycles = 0, outputClockedCycles = 0;
  uint64_t inputWakes = 0, outputWakes = 0;  // times a gated buffer's clock started
  CoreStats& operator+=(const CoreStats& o);
};

struct CoreEnergy {
  double inputBuffer = 0, outputBuffer = 0, temporaries = 0, core = 0;
  double total() const { return inputBuffer + outputBuffer + temporaries + core; }
};
CoreEnergy energyOf(const CoreStats& s, const ShaderPlatformConfig& cfg);

// One invocation through the pipeline: its outputs and its events.
struct InvocationRun {
  std::vector<Vec4> outputs;
  bool killed = false;
  CoreStats stats;
};
InvocationRun runInvocation(const Program& p, const Invocation& in, const std::vector<Vec4>& consts,
                            const TextureUnits& tex, const ShaderPlatformConfig& cfg,
                            const GatingPolicy& inputGating, const GatingPolicy& outputGating);

// Output-buffer entries an invocation of `p` writes out when it ends (its output bindings).
uint32_t outputEntries(const Program& p);
// Input-buffer entries the input controller fills for an invocation of `p` (its input bindings).
uint32_t inputEntries(const Program& p);

// A unit of work from the input controller: one invocation, with the place its outputs and
// events go.
struct ShaderTask {
  const Program* program = nullptr;  // allocated and bundled
  const Invocation* inputs = nullptr;
  const std::vector<Vec4>* constants = nullptr;
  const TextureUnits* textures = nullptr;
  InvocationRun* result = nullptr;
  bool last = false;  // no more work follows: the core's thread ends
};

// The core runs an invocation's cycles, then writes its outputs out of the output buffer
// (`controller.writeout_cycles_per_entry` per output entry; a killed fragment writes nothing)
// and reports on `done`.
class ShaderCore : public sc_core::sc_module {
 public:
  sc_core::sc_fifo_in<ShaderTask> tasks;
  sc_core::sc_fifo_out<bool> done;  // one token per finished task

  ShaderCore(sc_core::sc_module_name name, const ShaderPlatformConfig& cfg);
  const CoreStats& stats(Stage s) const { return stats_[size_t(s)]; }
  uint64_t busyCycles() const { return busyCycles_; }  // running or writing out
  // What stopped the core's thread early (an InputError for a program that does not finish),
  // or null.
  std::exception_ptr error() const { return error_; }

 private:
  void run();
  const ShaderPlatformConfig& cfg_;
  std::unique_ptr<GatingPolicy> inGate_, outGate_;
  sc_core::sc_time period_;
  CoreStats stats_[2];  // by Stage
  uint64_t busyCycles_ = 0;
  std::exception_ptr error_;
};

// sc_fifo needs a printable payload (found by argument-dependent lookup).
inline std::ostream& operator<<(std::ostream& os, const ShaderTask&) { return os; }

}  // namespace gpusc::shader
