// Bitonic sort of 32-bit unsigned keys, n a power of two, in three kernels:
//   bitonic_sort_chunks   sorts each chunk of 2 * blockDim keys in dynamic shared memory, in
//                         alternating directions so that neighbouring chunks form bitonic runs;
//   bitonic_merge_global  one compare-exchange step of stride >= chunk over the whole array;
//   bitonic_merge_chunk   the remaining steps of a merge (strides chunk/2 .. 1) in shared memory.
// Thread t owns the comparator between positions lo = 2t - (t & (stride - 1)) and lo + stride;
// the pair is put in ascending order when bit `size` of lo is clear (size = the length of the
// bitonic runs being merged), descending otherwise.

__device__ inline void compareExchange(unsigned& a, unsigned& b, bool ascending) {
  if ((a > b) == ascending) {
    unsigned t = a;
    a = b;
    b = t;
  }
}

extern "C" __global__ void bitonic_sort_chunks(unsigned* keys) {
  extern __shared__ unsigned chunk[];
  const unsigned chunkSize = 2 * blockDim.x;
  const unsigned base = blockIdx.x * chunkSize;
  chunk[threadIdx.x] = keys[base + threadIdx.x];
  chunk[threadIdx.x + blockDim.x] = keys[base + threadIdx.x + blockDim.x];
  for (unsigned size = 2; size <= chunkSize; size <<= 1) {
    for (unsigned stride = size / 2; stride > 0; stride >>= 1) {
      __syncthreads();
      unsigned lo = 2 * threadIdx.x - (threadIdx.x & (stride - 1));
      compareExchange(chunk[lo], chunk[lo + stride], ((base + lo) & size) == 0);
    }
  }
  __syncthreads();
  keys[base + threadIdx.x] = chunk[threadIdx.x];
  keys[base + threadIdx.x + blockDim.x] = chunk[threadIdx.x + blockDim.x];
}

extern "C" __global__ void bitonic_merge_global(unsigned* keys, unsigned size, unsigned stride) {
  unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned lo = 2 * t - (t & (stride - 1));
  unsigned a = keys[lo], b = keys[lo + stride];
  compareExchange(a, b, (lo & size) == 0);
  keys[lo] = a;
  keys[lo + stride] = b;
}

extern "C" __global__ void bitonic_merge_chunk(unsigned* keys, unsigned size) {
  extern __shared__ unsigned chunk[];
  const unsigned chunkSize = 2 * blockDim.x;
  const unsigned base = blockIdx.x * chunkSize;
  chunk[threadIdx.x] = keys[base + threadIdx.x];
  chunk[threadIdx.x + blockDim.x] = keys[base + threadIdx.x + blockDim.x];
  const bool ascending = (base & size) == 0;  // size > chunkSize: one direction per chunk
  for (unsigned stride = chunkSize / 2; stride > 0; stride >>= 1) {
    __syncthreads();
    unsigned lo = 2 * threadIdx.x - (threadIdx.x & (stride - 1));
    compareExchange(chunk[lo], chunk[lo + stride], ascending);
  }
  __syncthreads();
  keys[base + threadIdx.x] = chunk[threadIdx.x];
  keys[base + threadIdx.x + blockDim.x] = chunk[threadIdx.x + blockDim.x];
}
