// Matrix transpose through an unpadded 32x32 shared tile: every column read of the tile is a
// 32-way shared-memory bank conflict (compare transpose_padded).
#include "../transpose.cuh"

extern "C" __global__ void transpose_conflicts(const float* __restrict__ in,
                                               float* __restrict__ out, int rows, int cols) {
  transposeTile<0>(in, out, rows, cols);
}
