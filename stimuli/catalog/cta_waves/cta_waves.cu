// Many short blocks of identical work: aligned thread-block launch and retirement, a root cause
// of the global second-order voltage droop (seed 001, section 4.2, Fig. 16). Every thread loads
// one value, runs a chain of 8 x iters dependent FMAs on it and stores the result, so every block
// takes the same time: the blocks of a wave (as many as fit on the GPU at once) finish together,
// and the next wave starts on every SM at once, with a load miss and then a burst.
//
// Thread gid: x = in[gid]; a = x, then iters times a = fma(a, m[k], x) for k = 0..7;
// out[gid] = a. The 8 multipliers come from memory (the same for every thread) so that they sit
// in registers: as literals, nvcc would emit a mov before every FMA.
extern "C" __global__ void cta_waves(const float* __restrict__ in, const float* __restrict__ m,
                                     float* __restrict__ out, int iters) {
  const int gid = blockIdx.x * blockDim.x + threadIdx.x;
  const float x = in[gid];
  const float m0 = m[0], m1 = m[1], m2 = m[2], m3 = m[3], m4 = m[4], m5 = m[5], m6 = m[6],
              m7 = m[7];
  float a = x;
#pragma unroll 1
  for (int i = 0; i < iters; ++i) {
    a = __fmaf_rn(a, m0, x);
    a = __fmaf_rn(a, m1, x);
    a = __fmaf_rn(a, m2, x);
    a = __fmaf_rn(a, m3, x);
    a = __fmaf_rn(a, m4, x);
    a = __fmaf_rn(a, m5, x);
    a = __fmaf_rn(a, m6, x);
    a = __fmaf_rn(a, m7, x);
  }
  out[gid] = a;
}
