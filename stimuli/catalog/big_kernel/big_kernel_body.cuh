// The straight-line body of big_kernel, shared by the CUDA kernel and the host reference in
// workload.cpp (one definition, compiled by nvcc to PTX and by the host compiler).
//
// kSteps steps, each a handful of varied operations on 4 float and 4 integer registers:
// fused multiply-adds, clamps (min/max), integer multiply-add, shifts, xor, population count
// and integer-to-float conversion, with constants that depend on the step, so that nvcc's full
// unroll leaves kSteps distinct pieces of code (about 5 KB of PTX instructions in all, over
// twice the 2 KB instruction cache of gtx480). Floats stay within [-4, 4] after every clamp and
// every float operation rounds once (fma, exact conversions of 8-bit integers, min/max), so the
// host computes the same bits.
#pragma once

#ifdef __CUDACC__
#define BK_FN __device__ __forceinline__
#define BK_FMA(a, b, c) __fmaf_rn(a, b, c)
#define BK_MIN(a, b) fminf(a, b)
#define BK_MAX(a, b) fmaxf(a, b)
#define BK_POPC(x) static_cast<unsigned>(__popc(x))
#define BK_UNROLL _Pragma("unroll")
#else
#include <cmath>
#define BK_FN inline
#define BK_FMA(a, b, c) std::fma(a, b, c)
#define BK_MIN(a, b) std::fmin(a, b)
#define BK_MAX(a, b) std::fmax(a, b)
#define BK_POPC(x) static_cast<unsigned>(__builtin_popcount(x))
#define BK_UNROLL
#endif

constexpr int kBigKernelSteps = 160;

struct BigKernelState {
  float f[4];
  unsigned u[4];
};

BK_FN void bigKernelBody(BigKernelState& s) {
  BK_UNROLL
  for (int j = 0; j < kBigKernelSteps; ++j) {
    const int a = j % 4, b = (j + 1) % 4, c = (j + 2) % 4;
    const float mul = 0.125f * static_cast<float>(1 + (j * 5) % 4);  // 0.125 .. 0.5
    const unsigned k = 0x9e3779b9u * static_cast<unsigned>(2 * j + 1);
    const int sh = 1 + (j * 7) % 29;
    switch (j % 4) {
      case 0:
        s.f[a] = BK_FMA(s.f[a], mul, s.f[b]);
        s.u[a] = s.u[a] * (k | 1u) + s.u[b];
        s.f[c] = BK_FMA(s.f[c], -mul, 0.0625f * static_cast<float>(j % 5));
        break;
      case 1:
        s.u[a] = (s.u[a] ^ (s.u[b] >> sh)) + k;
        s.f[a] = BK_MIN(BK_MAX(s.f[a], -4.0f), 4.0f);
        s.u[c] ^= s.u[a] << (sh % 13);
        break;
      case 2:
        s.f[a] = BK_FMA(s.f[a], mul, static_cast<float>(s.u[a] & 0xffu) * 0.00390625f);
        s.u[b] += BK_POPC(s.u[a] ^ k);
        s.f[b] = BK_FMA(s.f[c], mul, s.f[b]);
        break;
      default:
        s.u[a] = (s.u[a] << sh) | (s.u[a] >> (32 - sh));
        s.f[b] = BK_MIN(BK_MAX(s.f[b], -4.0f), 4.0f);
        s.f[c] = BK_MIN(BK_MAX(s.f[c], -4.0f), 4.0f);
        s.u[b] = s.u[b] * 0x01000193u + s.u[c];
        break;
    }
  }
}
