// A kernel whose instruction footprint is larger than the instruction cache: the implicit
// synchronisation by instruction-cache misses, a root cause of the global second-order voltage
// droop (seed 001, section 4.2, Fig. 15). Each iteration runs the straight-line body of
// big_kernel_body.cuh (about 5 KB of code; the I-cache of gtx480 holds 2 KB), so every warp
// misses the I-cache at the same places of every iteration, on every SM.
//
// State of thread gid: f[k] = fin[k * n + gid], u[k] = uin[k * n + gid] (k = 0..3, n threads);
// after `iters` bodies it is written back to fout and uout in the same layout.
#include "big_kernel_body.cuh"

extern "C" __global__ void big_kernel(const float* __restrict__ fin,
                                      const unsigned* __restrict__ uin, float* __restrict__ fout,
                                      unsigned* __restrict__ uout, int iters) {
  const int n = gridDim.x * blockDim.x;
  const int gid = blockIdx.x * blockDim.x + threadIdx.x;
  BigKernelState s;
  for (int k = 0; k < 4; ++k) {
    s.f[k] = fin[k * n + gid];
    s.u[k] = uin[k * n + gid];
  }
#pragma unroll 1
  for (int it = 0; it < iters; ++it) bigKernelBody(s);
  for (int k = 0; k < 4; ++k) {
    fout[k * n + gid] = s.f[k];
    uout[k * n + gid] = s.u[k];
  }
}
