// build: -rdc=true -arch=sm_75 -lcudadevrt
// A kernel that launches a kernel (dynamic parallelism), which gpusc does not run: the program's
// module is refused with a message that says so (docs/cuda-programs.md, "What does not run"),
// and its launch fails instead of running without its children.
#include <cstdio>

#include "check.hpp"

__global__ void child(int* out, int base) { out[base + threadIdx.x] = base + threadIdx.x; }

__global__ void parent(int* out) {
  if (threadIdx.x == 0) child<<<1, 32>>>(out, blockIdx.x * 32);
}

int main() {
  int* out = nullptr;
  CHECK(cudaMalloc(&out, 128 * sizeof(int)));
  parent<<<4, 32>>>(out);
  const cudaError_t launch = cudaGetLastError();
  std::printf("launch: %s\n", cudaGetErrorName(launch));
  return verdict(launch != cudaSuccess, "a kernel that launches kernels is refused");
}
