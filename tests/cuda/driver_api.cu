// A program that calls the CUDA driver API (libcuda) itself, which gpusc does not serve: gpusc
// exec warns before it starts. Where no GPU driver is installed, the program does not start at
// all (its loader finds no libcuda.so.1); where one is, cuInit is the driver's.
#include <cstdio>

#include <cuda.h>

int main() {
  const CUresult r = cuInit(0);
  std::printf("cuInit: %d\n", int(r));
  return 0;
}
