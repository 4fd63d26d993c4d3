// out = transpose(in): in is rows x cols, out is cols x rows, both row-major.
// A 32x8 block moves one 32x32 tile: it reads rows of the tile from global memory (coalesced),
// stores them into shared memory, synchronises, then reads columns of the shared tile so that
// its global writes are coalesced too. Each thread handles 4 rows of the tile.
// The tile is padded to 33 columns: the 32 lanes of a warp read tile[lane][c], addresses 33
// words apart, which fall in 32 different shared-memory banks (no bank conflicts).
#define TILE 32
#define BLOCK_ROWS 8

extern "C" __global__ void transpose_padded(const float* __restrict__ in, float* __restrict__ out,
                                            int rows, int cols) {
  __shared__ float tile[TILE][TILE + 1];
  int x = blockIdx.x * TILE + threadIdx.x;  // input column
  int y = blockIdx.y * TILE + threadIdx.y;  // input row
#pragma unroll
  for (int j = 0; j < TILE; j += BLOCK_ROWS)
    if (x < cols && y + j < rows) tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * cols + x];
  __syncthreads();
  x = blockIdx.y * TILE + threadIdx.x;  // output column = input row
  y = blockIdx.x * TILE + threadIdx.y;  // output row = input column
#pragma unroll
  for (int j = 0; j < TILE; j += BLOCK_ROWS)
    if (x < rows && y + j < cols) out[(y + j) * rows + x] = tile[threadIdx.x][threadIdx.y + j];
}
