// Memory the host and the device share: cudaMallocManaged and mapped cudaHostAlloc memory read
// and written by kernels and by the host through the same pointers, cudaMemset and cudaMemcpy on
// them, and cudaPointerGetAttributes telling the kinds apart.
#include <cstdio>

#include <cuda_runtime.h>

#include "check.hpp"

__global__ void square(float* v, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) v[i] = v[i] * v[i];
}

__global__ void count(const float* v, int n, unsigned* total) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n && v[i] > 100.0f) atomicAdd(total, 1u);
}

int main() {
  const int n = 5000;
  float* m;
  CHECK(cudaMallocManaged(&m, n * sizeof(float)));
  for (int i = 0; i < n; ++i) m[i] = float(i % 100);
  square<<<(n + 255) / 256, 256>>>(m, n);
  CHECK(cudaDeviceSynchronize());
  unsigned* total;
  CHECK(cudaHostAlloc(&total, sizeof(unsigned), cudaHostAllocMapped));
  unsigned* totalOnDevice;
  CHECK(cudaHostGetDevicePointer(&totalOnDevice, total, 0));
  CHECK(cudaMemset(total, 0, sizeof(unsigned)));
  count<<<(n + 255) / 256, 256>>>(m, n, totalOnDevice);
  CHECK(cudaDeviceSynchronize());
  int bad = 0;
  for (int i = 0; i < n; ++i) bad += m[i] != float((i % 100) * (i % 100));
  // Values 11..99 of each hundred square to more than 100.
  const unsigned want = (n / 100) * 89;
  float* d;
  CHECK(cudaMalloc(&d, n * sizeof(float)));
  CHECK(cudaMemcpy(d, m, n * sizeof(float), cudaMemcpyDefault));
  CHECK(cudaMemset(m, 0, n * sizeof(float)));
  CHECK(cudaMemcpy(m, d, 16 * sizeof(float), cudaMemcpyDeviceToHost));
  bad += m[15] != 225.0f || m[16] != 0.0f;
  cudaPointerAttributes a{}, b{}, c{};
  int local = 0;
  CHECK(cudaPointerGetAttributes(&a, m));
  CHECK(cudaPointerGetAttributes(&b, d));
  CHECK(cudaPointerGetAttributes(&c, &local));
  bad += a.type != cudaMemoryTypeManaged || b.type != cudaMemoryTypeDevice ||
         c.type != cudaMemoryTypeUnregistered;
  std::printf("%u of %d values above 100 (expected %u)\n", *total, n, want);
  const bool pass = bad == 0 && *total == want;
  CHECK(cudaFree(m));
  CHECK(cudaFree(d));
  CHECK(cudaFreeHost(total));
  return verdict(pass, "managed and mapped host memory");
}
