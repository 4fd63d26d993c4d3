// 256-bin histogram of bytes. Each block keeps private bins in shared memory, updated with
// shared-memory atomicAdd; the input is read as 32-bit words (four bytes per load) by a
// grid-stride loop, and the n % 4 trailing bytes by the first threads of the grid. At the end
// each block adds its non-zero bins into the global histogram with global atomicAdd.
// The data pointer must be 4-byte aligned.
#define BINS 256

extern "C" __global__ void histogram(const unsigned char* __restrict__ data, int n,
                                     unsigned* __restrict__ hist) {
  __shared__ unsigned bins[BINS];
  for (int b = threadIdx.x; b < BINS; b += blockDim.x) bins[b] = 0;
  __syncthreads();

  const int gid = blockIdx.x * blockDim.x + threadIdx.x;
  const int nWords = n / 4;
  const unsigned* words = reinterpret_cast<const unsigned*>(data);
  for (int w = gid; w < nWords; w += gridDim.x * blockDim.x) {
    const unsigned v = words[w];
    atomicAdd(&bins[v & 0xffu], 1u);
    atomicAdd(&bins[(v >> 8) & 0xffu], 1u);
    atomicAdd(&bins[(v >> 16) & 0xffu], 1u);
    atomicAdd(&bins[v >> 24], 1u);
  }
  const int tail = nWords * 4 + gid;
  if (tail < n) atomicAdd(&bins[data[tail]], 1u);
  __syncthreads();

  for (int b = threadIdx.x; b < BINS; b += blockDim.x)
    if (bins[b] != 0) atomicAdd(&hist[b], bins[b]);
}
