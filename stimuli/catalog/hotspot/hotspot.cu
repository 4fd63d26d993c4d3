// Thermal simulation of a chip (after Rodinia's hotspot): each time step updates a cell's
// temperature from its power, its four neighbours (clamped at the chip edge) and the ambient
// temperature. A launch advances `steps` time steps at once with the pyramid scheme: a 16x16
// block loads a tile of temperature and power into shared memory, iterates inside it, and each
// iteration the ring of correctly updated cells shrinks by one, so the block owns only the
// inner (16 - 2 * steps)^2 cells. Blocks on the chip edge hold cells outside the chip and
// diverge on the edge tests.

#define BLOCK 16

extern "C" __global__ void hotspot(const float* __restrict__ power,
                                   const float* __restrict__ tempIn, float* __restrict__ tempOut,
                                   int rows, int cols, int steps, float stepDivCap, float rx1,
                                   float ry1, float rz1, float ambient) {
  __shared__ float temp[BLOCK][BLOCK];
  __shared__ float pwr[BLOCK][BLOCK];
  __shared__ float next[BLOCK][BLOCK];

  const int tx = threadIdx.x, ty = threadIdx.y;
  const int owned = BLOCK - 2 * steps;           // cells this block writes, per side
  const int tileY = owned * blockIdx.y - steps;  // grid row of tile row 0
  const int tileX = owned * blockIdx.x - steps;  // grid column of tile column 0
  const int y = tileY + ty, x = tileX + tx;
  if (y >= 0 && y < rows && x >= 0 && x < cols) {
    temp[ty][tx] = tempIn[y * cols + x];
    pwr[ty][tx] = power[y * cols + x];
  }
  __syncthreads();

  // The part of the tile inside the chip; neighbours are clamped to it.
  const int validYmin = tileY < 0 ? -tileY : 0;
  const int validYmax = tileY + BLOCK > rows ? rows - tileY - 1 : BLOCK - 1;
  const int validXmin = tileX < 0 ? -tileX : 0;
  const int validXmax = tileX + BLOCK > cols ? cols - tileX - 1 : BLOCK - 1;
  const int n = max(ty - 1, validYmin), s = min(ty + 1, validYmax);
  const int w = max(tx - 1, validXmin), e = min(tx + 1, validXmax);
  const bool inChip = ty >= validYmin && ty <= validYmax && tx >= validXmin && tx <= validXmax;

  bool computed = false;
  for (int i = 0; i < steps; ++i) {
    computed = inChip && tx >= i + 1 && tx <= BLOCK - i - 2 && ty >= i + 1 && ty <= BLOCK - i - 2;
    if (computed) {
      float t = temp[ty][tx];
      next[ty][tx] =
          t + stepDivCap * (pwr[ty][tx] + (temp[s][tx] + temp[n][tx] - 2.0f * t) * ry1 +
                            (temp[ty][e] + temp[ty][w] - 2.0f * t) * rx1 + (ambient - t) * rz1);
    }
    __syncthreads();
    if (i == steps - 1) break;
    if (computed) temp[ty][tx] = next[ty][tx];
    __syncthreads();
  }
  if (computed) tempOut[y * cols + x] = next[ty][tx];
}
