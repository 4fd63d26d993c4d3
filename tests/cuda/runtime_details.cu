// Details ordinary programs depend on, built with the per-thread default stream:
// - stream 0 of a --default-stream per-thread program is the thread's own stream, which may be
//   captured into a graph;
// - the 2D copy and set functions' per-thread forms;
// - pointer attributes of pinned, mapped, managed, registered and device memory, and
//   registering host memory twice;
// - __launch_bounds__ limits a kernel's block (its attributes and its launches), and
//   cudaFuncSetAttribute refuses more dynamic shared memory than a block can have, and what it
//   sets is read back and limits the launches;
// - the reserved shared memory attribute, the heap and stack limits, events without timing;
// - streams' flags and priorities, peer copies on the one device, a kernel's name, and the
//   dynamic shared memory that leaves room for N blocks;
// - device, event, host allocation and managed memory flags, limits and function attributes
//   checked as CUDA documents them; a __constant__ variable's size;
// - the FP64 ratio and synchronization domain attributes, destroyed events, and prefetches and
//   advice outside managed memory;
// - 2D and 3D sets and copies past their allocation refused before they write, zero-byte
//   allocations, flags that must be 0 and cache configurations;
// - cuda_fp16 math (set.f16, set.f16x2), 16-bit compare-and-swap (atom.cas.b16), and unsigned
//   128-bit division (the carry flag of sub.cc read by addc);
// - the device's PCI address, peer attributes, the widest 1D linear texture, driver entry
//   points (none).
// build: --default-stream per-thread -arch=sm_75
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include <cuda_fp16.h>

#include "check.hpp"

__global__ void increment(int* v) { v[threadIdx.x] += 1; }

__constant__ float coefficients[100];

__global__ void __launch_bounds__(64) bounded(int* v) { v[threadIdx.x] = threadIdx.x; }

// Whether device malloc gives `bytes` (and frees them).
__global__ void heapBlock(size_t bytes, int* ok) {
  void* p = malloc(bytes);
  *ok = p != nullptr;
  free(p);
}

__global__ void halfMath(const __half* x, float* out, const __half2* x2, float* out2, int* nan) {
  const int i = threadIdx.x;
  out[i] = __half2float(hexp(x[i]));
  const __half2 e = h2exp(x2[i]);
  out2[2 * i] = __low2float(e);
  out2[2 * i + 1] = __high2float(e);
  nan[i] = __hisnan(x[i]) ? 1 : 0;
}

__global__ void casCount(unsigned short* counter) {
  unsigned short old = *counter, seen;
  do {
    seen = old;
    old = atomicCAS(counter, seen, static_cast<unsigned short>(seen + 1));
  } while (old != seen);
}

__global__ void divide(const unsigned __int128* a, const unsigned __int128* b,
                       unsigned __int128* q) {
  q[threadIdx.x] = a[threadIdx.x] / b[threadIdx.x];
}

int main() {
  bool pass = true;
  auto expect = [&](bool ok, const char* what) {
    if (!ok) std::printf("FAIL: %s\n", what);
    pass &= ok;
  };

  // Stream 0 is this thread's stream: captured, the launch waits for the graph.
  int* d = nullptr;
  CHECK(cudaMalloc(&d, 64 * sizeof(int)));
  CHECK(cudaMemset(d, 0, 64 * sizeof(int)));
  cudaGraph_t graph;
  CHECK(cudaStreamBeginCapture(0, cudaStreamCaptureModeGlobal));
  increment<<<1, 64>>>(d);
  CHECK(cudaStreamEndCapture(0, &graph));
  size_t nodes = 0;
  CHECK(cudaGraphGetNodes(graph, nullptr, &nodes));
  std::vector<int> h(64);
  CHECK(cudaMemcpy(h.data(), d, 64 * sizeof(int), cudaMemcpyDeviceToHost));
  expect(nodes == 1 && h[5] == 0, "a launch on a captured stream 0 is recorded, not run");
  cudaGraphExec_t exec;
  CHECK(cudaGraphInstantiate(&exec, graph, 0));
  CHECK(cudaGraphLaunch(exec, 0));
  CHECK(cudaStreamSynchronize(0));
  CHECK(cudaMemcpy(h.data(), d, 64 * sizeof(int), cudaMemcpyDeviceToHost));
  expect(h[5] == 1, "the graph runs the captured launch");

  // The 2D forms of the per-thread default stream.
  int* pitched = nullptr;
  size_t pitch = 0;
  CHECK(cudaMallocPitch(reinterpret_cast<void**>(&pitched), &pitch, 16 * sizeof(int), 4));
  CHECK(cudaMemset2D(pitched, pitch, 0x01, 16 * sizeof(int), 4));
  CHECK(cudaMemset2DAsync(pitched, pitch, 0x02, 8 * sizeof(int), 4, 0));
  std::vector<int> rows(16 * 4);
  CHECK(cudaMemcpy2D(rows.data(), 16 * sizeof(int), pitched, pitch, 16 * sizeof(int), 4,
                     cudaMemcpyDeviceToHost));
  expect(rows[0] == 0x02020202 && rows[15] == 0x01010101 && rows[63] == 0x01010101,
         "cudaMemset2D, cudaMemset2DAsync and cudaMemcpy2D");

  // Pointer attributes.
  void *pinned = nullptr, *managed = nullptr;
  CHECK(cudaMallocHost(&pinned, 256));
  CHECK(cudaMallocManaged(&managed, 256));
  std::vector<char> plain(4096);
  CHECK(cudaHostRegister(plain.data(), plain.size(), cudaHostRegisterDefault));
  expect(cudaHostRegister(plain.data() + 64, 64, cudaHostRegisterDefault) ==
             cudaErrorHostMemoryAlreadyRegistered,
         "registering a registered range fails");
  cudaPointerAttributes a;
  CHECK(cudaPointerGetAttributes(&a, pinned));
  expect(a.type == cudaMemoryTypeHost && a.devicePointer == pinned, "pinned memory is host memory");
  CHECK(cudaPointerGetAttributes(&a, managed));
  expect(a.type == cudaMemoryTypeManaged, "managed memory is managed");
  CHECK(cudaPointerGetAttributes(&a, d));
  expect(a.type == cudaMemoryTypeDevice, "device memory is device memory");
  CHECK(cudaPointerGetAttributes(&a, plain.data() + 100));
  expect(a.type == cudaMemoryTypeHost, "registered memory is host memory");
  CHECK(cudaHostUnregister(plain.data()));
  CHECK(cudaPointerGetAttributes(&a, plain.data() + 100));
  expect(a.type == cudaMemoryTypeUnregistered, "unregistered again");
  expect(cudaHostUnregister(plain.data()) == cudaErrorHostMemoryNotRegistered,
         "unregistering twice fails");
  unsigned hostFlags = 99;
  CHECK(cudaHostGetFlags(&hostFlags, pinned));
  expect(hostFlags == cudaHostAllocDefault, "cudaMallocHost's memory has the default flags");
  void* mappedHost = nullptr;
  CHECK(cudaHostAlloc(&mappedHost, 64, cudaHostAllocMapped | cudaHostAllocPortable));
  CHECK(cudaHostGetFlags(&hostFlags, static_cast<char*>(mappedHost) + 8));
  expect(hostFlags == (cudaHostAllocMapped | cudaHostAllocPortable), "cudaHostAlloc's flags");
  CHECK(cudaFreeHost(mappedHost));
  expect(cudaHostGetFlags(&hostFlags, managed) == cudaErrorInvalidValue &&
             cudaHostGetFlags(&hostFlags, d) == cudaErrorInvalidValue,
         "cudaHostGetFlags of memory that is not pinned host memory");
  // Each kind of memory has its own free: the wrong one is refused and frees nothing.
  expect(cudaFree(pinned) == cudaErrorInvalidValue, "cudaFree of pinned host memory");
  expect(cudaFreeHost(managed) == cudaErrorInvalidValue, "cudaFreeHost of managed memory");
  expect(cudaFreeHost(d) == cudaErrorInvalidValue, "cudaFreeHost of device memory");
  CHECK(cudaPointerGetAttributes(&a, pinned));
  expect(a.type == cudaMemoryTypeHost, "pinned memory a refused cudaFree left allocated");
  cudaGetLastError();

  // __launch_bounds__(64).
  cudaFuncAttributes fa;
  CHECK(cudaFuncGetAttributes(&fa, bounded));
  expect(fa.maxThreadsPerBlock == 64, "a kernel's attributes keep its launch bounds");
  bounded<<<1, 128>>>(d);
  expect(cudaGetLastError() == cudaErrorLaunchOutOfResources,
         "a block larger than the launch bounds is refused");
  bounded<<<1, 64>>>(d);
  CHECK(cudaGetLastError());
  // More dynamic shared memory than a block can have is refused when asked for.
  expect(cudaFuncSetAttribute(bounded, cudaFuncAttributeMaxDynamicSharedMemorySize, 1 << 24) ==
             cudaErrorInvalidValue,
         "16 MB of dynamic shared memory is refused");
  cudaGetLastError();
  CHECK(cudaFuncSetAttribute(bounded, cudaFuncAttributeMaxDynamicSharedMemorySize, 4096));
  // What was set is what the kernel's attributes say and what its launches may ask for.
  CHECK(cudaFuncSetAttribute(bounded, cudaFuncAttributePreferredSharedMemoryCarveout, 50));
  CHECK(cudaFuncGetAttributes(&fa, bounded));
  expect(fa.maxDynamicSharedSizeBytes == 4096 && fa.preferredShmemCarveout == 50,
         "cudaFuncSetAttribute's values read back");
  bounded<<<1, 64, 8192>>>(d);
  expect(cudaGetLastError() == cudaErrorInvalidValue,
         "a launch asking for more dynamic shared memory than allowed is refused");
  bounded<<<1, 64, 4096>>>(d);
  CHECK(cudaGetLastError());
  increment<<<1, 64, 64 * 1024>>>(d);
  expect(cudaGetLastError() == cudaErrorInvalidValue,
         "64 KB of dynamic shared memory needs the opt-in");
  int reserved = -1;
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  CHECK(cudaDeviceGetAttribute(&reserved, cudaDevAttrReservedSharedMemoryPerBlock, 0));
  expect(size_t(reserved) == prop.reservedSharedMemPerBlock,
         "the reserved shared memory attribute is the property's");

  // Limits: the heap's size until a kernel has used it.
  size_t limit = 0;
  CHECK(cudaDeviceSetLimit(cudaLimitMallocHeapSize, 32u << 20));
  CHECK(cudaDeviceGetLimit(&limit, cudaLimitMallocHeapSize));
  expect(limit == 32u << 20, "the heap's size reads back");
  CHECK(cudaDeviceSetLimit(cudaLimitStackSize, 4096));
  CHECK(cudaDeviceGetLimit(&limit, cudaLimitStackSize));
  expect(limit == 4096, "the stack size reads back");
  int* got = nullptr;
  CHECK(cudaMalloc(&got, sizeof(int)));
  // A malloc the heap cannot give fixes its size as one that succeeds does.
  heapBlock<<<1, 1>>>(48u << 20, got);
  int ok = 1;
  CHECK(cudaMemcpy(&ok, got, sizeof ok, cudaMemcpyDeviceToHost));
  expect(ok == 0, "malloc of 48 MB from a 32 MB heap fails");
  expect(cudaDeviceSetLimit(cudaLimitMallocHeapSize, 64u << 20) == cudaErrorInvalidValue,
         "the heap's size is fixed once a kernel used it, even by a failed malloc");
  cudaGetLastError();
  heapBlock<<<1, 1>>>(16u << 20, got);
  CHECK(cudaMemcpy(&ok, got, sizeof ok, cudaMemcpyDeviceToHost));
  expect(ok == 1, "malloc of 16 MB from the 32 MB heap");

  // An event without timing has no elapsed time.
  cudaEvent_t timed, untimed;
  CHECK(cudaEventCreate(&timed));
  CHECK(cudaEventCreateWithFlags(&untimed, cudaEventDisableTiming));
  CHECK(cudaEventRecord(timed, 0));
  CHECK(cudaEventRecord(untimed, 0));
  CHECK(cudaEventSynchronize(untimed));
  float ms = 0;
  expect(cudaEventElapsedTime(&ms, timed, untimed) == cudaErrorInvalidResourceHandle,
         "an event created with cudaEventDisableTiming has no elapsed time");
  cudaGetLastError();

  // cuda_fp16 math: hexp, h2exp and __hisnan.
  const int n = 32;
  std::vector<__half> x(n);
  std::vector<__half2> x2(n);
  for (int i = 0; i < n; ++i) {
    x[i] = __float2half(-4.0f + 0.25f * i);
    x2[i] = __floats2half2_rn(-2.0f + 0.125f * i, 1.0f - 0.0625f * i);
  }
  x[7] = __float2half(NAN);
  __half* dx;
  __half2* dx2;
  float *dout, *dout2;
  int* dnan;
  CHECK(cudaMalloc(&dx, n * sizeof(__half)));
  CHECK(cudaMalloc(&dx2, n * sizeof(__half2)));
  CHECK(cudaMalloc(&dout, n * sizeof(float)));
  CHECK(cudaMalloc(&dout2, 2 * n * sizeof(float)));
  CHECK(cudaMalloc(&dnan, n * sizeof(int)));
  CHECK(cudaMemcpy(dx, x.data(), n * sizeof(__half), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dx2, x2.data(), n * sizeof(__half2), cudaMemcpyHostToDevice));
  halfMath<<<1, n>>>(dx, dout, dx2, dout2, dnan);
  CHECK(cudaGetLastError());
  std::vector<float> out(n), out2(2 * n);
  std::vector<int> nan(n);
  CHECK(cudaMemcpy(out.data(), dout, n * sizeof(float), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(out2.data(), dout2, 2 * n * sizeof(float), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(nan.data(), dnan, n * sizeof(int), cudaMemcpyDeviceToHost));
  bool halves = true;
  for (int i = 0; i < n; ++i) {
    // Half precision keeps 11 significant bits: within 2^-9 of the exact value, relatively.
    const auto near = [](float got, float x) {
      return std::fabs(got - std::exp(x)) <= std::exp(x) / 512.0f;
    };
    if (i == 7)
      halves &= std::isnan(out[i]) && nan[i] == 1;
    else
      halves &= near(out[i], __half2float(x[i])) && nan[i] == 0;
    halves &= near(out2[2 * i], __low2float(x2[i])) && near(out2[2 * i + 1], __high2float(x2[i]));
  }
  expect(halves, "hexp, h2exp and __hisnan");

  // atomicCAS on 16 bits: 96 threads count once each.
  unsigned short* counter;
  CHECK(cudaMalloc(&counter, sizeof(unsigned short)));
  CHECK(cudaMemset(counter, 0, sizeof(unsigned short)));
  casCount<<<3, 32>>>(counter);
  CHECK(cudaGetLastError());
  unsigned short count = 0;
  CHECK(cudaMemcpy(&count, counter, sizeof count, cudaMemcpyDeviceToHost));
  expect(count == 96, "atomicCAS on unsigned short");

  // Unsigned 128-bit division.
  const int m = 8;
  std::vector<unsigned __int128> num(m), den(m), quo(m);
  for (int i = 0; i < m; ++i) {
    num[i] = (static_cast<unsigned __int128>(0x0123456789abcdefull * (i + 1)) << 64) |
             (0xfedcba9876543210ull ^ (uint64_t(i) << 40));
    den[i] = i % 2 ? static_cast<unsigned __int128>(7 + i)
                   : (static_cast<unsigned __int128>(i + 1) << 64) | 0x10001ull;
  }
  unsigned __int128 *dn, *dd, *dq;
  CHECK(cudaMalloc(&dn, m * sizeof(unsigned __int128)));
  CHECK(cudaMalloc(&dd, m * sizeof(unsigned __int128)));
  CHECK(cudaMalloc(&dq, m * sizeof(unsigned __int128)));
  CHECK(cudaMemcpy(dn, num.data(), m * sizeof(unsigned __int128), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dd, den.data(), m * sizeof(unsigned __int128), cudaMemcpyHostToDevice));
  divide<<<1, m>>>(dn, dd, dq);
  CHECK(cudaGetLastError());
  CHECK(cudaMemcpy(quo.data(), dq, m * sizeof(unsigned __int128), cudaMemcpyDeviceToHost));
  bool quotients = true;
  for (int i = 0; i < m; ++i) quotients &= quo[i] == num[i] / den[i];
  expect(quotients, "unsigned 128-bit division");

  // Streams' flags and priorities (priorities are not modelled: the range is 0 to 0, and a
  // stream's priority is clamped to it).
  int least = 1, greatest = 1;
  CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
  cudaStream_t nonBlocking, prioritised;
  CHECK(cudaStreamCreateWithFlags(&nonBlocking, cudaStreamNonBlocking));
  CHECK(cudaStreamCreateWithPriority(&prioritised, cudaStreamDefault, greatest - 3));
  unsigned flags = 7, defaultFlags = 7;
  int priority = 7;
  CHECK(cudaStreamGetFlags(nonBlocking, &flags));
  CHECK(cudaStreamGetFlags(0, &defaultFlags));
  CHECK(cudaStreamGetPriority(prioritised, &priority));
  expect(least == 0 && greatest == 0 && flags == cudaStreamNonBlocking &&
             defaultFlags == cudaStreamDefault && priority == greatest,
         "stream flags and priorities read back");
  cudaStream_t bad;
  expect(cudaStreamCreateWithFlags(&bad, 4) == cudaErrorInvalidValue, "unknown stream flags");
  cudaGetLastError();
  CHECK(cudaStreamDestroy(prioritised));
  expect(cudaStreamGetPriority(prioritised, &priority) == cudaErrorInvalidResourceHandle,
         "a destroyed stream's priority");
  cudaGetLastError();

  // A peer copy on the one device is a device-to-device copy; there is no device 1.
  int *from, *to;
  std::vector<int> values(64), copied(64);
  for (int i = 0; i < 64; ++i) values[i] = 3 * i + 1;
  CHECK(cudaMalloc(&from, 64 * sizeof(int)));
  CHECK(cudaMalloc(&to, 64 * sizeof(int)));
  CHECK(cudaMemcpy(from, values.data(), 64 * sizeof(int), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpyPeer(to, 0, from, 0, 32 * sizeof(int)));
  CHECK(cudaMemcpyPeerAsync(to + 32, 0, from + 32, 0, 32 * sizeof(int), nonBlocking));
  CHECK(cudaStreamSynchronize(nonBlocking));
  CHECK(cudaMemcpy(copied.data(), to, 64 * sizeof(int), cudaMemcpyDeviceToHost));
  expect(copied == values, "cudaMemcpyPeer and cudaMemcpyPeerAsync on device 0");
  expect(cudaMemcpyPeer(to, 1, from, 0, 4) == cudaErrorInvalidDevice, "a peer copy to device 1");
  cudaGetLastError();
  CHECK(cudaStreamDestroy(nonBlocking));

  // Flags and values each call documents as valid, and others refused with cudaErrorInvalidValue
  // (cudaErrorUnsupportedLimit for a limit, cudaErrorNotSupported for a cluster's shape).
  unsigned deviceFlags = 0;
  CHECK(cudaSetDeviceFlags(cudaDeviceScheduleBlockingSync));
  CHECK(cudaGetDeviceFlags(&deviceFlags));
  expect(deviceFlags == (cudaDeviceScheduleBlockingSync | cudaDeviceMapHost),
         "cudaGetDeviceFlags reads back the flags set");
  cudaEvent_t ipc, badEvent;
  CHECK(cudaEventCreateWithFlags(&ipc, cudaEventInterprocess | cudaEventDisableTiming));
  void* badHost = nullptr;
  int* badManaged = nullptr;
  size_t limitValue = 0;
  const std::pair<cudaError_t, const char*> refusals[] = {
      {cudaSetDeviceFlags(0xffff), "cudaSetDeviceFlags(0xffff)"},
      {cudaEventCreateWithFlags(&badEvent, cudaEventInterprocess), "an interprocess timed event"},
      {cudaEventCreateWithFlags(&badEvent, 0x80), "cudaEventCreateWithFlags(0x80)"},
      {cudaEventRecordWithFlags(ipc, 0, 0x10), "cudaEventRecordWithFlags(0x10)"},
      {cudaStreamWaitEvent(0, ipc, 5), "cudaStreamWaitEvent(flags 5)"},
      {cudaHostAlloc(&badHost, 64, 0x100), "cudaHostAlloc(0x100)"},
      {cudaMallocManaged(&badManaged, 64, 7), "cudaMallocManaged(7)"},
      {cudaFuncSetAttribute(reinterpret_cast<const void*>(increment),
                            static_cast<cudaFuncAttribute>(999), 1),
       "cudaFuncSetAttribute(999)"}};
  for (const auto& [code, what] : refusals) {
    expect(code == cudaErrorInvalidValue, what);
    cudaGetLastError();
  }
  expect(cudaDeviceGetLimit(&limitValue, static_cast<cudaLimit>(77)) == cudaErrorUnsupportedLimit,
         "cudaDeviceGetLimit(77)");
  cudaGetLastError();
  expect(cudaFuncSetAttribute(reinterpret_cast<const void*>(increment),
                              cudaFuncAttributeRequiredClusterWidth, 2) == cudaErrorNotSupported,
         "a cluster width of 2");
  cudaGetLastError();
  CHECK(cudaFuncSetAttribute(reinterpret_cast<const void*>(increment),
                             cudaFuncAttributeRequiredClusterWidth, 0));
  CHECK(cudaEventDestroy(ipc));
  CHECK(cudaSetDeviceFlags(cudaDeviceScheduleAuto));

  // A __constant__ variable's size; its address is refused (constant memory is a bank of its
  // own here), and the symbol copies reach it.
  size_t constantBytes = 0;
  CHECK(cudaGetSymbolSize(&constantBytes, coefficients));
  void* constantAddress = nullptr;
  expect(constantBytes == 400 &&
             cudaGetSymbolAddress(&constantAddress, coefficients) == cudaErrorInvalidSymbol,
         "a __constant__ variable's size and address");
  cudaGetLastError();
  std::vector<float> coefficientsIn(100), coefficientsOut(100);
  for (int i = 0; i < 100; ++i) coefficientsIn[i] = 0.5f * i;
  CHECK(cudaMemcpyToSymbol(coefficients, coefficientsIn.data(), 400));
  CHECK(cudaMemcpyFromSymbol(coefficientsOut.data(), coefficients, 400));
  expect(coefficientsOut == coefficientsIn, "a __constant__ variable's copies");

  // A kernel's name, as nvcc mangles it.
  const char* name = nullptr;
  CHECK(cudaFuncGetName(&name, reinterpret_cast<const void*>(increment)));
  expect(name != nullptr && std::strcmp(name, "_Z9incrementPi") == 0, "cudaFuncGetName");

  // The dynamic shared memory that leaves room for N blocks of 64 threads on an SM: the
  // occupancy calculator gives N blocks with it and fewer with one byte more (unless it is all
  // a launch may ask for, 48 KB); one block may have all of that, and more blocks than an SM
  // holds are invalid input, as in CUDA's occupancy calculator.
  const void* inc = reinterpret_cast<const void*>(increment);
  bool available = true;
  for (int blocks : {2, 3, 5}) {
    size_t bytes = 0;
    int with = 0, beyond = 0;
    CHECK(cudaOccupancyAvailableDynamicSMemPerBlock(&bytes, inc, blocks, 64));
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&with, inc, 64, bytes));
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&beyond, inc, 64, bytes + 1));
    available &= bytes > 0 && with >= blocks && (beyond < blocks || bytes == 48 * 1024);
  }
  size_t one = 0, tooMany = 1;
  CHECK(cudaOccupancyAvailableDynamicSMemPerBlock(&one, inc, 1, 64));
  expect(available && one == 48 * 1024 &&
             cudaOccupancyAvailableDynamicSMemPerBlock(
                 &tooMany, inc, prop.maxBlocksPerMultiProcessor + 1, 64) == cudaErrorInvalidValue,
         "cudaOccupancyAvailableDynamicSMemPerBlock");
  cudaGetLastError();

  // FP32 against FP64 speed is a whole ratio above 1, and there is one memory synchronization
  // domain. A destroyed event cannot be queried or waited for. Prefetching and advice need
  // managed memory and stay inside its allocation.
  int ratio = 0, domains = 0;
  CHECK(cudaDeviceGetAttribute(&ratio, cudaDevAttrSingleToDoublePrecisionPerfRatio, 0));
  CHECK(cudaDeviceGetAttribute(&domains, cudaDevAttrMemSyncDomainCount, 0));
  expect(ratio > 1 && domains == 1, "the FP64 ratio and synchronization domains");
  cudaEvent_t gone = nullptr;
  CHECK(cudaEventCreate(&gone));
  CHECK(cudaEventRecord(gone));
  CHECK(cudaEventQuery(gone));
  CHECK(cudaEventSynchronize(gone));
  CHECK(cudaEventDestroy(gone));
  expect(cudaEventQuery(gone) == cudaErrorInvalidResourceHandle &&
             cudaEventSynchronize(gone) == cudaErrorInvalidResourceHandle,
         "a destroyed event");
  cudaGetLastError();
  cudaMemLocation here{};
  here.type = cudaMemLocationTypeDevice;
  here.id = 0;
  CHECK(cudaMemPrefetchAsync(managed, 256, here, 0, 0));
  CHECK(cudaMemAdvise(managed, 128, cudaMemAdviseSetReadMostly, here));
  int* deviceOnly = nullptr;
  CHECK(cudaMalloc(&deviceOnly, 256));
  expect(
      cudaMemPrefetchAsync(managed, 257, here, 0, 0) == cudaErrorInvalidValue &&
          cudaMemPrefetchAsync(static_cast<char*>(managed) + 128, 129, here, 0, 0) ==
              cudaErrorInvalidValue &&
          cudaMemPrefetchAsync(deviceOnly, 256, here, 0, 0) == cudaErrorInvalidValue &&
          cudaMemAdvise(deviceOnly, 4, cudaMemAdviseSetReadMostly, here) == cudaErrorInvalidValue,
      "prefetching and advice outside managed memory");
  cudaGetLastError();
  CHECK(cudaFree(deviceOnly));

  // A 2D or 3D set or copy whose region runs past its allocation is refused before it writes a
  // row; a set's or a copy's rows may not be wider than its pitch. Zero bytes allocate nothing
  // (managed memory refuses them), and flags and cache configurations outside CUDA's values are
  // refused.
  size_t rowPitch = 0;
  unsigned char* rows4 = nullptr;
  CHECK(cudaMallocPitch(reinterpret_cast<void**>(&rows4), &rowPitch, 16, 4));
  CHECK(cudaMemset2D(rows4, rowPitch, 7, 16, 4));
  std::vector<unsigned char> fromHost(rowPitch * 5, 1), back(rowPitch * 4, 0);
  cudaExtent fiveRows = make_cudaExtent(16, 5, 1);
  const bool refused = cudaMemset2D(rows4, rowPitch, 0, 16, 5) == cudaErrorInvalidValue &&
                       cudaMemcpy2D(rows4, rowPitch, fromHost.data(), rowPitch, 16, 5,
                                    cudaMemcpyHostToDevice) == cudaErrorInvalidValue &&
                       cudaMemset3D(make_cudaPitchedPtr(rows4, rowPitch, 16, 5), 0, fiveRows) ==
                           cudaErrorInvalidValue &&
                       cudaMemset2D(rows4, 4, 0, 13, 2) == cudaErrorInvalidValue;
  // A copy's rows wider than a side's pitch: CUDA's code for it is an invalid pitch.
  const bool pitchRefused = cudaMemcpy2D(rows4, 8, fromHost.data(), rowPitch, 16, 2,
                                         cudaMemcpyHostToDevice) == cudaErrorInvalidPitchValue &&
                            cudaMemcpy2D(back.data(), rowPitch, rows4, 8, 16, 2,
                                         cudaMemcpyDeviceToHost) == cudaErrorInvalidPitchValue;
  cudaGetLastError();
  CHECK(cudaMemcpy2D(back.data(), rowPitch, rows4, rowPitch, 16, 4, cudaMemcpyDeviceToHost));
  bool untouched = true;
  for (size_t r = 0; r < 4; ++r)
    for (size_t c = 0; c < 16; ++c) untouched &= back[r * rowPitch + c] == 7;
  expect(refused && untouched, "2D and 3D regions past their allocation change nothing");
  expect(pitchRefused, "a 2D copy's rows wider than its pitch are an invalid pitch");
  CHECK(cudaFree(rows4));
  void* none = reinterpret_cast<void*>(1);
  CHECK(cudaMalloc(&none, 0));
  void* noManaged = nullptr;
  int cacheConfig = -1;
  CHECK(cudaDeviceSetCacheConfig(cudaFuncCachePreferShared));
  CHECK(cudaDeviceGetCacheConfig(reinterpret_cast<cudaFuncCache*>(&cacheConfig)));
  expect(none == nullptr && cudaMallocManaged(&noManaged, 0) == cudaErrorInvalidValue &&
             cudaHostGetDevicePointer(&noManaged, pinned, 1) == cudaErrorInvalidValue &&
             cudaStreamAddCallback(0, nullptr, nullptr, 1) == cudaErrorInvalidValue &&
             cudaDeviceSetCacheConfig(static_cast<cudaFuncCache>(7)) == cudaErrorInvalidValue &&
             cacheConfig == cudaFuncCachePreferShared,
         "zero-byte allocations, flags that must be 0, cache configurations");
  cudaGetLastError();
  CHECK(cudaDeviceSetCacheConfig(cudaFuncCachePreferNone));

  // The device's PCI address and back; no peer; the widest 1D texture over linear memory.
  char bus[32] = {};
  int byBus = -1, p2p = 0, linearAttr = 0;
  CHECK(cudaDeviceGetPCIBusId(bus, sizeof bus, 0));
  CHECK(cudaDeviceGetByPCIBusId(&byBus, bus));
  CHECK(cudaDeviceGetAttribute(&linearAttr, cudaDevAttrMaxTexture1DLinearWidth, 0));
  size_t linearWidth = 0;
  cudaChannelFormatDesc f4 = cudaCreateChannelDesc<float4>();
  CHECK(cudaDeviceGetTexture1DLinearMaxWidth(&linearWidth, &f4, 0));
  expect(std::strcmp(bus, "0000:00:00.0") == 0 && byBus == 0 &&
             cudaDeviceGetByPCIBusId(&byBus, "0000:01:00.0") == cudaErrorInvalidDevice &&
             cudaDeviceGetByPCIBusId(&byBus, "bus zero") == cudaErrorInvalidValue &&
             cudaDeviceGetP2PAttribute(&p2p, cudaDevP2PAttrAccessSupported, 0, 1) ==
                 cudaErrorInvalidDevice &&
             linearWidth == size_t(linearAttr),
         "the PCI address, no peer, the widest 1D linear texture");
  void* entry = &linearWidth;
  cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSuccess;
  CHECK(cudaGetDriverEntryPointByVersion("cuGetProcAddress", &entry, 12000, cudaEnableDefault,
                                         &found));
  expect(entry == nullptr && found == cudaDriverEntryPointSymbolNotFound &&
             cudaGetDriverEntryPointByVersion("cuMemAlloc", &entry, 99000, cudaEnableDefault,
                                              &found) == cudaErrorInvalidValue,
         "driver entry points: not found");
  cudaGetLastError();

  return verdict(pass,
                 "per-thread default stream, pointer attributes, launch bounds, fp16, "
                 "16-bit CAS, 128-bit division, stream flags, peer copies, kernel names, "
                 "available shared memory, flags and attributes, constant symbols, events, "
                 "prefetches, 2D/3D regions, zero-byte allocations");
}
