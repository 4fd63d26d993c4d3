// Fuzz target: a whole small run. The input is the body of a kernel that runs in a fixed launch
// (2 CTAs of 64 threads, an input and an output buffer) on gtx480, or on the built-in platform
// GPUSC_FUZZ_PLATFORM names, in functional and then in timing mode. A run ends with its results,
// an InputError (PTX the decoder rejects, a launch the platform cannot hold) or a KernelFault;
// anything else is a finding.
//
// One platform per process: alternating two makes TimingEngine::get elaborate a new design at
// every switch and keep the finished one (SystemC cannot destroy it), about 30 MB per input with
// rtx3070 beside gtx480, which reaches libFuzzer's memory limit within 100 inputs.
//
// Bound: the run limits (limits.max_warp_instructions, limits.max_cycles) stop a body that
// loops for long; a run they stop (RunStopped) is as good as a finished one. Both modes run
// every input, faulting ones included: a fault in timing mode must surface as the KernelFault it
// is, not as anything else.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "fuzz/fuzz_target.hpp"
#include "gpu/device.hpp"

using namespace gpusc;

namespace {

constexpr uint32_t kCtas = 2, kThreads = 64, kWords = kCtas * kThreads;

// Before the body: %r0 = tid.x, %r1 = in[global thread], %rd0/%rd1 the buffers, %rd4 this
// thread's output word. After it: out[global thread] = %r1.
std::string kernel(const std::string& body) {
  return R"(.version 9.0
.target sm_75
.address_size 64

.visible .entry fuzz(.param .u64 in, .param .u64 out)
{
  .reg .b32 %r<16>;
  .reg .b64 %rd<16>;
  .reg .f32 %f<8>;
  .reg .f64 %fd<4>;
  .reg .pred %p<8>;
  .reg .b16 %h<4>;
  .shared .align 16 .b8 sh[1024];
  ld.param.u64 %rd0, [in];
  ld.param.u64 %rd1, [out];
  mov.u32 %r0, %tid.x;
  mov.u32 %r2, %ctaid.x;
  mad.lo.u32 %r3, %r2, 64, %r0;
  mul.wide.u32 %rd2, %r3, 4;
  add.s64 %rd3, %rd0, %rd2;
  ld.global.u32 %r1, [%rd3];
  add.s64 %rd4, %rd1, %rd2;
)" + body +
         R"(
  st.global.u32 [%rd4], %r1;
  ret;
}
)";
}

// Runs the kernel; false when the input is rejected (InputError), faults or is stopped.
bool run(const PlatformConfig& cfg, ExecMode mode, const std::string& text) {
  Device dev(cfg, mode);
  try {
    Module& m = dev.loadModule(text, "fuzz.ptx");
    const Kernel& k = m.kernel("fuzz");
    std::vector<uint32_t> in(kWords);
    for (uint32_t i = 0; i < kWords; ++i) in[i] = i * 2654435761u;
    DevPtr din = dev.upload(in);
    DevPtr dout = dev.malloc(kWords * 4);
    dev.launch(k, {kCtas}, {kThreads}, 0, KernelArgs().ptr(din).ptr(dout));
    return true;
  } catch (const InputError& e) {
    if (std::getenv("GPUSC_FUZZ_VERBOSE")) std::fprintf(stderr, "input error: %s\n", e.what());
  } catch (const KernelFault& e) {
    if (std::getenv("GPUSC_FUZZ_VERBOSE")) std::fprintf(stderr, "kernel fault: %s\n", e.what());
  } catch (const RunStopped& e) {
    if (std::getenv("GPUSC_FUZZ_VERBOSE")) std::fprintf(stderr, "stopped: %s\n", e.what());
  }
  return false;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const PlatformConfig cfg = [] {
    const char* platform = std::getenv("GPUSC_FUZZ_PLATFORM");
    PlatformConfig c = loadPlatform(platform != nullptr && *platform ? platform : kDefaultPlatform);
    c.limits.max_warp_instructions = 20000;
    c.limits.max_cycles = 20000;
    return c;
  }();
  const std::string text = kernel(fuzz::text(data, size));
  run(cfg, ExecMode::Functional, text);
  run(cfg, ExecMode::Timing, text);
  return 0;
}
