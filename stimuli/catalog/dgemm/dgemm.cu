// Double precision: C = A * B (row-major, A is MxK, B is KxN), then an element-wise pass
// D = sqrt(|C|) * exp(-C^2 * invVar / 2) that exercises double-precision sqrt and exp.
//
// dgemm: a 16x16 block computes a 32x16 tile of C; each thread computes two elements, rows ty
// and ty + 16 (register blocking), so each B value read from shared memory feeds two fmas.
// Per K step the block stages a 32x16 tile of A and a 16x16 tile of B, zero-padded at the edges.
#define TK 16  // K-tile width, and the tile width in N
#define TM 32  // tile height in M

extern "C" __global__ void dgemm(const double* __restrict__ A, const double* __restrict__ B,
                                 double* __restrict__ C, int M, int N, int K) {
  __shared__ double As[TM][TK];
  __shared__ double Bs[TK][TK];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int row0 = blockIdx.y * TM + ty, row1 = row0 + TK;
  const int col = blockIdx.x * TK + tx;

  double sum0 = 0.0, sum1 = 0.0;
  for (int k0 = 0; k0 < K; k0 += TK) {
    const int ak = k0 + tx, bk = k0 + ty;
    As[ty][tx] = (row0 < M && ak < K) ? A[row0 * K + ak] : 0.0;
    As[ty + TK][tx] = (row1 < M && ak < K) ? A[row1 * K + ak] : 0.0;
    Bs[ty][tx] = (bk < K && col < N) ? B[bk * N + col] : 0.0;
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < TK; ++kk) {
      const double b = Bs[kk][tx];
      sum0 += As[ty][kk] * b;
      sum1 += As[ty + TK][kk] * b;
    }
    __syncthreads();
  }
  if (col < N) {
    if (row0 < M) C[row0 * N + col] = sum0;
    if (row1 < M) C[row1 * N + col] = sum1;
  }
}

extern "C" __global__ void dgemm_post(const double* __restrict__ C, double* __restrict__ D,
                                      int count, double invVar) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < count) {
    const double c = C[i];
    D[i] = sqrt(fabs(c)) * exp(-0.5 * c * c * invVar);
  }
}
