// Half-precision GEMM on tensor cores: C = A * B, row-major, A (MxK) and B (KxN) in __half, C
// (MxN) in float. M and N must be multiples of 64 and K a multiple of 16 (no edge tiles).
//
// A block of 4 warps (128 threads) computes a 64x64 tile of C; the warps form a 2x2 grid and
// each owns a 32x32 sub-tile, held as 2x2 WMMA accumulator fragments (m16n16k16, f16 inputs, f32
// accumulators). The block steps through K 16 at a time: per step it stages a 64x16 tile of A
// and a 16x64 tile of B in shared memory with cp.async (16 bytes per copy, 2 copies per thread),
// and every warp loads 2 A and 2 B fragments and runs 2x2 mma_sync on them (each fragment feeds
// two). The staging is a two-stage double buffer: the copies of step t+1 are issued (and
// committed as one group) before the warps compute step t, which waits for all groups but the
// newest (__pipeline_wait_prior(1)) and a barrier; a second barrier ends the step before its
// buffer is refilled. The shared rows are padded by 8 halves (16 bytes) so that the rows of a
// fragment do not all start in the same banks; fragment pointers stay 32-byte aligned. The two
// stages take 10.5 KB of shared memory, which fits every platform (the stream-* cores have 16 KB).
//
// Exercises: tensor cores (wmma.load.a/b from shared memory, wmma.mma.sync m16n16k16 with f32
// accumulators, wmma.store.d to global memory), asynchronous copies (cp.async.cg of 16 bytes,
// commit_group, wait_group 1) overlapping the next tile's loads with the matrix instructions, two
// barriers per K step, a 2D grid.
// regen_ptx.sh: -arch=sm_80
#include <cuda_fp16.h>
#include <cuda_pipeline.h>
#include <mma.h>

using namespace nvcuda;

#define BM 64  // tile of C per block: BM x BN
#define BN 64
#define BK 16  // K step (one k-slice of the fragments)
#define WM 32  // tile of C per warp: WM x WN (2x2 fragments)
#define WN 32
#define PAD 8  // halves of padding per shared row
#define THREADS 128

// Issues the cp.async copies of K step k0 into stage buffers as/bs: 64x16 halves of A (128
// chunks of 16 bytes) and 16x64 halves of B (128 chunks), one chunk of each per thread.
__device__ __forceinline__ void stageTiles(const __half* __restrict__ A,
                                           const __half* __restrict__ B, __half (*as)[BK + PAD],
                                           __half (*bs)[BN + PAD], int row0, int col0, int k0,
                                           int N, int K) {
  const int t = threadIdx.x;
  {
    const int r = t / (BK / 8), h = (t % (BK / 8)) * 8;  // A: row t / 2, halves 8 * (t % 2) ..
    __pipeline_memcpy_async(&as[r][h], &A[(size_t)(row0 + r) * K + k0 + h], 16);
  }
  {
    const int r = t / (BN / 8), h = (t % (BN / 8)) * 8;  // B: row t / 8, halves 8 * (t % 8) ..
    __pipeline_memcpy_async(&bs[r][h], &B[(size_t)(k0 + r) * N + col0 + h], 16);
  }
}

extern "C" __global__ void __launch_bounds__(THREADS)
    hgemm(const __half* __restrict__ A, const __half* __restrict__ B, float* __restrict__ C, int M,
          int N, int K) {
  __shared__ __align__(128) __half As[2][BM][BK + PAD];
  __shared__ __align__(128) __half Bs[2][BK][BN + PAD];

  const int warp = threadIdx.x / 32;
  const int wr = (warp / 2) * WM, wc = (warp % 2) * WN;  // the warp's sub-tile of the block tile
  const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;

  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[2][2];
#pragma unroll
  for (int i = 0; i < 2; ++i)
#pragma unroll
    for (int j = 0; j < 2; ++j) wmma::fill_fragment(acc[i][j], 0.0f);

  const int steps = K / BK;
  stageTiles(A, B, As[0], Bs[0], row0, col0, 0, N, K);
  __pipeline_commit();
  for (int t = 0; t < steps; ++t) {
    const int cur = t & 1;
    if (t + 1 < steps) stageTiles(A, B, As[cur ^ 1], Bs[cur ^ 1], row0, col0, (t + 1) * BK, N, K);
    __pipeline_commit();       // an empty group on the last step keeps the count uniform
    __pipeline_wait_prior(1);  // step t's group has landed (this thread's copies)
    __syncthreads();           // ... and every other thread's
    wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> a[2];
    wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::row_major> b[2];
#pragma unroll
    for (int i = 0; i < 2; ++i) wmma::load_matrix_sync(a[i], &As[cur][wr + 16 * i][0], BK + PAD);
#pragma unroll
    for (int j = 0; j < 2; ++j) wmma::load_matrix_sync(b[j], &Bs[cur][0][wc + 16 * j], BN + PAD);
#pragma unroll
    for (int i = 0; i < 2; ++i)
#pragma unroll
      for (int j = 0; j < 2; ++j) wmma::mma_sync(acc[i][j], a[i], b[j], acc[i][j]);
    __syncthreads();  // every warp is done with stage cur before step t + 1 refills it
  }

#pragma unroll
  for (int i = 0; i < 2; ++i)
#pragma unroll
    for (int j = 0; j < 2; ++j)
      wmma::store_matrix_sync(&C[(size_t)(row0 + wr + 16 * i) * N + col0 + wc + 16 * j], acc[i][j],
                              N, wmma::mem_row_major);
}
