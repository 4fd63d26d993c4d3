// Speckle-reducing anisotropic diffusion (after Rodinia's srad). Each iteration:
//   srad_roi_partial  per-block sums of J and J^2 over a region of interest, in double
//                     precision (shared-memory tree, then warp shuffles);
//   srad_roi_finish   one warp adds the partial sums and derives q0^2 = var / mean^2;
//   srad_coeff        per pixel: the four directional differences (clamped at the image
//                     edge) and the diffusion coefficient c, clamped to [0, 1];
//   srad_update       per pixel: J += lambda / 4 * divergence of c * gradient.

#define REDUCE_BLOCK 256

__device__ inline double warpSum(double v) {
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_down_sync(0xffffffffu, v, offset);
  return v;
}

extern "C" __global__ void srad_roi_partial(const float* __restrict__ image, int cols, int roiTop,
                                            int roiLeft, int roiRows, int roiCols,
                                            double* __restrict__ partial) {
  __shared__ double sum[REDUCE_BLOCK];
  __shared__ double sumSq[REDUCE_BLOCK];
  double s = 0, s2 = 0;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < roiRows * roiCols;
       i += blockDim.x * gridDim.x) {
    double v = image[(roiTop + i / roiCols) * cols + roiLeft + i % roiCols];
    s += v;
    s2 += v * v;
  }
  sum[threadIdx.x] = s;
  sumSq[threadIdx.x] = s2;
  for (int half = blockDim.x / 2; half >= 32; half >>= 1) {
    __syncthreads();
    if (threadIdx.x < half) {
      sum[threadIdx.x] += sum[threadIdx.x + half];
      sumSq[threadIdx.x] += sumSq[threadIdx.x + half];
    }
  }
  __syncthreads();
  if (threadIdx.x < 32) {
    s = warpSum(sum[threadIdx.x]);
    s2 = warpSum(sumSq[threadIdx.x]);
    if (threadIdx.x == 0) {
      partial[2 * blockIdx.x] = s;
      partial[2 * blockIdx.x + 1] = s2;
    }
  }
}

// Launched with one warp.
extern "C" __global__ void srad_roi_finish(const double* __restrict__ partial, int partials,
                                           int roiSize, float* __restrict__ q0sqr) {
  double s = 0, s2 = 0;
  for (int i = threadIdx.x; i < partials; i += 32) {
    s += partial[2 * i];
    s2 += partial[2 * i + 1];
  }
  s = warpSum(s);
  s2 = warpSum(s2);
  if (threadIdx.x == 0) {
    double mean = s / roiSize;
    double var = s2 / roiSize - mean * mean;
    *q0sqr = (float)(var / (mean * mean));
  }
}

extern "C" __global__ void srad_coeff(const float* __restrict__ image, float* __restrict__ dN,
                                      float* __restrict__ dS, float* __restrict__ dW,
                                      float* __restrict__ dE, float* __restrict__ coeff, int rows,
                                      int cols, const float* __restrict__ q0sqrPtr) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= cols || y >= rows) return;
  const int k = y * cols + x;
  const float q0sqr = *q0sqrPtr;
  const float jc = image[k];
  const float n = image[max(y - 1, 0) * cols + x] - jc;
  const float s = image[min(y + 1, rows - 1) * cols + x] - jc;
  const float w = image[y * cols + max(x - 1, 0)] - jc;
  const float e = image[y * cols + min(x + 1, cols - 1)] - jc;
  const float g2 = (n * n + s * s + w * w + e * e) / (jc * jc);
  const float l = (n + s + w + e) / jc;
  const float num = 0.5f * g2 - (1.0f / 16.0f) * (l * l);
  float den = 1.0f + 0.25f * l;
  const float qsqr = num / (den * den);
  den = (qsqr - q0sqr) / (q0sqr * (1.0f + q0sqr));
  float c = 1.0f / (1.0f + den);
  if (c < 0.0f)
    c = 0.0f;
  else if (c > 1.0f)
    c = 1.0f;
  dN[k] = n;
  dS[k] = s;
  dW[k] = w;
  dE[k] = e;
  coeff[k] = c;
}

extern "C" __global__ void srad_update(float* __restrict__ image, const float* __restrict__ dN,
                                       const float* __restrict__ dS, const float* __restrict__ dW,
                                       const float* __restrict__ dE,
                                       const float* __restrict__ coeff, int rows, int cols,
                                       float lambda) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= cols || y >= rows) return;
  const int k = y * cols + x;
  const float cN = coeff[k], cW = coeff[k];
  const float cS = coeff[min(y + 1, rows - 1) * cols + x];
  const float cE = coeff[y * cols + min(x + 1, cols - 1)];
  const float d = cN * dN[k] + cS * dS[k] + cW * dW[k] + cE * dE[k];
  image[k] = image[k] + 0.25f * lambda * d;
}
