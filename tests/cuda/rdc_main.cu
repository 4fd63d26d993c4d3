// Relocatable device code (nvcc -rdc=true): a kernel here calls a function, reads a variable
// and a __constant__ array defined in rdc_device.cu, a template both files instantiate and
// dynamic shared memory both files declare, templates that call each other;
// the other file's kernel runs too. gpusc links the files' PTX into one module. A template
// kernel's __shared__ array stays at module scope under -rdc (nvcc does not move it into the
// kernel): each instantiation has its own, and a kernel that names none has no shared memory.
// build: -rdc=true -arch=sm_75
#include <cstdio>
#include <vector>

#include "check.hpp"
#include "rdc_shared.hpp"

__global__ void fromMainFile(int* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  staged[threadIdx.x] = i < n ? scaled(i) + twice(gBias) + cTable[3] : 0;
  __syncthreads();
  if (i < n) out[i] = staged[threadIdx.x];
  if (i == 0) printf("main file %d\n", gBias);  // both files have a string constant $str
}

template <int K>
__global__ void reversed(int* out) {
  __shared__ int tile[8000];  // 32,000 bytes: two of them would not fit in a block's 48 KiB
  tile[threadIdx.x] = K * threadIdx.x;
  __syncthreads();
  out[threadIdx.x] = tile[31 - threadIdx.x];
}

__global__ void sevens(int* out) { out[threadIdx.x] = 7; }

__global__ void steps(int* out) { out[threadIdx.x] = evenSteps<int>(threadIdx.x); }

int main() {
  const int n = 300;
  int* d = nullptr;
  CHECK(cudaMalloc(&d, n * sizeof(int)));
  std::vector<int> h(n);
  bool pass = true;
  fromMainFile<<<(n + 127) / 128, 128, 128 * sizeof(int)>>>(d, n);
  CHECK(cudaGetLastError());
  CHECK(cudaMemcpy(h.data(), d, n * sizeof(int), cudaMemcpyDeviceToHost));
  for (int i = 0; i < n; ++i) pass &= h[i] == 5 * i + 7 + 14 + 1000;
  launchFromDeviceFile(d, n);
  CHECK(cudaGetLastError());
  CHECK(cudaMemcpy(h.data(), d, n * sizeof(int), cudaMemcpyDeviceToHost));
  const int table[4] = {1, 10, 100, 1000};
  for (int i = 0; i < n; ++i) pass &= h[i] == 5 * i + 7 + table[i % 4];
  // The host sees the other file's variable by symbol too.
  int bias = 0;
  CHECK(cudaMemcpyFromSymbol(&bias, gBias, sizeof bias));
  pass &= bias == 7;
  // Each kernel has the shared memory it names.
  cudaFuncAttributes a;
  CHECK(cudaFuncGetAttributes(&a, sevens));
  pass &= a.sharedSizeBytes == 0;
  CHECK(cudaFuncGetAttributes(&a, reversed<1>));
  pass &= a.sharedSizeBytes == 32000;
  reversed<1><<<1, 32>>>(d);
  CHECK(cudaGetLastError());
  reversed<2><<<1, 32>>>(d + 32);
  CHECK(cudaGetLastError());
  sevens<<<1, 32>>>(d + 64);
  CHECK(cudaGetLastError());
  CHECK(cudaMemcpy(h.data(), d, 96 * sizeof(int), cudaMemcpyDeviceToHost));
  for (int i = 0; i < 32; ++i)
    pass &= h[i] == 31 - i && h[32 + i] == 2 * (31 - i) && h[64 + i] == 7;
  // Templates that call each other, instantiated in both files: x steps down to 0.
  steps<<<1, 32>>>(d);
  CHECK(cudaGetLastError());
  launchStepsFromDeviceFile(d + 32);
  CHECK(cudaGetLastError());
  CHECK(cudaMemcpy(h.data(), d, 64 * sizeof(int), cudaMemcpyDeviceToHost));
  for (int i = 0; i < 32; ++i) pass &= h[i] == i && h[32 + i] == i;
  CHECK(cudaFree(d));
  return verdict(pass, "relocatable device code across two files");
}
