// clang-format off
// build: -gencode arch=compute_75,code=[sm_75,compute_75] -gencode arch=compute_86,code=[sm_86,compute_86]
// clang-format on
// Threads of one warp that wait for each other, which compute capability 7.0 and later allow
// (independent thread scheduling; docs/ptx-support.md): a spin lock every thread of a block
// takes (the lane that gets it leaves the loop its warp's other lanes spin in), and lanes that
// wait for a flag the lane beside them sets on the other side of a branch.
#include <cstdio>

#include "check.hpp"

__global__ void locked_sum(int* lock, int* sum, const int* values) {
  const int v = values[blockIdx.x * blockDim.x + threadIdx.x];
  while (atomicCAS(lock, 0, 1) != 0) {
  }
  *(volatile int*)sum += v;
  __threadfence();
  atomicExch(lock, 0);
}

__global__ void neighbour_flags(int* out) {
  __shared__ volatile int flags[256];
  const int t = threadIdx.x;
  flags[t] = 0;
  __syncthreads();
  if (t & 1) {
    while (flags[t - 1] == 0) {
    }
    out[t] = flags[t - 1] + 1000;
  } else {
    flags[t] = 3 * t + 1;
    out[t] = 3 * t + 1;
  }
}

int main() {
  const int blocks = 4, threads = 128, n = blocks * threads;
  int host[n], expected = 0;
  for (int i = 0; i < n; ++i) expected += host[i] = (i * 7919) % 1000;
  int *lock, *sum, *values, *out;
  CHECK(cudaMalloc(&lock, sizeof(int)));
  CHECK(cudaMalloc(&sum, sizeof(int)));
  CHECK(cudaMalloc(&values, sizeof host));
  CHECK(cudaMalloc(&out, 256 * sizeof(int)));
  CHECK(cudaMemset(lock, 0, sizeof(int)));
  CHECK(cudaMemset(sum, 0, sizeof(int)));
  CHECK(cudaMemcpy(values, host, sizeof host, cudaMemcpyHostToDevice));
  locked_sum<<<blocks, threads>>>(lock, sum, values);
  neighbour_flags<<<1, 256>>>(out);
  int got = 0, flags[256];
  CHECK(cudaMemcpy(&got, sum, sizeof(int), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(flags, out, sizeof flags, cudaMemcpyDeviceToHost));
  int wrong = 0;
  for (int t = 0; t < 256; ++t) wrong += flags[t] != (t & 1 ? 3 * (t - 1) + 1 + 1000 : 3 * t + 1);
  std::printf("locked sum %d (expected %d), %d flags wrong\n", got, expected, wrong);
  return verdict(got == expected && wrong == 0, "a lock and flags between lanes of a warp");
}
