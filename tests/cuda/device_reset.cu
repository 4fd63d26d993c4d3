// cudaDeviceReset as programs use it: to give back all device memory between the parts of a run
// (allocating most of the device's memory, then again after a reset); the limits and the default
// memory pool's counters are back to their defaults, and streams are gone. A kernel fault's
// sticky error stays.
#include <cstdint>

#include "check.hpp"

__device__ int launches;

__global__ void count(int* out) {
  if (threadIdx.x == 0) out[0] = ++launches;
}
__global__ void wild(int* p) { p[threadIdx.x + (1 << 26)] = 1; }

int main() {
  bool ok = true;
  size_t freeBytes = 0, total = 0;
  CHECK(cudaMemGetInfo(&freeBytes, &total));
  // Most of the device, three times: only a reset in between gives it back.
  for (int round = 0; round < 3; ++round) {
    void* big = nullptr;
    CHECK(cudaMalloc(&big, total / 10 * 6));
    CHECK(cudaMemset(big, 1, 1 << 20));
    size_t now = 0;
    CHECK(cudaMemGetInfo(&now, &total));
    ok &= now < freeBytes;
    CHECK(cudaDeviceReset());
    CHECK(cudaMemGetInfo(&now, &total));
    ok &= now == freeBytes;
  }

  // Limits and the default pool's counters as the program started.
  CHECK(cudaDeviceSetLimit(cudaLimitPrintfFifoSize, 4 << 20));
  CHECK(cudaDeviceSetLimit(cudaLimitStackSize, 8192));
  cudaStream_t s;
  CHECK(cudaStreamCreate(&s));
  void* a = nullptr;
  CHECK(cudaMallocAsync(&a, 1 << 20, s));
  CHECK(cudaStreamSynchronize(s));
  cudaMemPool_t pool;
  CHECK(cudaDeviceGetDefaultMemPool(&pool, 0));
  uint64_t used = 0;
  CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &used));
  ok &= used == (1u << 20);
  CHECK(cudaDeviceReset());
  size_t fifo = 0, stack = 0;
  CHECK(cudaDeviceGetLimit(&fifo, cudaLimitPrintfFifoSize));
  CHECK(cudaDeviceGetLimit(&stack, cudaLimitStackSize));
  ok &= fifo == (1u << 20) && stack == 1024;
  CHECK(cudaDeviceGetDefaultMemPool(&pool, 0));
  CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &used));
  ok &= used == 0;
  EXPECT_ERROR(cudaStreamSynchronize(s), cudaErrorInvalidResourceHandle);  // destroyed

  // A kernel fault: its sticky error stays (CUDA's documentation: only a new process clears it),
  // and the reset returns it, as every call does.
  int* out;
  CHECK(cudaMalloc(&out, 64 * sizeof(int)));
  count<<<1, 32>>>(out);
  CHECK(cudaDeviceSynchronize());
  int n = 0;
  CHECK(cudaMemcpy(&n, out, sizeof n, cudaMemcpyDeviceToHost));
  ok &= n == 1;
  wild<<<1, 32>>>(out);
  EXPECT_ERROR(cudaDeviceSynchronize(), cudaErrorIllegalAddress);
  EXPECT_ERROR(cudaDeviceReset(), cudaErrorIllegalAddress);
  EXPECT_ERROR(cudaMalloc(&out, 16), cudaErrorIllegalAddress);
  return verdict(ok, "cudaDeviceReset gives back memory, streams and limits");
}
