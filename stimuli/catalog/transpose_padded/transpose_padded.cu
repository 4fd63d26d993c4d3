// Matrix transpose through a 32x33 padded shared tile: column reads of the tile hit 32
// different banks, so there are no bank conflicts (compare transpose_conflicts).
#include "../transpose.cuh"

extern "C" __global__ void transpose_padded(const float* __restrict__ in, float* __restrict__ out,
                                            int rows, int cols) {
  transposeTile<1>(in, out, rows, cols);
}
