// The second file of rdc_main.cu's program (built with nvcc -rdc=true): device code the first
// file calls and reads across files.
#include <cstdio>

#include "rdc_shared.hpp"

__device__ int gBias = 7;  // read from the other file
__constant__ int cTable[4] = {1, 10, 100, 1000};

__device__ int scaled(int x) { return 3 * x + twice(x) + gBias; }  // 5x + 7

__global__ void stepsFromDeviceFile(int* out) { out[threadIdx.x] = oddSteps<int>(threadIdx.x); }

void launchStepsFromDeviceFile(int* out) { stepsFromDeviceFile<<<1, 32>>>(out); }

__global__ void fromDeviceFile(int* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  staged[threadIdx.x] = i < n ? scaled(i) + cTable[i % 4] : 0;
  __syncthreads();
  if (i < n) out[i] = staged[threadIdx.x];
  if (i == 0) printf("device file %d\n", cTable[1]);
}

void launchFromDeviceFile(int* out, int n) {
  fromDeviceFile<<<(n + 127) / 128, 128, 128 * sizeof(int)>>>(out, n);
}
