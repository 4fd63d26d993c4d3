// Device printf: its lines reach the program's stdout when the kernel ends, before what the host
// prints after it.
#include <cstdio>

#include <cuda_runtime.h>

#include "check.hpp"

__global__ void hello(int base) {
  if (threadIdx.x % 32 == 0)
    printf("block %d warp %d says %d\n", blockIdx.x, threadIdx.x / 32, base + threadIdx.x);
}

int main() {
  std::printf("before the kernel\n");
  hello<<<2, 64>>>(1000);
  CHECK(cudaDeviceSynchronize());
  std::printf("after the kernel\n");
  return verdict(true, "device printf");
}
