// Sobel edge detection: gradient magnitude sqrt(gx^2 + gy^2) of a 2D float image, with
// clamp-to-edge borders. Each 16x16 block stages its tile plus a one-pixel halo in shared memory
// (the halo loads wrap around the block, and clamp at the image border); threads of partial
// blocks at the right and bottom edges help load and then stay idle.

#define TILE 16

extern "C" __global__ void sobel(const float* __restrict__ in, float* __restrict__ out, int width,
                                 int height) {
  __shared__ float tile[TILE + 2][TILE + 2];
  const int x0 = blockIdx.x * TILE - 1, y0 = blockIdx.y * TILE - 1;
  for (int k = threadIdx.y * TILE + threadIdx.x; k < (TILE + 2) * (TILE + 2); k += TILE * TILE) {
    int ly = k / (TILE + 2), lx = k % (TILE + 2);
    int gy = min(max(y0 + ly, 0), height - 1);
    int gx = min(max(x0 + lx, 0), width - 1);
    tile[ly][lx] = in[gy * width + gx];
  }
  __syncthreads();

  const int x = blockIdx.x * TILE + threadIdx.x, y = blockIdx.y * TILE + threadIdx.y;
  if (x >= width || y >= height) return;
  const int tx = threadIdx.x + 1, ty = threadIdx.y + 1;
  float gx = (tile[ty - 1][tx + 1] + 2.0f * tile[ty][tx + 1] + tile[ty + 1][tx + 1]) -
             (tile[ty - 1][tx - 1] + 2.0f * tile[ty][tx - 1] + tile[ty + 1][tx - 1]);
  float gy = (tile[ty + 1][tx - 1] + 2.0f * tile[ty + 1][tx] + tile[ty + 1][tx + 1]) -
             (tile[ty - 1][tx - 1] + 2.0f * tile[ty - 1][tx] + tile[ty - 1][tx + 1]);
  out[y * width + x] = sqrtf(gx * gx + gy * gy);
}
