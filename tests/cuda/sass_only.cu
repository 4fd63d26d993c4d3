// Built with SASS only (-gencode arch=compute_75,code=sm_75): no PTX for gpusc to run, so its
// launch fails with cudaErrorNoKernelImageForDevice, as on a GPU the SASS was not built for (and
// gpusc's message names the nvcc flags that embed PTX).
#include <cuda_runtime.h>

#include "check.hpp"

__global__ void touch(int* v) { v[threadIdx.x] = 1; }

int main() {
  int* v;
  CHECK(cudaMalloc(&v, 32 * sizeof(int)));
  touch<<<1, 32>>>(v);
  EXPECT_ERROR(cudaGetLastError(), cudaErrorNoKernelImageForDevice);
  return verdict(true, "a binary without PTX");
}
