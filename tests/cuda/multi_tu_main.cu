// Several translation units, each with its own fat binary, and templates: main.cu launches a
// kernel template for two types; kernels_a.cu and kernels_b.cu launch their own kernels (b's reads
// a __constant__ table). Checks every result on the host.
#include <cstdio>
#include <vector>

#include <cuda_runtime.h>

#include "check.hpp"

void saxpyInA(float a, const float* x, float* y, int n);  // kernels_a.cu
void lookupInB(const int* in, int* out, int n);           // kernels_b.cu

template <class T>
__global__ void scale(T* v, T factor, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) v[i] *= factor;
}

int main() {
  const int n = 300;
  std::vector<float> hf(n), hy(n, 1.0f);
  std::vector<int> hi(n);
  for (int i = 0; i < n; ++i) hf[i] = float(i), hi[i] = i % 8;
  float *f, *y;
  int *iv, *out;
  CHECK(cudaMalloc(&f, n * sizeof(float)));
  CHECK(cudaMalloc(&y, n * sizeof(float)));
  CHECK(cudaMalloc(&iv, n * sizeof(int)));
  CHECK(cudaMalloc(&out, n * sizeof(int)));
  CHECK(cudaMemcpy(f, hf.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(y, hy.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(iv, hi.data(), n * sizeof(int), cudaMemcpyHostToDevice));
  scale<float><<<(n + 127) / 128, 128>>>(f, 0.5f, n);
  scale<int><<<(n + 127) / 128, 128>>>(iv, 3, n);
  CHECK(cudaGetLastError());
  saxpyInA(2.0f, f, y, n);
  lookupInB(iv, out, n);
  std::vector<float> gy(n);
  std::vector<int> gout(n);
  CHECK(cudaMemcpy(gy.data(), y, n * sizeof(float), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(gout.data(), out, n * sizeof(int), cudaMemcpyDeviceToHost));
  int bad = 0;
  for (int i = 0; i < n; ++i) {
    if (gy[i] != 2.0f * (0.5f * float(i)) + 1.0f) ++bad;
    if (gout[i] != 100 + 3 * (i % 8)) ++bad;
  }
  return verdict(bad == 0, "multi_tu: 4 launches from 3 translation units");
}
