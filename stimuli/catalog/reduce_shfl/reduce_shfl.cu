// Sum of a float array and the count of its strictly positive elements.
// Each thread accumulates a grid-stride slice; the loop runs to n rounded up to a multiple of 32
// so that all lanes of a warp iterate together and __ballot_sync can count the warp's positive
// elements (lanes past n contribute 0). Warps reduce with __shfl_down_sync, warp results meet
// in shared memory, the first warp reduces them, and one thread per block records the block's
// sum in blockSums and adds its results to the global totals with atomicAdd.
// blockDim.x must be a multiple of 32.
extern "C" __global__ void reduce_shfl(const float* __restrict__ x, int n, float* sum,
                                       unsigned* positives, float* __restrict__ blockSums) {
  __shared__ float warpSums[32];
  __shared__ unsigned warpCounts[32];
  const unsigned full = 0xffffffffu;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int nRounded = (n + 31) & ~31;

  float s = 0.0f;
  unsigned count = 0;  // the warp's positives, the same in every lane
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < nRounded; i += gridDim.x * blockDim.x) {
    const float v = i < n ? x[i] : 0.0f;
    s += v;
    count += __popc(__ballot_sync(full, v > 0.0f));
  }
  for (int off = 16; off > 0; off >>= 1) s += __shfl_down_sync(full, s, off);
  if (lane == 0) {
    warpSums[warp] = s;
    warpCounts[warp] = count;
  }
  __syncthreads();
  if (warp == 0) {
    const int warps = blockDim.x >> 5;
    s = lane < warps ? warpSums[lane] : 0.0f;
    count = lane < warps ? warpCounts[lane] : 0u;
    for (int off = 16; off > 0; off >>= 1) {
      s += __shfl_down_sync(full, s, off);
      count += __shfl_down_sync(full, count, off);
    }
    if (lane == 0) {
      blockSums[blockIdx.x] = s;
      atomicAdd(sum, s);
      atomicAdd(positives, count);
    }
  }
}
