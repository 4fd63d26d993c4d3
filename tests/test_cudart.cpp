// The CUDA runtime's state (models/cudart/runtime): a program's fat binary registered as nvcc's
// host code registers it (tests/data/fatbin: axpy.cu built by nvcc 13), kernels launched with
// CUDA's argument arrays, symbols, shared (managed) memory, streams and events in simulated time,
// and the error codes a GPU gives for bad launches, bad pointers and kernel faults.
#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "common/error.hpp"
#include "common/platform_config.hpp"
#include "cudart/cuda_errors.hpp"
#include "cudart/ptx_link.hpp"
#include "cudart/runtime.hpp"
#include "cudart/server.hpp"
#include "gpu/device.hpp"
#include "support/test_data.hpp"

using namespace gpusc;
using namespace gpusc::cudart;

namespace {

std::vector<uint8_t> readBytes(const std::string& name) { return readTestData("fatbin/" + name); }

// nvcc's wrapper of the container that holds the PTX (the section's second container).
struct Wrapper {
  uint32_t magic = kFatbinWrapperMagic, version = 1;
  const void* data = nullptr;
  void* unused = nullptr;
};

// A program as nvcc's host code presents it: the fat binary of axpy.cu, its kernel's host stub
// and the host shadow of its __constant__ float scale.
class CudartTest : public ::testing::Test {
 protected:
  void SetUp() override { start("axpy_size.fatbin", ExecMode::Functional); }

  void start(const std::string& fatbin, ExecMode mode) {
    section_ = readBytes(fatbin);
    uint64_t firstBody;
    std::memcpy(&firstBody, section_.data() + 8, 8);
    wrapper_.data = section_.data() + 16 + firstBody;
    rt_.reset();
    dev_ = std::make_unique<Device>(loadPlatform("gtx480"), mode);
    rt_ = std::make_unique<Runtime>(*dev_, 20, "axpy");
    handle_ = rt_->registerFatBinary(&wrapper_);
    rt_->registerFunction(handle_, &stub_, "_Z4axpyfPKfPfi");
    rt_->registerVar(handle_, &scaleShadow_, "scale", sizeof(float), true);
  }

  // axpy<<<grid, block>>>(a, x, y, n) as the stub makes it.
  void launch(float a, const void* x, void* y, int n, Dim3 grid, Dim3 block, size_t shared = 0) {
    rt_->pushConfiguration(grid, block, shared, nullptr);
    Dim3 g, b;
    size_t sh;
    void* stream;
    rt_->popConfiguration(&g, &b, &sh, &stream);
    void* args[] = {&a, &x, &y, &n};
    rt_->launch(&stub_, g, b, args, sh, stream);
  }

  int codeOf(const std::function<void()>& call) {
    try {
      call();
    } catch (const CudaFailure& f) {
      return rt_->fail(f);
    }
    return kSuccess;
  }

  std::vector<uint8_t> section_;
  Wrapper wrapper_;
  std::unique_ptr<Device> dev_;
  std::unique_ptr<Runtime> rt_;
  void** handle_ = nullptr;
  char stub_ = 0;
  float scaleShadow_ = 0;
};

}  // namespace

TEST_F(CudartTest, ARegisteredKernelRunsWithCudasArgumentArray) {
  const int n = 700;
  std::vector<float> x(n), y(n);
  for (int i = 0; i < n; ++i) x[i] = float(i % 17), y[i] = float(i % 5);
  void* dx = rt_->malloc(n * sizeof(float));
  void* dy = rt_->malloc(n * sizeof(float));
  EXPECT_TRUE(rt_->isDevicePointer(dx, n * sizeof(float)));
  EXPECT_FALSE(rt_->isDevicePointer(x.data()));
  rt_->memcpy(dx, x.data(), n * sizeof(float), kHostToDevice);
  rt_->memcpy(dy, y.data(), n * sizeof(float), kDefault);  // the direction from the pointers
  const float scale = 3;
  rt_->memcpyToSymbol(&scaleShadow_, &scale, sizeof scale, 0, kHostToDevice);
  float back = 0;
  rt_->memcpyFromSymbol(&back, &scaleShadow_, sizeof back, 0, kDeviceToHost);
  EXPECT_EQ(back, 3);
  launch(0.5f, dx, dy, n, {3}, {256});
  std::vector<float> out(n);
  rt_->memcpy(out.data(), dy, n * sizeof(float), kDeviceToHost);
  for (int i = 0; i < n; ++i) ASSERT_EQ(out[i], 0.5f * 3 * x[i] + y[i]) << i;
  EXPECT_EQ(rt_->device().launches().size(), 1u);
  rt_->free(dx);
  rt_->free(dy);
  EXPECT_EQ(rt_->lastError(true), kSuccess);
}

TEST_F(CudartTest, SharedMemoryIsOneAddressForTheHostAndTheKernel) {
  const int n = 300;
  auto* x = static_cast<float*>(rt_->mallocShared(n * sizeof(float)));
  auto* y = static_cast<float*>(rt_->mallocShared(n * sizeof(float)));
  for (int i = 0; i < n; ++i) x[i] = float(i), y[i] = 1;  // written through the host pointer
  const float scale = 2;
  rt_->memcpyToSymbol(&scaleShadow_, &scale, sizeof scale, 0, kDefault);
  launch(1, x, y, n, {2}, {256});
  for (int i = 0; i < n; ++i) ASSERT_EQ(y[i], 2 * x[i] + 1) << i;  // read without a copy
  // A copy from shared memory to device memory and back.
  void* d = rt_->malloc(n * sizeof(float));
  rt_->memcpy(d, y, n * sizeof(float), kDefault);
  std::vector<float> out(n);
  rt_->memcpy(out.data(), d, n * sizeof(float), kDefault);
  EXPECT_EQ(out[299], 599.0f);
  rt_->freeHost(x);
  rt_->free(y);
  EXPECT_EQ(codeOf([&] { rt_->freeHost(d); }), kErrorInvalidValue);  // not host memory
}

TEST_F(CudartTest, ImpossibleLaunchesGetTheCodesAGpuGives) {
  void* d = rt_->malloc(1024);
  // 2048 threads per block, and more shared memory than the SM has (48 KiB on the GTX480):
  // cudaErrorInvalidConfiguration, nothing run.
  EXPECT_EQ(codeOf([&] { launch(1, d, d, 1, {1}, {2048}); }), kErrorInvalidConfiguration);
  EXPECT_EQ(codeOf([&] { launch(1, d, d, 1, {1}, {32}, 64 * 1024); }), kErrorInvalidConfiguration);
  EXPECT_EQ(codeOf([&] { launch(1, d, d, 1, {0}, {32}); }), kErrorInvalidConfiguration);
  EXPECT_EQ(rt_->device().launches().size(), 0u);
  // Not sticky: the last error is read once, and the next launch runs.
  EXPECT_EQ(rt_->lastError(true), kErrorInvalidConfiguration);
  EXPECT_EQ(rt_->lastError(true), kSuccess);
  // A host function nobody registered.
  char other = 0;
  EXPECT_EQ(codeOf([&] {
              void* args[] = {nullptr};
              rt_->launch(&other, {1}, {1}, args, 0, nullptr);
            }),
            kErrorInvalidDeviceFunction);
  // An unknown stream.
  EXPECT_EQ(codeOf([&] { rt_->recordEvent(rt_->createEvent(), &other); }),
            kErrorInvalidResourceHandle);
}

TEST_F(CudartTest, AKernelFaultIsStickyAsOnAGpu) {
  void* d = rt_->malloc(1024);
  // x points nowhere: the first load faults.
  EXPECT_EQ(codeOf([&] { launch(1, reinterpret_cast<void*>(0x40), d, 32, {1}, {32}); }),
            kErrorIllegalAddress);
  EXPECT_EQ(rt_->lastError(true), kErrorIllegalAddress);
  EXPECT_EQ(rt_->lastError(true), kErrorIllegalAddress);  // the context stays lost
  EXPECT_EQ(rt_->stickyError(), kErrorIllegalAddress);
  EXPECT_EQ(faultCode(KernelFault("misaligned 4-byte load at global address 0x2")),
            kErrorMisalignedAddress);
  EXPECT_EQ(faultCode(KernelFault("deadlock in kernel k: ...")), kErrorLaunchTimeout);
  EXPECT_EQ(faultCode(KernelFault("trap instruction executed in kernel k")), kErrorLaunchFailure);
}

TEST_F(CudartTest, BadCopiesAndSymbols) {
  void* d = rt_->malloc(64);
  std::vector<uint8_t> h(128);
  EXPECT_EQ(codeOf([&] { rt_->memcpy(d, h.data(), 128, kHostToDevice); }), kErrorInvalidValue);
  EXPECT_EQ(codeOf([&] { rt_->memcpy(h.data(), d, 16, kHostToDevice); }), kErrorInvalidValue);
  EXPECT_EQ(codeOf([&] { rt_->memcpy(d, h.data(), 16, 7); }), kErrorInvalidMemcpyDirection);
  EXPECT_EQ(codeOf([&] { rt_->free(h.data()); }), kErrorInvalidValue);
  float f = 0;
  EXPECT_EQ(codeOf([&] { rt_->memcpyToSymbol(&f, &f, 4, 0, kHostToDevice); }), kErrorInvalidSymbol);
  EXPECT_EQ(codeOf([&] { rt_->memcpyToSymbol(&scaleShadow_, h.data(), 8, 0, kHostToDevice); }),
            kErrorInvalidValue);
  EXPECT_EQ(rt_->symbolSize(&scaleShadow_), sizeof(float));
  rt_->memset(d, 0xab, 64);
  rt_->memcpy(h.data(), d, 64, kDeviceToHost);
  EXPECT_EQ(h[63], 0xab);
}

TEST_F(CudartTest, EventsMeasureSimulatedTime) {
  start("axpy_none.fatbin", ExecMode::Timing);
  const int n = 4096;
  void* x = rt_->malloc(n * sizeof(float));
  void* y = rt_->malloc(n * sizeof(float));
  void* stream = rt_->createStream();
  void* a = rt_->createEvent();
  void* b = rt_->createEvent();
  rt_->recordEvent(a, stream);
  launch(1, x, y, n, {n / 256}, {256});
  rt_->recordEvent(b, stream);
  const auto& t = rt_->device().launches().at(0).timing;
  ASSERT_TRUE(t.has_value());
  const double expectedMs = double(t->cycles) / (t->coreMhz * 1e3);
  EXPECT_GT(t->cycles, 0u);
  EXPECT_FLOAT_EQ(rt_->elapsedMs(a, b), float(expectedMs));
  void* never = rt_->createEvent();
  EXPECT_EQ(codeOf([&] { rt_->elapsedMs(a, never); }), kErrorInvalidResourceHandle);
  rt_->destroyStream(stream);
  EXPECT_EQ(codeOf([&] { rt_->checkStream(stream); }), kErrorInvalidResourceHandle);
  // cudaEventQuery and cudaEventSynchronize check their event: a destroyed one is refused.
  rt_->checkEvent(b);
  rt_->destroyEvent(b);
  EXPECT_EQ(codeOf([&] { rt_->checkEvent(b); }), kErrorInvalidResourceHandle);
  EXPECT_EQ(codeOf([&] { rt_->checkEvent(nullptr); }), kErrorInvalidResourceHandle);
}

// cudaDevAttrSingleToDoublePrecisionPerfRatio follows from the platform's units: GTX480's 32
// FP32 lanes at twice the core clock against one DP warp instruction per 4 cycles on them (its
// published 1,345 against 168 GFLOPS); GA104's 128 FP32 lanes against 2 FP64 (the GA102
// whitepaper's 1/64).
TEST(DeviceFacts, TheDoublePrecisionRatioFollowsThePlatformsUnits) {
  for (const char* name : {"gtx480", "rtx3070"}) {
    const PlatformConfig cfg = loadPlatform(name);
    const SmConfig& s = cfg.sm;
    const uint32_t single = s.simd_units * s.simd_lanes * s.lane_clock_ratio;
    const uint32_t dp =
        s.dp_units > 0 ? s.dp_units * s.dpLanes() : s.warp_size / s.latency.dp_mad.initiation;
    EXPECT_EQ(deviceFacts(cfg).singleToDoubleRatio, single / dp) << name;
  }
  EXPECT_EQ(deviceFacts(loadPlatform("gtx480")).singleToDoubleRatio, 8u);
  EXPECT_EQ(deviceFacts(loadPlatform("rtx3070")).singleToDoubleRatio, 64u);
  // Double precision on the SFUs: 4 lanes, one warp per 8 cycles.
  const PlatformConfig sfu =
      loadPlatform("gtx480", {"sm.dp_path=sfu", "sm.latency.dp_mad.initiation=8"});
  EXPECT_EQ(deviceFacts(sfu).singleToDoubleRatio, 64u * 8 / 32);
}

// The memory clock the driver reports is half the data rate per pin: twice it times the bus is
// the peak bandwidth of the platform's channels (GDDR5 and GDDR6 alike).
TEST(DeviceFacts, TheMemoryClockAndBusGiveThePeakBandwidth) {
  for (const char* platform : {"gtx480", "rtx3070"}) {
    const PlatformConfig cfg = loadPlatform(platform);
    const wire::DeviceFacts f = deviceFacts(cfg);
    const auto& d = cfg.memory.dram;
    const double peak = double(cfg.memory.partitions) * d.chips * d.bus_width_bytes * d.data_rate *
                        cfg.gpu.clocks.dram_mhz * 1e6;
    EXPECT_DOUBLE_EQ(2.0 * f.memoryKhz * 1e3 * f.memoryBusBits / 8, peak) << platform;
  }
  EXPECT_EQ(deviceFacts(loadPlatform("rtx3070")).memoryKhz, 7000000u);  // RTX 3070: 7001 MHz
}

TEST_F(CudartTest, ABinaryWithSassOnlyFailsAtLaunchNamingTheFlags) {
  start("axpy_sass_only.fatbin", ExecMode::Functional);
  void* d = rt_->malloc(64);
  try {
    launch(1, d, d, 1, {1}, {32});
    FAIL() << "launched";
  } catch (const CudaFailure& f) {
    EXPECT_EQ(f.code(), kErrorNoKernelImageForDevice);
    EXPECT_NE(std::string(f.what()).find("-arch=sm_75"), std::string::npos) << f.what();
  }
}

// A library the program loads (cudaLibraryLoadData): PTX for the device's architecture loads at
// once and its kernel runs by the handle the program gives it; PTX for a later architecture,
// PTX that does not parse, a kernel or variable that is not there each get CUDA's code.
TEST(CudartLibrary, PtxLoadsAtOnceAndItsKernelsRunByTheProgramsHandle) {
  const auto ptx = [](const char* target) {
    return fmt::format(R"(.version 8.6
.target {}
.address_size 64
.global .align 4 .u32 hits;
.const .align 4 .b8 table[24];
.visible .entry bump(.param .u64 out) {{
  .reg .b64 %rd<2>;
  .reg .b32 %r<2>;
  ld.param.u64 %rd1, [out];
  cvta.to.global.u64 %rd1, %rd1;
  atom.global.add.u32 %r1, [%rd1], 1;
  atom.global.add.u32 %r1, [hits], 1;
  ret;
}}
)",
                       target);
  };
  Device dev(loadPlatform("gtx480"), ExecMode::Functional);
  Runtime rt(dev, 75, "lib");
  const auto load = [&](const std::string& text) {
    return rt.loadLibrary(reinterpret_cast<const uint8_t*>(text.data()), text.size(), true);
  };
  const auto codeOf = [&](const std::function<void()>& call) {
    try {
      call();
    } catch (const CudaFailure& f) {
      return f.code();
    }
    return int(kSuccess);
  };
  EXPECT_EQ(codeOf([&] { load(ptx("sm_86")); }), kErrorNoKernelImageForDevice);
  EXPECT_EQ(codeOf([&] { load(ptx("sm_75") + "garbage\n"); }), kErrorInvalidPtx);
  EXPECT_EQ(rt.fatBinaries(), 0u);  // neither kept
  void** lib = load(ptx("sm_75"));
  EXPECT_EQ(rt.libraryKernels(lib), std::vector<std::string>{"bump"});
  char kernel = 0;
  EXPECT_EQ(codeOf([&] { rt.libraryKernel(lib, &kernel, "bumps"); }), kErrorSymbolNotFound);
  rt.libraryKernel(lib, &kernel, "bump");
  void* counter = rt.malloc(4);
  rt.memset(counter, 0, 4);
  void* args[] = {&counter};
  rt.launch(&kernel, {2}, {64}, args, 0, nullptr);
  uint32_t n = 0;
  rt.memcpy(&n, counter, 4, kDeviceToHost);
  EXPECT_EQ(n, 128u);
  const auto [hits, hitsBytes] = rt.libraryGlobal(lib, "hits");
  rt.memcpy(&n, reinterpret_cast<void*>(hits), 4, kDeviceToHost);
  EXPECT_EQ(n, 128u);
  EXPECT_EQ(hitsBytes, 4u);
  EXPECT_EQ(rt.libraryGlobal(lib, "table"), std::make_pair(DevPtr(0), uint64_t(24)));
  EXPECT_EQ(codeOf([&] { rt.libraryGlobal(lib, "bump"); }), kErrorSymbolNotFound);
  rt.unregisterFatBinary(lib);  // cudaLibraryUnload
  EXPECT_EQ(codeOf([&] { rt.kernel(&kernel); }), kErrorInvalidDeviceFunction);
}

TEST(CudaErrors, NamesAndMessagesAreTheRuntimes) {
  EXPECT_STREQ(errorName(kSuccess), "cudaSuccess");
  EXPECT_STREQ(errorString(kSuccess), "no error");
  EXPECT_STREQ(errorName(kErrorIllegalAddress), "cudaErrorIllegalAddress");
  EXPECT_STREQ(errorString(kErrorIllegalAddress), "an illegal memory access was encountered");
  EXPECT_STREQ(errorName(kErrorInvalidConfiguration), "cudaErrorInvalidConfiguration");
  EXPECT_STREQ(errorString(kErrorNotSupported), "operation not supported");
  EXPECT_STREQ(errorName(123456), "unrecognized error code");
  EXPECT_STREQ(errorString(-3), "unrecognized error code");
}

// Relocatable device code: each file's PTX, linked into one module. Variables come first, .extern
// functions become prototypes, .extern variables go, one .weak instantiation and one dynamic
// shared memory declaration of a name stay, and internal names two files both define (printf's
// $str, static functions) get the file's number.
TEST(PtxLink, FilesBecomeOneModule) {
  const std::string a = R"(.version 8.5
.target sm_75
.address_size 64
.extern .func  (.param .b32 func_retval0) _Z6scaleBi
(
	.param .b32 _Z6scaleBi_param_0
)
;
.extern .global .align 4 .u32 gCounter;
.extern .shared .align 16 .b8 smem[];
.global .align 1 .b8 $str[2] = {65, 0};
.weak .func  (.param .b32 func_retval0) _Z5twiceIiET_S0_(
	.param .b32 x
)
{
	ret;
}
.visible .entry kA()
{
	mov.u64 %rd1, $str;
}
)";
  const std::string b = R"(.version 9.0
.target sm_75
.address_size 64
.global .align 1 .b8 $str[2] = {66, 0};
.extern .shared .align 16 .b8 smem[];
.visible .global .align 4 .u32 gCounter;
.weak .func  (.param .b32 func_retval0) _Z5twiceIiET_S0_(
	.param .b32 x
)
{
	{ ret; }
}
.visible .func  (.param .b32 func_retval0) _Z6scaleBi(
	.param .b32 _Z6scaleBi_param_0
)
{
	mov.u64 %rd1, $str;
}
)";
  const std::string m = linkPtx({a, b}, "app");
  const auto count = [&](const std::string& what) {
    size_t n = 0;
    for (size_t at = m.find(what); at != std::string::npos; at = m.find(what, at + 1)) ++n;
    return n;
  };
  EXPECT_EQ(m.rfind(".version 9.0\n.target sm_75\n.address_size 64\n", 0), 0u) << m;
  EXPECT_EQ(count(".extern .shared .align 16 .b8 smem[];"), 1u) << m;  // one of the two
  EXPECT_EQ(count(".extern"), 1u) << m;
  EXPECT_EQ(count(".visible .func  (.param .b32 func_retval0) _Z6scaleBi"), 2u) << m;
  EXPECT_EQ(count("_Z5twiceIiET_S0_("), 1u) << m;
  EXPECT_EQ(count(".global .align 1 .b8 $str$file1[2] = {65, 0};"), 1u) << m;
  EXPECT_EQ(count(".global .align 1 .b8 $str$file2[2] = {66, 0};"), 1u) << m;
  EXPECT_EQ(count("mov.u64 %rd1, $str$file1;"), 1u) << m;
  EXPECT_EQ(count("mov.u64 %rd1, $str$file2;"), 1u) << m;
  // Every variable before the first function.
  EXPECT_LT(m.find(".visible .global .align 4 .u32 gCounter;"), m.find(".func")) << m;
  EXPECT_THROW(linkPtx({a, ".target sm_80\n"}, "app"), InputError);
}
