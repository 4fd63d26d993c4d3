// Helpers for tests that run small hand-written PTX kernels.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "func/decoder.hpp"
#include "func/state.hpp"
#include "gpu/device.hpp"
#include "ptx/ast.hpp"

namespace gpusc::test {

// The GTX480 platform, loaded once per call (cheap).
PlatformConfig platform();

// PTX module text: the standard header followed by `body` (functions, variables).
std::string module(const std::string& body);

// A kernel `chase(.param .u64 start, .param .u32 iters, .param .u64 out)` that follows a chain
// of pointers: `iters` times, `k` dependent 64-bit loads (p = *p) written as `load` (its opcode
// with modifiers), then stores the final p.
std::string chaseKernel(int k, const std::string& load = "ld.global.u64");

// A kernel decoded without a Device, for tests that drive the functional engine directly.
// Module-scope .global variables get addresses for decoding only (a kernel that uses them is not
// run). Throws InputError when `text` has no entry `entry`.
struct DecodedKernel {
  std::unique_ptr<ptx::Module> mod;
  func::ModuleSymbols syms;
  std::unique_ptr<func::Program> prog;
  DecodedKernel(std::string_view text, const std::string& entry);
};

// A launch of `k` on `g` with `args` (one value per kernel parameter, truncated to its size).
func::LaunchState launchOf(const DecodedKernel& k, func::GlobalMemory& g, Dim3 grid, Dim3 block,
                           const std::vector<uint64_t>& args, uint32_t numSms = 1);

// Results of one thread of an `eval` kernel.
struct Lane {
  uint64_t o = 0;    // %o   (.b64)
  uint32_t o32 = 0;  // %o32 (.b32)
  float fo = 0;      // %fo  (.f32)
  double dfo = 0;    // %do  (.f64)
};

// Runs `body` in a kernel with one thread per input row (up to 1024). Before the body, each
// thread has its row in %a64 %b64 %c64 (.b64), their low halves in %a32 %b32 %c32 (.b32), the
// same bits as floats in %fa %fb %fc (.f32) and doubles %da %db %dc (.f64). Scratch registers:
// %r0-%r14 (.b32), %rd0-%rd14 (.b64), %f0-%f15 (.f32), %fd0-%fd15 (.f64), %p0-%p7 (.pred),
// %h0-%h7 (.b16). The body leaves results in %o, %o32, %fo, %do.
// `mode` picks the functional engine (default) or the cycle-level timing model.
std::vector<Lane> eval(const std::string& body, const std::vector<std::array<uint64_t, 3>>& rows,
                       ExecMode mode = ExecMode::Functional);

// One row.
Lane eval1(const std::string& body, uint64_t a, uint64_t b = 0, uint64_t c = 0);

uint64_t bits(double d);
uint32_t bits(float f);
float asFloat(uint32_t b);
double asDouble(uint64_t b);

}  // namespace gpusc::test
