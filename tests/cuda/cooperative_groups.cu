// Cooperative launches, as CUDA programs write them: a grid-wide sum with cooperative groups'
// grid.sync() (each block sums a slice, the grid syncs, block 0 adds the partial sums, the grid
// syncs, every thread adds the total to its elements), launched with
// cudaLaunchCooperativeKernel on the largest grid the device holds at once (the occupancy
// calculator's blocks per SM times the SMs) and with cudaLaunchKernelEx's cooperative attribute
// on a smaller one. A grid larger than the device holds is cudaErrorCooperativeLaunchTooLarge,
// which is not sticky.
#include <cstdio>
#include <vector>

#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include "check.hpp"

namespace cg = cooperative_groups;

constexpr int kThreads = 128;

__global__ void addTotal(const int* in, int* out, int* partial, int n) {
  cg::grid_group grid = cg::this_grid();
  __shared__ int sums[kThreads];
  int s = 0;
  for (unsigned long long i = grid.thread_rank(); i < (unsigned long long)n; i += grid.size())
    s += in[i];
  sums[threadIdx.x] = s;
  __syncthreads();
  for (int w = kThreads / 2; w > 0; w /= 2) {
    if (threadIdx.x < w) sums[threadIdx.x] += sums[threadIdx.x + w];
    __syncthreads();
  }
  if (threadIdx.x == 0) partial[blockIdx.x] = sums[0];
  grid.sync();
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    int total = 0;
    for (unsigned b = 0; b < gridDim.x; ++b) total += partial[b];
    partial[gridDim.x] = total;
  }
  grid.sync();
  const int total = partial[gridDim.x];
  for (unsigned long long i = grid.thread_rank(); i < (unsigned long long)n; i += grid.size())
    out[i] = in[i] + total;
}

int main() {
  const int n = 40000;
  std::vector<int> host(n);
  int want = 0;
  for (int i = 0; i < n; ++i) want += host[i] = i % 97 - 40;
  int supported = 0, sms = 0, perSm = 0;
  CHECK(cudaDeviceGetAttribute(&supported, cudaDevAttrCooperativeLaunch, 0));
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&perSm, addTotal, kThreads, 0));
  const int full = perSm * sms;
  int *in, *out, *partial;
  CHECK(cudaMalloc(&in, n * sizeof(int)));
  CHECK(cudaMalloc(&out, n * sizeof(int)));
  CHECK(cudaMalloc(&partial, (full + 2) * sizeof(int)));
  CHECK(cudaMemcpy(in, host.data(), n * sizeof(int), cudaMemcpyHostToDevice));
  int count = n;
  void* args[] = {&in, &out, &partial, &count};
  int bad = 0;
  std::vector<int> got(n);
  const auto check = [&] {
    CHECK(cudaMemcpy(got.data(), out, n * sizeof(int), cudaMemcpyDeviceToHost));
    for (int i = 0; i < n; ++i) bad += got[i] != host[i] + want;
    CHECK(cudaMemset(out, 0, n * sizeof(int)));
  };
  // Too large: refused, and not sticky.
  EXPECT_ERROR(cudaLaunchCooperativeKernel((void*)addTotal, full + 1, kThreads, args, 0, 0),
               cudaErrorCooperativeLaunchTooLarge);
  EXPECT_ERROR(cudaGetLastError(), cudaErrorCooperativeLaunchTooLarge);
  CHECK(cudaLaunchCooperativeKernel((void*)addTotal, full, kThreads, args, 0, 0));
  check();
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(sms);
  config.blockDim = dim3(kThreads);
  cudaLaunchAttribute attr{};
  attr.id = cudaLaunchAttributeCooperative;
  attr.val.cooperative = 1;
  config.attrs = &attr;
  config.numAttrs = 1;
  CHECK(cudaLaunchKernelEx(&config, addTotal, (const int*)in, out, partial, n));
  check();
  std::printf("%d blocks of %d threads per SM, %d SMs: a grid of %d blocks syncs; total %d\n",
              perSm, kThreads, sms, full, want);
  return verdict(bad == 0 && supported == 1, "cooperative launches sync their grid");
}
