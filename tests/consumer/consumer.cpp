// A user's testbench built against an installed gpusc: a kernel of its own, a catalog kernel.
#include <vector>

#include <gtest/gtest.h>

#include "catalog.hpp"
#include "gpu/device.hpp"

namespace {

const char* const kScale = R"(
.version 9.0
.target sm_75
.address_size 64
.visible .entry scale(.param .u64 p_data, .param .u32 p_n)
{
  .reg .pred %p<2>;
  .reg .b32 %r<8>;
  .reg .b64 %rd<5>;
  ld.param.u64 %rd1, [p_data];
  ld.param.u32 %r1, [p_n];
  mov.u32 %r2, %ctaid.x;
  mov.u32 %r3, %ntid.x;
  mov.u32 %r4, %tid.x;
  mad.lo.s32 %r5, %r2, %r3, %r4;
  setp.ge.s32 %p1, %r5, %r1;
  @%p1 bra DONE;
  cvta.to.global.u64 %rd2, %rd1;
  mul.wide.s32 %rd3, %r5, 4;
  add.s64 %rd4, %rd2, %rd3;
  ld.global.u32 %r6, [%rd4];
  mul.lo.s32 %r7, %r6, 3;
  st.global.u32 [%rd4], %r7;
DONE:
  ret;
}
)";

TEST(Consumer, OwnKernelInTimingMode) {
  gpusc::Device dev(gpusc::loadPlatform("gtx480", {"gpu.num_sms=2"}), gpusc::ExecMode::Timing);
  auto& mod = dev.loadModule(kScale, "scale.ptx");
  std::vector<uint32_t> data(300);
  for (uint32_t i = 0; i < data.size(); ++i) data[i] = i;
  const gpusc::DevPtr p = dev.upload(data);
  dev.launch(mod.kernel("scale"), {3}, {128}, 0, gpusc::KernelArgs().ptr(p).u32(300));
  const auto out = dev.download<uint32_t>(p, data.size());
  for (uint32_t i = 0; i < data.size(); ++i) ASSERT_EQ(out[i], 3 * i) << i;
  ASSERT_TRUE(dev.launches().back().timing.has_value());
  EXPECT_GT(dev.launches().back().timing->cycles, 0u);
}

TEST(Consumer, CatalogKernelFromTheInstalledLibrary) {
  gpusc::Device dev(gpusc::loadPlatform("gtx480"));
  auto work = gpusc::catalog::find("vecadd").make(gpusc::catalog::Size::Tiny);
  work->setup(dev);
  work->run(dev);
  const auto check = work->check(dev);
  EXPECT_TRUE(check.pass) << check.message;
}

}  // namespace
