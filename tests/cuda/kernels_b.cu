// A translation unit of its own (multi_tu_main.cu) with a __constant__ table it fills itself.
#include <cuda_runtime.h>

#include "check.hpp"

__constant__ int table[32];

__global__ void lookup(const int* in, int* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = table[in[i]];
}

void lookupInB(const int* in, int* out, int n) {
  int host[32];
  for (int i = 0; i < 32; ++i) host[i] = 100 + i;
  CHECK(cudaMemcpyToSymbol(table, host, sizeof host));
  lookup<<<(n + 255) / 256, 256>>>(in, out, n);
  CHECK(cudaGetLastError());
}
