// A kernel fault: a store to an address no allocation covers. As on a GPU, the launch returns
// success, the next synchronising call returns cudaErrorIllegalAddress, and so does every call
// after it (the context is lost): the error is sticky.
#include <cstdio>

#include <cuda_runtime.h>

#include "check.hpp"

__global__ void wild(int* p) { p[threadIdx.x + (1 << 26)] = 1; }

int main() {
  int* p;
  CHECK(cudaMalloc(&p, 64 * sizeof(int)));
  wild<<<1, 32>>>(p);
  EXPECT_ERROR(cudaDeviceSynchronize(), cudaErrorIllegalAddress);
  EXPECT_ERROR(cudaGetLastError(), cudaErrorIllegalAddress);
  EXPECT_ERROR(cudaPeekAtLastError(), cudaErrorIllegalAddress);
  int* q;
  EXPECT_ERROR(cudaMalloc(&q, 16), cudaErrorIllegalAddress);
  std::printf("%s: %s\n", cudaGetErrorName(cudaErrorIllegalAddress),
              cudaGetErrorString(cudaErrorIllegalAddress));
  return verdict(true, "a kernel fault is cudaErrorIllegalAddress, sticky");
}
