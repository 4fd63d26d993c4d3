// Device assert (__assertfail) and warpSize (PTX's WARP_SZ): tests/test_ptx_isa.cpp.
#include <cassert>

// Every element below `limit`, or the first thread that finds one that is not fails the assert.
extern "C" __global__ void check_below(const int* v, int n, int limit) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) assert(v[i] < limit);
}

// out[i] = warpSize * 1000 + the thread's lane.
extern "C" __global__ void warp_size(int* out) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  out[i] = warpSize * 1000 + threadIdx.x % warpSize;
}
