// Shared by transpose_conflicts and transpose_padded, which differ only in the tile's padding.
//
// out = transpose(in): in is rows x cols, out is cols x rows, both row-major.
// A 32x8 block moves one 32x32 tile: it reads rows of the tile from global memory (coalesced),
// stores them into shared memory, synchronises, then reads columns of the shared tile so that
// its global writes are coalesced too. Each thread handles 4 rows of the tile.
// The 32 lanes of a warp read tile[lane][c], addresses TILE + PAD words apart: with PAD = 0 they
// all fall in one shared-memory bank (a 32-way conflict), with PAD = 1 in 32 different banks.
#pragma once

constexpr int kTile = 32;
constexpr int kBlockRows = 8;

template <int PAD>
__device__ void transposeTile(const float* __restrict__ in, float* __restrict__ out, int rows,
                              int cols) {
  __shared__ float tile[kTile][kTile + PAD];
  int x = blockIdx.x * kTile + threadIdx.x;  // input column
  int y = blockIdx.y * kTile + threadIdx.y;  // input row
#pragma unroll
  for (int j = 0; j < kTile; j += kBlockRows)
    if (x < cols && y + j < rows) tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * cols + x];
  __syncthreads();
  x = blockIdx.y * kTile + threadIdx.x;  // output column = input row
  y = blockIdx.x * kTile + threadIdx.y;  // output row = input column
#pragma unroll
  for (int j = 0; j < kTile; j += kBlockRows)
    if (x < rows && y + j < cols) out[(y + j) * rows + x] = tile[threadIdx.x][threadIdx.y + j];
}
