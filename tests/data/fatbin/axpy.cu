// A small program whose fat binaries test the fat binary reader (tests/test_fatbin.cpp):
// regen.sh compiles it with nvcc in each compression mode and keeps the .nv_fatbin sections.
#include <cstdio>

__constant__ float scale;

__global__ void axpy(float a, const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * scale * x[i] + y[i];
}

int main() {
  const int n = 1000;
  float *x, *y;
  cudaMalloc(&x, n * sizeof(float));
  cudaMalloc(&y, n * sizeof(float));
  const float s = 2;
  cudaMemcpyToSymbol(scale, &s, sizeof s);
  axpy<<<(n + 255) / 256, 256>>>(1.5f, x, y, n);
  std::printf("%s\n", cudaGetErrorString(cudaDeviceSynchronize()));
  return 0;
}
