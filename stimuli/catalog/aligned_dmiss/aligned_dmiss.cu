// Aligned data-cache-miss stalls, the first root cause of the global second-order voltage droop
// (seed 001, section 4.2, Fig. 13 and 14).
//
// Every phase, each thread loads 8 values from a fresh part of `in` (8 independent coalesced
// loads, each a line no cache holds yet), runs `rounds` rounds of 8 independent FMAs on them, and
// stores the 8 results to a fresh part of `out` (8 independent stores that miss: the L1 does not
// allocate on writes). The misses of all warps fill the L1's miss buffers and the memory
// system's queues, the load/store unit stops accepting instructions, and the warps stall; the
// memory system answers the SMs in turn, so they all resume compute at about the same time.
// A barrier at the end of each phase keeps the block's warps in step (without it they drift
// apart within a few phases and the SM's power flattens out).
//
// Layout: phase p, value k (0..7) of thread gid is in[(p * 8 + k) * n + gid] (n threads in the
// grid), and its result goes to the same place in out. Value k is updated
// rounds times as v_k = fma(v_k, m, c_k) with c_k = c + k.
extern "C" __global__ void aligned_dmiss(const float* __restrict__ in, float* __restrict__ out,
                                         int phases, int rounds, float m, float c) {
  const size_t n = size_t(gridDim.x) * blockDim.x;
  const size_t gid = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const float c0 = c, c1 = c + 1.0f, c2 = c + 2.0f, c3 = c + 3.0f, c4 = c + 4.0f, c5 = c + 5.0f,
              c6 = c + 6.0f, c7 = c + 7.0f;
  for (int p = 0; p < phases; ++p) {
    const float* src = in + size_t(p) * 8 * n + gid;
    float v0 = src[0], v1 = src[n], v2 = src[2 * n], v3 = src[3 * n], v4 = src[4 * n],
          v5 = src[5 * n], v6 = src[6 * n], v7 = src[7 * n];
#pragma unroll 1
    for (int r = 0; r < rounds; ++r) {
      v0 = __fmaf_rn(v0, m, c0);
      v1 = __fmaf_rn(v1, m, c1);
      v2 = __fmaf_rn(v2, m, c2);
      v3 = __fmaf_rn(v3, m, c3);
      v4 = __fmaf_rn(v4, m, c4);
      v5 = __fmaf_rn(v5, m, c5);
      v6 = __fmaf_rn(v6, m, c6);
      v7 = __fmaf_rn(v7, m, c7);
    }
    float* dst = out + size_t(p) * 8 * n + gid;
    dst[0] = v0;
    dst[n] = v1;
    dst[2 * n] = v2;
    dst[3 * n] = v3;
    dst[4 * n] = v4;
    dst[5 * n] = v5;
    dst[6 * n] = v6;
    dst[7 * n] = v7;
    __syncthreads();
  }
}
