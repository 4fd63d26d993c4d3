// A translation unit of its own (multi_tu_main.cu): a kernel and the host function launching it.
#include <cuda_runtime.h>

#include "check.hpp"

__global__ void saxpy(float a, const float* x, float* y, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

void saxpyInA(float a, const float* x, float* y, int n) {
  saxpy<<<(n + 63) / 64, 64>>>(a, x, y, n);
  CHECK(cudaGetLastError());
}
