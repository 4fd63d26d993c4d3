// Blocks of an ordinary launch that wait for later blocks, which a GPU runs beside them when it
// holds them all at once: block 0 spins until the grid's last block has published its data, and
// in a chain each block waits for the next one's flag (the last block starts it), over as many
// blocks as the device holds at once (the occupancy calculator's blocks per SM times its SMs).
// Run in order, the first block would spin forever; gpusc's functional engine runs them
// together once a block runs long, as the timing model runs the blocks its SMs hold.
#include <vector>

#include "check.hpp"

__global__ void waitForTheLast(volatile int* ready, int* data, int* seen) {
  const int last = gridDim.x - 1;
  if (blockIdx.x == last) {
    data[threadIdx.x] = 1000 + threadIdx.x;
    __threadfence();
    __syncthreads();
    if (threadIdx.x == 0) *ready = 1;
  } else if (blockIdx.x == 0) {
    if (threadIdx.x == 0)
      while (*ready == 0) {
      }
    __syncthreads();
    __threadfence();
    seen[threadIdx.x] = data[threadIdx.x];
  }
}

// Block b takes its place after block b + 1: order[b] = how many blocks came before it.
__global__ void chain(volatile int* flags, int* counter, int* order) {
  const int b = blockIdx.x;
  if (threadIdx.x == 0) {
    if (b + 1 < gridDim.x)
      while (flags[b + 1] == 0) {
      }
    order[b] = atomicAdd(counter, 1);
    __threadfence();
    flags[b] = 1;
  }
}

int main() {
  bool ok = true;
  const int threads = 64;
  int *ready, *data, *seen;
  CHECK(cudaMalloc(&ready, sizeof(int)));
  CHECK(cudaMalloc(&data, threads * sizeof(int)));
  CHECK(cudaMalloc(&seen, threads * sizeof(int)));
  CHECK(cudaMemset(ready, 0, sizeof(int)));
  CHECK(cudaMemset(seen, 0, threads * sizeof(int)));
  waitForTheLast<<<8, threads>>>(ready, data, seen);
  CHECK(cudaGetLastError());
  std::vector<int> got(threads);
  CHECK(cudaMemcpy(got.data(), seen, threads * sizeof(int), cudaMemcpyDeviceToHost));
  for (int i = 0; i < threads; ++i) ok &= got[i] == 1000 + i;

  int perSm = 0, sms = 0;
  CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&perSm, chain, 32, 0));
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const int blocks = std::min(perSm * sms, 96);
  int *flags, *counter, *order;
  CHECK(cudaMalloc(&flags, blocks * sizeof(int)));
  CHECK(cudaMalloc(&counter, sizeof(int)));
  CHECK(cudaMalloc(&order, blocks * sizeof(int)));
  CHECK(cudaMemset(flags, 0, blocks * sizeof(int)));
  CHECK(cudaMemset(counter, 0, sizeof(int)));
  chain<<<blocks, 32>>>(flags, counter, order);
  CHECK(cudaGetLastError());
  std::vector<int> o(blocks);
  CHECK(cudaMemcpy(o.data(), order, blocks * sizeof(int), cudaMemcpyDeviceToHost));
  for (int b = 0; b < blocks; ++b) ok &= o[b] == blocks - 1 - b;
  std::printf("%d blocks in the chain\n", blocks);
  return verdict(ok, "blocks waiting for later blocks of an ordinary launch");
}
