// C = alpha * A * B + beta * C in single precision, row-major. A is MxK, B is KxN, C is MxN.
// Each 16x16 block computes one 16x16 tile of C, stepping through K one 16-wide tile at a time:
// the block stages a tile of A and a tile of B in shared memory, synchronises, and every thread
// accumulates 16 products from shared memory. Tiles that stick out of the matrices are padded
// with zeros, so M, N and K need not be multiples of 16.
#define TILE 16

extern "C" __global__ void sgemm(const float* __restrict__ A, const float* __restrict__ B,
                                 float* __restrict__ C, int M, int N, int K, float alpha,
                                 float beta) {
  __shared__ float As[TILE][TILE];
  __shared__ float Bs[TILE][TILE];

  const int tx = threadIdx.x, ty = threadIdx.y;
  const int row = blockIdx.y * TILE + ty;  // row of C (and A)
  const int col = blockIdx.x * TILE + tx;  // column of C (and B)

  float sum = 0.0f;
  for (int k0 = 0; k0 < K; k0 += TILE) {
    const int ak = k0 + tx;  // column of A loaded by this thread
    const int bk = k0 + ty;  // row of B loaded by this thread
    As[ty][tx] = (row < M && ak < K) ? A[row * K + ak] : 0.0f;
    Bs[ty][tx] = (bk < K && col < N) ? B[bk * N + col] : 0.0f;
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < TILE; ++kk) sum += As[ty][kk] * Bs[kk][tx];
    __syncthreads();
  }
  if (row < M && col < N) C[row * N + col] = alpha * sum + beta * C[row * N + col];
}
