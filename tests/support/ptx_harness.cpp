#include "support/ptx_harness.hpp"

#include <cstring>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "common/error.hpp"
#include "ptx/parser.hpp"

namespace gpusc::test {

PlatformConfig platform() { return loadPlatform("gtx480"); }

DecodedKernel::DecodedKernel(std::string_view text, const std::string& entry) {
  mod = ptx::parseModule(text, entry + ".ptx");
  func::layoutConstBank(*mod, syms);
  uint64_t fake = 0x10000;
  for (const auto& g : mod->globals)
    if (g->space == ptx::StateSpace::Global) syms.globalAddress[g->name] = fake += 0x10000;
  const ptx::Function* f = mod->findFunction(entry);
  if (f == nullptr) throw InputError("no entry " + entry);
  prog = func::decodeKernel(*mod, *f, syms);
}

func::LaunchState launchOf(const DecodedKernel& k, func::GlobalMemory& g, Dim3 grid, Dim3 block,
                           const std::vector<uint64_t>& args, uint32_t numSms) {
  func::LaunchState L;
  L.prog = k.prog.get();
  L.localBytes = func::localBytesOf(*k.prog, L.stackBytes);
  L.gmem = &g;
  L.params.assign(k.prog->paramBytes, 0);
  EXPECT_EQ(args.size(), k.prog->params.size());
  for (size_t i = 0; i < args.size() && i < k.prog->params.size(); ++i)
    std::memcpy(L.params.data() + k.prog->params[i].offset, &args[i], k.prog->params[i].size);
  L.constBank = &k.syms.constBank;
  L.grid = grid;
  L.block = block;
  L.sharedBytes = k.prog->dynamicSharedOffset;
  L.warpsPerCta = static_cast<uint32_t>((block.count() + func::kWarpSize - 1) / func::kWarpSize);
  L.numSms = numSms;
  return L;
}

std::string module(const std::string& body) {
  return ".version 9.0\n.target sm_75\n.address_size 64\n\n" + body;
}

std::vector<Lane> eval(const std::string& body, const std::vector<std::array<uint64_t, 3>>& rows,
                       ExecMode mode) {
  const std::string text = module(R"(
.visible .entry eval(.param .u64 pin, .param .u64 pout, .param .u32 n)
{
  .reg .b32 %a32, %b32, %c32, %o32, %r<15>, %t, %n;
  .reg .b64 %a64, %b64, %c64, %o, %rd<15>, %base, %addr;
  .reg .f32 %fa, %fb, %fc, %fo, %f<16>;
  .reg .f64 %da, %db, %dc, %do, %fd<16>;
  .reg .pred %p<8>, %inrange;
  .reg .b16 %h<8>;
  mov.u32 %t, %tid.x;
  ld.param.u32 %n, [n];
  setp.lt.u32 %inrange, %t, %n;
  @!%inrange bra DONE;
  ld.param.u64 %base, [pin];
  mul.wide.u32 %rd14, %t, 24;
  add.s64 %addr, %base, %rd14;
  ld.global.u64 %a64, [%addr];
  ld.global.u64 %b64, [%addr+8];
  ld.global.u64 %c64, [%addr+16];
  cvt.u32.u64 %a32, %a64;
  cvt.u32.u64 %b32, %b64;
  cvt.u32.u64 %c32, %c64;
  mov.b32 %fa, %a32;
  mov.b32 %fb, %b32;
  mov.b32 %fc, %c32;
  mov.b64 %da, %a64;
  mov.b64 %db, %b64;
  mov.b64 %dc, %c64;
  mov.u64 %o, 0;
  mov.u32 %o32, 0;
  mov.f32 %fo, 0f00000000;
  mov.f64 %do, 0d0000000000000000;
)" + body + R"(
  ld.param.u64 %base, [pout];
  mul.wide.u32 %rd14, %t, 24;
  add.s64 %addr, %base, %rd14;
  st.global.u64 [%addr], %o;
  st.global.u32 [%addr+8], %o32;
  st.global.f32 [%addr+12], %fo;
  st.global.f64 [%addr+16], %do;
DONE:
  ret;
}
)");
  Device dev(platform(), mode);
  Module& m = dev.loadModule(text, "eval.ptx");
  std::vector<uint64_t> in;
  for (const auto& r : rows) in.insert(in.end(), r.begin(), r.end());
  DevPtr din = dev.upload(in);
  DevPtr dout = dev.malloc(rows.size() * 24);
  const uint32_t n = static_cast<uint32_t>(rows.size());
  dev.launch(m.kernel("eval"), {1}, {n}, 0, KernelArgs().ptr(din).ptr(dout).u32(n));
  std::vector<uint8_t> raw = dev.download<uint8_t>(dout, rows.size() * 24);
  std::vector<Lane> out(rows.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    std::memcpy(&out[i].o, &raw[i * 24], 8);
    std::memcpy(&out[i].o32, &raw[i * 24 + 8], 4);
    std::memcpy(&out[i].fo, &raw[i * 24 + 12], 4);
    std::memcpy(&out[i].dfo, &raw[i * 24 + 16], 8);
  }
  return out;
}

Lane eval1(const std::string& body, uint64_t a, uint64_t b, uint64_t c) {
  return eval(body, {{a, b, c}})[0];
}

uint64_t bits(double d) {
  uint64_t b;
  std::memcpy(&b, &d, 8);
  return b;
}
uint32_t bits(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}
float asFloat(uint32_t b) {
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}
double asDouble(uint64_t b) {
  double d;
  std::memcpy(&d, &b, 8);
  return d;
}

std::string chaseKernel(int k, const std::string& load) {
  std::string body;
  for (int i = 0; i < k; ++i) body += "  " + load + " %rd1, [%rd1];\n";
  return module(R"(
.visible .entry chase(.param .u64 start, .param .u32 iters, .param .u64 out)
{
  .reg .b64 %rd<4>;
  .reg .b32 %r<4>;
  .reg .pred %p<2>;
  ld.param.u64 %rd1, [start];
  ld.param.u32 %r1, [iters];
  mov.u32 %r2, 0;
L:
)" + body + R"(
  add.u32 %r2, %r2, 1;
  setp.lt.u32 %p1, %r2, %r1;
  @%p1 bra L;
  ld.param.u64 %rd2, [out];
  st.global.u64 [%rd2], %rd1;
  ret;
}
)");
}

}  // namespace gpusc::test
