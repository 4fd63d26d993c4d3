// Device printf: its lines reach the program's stdout when the kernel ends, before what the host
// prints after it.
#include <cstdio>

#include <cuda_runtime.h>

#include "check.hpp"

__global__ void hello(int base) {
  if (threadIdx.x % 32 == 0)
    printf("block %d warp %d says %d\n", blockIdx.x, threadIdx.x / 32, base + threadIdx.x);
}

// Widths and precisions: of strings, and given as arguments ('*'). A null string prints as
// "(null)", as the host's printf prints it. The length modifiers h and hh print an int argument
// as a short and a char.
__global__ void formats(const char* none, int big, int minusOne) {
  printf("[%6s|%-4s|%.2s|%*d|%-*d|%.*f]\n", "pad", "l", "truncate", 5, 42, 4, 7, 2, 3.14159);
  printf("[%s|%8s]\n", none, none);
  printf("[%hd|%hhd|%hhu|%hx|%hu]\n", big, 300, minusOne, big, minusOne);
}

int main() {
  std::printf("before the kernel\n");
  hello<<<2, 64>>>(1000);
  CHECK(cudaDeviceSynchronize());
  formats<<<1, 1>>>(nullptr, 70000, -1);
  CHECK(cudaDeviceSynchronize());
  std::printf("after the kernel\n");
  return verdict(true, "device printf");
}
