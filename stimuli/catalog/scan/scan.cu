// Work-efficient (Blelloch) exclusive prefix sum of uint32 (wrapping modulo 2^32).
//
// scan_blocks: each block scans 2 * blockDim.x consecutive elements in dynamic shared memory:
// an up-sweep builds partial sums in a balanced tree, the root (the block's total) is saved to
// blockSums and cleared, and a down-sweep turns the tree into the exclusive scan. Elements past
// n are treated as 0. The host then scans blockSums the same way (recursively, while there is
// more than one block) and add_offsets adds each block's scanned offset to its elements.
extern "C" __global__ void scan_blocks(const unsigned* __restrict__ in, unsigned* __restrict__ out,
                                       unsigned* __restrict__ blockSums, int n) {
  extern __shared__ unsigned s[];  // 2 * blockDim.x elements, sized at launch
  const int tid = threadIdx.x;
  const int m = 2 * blockDim.x;
  const int base = blockIdx.x * m;
  const int i0 = tid, i1 = tid + blockDim.x;
  s[i0] = base + i0 < n ? in[base + i0] : 0u;
  s[i1] = base + i1 < n ? in[base + i1] : 0u;

  int offset = 1;
  for (int d = m >> 1; d > 0; d >>= 1) {  // up-sweep (reduce)
    __syncthreads();
    if (tid < d) {
      const int a = offset * (2 * tid + 1) - 1;
      const int b = offset * (2 * tid + 2) - 1;
      s[b] += s[a];
    }
    offset <<= 1;
  }
  if (tid == 0) {
    blockSums[blockIdx.x] = s[m - 1];
    s[m - 1] = 0;
  }
  for (int d = 1; d < m; d <<= 1) {  // down-sweep
    offset >>= 1;
    __syncthreads();
    if (tid < d) {
      const int a = offset * (2 * tid + 1) - 1;
      const int b = offset * (2 * tid + 2) - 1;
      const unsigned t = s[a];
      s[a] = s[b];
      s[b] += t;
    }
  }
  __syncthreads();
  if (base + i0 < n) out[base + i0] = s[i0];
  if (base + i1 < n) out[base + i1] = s[i1];
}

// Adds the exclusive scan of the block totals to each block's 2 * blockDim.x elements.
extern "C" __global__ void add_offsets(unsigned* __restrict__ data,
                                       const unsigned* __restrict__ scannedSums, int n) {
  const unsigned add = scannedSums[blockIdx.x];
  const int base = blockIdx.x * 2 * blockDim.x;
  const int i0 = base + threadIdx.x, i1 = i0 + blockDim.x;
  if (i0 < n) data[i0] += add;
  if (i1 < n) data[i1] += add;
}
