// clang-format off
// build: -gencode arch=compute_75,code=[sm_75,compute_75] -gencode arch=compute_86,code=[sm_86,compute_86]
// clang-format on
// Threads of one warp that wait for each other, which compute capability 7.0 and later allow
// (independent thread scheduling; docs/ptx-support.md): a spin lock every thread of a block
// takes (the lane that gets it leaves the loop its warp's other lanes spin in), and lanes that
// wait for a flag the lane beside them sets on the other side of a branch; the same lock taken in
// functions that are not inlined; and a lane that waits
// for another warp while the rest of its warp waits for it at a __syncwarp, or at a
// __syncthreads inside a function that is not inlined (as nvcc -G builds every cooperative
// groups sync).
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

// The same lock taken and released in functions that are not inlined (as nvcc -G builds every
// function): the lane that gets it runs ahead out of lock() to unlock() while the others spin.
__device__ __noinline__ void lock(int* l) {
  while (atomicCAS(l, 0, 1) != 0) {
  }
  __threadfence();
}
__device__ __noinline__ void unlock(int* l) {
  __threadfence();
  atomicExch(l, 0);
}
__global__ void locked_sum_in_calls(int* lock_word, int* sum, const int* values) {
  const int v = values[blockIdx.x * blockDim.x + threadIdx.x];
  lock(lock_word);
  *(volatile int*)sum += v;
  unlock(lock_word);
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

// Lane 0 of warp 0 waits for warp 1's flag, then publishes it; the rest of warp 0 reads it after
// a __syncwarp, which waits for lane 0.
__global__ void waits_at_syncwarp(volatile int* flag, int* out) {
  __shared__ volatile int v;
  if (threadIdx.x >= 32) {
    if (threadIdx.x == 32) {
      int x = 0;
      for (int i = 0; i < 3000; ++i) x += i & 1;
      *flag = x == 1500 ? 42 : 1;
    }
    return;
  }
  if (threadIdx.x == 0) {
    v = 0;
    while (*flag == 0) {
    }
    v = *flag;
  }
  __syncwarp();
  out[threadIdx.x] = v;
}

__device__ __noinline__ void block_sync() { __syncthreads(); }

// The same with a block barrier in a call: the lanes of warp 0 that ran ahead of the waiting lane
// wait for it there (a barrier counts whole warps).
__global__ void waits_at_barrier_in_call(volatile int* flag, int* out) {
  __shared__ int v;
  if (threadIdx.x == 32) {
    int x = 0;
    for (int i = 0; i < 3000; ++i) x += i & 1;
    *flag = x == 1500 ? 42 : 1;
  } else if (threadIdx.x == 0) {
    while (*flag == 0) {
    }
    v = *flag;
  }
  block_sync();
  out[threadIdx.x] = v;
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
  int got = 0, flags[256], gotInCalls = 0;
  CHECK(cudaMemcpy(&got, sum, sizeof(int), cudaMemcpyDeviceToHost));
  CHECK(cudaMemset(sum, 0, sizeof(int)));
  locked_sum_in_calls<<<blocks, threads>>>(lock, sum, values);
  CHECK(cudaMemcpy(&gotInCalls, sum, sizeof(int), cudaMemcpyDeviceToHost));
  std::printf("locked sum in calls %d\n", gotInCalls);
  CHECK(cudaMemcpy(flags, out, sizeof flags, cudaMemcpyDeviceToHost));
  int wrong = 0;
  for (int t = 0; t < 256; ++t) wrong += flags[t] != (t & 1 ? 3 * (t - 1) + 1 + 1000 : 3 * t + 1);
  std::printf("locked sum %d (expected %d), %d flags wrong\n", got, expected, wrong);
  // Both read 42 in every thread that reads.
  int* flag;
  CHECK(cudaMalloc(&flag, sizeof(int)));
  int waited = 0;
  for (int variant = 0; variant < 2; ++variant) {
    CHECK(cudaMemset(flag, 0, sizeof(int)));
    CHECK(cudaMemset(out, 0, 64 * sizeof(int)));
    if (variant == 0)
      waits_at_syncwarp<<<1, 64>>>(flag, out);
    else
      waits_at_barrier_in_call<<<1, 64>>>(flag, out);
    CHECK(cudaMemcpy(flags, out, 64 * sizeof(int), cudaMemcpyDeviceToHost));
    int right = 0;
    for (int t = 0; t < (variant == 0 ? 32 : 64); ++t) right += flags[t] == 42;
    std::printf("%s: %d of %d threads read 42\n",
                variant == 0 ? "__syncwarp" : "__syncthreads in a call", right,
                variant == 0 ? 32 : 64);
    waited += right == (variant == 0 ? 32 : 64);
  }
  return verdict(got == expected && gotInCalls == expected && wrong == 0 && waited == 2,
                 "a lock and flags between lanes of a warp, lanes waiting for a lane");
}
