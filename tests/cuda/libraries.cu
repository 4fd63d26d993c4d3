// build: -arch=sm_75 -lnvrtc
// Code the program compiles and loads itself: CUDA C++ compiled at run time by NVRTC to PTX for
// the device's compute capability, loaded with cudaLibraryLoadData (and from a file with
// cudaLibraryLoadFromFile), its kernels found by name (a template's by NVRTC's lowered name) and
// launched by their cudaKernel_t, its __device__ variable reached by cudaLibraryGetGlobal. With
// an argument: a fat binary (nvcc -fatbin) to load from its file as well. Also the handles of the
// program's own kernels (cudaGetKernel, cudaGetFuncBySymbol), and the errors: a kernel that is
// not there, PTX that does not compile (its message in the JIT error log), a missing file, a
// library unloaded twice.
#include <cuda_runtime.h>
#include <nvrtc.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

static int failures = 0;

#define CHECK(cond)                                       \
  do {                                                    \
    if (!(cond)) {                                        \
      std::printf("FAIL line %d: %s\n", __LINE__, #cond); \
      ++failures;                                         \
    }                                                     \
  } while (0)
#define OK(call) CHECK((call) == cudaSuccess)

static const char* kSource = R"(
__device__ int launches;
__constant__ float weights[4];

extern "C" __global__ void saxpy(float a, const float* x, float* y, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
  if (i == 0) atomicAdd(&launches, 1);
}

template <typename T, int Step>
__global__ void ramp(T* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = T(i * Step);
  if (i == 0) atomicAdd(&launches, 1);
}
)";

// The program's own kernel, for cudaGetKernel and cudaGetFuncBySymbol.
__global__ void fill(int* out, int value, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = value;
}

static std::string compile(const char* source, int major, int minor, std::string* lowered) {
  nvrtcProgram prog;
  if (nvrtcCreateProgram(&prog, source, "jit.cu", 0, nullptr, nullptr) != NVRTC_SUCCESS) return "";
  const char* ramp = "ramp<long long, 3>";
  nvrtcAddNameExpression(prog, ramp);
  const std::string arch = "--gpu-architecture=compute_" + std::to_string(major * 10 + minor);
  const char* options[] = {arch.c_str(), "-std=c++17"};
  const nvrtcResult r = nvrtcCompileProgram(prog, 2, options);
  size_t logBytes = 0;
  nvrtcGetProgramLogSize(prog, &logBytes);
  if (r != NVRTC_SUCCESS) {
    std::string log(logBytes, '\0');
    nvrtcGetProgramLog(prog, &log[0]);
    std::printf("FAIL: NVRTC: %s\n%s\n", nvrtcGetErrorString(r), log.c_str());
    return "";
  }
  const char* name = nullptr;
  nvrtcGetLoweredName(prog, ramp, &name);
  *lowered = name;
  size_t bytes = 0;
  nvrtcGetPTXSize(prog, &bytes);
  std::string ptx(bytes, '\0');
  nvrtcGetPTX(prog, &ptx[0]);
  nvrtcDestroyProgram(&prog);
  return ptx;
}

// Runs saxpy of `lib` on n elements and checks y = 2x + y.
static void runSaxpy(cudaLibrary_t lib, int n) {
  cudaKernel_t saxpy;
  OK(cudaLibraryGetKernel(&saxpy, lib, "saxpy"));
  std::vector<float> x(n), y(n);
  for (int i = 0; i < n; ++i) {
    x[i] = float(i);
    y[i] = float(3 * i + 1);
  }
  float *dx, *dy;
  OK(cudaMalloc(&dx, n * sizeof(float)));
  OK(cudaMalloc(&dy, n * sizeof(float)));
  OK(cudaMemcpy(dx, x.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  OK(cudaMemcpy(dy, y.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  float a = 2.0f;
  void* args[] = {&a, &dx, &dy, &n};
  OK(cudaLaunchKernel(reinterpret_cast<const void*>(saxpy), dim3((n + 127) / 128), dim3(128), args,
                      0, 0));
  OK(cudaMemcpy(y.data(), dy, n * sizeof(float), cudaMemcpyDeviceToHost));
  int wrong = 0;
  for (int i = 0; i < n; ++i) wrong += y[i] != 2.0f * i + float(3 * i + 1);
  CHECK(wrong == 0);
  OK(cudaFree(dx));
  OK(cudaFree(dy));
}

int main(int argc, char** argv) {
  cudaDeviceProp prop;
  OK(cudaGetDeviceProperties(&prop, 0));
  std::string lowered;
  const std::string ptx = compile(kSource, prop.major, prop.minor, &lowered);
  if (ptx.empty()) return 1;

  // Loaded from memory: two kernels, saxpy and the instantiation NVRTC was asked for.
  cudaLibrary_t lib;
  OK(cudaLibraryLoadData(&lib, ptx.c_str(), nullptr, nullptr, 0, nullptr, nullptr, 0));
  unsigned count = 0;
  OK(cudaLibraryGetKernelCount(&count, lib));
  CHECK(count == 2);
  std::vector<cudaKernel_t> all(count);
  OK(cudaLibraryEnumerateKernels(all.data(), count, lib));
  bool sawRamp = false;
  for (cudaKernel_t k : all) {
    const char* name = nullptr;
    OK(cudaFuncGetName(&name, reinterpret_cast<const void*>(k)));
    sawRamp |= name != nullptr && lowered == name;
  }
  CHECK(sawRamp);

  int* launches = nullptr;
  size_t bytes = 0;
  OK(cudaLibraryGetGlobal(reinterpret_cast<void**>(&launches), &bytes, lib, "launches"));
  CHECK(bytes == sizeof(int));
  const int zero = 0;
  OK(cudaMemcpy(launches, &zero, sizeof zero, cudaMemcpyHostToDevice));
  size_t weightBytes = 0;
  OK(cudaLibraryGetGlobal(nullptr, &weightBytes, lib, "weights"));
  CHECK(weightBytes == 4 * sizeof(float));

  runSaxpy(lib, 1000);

  // The template, by its lowered name, launched with cudaLaunchKernelEx.
  cudaKernel_t ramp;
  OK(cudaLibraryGetKernel(&ramp, lib, lowered.c_str()));
  cudaFuncAttributes attr;
  OK(cudaFuncGetAttributes(&attr, reinterpret_cast<const void*>(ramp)));
  CHECK(attr.ptxVersion == prop.major * 10 + prop.minor);
  CHECK(attr.maxThreadsPerBlock > 0);
  int blocks = 0;
  OK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, reinterpret_cast<const void*>(ramp), 64,
                                                   0));
  CHECK(blocks > 0);
  OK(cudaKernelSetAttributeForDevice(ramp, cudaFuncAttributePreferredSharedMemoryCarveout, 50, 0));
  const int n = 777;
  long long* out;
  OK(cudaMalloc(&out, n * sizeof(long long)));
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3((n + 63) / 64);
  config.blockDim = dim3(64);
  int nn = n;
  void* args[] = {&out, &nn};
  OK(cudaLaunchKernelExC(&config, reinterpret_cast<const void*>(ramp), args));
  std::vector<long long> host(n);
  OK(cudaMemcpy(host.data(), out, n * sizeof(long long), cudaMemcpyDeviceToHost));
  int wrong = 0;
  for (int i = 0; i < n; ++i) wrong += host[i] != 3LL * i;
  CHECK(wrong == 0);
  OK(cudaFree(out));
  int counted = 0;
  OK(cudaMemcpy(&counted, launches, sizeof counted, cudaMemcpyDeviceToHost));
  CHECK(counted == 2);

  // Errors: no such kernel; PTX that does not compile, with its message in the JIT log.
  cudaKernel_t none;
  CHECK(cudaLibraryGetKernel(&none, lib, "saxpy_v2") == cudaErrorSymbolNotFound);
  CHECK(cudaGetLastError() == cudaErrorSymbolNotFound);
  CHECK(cudaLibraryGetGlobal(reinterpret_cast<void**>(&launches), &bytes, lib, "nothing") ==
        cudaErrorSymbolNotFound);
  const std::string broken = ptx.substr(0, ptx.find("saxpy")) + "saxpy(\n  this is not PTX\n";
  char log[512] = {};
  cudaJitOption options[] = {cudaJitErrorLogBuffer, cudaJitErrorLogBufferSizeBytes};
  void* values[] = {log, reinterpret_cast<void*>(uintptr_t(sizeof log))};
  cudaLibrary_t bad;
  CHECK(cudaLibraryLoadData(&bad, broken.c_str(), options, values, 2, nullptr, nullptr, 0) ==
        cudaErrorInvalidPtx);
  CHECK(std::strlen(log) > 0);
  cudaGetLastError();

  // From a file: the same PTX written out.
  char path[] = "/tmp/gpusc_libraries_XXXXXX";
  const int fd = mkstemp(path);
  CHECK(fd >= 0);
  if (fd >= 0) {
    FILE* f = fdopen(fd, "w");
    std::fputs(ptx.c_str(), f);
    std::fclose(f);
    cudaLibrary_t fromFile;
    OK(cudaLibraryLoadFromFile(&fromFile, path, nullptr, nullptr, 0, nullptr, nullptr, 0));
    runSaxpy(fromFile, 300);
    OK(cudaLibraryUnload(fromFile));
    std::remove(path);
  }
  cudaLibrary_t missing;
  CHECK(cudaLibraryLoadFromFile(&missing, "/nonexistent/kernels.ptx", nullptr, nullptr, 0, nullptr,
                                nullptr, 0) == cudaErrorFileNotFound);
  cudaGetLastError();

  // A fat binary built by nvcc -fatbin, from its file.
  if (argc > 1) {
    cudaLibrary_t fatbin;
    OK(cudaLibraryLoadFromFile(&fatbin, argv[1], nullptr, nullptr, 0, nullptr, nullptr, 0));
    runSaxpy(fatbin, 500);
    OK(cudaLibraryUnload(fatbin));
  }

  OK(cudaLibraryUnload(lib));
  CHECK(cudaLibraryUnload(lib) == cudaErrorInvalidResourceHandle);
  cudaGetLastError();

  // The program's own kernel by its handles.
  cudaKernel_t own;
  OK(cudaGetKernel(&own, fill));
  cudaFunction_t function;
  OK(cudaGetFuncBySymbol(&function, reinterpret_cast<const void*>(fill)));
  int* filled;
  OK(cudaMalloc(&filled, 64 * sizeof(int)));
  int value = 41, count64 = 64;
  void* fillArgs[] = {&filled, &value, &count64};
  OK(cudaLaunchKernel(reinterpret_cast<const void*>(own), dim3(1), dim3(64), fillArgs, 0, 0));
  int back[64];
  OK(cudaMemcpy(back, filled, sizeof back, cudaMemcpyDeviceToHost));
  wrong = 0;
  for (int v : back) wrong += v != 41;
  CHECK(wrong == 0);
  OK(cudaFree(filled));

  if (failures == 0) std::printf("PASS\n");
  return failures == 0 ? 0 : 1;
}
