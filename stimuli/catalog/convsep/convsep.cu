// Separable 2D convolution (correlation form) with clamp-to-edge borders, in two passes:
//   tmp(x, y) = sum_k filter[k] * in(clamp(x + k - R), y)     (conv_rows)
//   out(x, y) = sum_k filter[k] * tmp(x, clamp(y + k - R))    (conv_cols)
// Each block stages its tile plus an R-wide apron (halo) in shared memory, then every thread
// reads its 2R+1 neighbours from shared memory. The filter lives in constant memory.
#define R 4
#define TAPS (2 * R + 1)
#define BX 32
#define BY 8

// Deliberately asymmetric, so a mirrored index would be caught. workload.cpp holds a copy.
__constant__ float c_filter[TAPS] = {0.02f, 0.05f, 0.09f, 0.14f, 0.30f, 0.17f, 0.11f, 0.08f, 0.04f};

__device__ __forceinline__ int clampi(int v, int lo, int hi) { return min(max(v, lo), hi); }

extern "C" __global__ void conv_rows(const float* __restrict__ in, float* __restrict__ out, int W,
                                     int H) {
  __shared__ float tile[BY][BX + 2 * R];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int x0 = blockIdx.x * BX;
  const int gx = x0 + tx, gy = blockIdx.y * BY + ty;
  const int srcRow = min(gy, H - 1);  // rows below the image load something valid, unused
  for (int i = tx; i < BX + 2 * R; i += BX)
    tile[ty][i] = in[srcRow * W + clampi(x0 - R + i, 0, W - 1)];
  __syncthreads();
  if (gx < W && gy < H) {
    float sum = 0.0f;
#pragma unroll
    for (int k = 0; k < TAPS; ++k) sum += c_filter[k] * tile[ty][tx + k];
    out[gy * W + gx] = sum;
  }
}

extern "C" __global__ void conv_cols(const float* __restrict__ in, float* __restrict__ out, int W,
                                     int H) {
  __shared__ float tile[BY + 2 * R][BX];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int y0 = blockIdx.y * BY;
  const int gx = blockIdx.x * BX + tx, gy = y0 + ty;
  const int srcCol = min(gx, W - 1);  // columns right of the image load something valid, unused
  for (int i = ty; i < BY + 2 * R; i += BY)
    tile[i][tx] = in[clampi(y0 - R + i, 0, H - 1) * W + srcCol];
  __syncthreads();
  if (gx < W && gy < H) {
    float sum = 0.0f;
#pragma unroll
    for (int k = 0; k < TAPS; ++k) sum += c_filter[k] * tile[ty + k][tx];
    out[gy * W + gx] = sum;
  }
}
