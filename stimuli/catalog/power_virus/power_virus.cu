// A power virus for the local first-order voltage droop (seed 001, section 4.1): bursts of
// register-file and SIMD activity after dispatch stalls.
//
// Each phase, one thread of the block (the "slow warp") follows a chain of `chaseSteps` dependent
// global loads through `next` while every other warp waits at __syncthreads. When the chain
// ends, the barrier releases all warps of the block at once into a dense block of independent
// work: per round 16 FMAs on 16 accumulators (three register operands each) and 4 integer
// operations on two hashes (h0 = h0 * 16777619 + h1, then h1 = (h1 ^ (h1 >> 7)) + h0). A second
// barrier ends the burst before the next chain starts, so the stall lasts the whole chain. With
// one block per SM, the SM's power alternates between the idle of the stall and the full issue
// rate of the burst; the workload picks the chain's memory (DRAM or L1) and the burst length to
// set the period of the swing.
//
// coef holds 8 values per thread, coef[k * n + gid] (n threads in the grid): multipliers
// m0..m3 in [0.5, 0.9) and addends c0..c3. Accumulator k (from 0) is updated as
// a_k = fma(a_k, m_(k mod 4), c_((k + k / 4 + 1) mod 4)). Outputs: out[gid] (the accumulators'
// sum), hashes[gid] (h0 ^ h1), chase[blockIdx.x] (where the block's chain ended).
extern "C" __global__ void power_virus(const unsigned* __restrict__ next,
                                       const float* __restrict__ coef, float* __restrict__ out,
                                       unsigned* __restrict__ hashes, unsigned* __restrict__ chase,
                                       int phases, int chaseSteps, int rounds) {
  __shared__ unsigned token;
  const int n = gridDim.x * blockDim.x;
  const int gid = blockIdx.x * blockDim.x + threadIdx.x;
  const float m0 = coef[gid], m1 = coef[n + gid], m2 = coef[2 * n + gid], m3 = coef[3 * n + gid];
  const float c0 = coef[4 * n + gid], c1 = coef[5 * n + gid], c2 = coef[6 * n + gid],
              c3 = coef[7 * n + gid];
  float a0 = 0.0f, a1 = 0.0f, a2 = 0.0f, a3 = 0.0f, a4 = 0.0f, a5 = 0.0f, a6 = 0.0f, a7 = 0.0f;
  float a8 = 0.0f, a9 = 0.0f, a10 = 0.0f, a11 = 0.0f, a12 = 0.0f, a13 = 0.0f, a14 = 0.0f,
        a15 = 0.0f;
  unsigned h0 = static_cast<unsigned>(gid), h1 = static_cast<unsigned>(gid) * 0x9e3779b9u;
  unsigned p = blockIdx.x;
  for (int ph = 0; ph < phases; ++ph) {
    if (threadIdx.x == 0) {  // the slow warp
      for (int s = 0; s < chaseSteps; ++s) p = next[p];
      token = p;
    }
    __syncthreads();  // everyone waits for the slow warp
    // The burst: 16 independent FMAs and 4 integer operations per round, the integer ones
    // spread out so that their dependences never stall the warp. (Rolled, so that an
    // accumulator's FMAs stay a round apart; unrolled, nvcc puts them next to each other.)
#pragma unroll 1
    for (int r = 0; r < rounds; ++r) {
      h0 = h0 * 0x01000193u + h1;
      a0 = __fmaf_rn(a0, m0, c1);
      a1 = __fmaf_rn(a1, m1, c2);
      a2 = __fmaf_rn(a2, m2, c3);
      a3 = __fmaf_rn(a3, m3, c0);
      unsigned t = h1 >> 7;
      a4 = __fmaf_rn(a4, m0, c2);
      a5 = __fmaf_rn(a5, m1, c3);
      a6 = __fmaf_rn(a6, m2, c0);
      a7 = __fmaf_rn(a7, m3, c1);
      t ^= h1;
      a8 = __fmaf_rn(a8, m0, c3);
      a9 = __fmaf_rn(a9, m1, c0);
      a10 = __fmaf_rn(a10, m2, c1);
      a11 = __fmaf_rn(a11, m3, c2);
      h1 = t + h0;
      a12 = __fmaf_rn(a12, m0, c0);
      a13 = __fmaf_rn(a13, m1, c1);
      a14 = __fmaf_rn(a14, m2, c2);
      a15 = __fmaf_rn(a15, m3, c3);
    }
    h0 ^= token;      // the slow warp's value, read off the burst's critical path
    __syncthreads();  // the burst ends before the slow warp's next chain starts
  }
  out[gid] = (((a0 + a1) + (a2 + a3)) + ((a4 + a5) + (a6 + a7))) +
             (((a8 + a9) + (a10 + a11)) + ((a12 + a13) + (a14 + a15)));
  hashes[gid] = h0 ^ h1;
  if (threadIdx.x == 0) chase[blockIdx.x] = p;
}
