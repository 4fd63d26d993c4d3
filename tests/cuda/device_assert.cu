// Device assert and warpSize in a program: a kernel whose asserts hold runs, one whose assert
// fails prints CUDA's "Assertion ... failed." line and its launch ends in cudaErrorAssert, sticky,
// as on a GPU.
#include <cassert>
#include <cstdio>

#include <cuda_runtime.h>

#include "check.hpp"

__global__ void checkBelow(const int* v, int n, int limit) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) assert(v[i] < limit);
}

__global__ void lanes(int* out) { out[threadIdx.x] = warpSize * 1000 + threadIdx.x % warpSize; }

int main() {
  int host[256];
  for (int i = 0; i < 256; ++i) host[i] = i;
  int *v, *out;
  CHECK(cudaMalloc(&v, sizeof host));
  CHECK(cudaMalloc(&out, sizeof host));
  CHECK(cudaMemcpy(v, host, sizeof host, cudaMemcpyHostToDevice));
  lanes<<<1, 64>>>(out);
  CHECK(cudaMemcpy(host, out, 64 * sizeof(int), cudaMemcpyDeviceToHost));
  int bad = 0;
  for (int i = 0; i < 64; ++i) bad += host[i] != 32000 + i % 32;
  checkBelow<<<2, 128>>>(v, 256, 256);
  CHECK(cudaDeviceSynchronize());
  checkBelow<<<2, 128>>>(v, 256, 100);
  EXPECT_ERROR(cudaDeviceSynchronize(), cudaErrorAssert);
  EXPECT_ERROR(cudaMemcpy(host, v, sizeof host, cudaMemcpyDeviceToHost), cudaErrorAssert);
  return verdict(bad == 0, "warpSize, and a failing device assert is cudaErrorAssert");
}
