// __managed__ variables: nvcc's host code reaches each through a pointer the runtime sets at
// registration, and the module's .global lives in that managed memory, so the host and the
// kernels read and write the same bytes. The initial values are there before the host first
// reads them (the module loads at __cudaInitModule), the host's writes reach the kernel, and the
// kernel's writes (plain stores and atomics) reach the host after the synchronisation.
#include <cstdio>

#include <cuda_runtime.h>

#include "check.hpp"

__managed__ int counter = 5;
__managed__ float data[256];
__managed__ unsigned long long table[4] = {1, 2, 3, 4};

__global__ void update(int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    data[i] = data[i] * 2.0f + 1.0f;
    atomicAdd(&counter, 1);
  }
  if (i < 4) table[i] *= 10;
}

int main() {
  const bool initial = counter == 5 && table[0] == 1 && table[3] == 4;
  counter += 1;
  for (int i = 0; i < 256; ++i) data[i] = float(i);
  update<<<2, 128>>>(256);
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  bool ok = counter == 6 + 256 && table[0] == 10 && table[3] == 40;
  for (int i = 0; i < 256; ++i) ok = ok && data[i] == 2.0f * float(i) + 1.0f;
  std::printf("counter %d, table %llu %llu, data[255] %g\n", counter, table[0], table[3],
              double(data[255]));
  return verdict(initial && ok, "__managed__ variables shared by the host and the kernel");
}
