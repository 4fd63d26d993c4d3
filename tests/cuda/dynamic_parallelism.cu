// build: -rdc=true -arch=sm_75 -lcudadevrt
// Kernels that launch kernels (dynamic parallelism): children see their parent's writes, two
// launches into one stream run in order (a launch completes with its own children), a tail
// launch runs after the parent's other children, the device runtime's errors (a refused
// configuration, the nesting depth) reach the launching thread through cudaGetLastError, and
// streams created in device code take launches.
#include <cstdio>
#include <vector>

#include "check.hpp"

__global__ void fill(int* out, int base, int scale) {
  out[base + threadIdx.x] = scale * (base + int(threadIdx.x));
}

// Each block's first thread launches a child for the block's part, with a value the block wrote.
__global__ void parent(int* out, int* scales) {
  __shared__ int scale;
  if (threadIdx.x == 0) {
    scales[blockIdx.x] = int(blockIdx.x) + 2;
    scale = scales[blockIdx.x];
    fill<<<1, 32>>>(out, int(blockIdx.x) * 32, scale);
  }
}

__global__ void writeValue(int* p, int v) { *p = v; }

// A template kernel launched from device code (its PTX declares it, .weak, before defining it).
template <int K>
__global__ void writeTimes(int* p, int v) {
  *p = K * v;
}
__global__ void addOne(int* dst, const int* src) { *dst = *src + 1; }
__global__ void writeThroughChild(int* p, int v) { writeValue<<<1, 1>>>(p, v); }

// Two launches into the block's stream: the second reads what the first's own child wrote.
__global__ void ordered(int* a, int* b) {
  if (threadIdx.x == 0) {
    writeThroughChild<<<1, 1>>>(a, 41);
    addOne<<<1, 1>>>(b, a);
    writeTimes<3><<<1, 1>>>(b + 1, 5);
  }
}

// A tail launch runs after the parent and its other children, even one launched later.
__global__ void tail(int* a, int* b) {
  if (threadIdx.x == 0) {
    addOne<<<1, 1, 0, cudaStreamTailLaunch>>>(b, a);
    writeValue<<<1, 1, 0, cudaStreamFireAndForget>>>(a, 5);
  }
}

// A block of 2,048 threads is refused: the error comes from cudaGetLastError, which clears it.
__global__ void refused(int* errors) {
  if (threadIdx.x == 0) {
    writeValue<<<1, 2048>>>(errors, 1);
    errors[0] = int(cudaGetLastError());
    errors[1] = int(cudaGetLastError());
    cudaStream_t s;
    errors[2] = int(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    writeValue<<<1, 1, 0, s>>>(errors + 3, 7);
    errors[4] = int(cudaStreamDestroy(s));
  }
}

// Every thread launches one child: more than the pending-launch limit allows.
__global__ void many(int* out, int* errors) {
  writeValue<<<1, 1>>>(out + blockIdx.x * blockDim.x + threadIdx.x, 1);
  if (cudaGetLastError() == cudaErrorLaunchPendingCountExceeded) atomicAdd(errors, 1);
}

// Each level launches the next until the nesting depth runs out.
__global__ void nest(int* levels, int* error, int level) {
  levels[level] = level;
  if (level < 30) {
    nest<<<1, 1>>>(levels, error, level + 1);
    const cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) *error = int(e) * 100 + level;
  }
}

int main() {
  Expectations expect;
  int* d = nullptr;
  CHECK(cudaMalloc(&d, 1024 * sizeof(int)));
  CHECK(cudaMemset(d, 0xff, 1024 * sizeof(int)));
  std::vector<int> h(1024);

  parent<<<4, 64>>>(d, d + 512);
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  CHECK(cudaMemcpy(h.data(), d, 1024 * sizeof(int), cudaMemcpyDeviceToHost));
  bool children = true;
  for (int i = 0; i < 128; ++i) children = children && h[i] == (i / 32 + 2) * i;
  expect(children, "children see their parent's writes");

  ordered<<<1, 32>>>(d, d + 1);
  CHECK(cudaMemcpy(h.data(), d, 3 * sizeof(int), cudaMemcpyDeviceToHost));
  expect(h[0] == 41 && h[1] == 42 && h[2] == 15,
         "launches into one stream run in order, each with its children");

  tail<<<1, 32>>>(d, d + 1);
  CHECK(cudaMemcpy(h.data(), d, 2 * sizeof(int), cudaMemcpyDeviceToHost));
  expect(h[0] == 5 && h[1] == 6, "a tail launch runs after the other children");

  CHECK(cudaMemset(d, 0, 8 * sizeof(int)));
  refused<<<1, 32>>>(d);
  CHECK(cudaMemcpy(h.data(), d, 5 * sizeof(int), cudaMemcpyDeviceToHost));
  std::printf("errors: %d %d %d %d %d\n", h[0], h[1], h[2], h[3], h[4]);
  expect(h[0] == int(cudaErrorInvalidConfiguration) && h[1] == 0,
         "a refused configuration is the launching thread's last error, once");
  expect(h[2] == 0 && h[3] == 7 && h[4] == 0, "a stream created in device code takes a launch");

  CHECK(cudaMemset(d, 0xff, 64 * sizeof(int)));
  CHECK(cudaMemset(d + 63, 0, sizeof(int)));
  nest<<<1, 1>>>(d, d + 63, 0);
  CHECK(cudaMemcpy(h.data(), d, 64 * sizeof(int), cudaMemcpyDeviceToHost));
  bool levels = true;
  for (int i = 0; i <= 24; ++i) levels = levels && h[i] == i;
  std::printf("nesting: level 25 %d, error %d\n", h[25], h[63]);
  expect(levels && h[25] == -1 && h[63] == int(cudaErrorLaunchMaxDepthExceeded) * 100 + 24,
         "launches nest 24 deep");

  size_t pending = 0;
  CHECK(cudaDeviceGetLimit(&pending, cudaLimitDevRuntimePendingLaunchCount));
  CHECK(cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, 100));
  CHECK(cudaMemset(d, 0, 1024 * sizeof(int)));
  many<<<4, 32>>>(d, d + 512);
  CHECK(cudaMemcpy(h.data(), d, 1024 * sizeof(int), cudaMemcpyDeviceToHost));
  int launched = 0;
  for (int i = 0; i < 128; ++i) launched += h[i];
  std::printf("pending limit %zu, then 100: %d of 128 launched, %d refused\n", pending, launched,
              h[512]);
  expect(pending == 2048 && launched == 100 && h[512] == 28,
         "launches beyond the pending limit are refused");

  CHECK(cudaFree(d));
  return verdict(expect.ok, "kernels launch kernels");
}
