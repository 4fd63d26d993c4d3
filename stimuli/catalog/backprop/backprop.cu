// One training step of the input -> hidden layer of a neural network, in the manner of Rodinia's
// backprop. HID hidden units; the input layer has `in` units plus a bias unit (index `in`, value
// 1). Weights are row-major w[(in + 1) * HID]: row i holds the weights from input unit i.
#define HID 16   // hidden units: the x extent of the 2D blocks
#define ROWS 16  // input units per block: the y extent

// Forward pass, first part: block (0, by) multiplies input units [16 by, 16 by + 16) by their
// weights in shared memory and reduces over the inputs with a tree (a barrier per level), giving
// one partial sum per hidden unit: partial[by * HID + hidden unit]. `in` is a multiple of ROWS.
extern "C" __global__ void bp_layerforward(const float* __restrict__ x, const float* __restrict__ w,
                                           float* __restrict__ partial) {
  __shared__ float xs[ROWS];
  __shared__ float prod[ROWS][HID];
  int tx = threadIdx.x, ty = threadIdx.y;
  int row = blockIdx.y * ROWS + ty;
  if (tx == 0) xs[ty] = x[row];
  __syncthreads();
  prod[ty][tx] = w[row * HID + tx] * xs[ty];
  __syncthreads();
  for (int stride = ROWS / 2; stride > 0; stride /= 2) {
    if (ty < stride) prod[ty][tx] += prod[ty + stride][tx];
    __syncthreads();
  }
  if (ty == 0) partial[blockIdx.y * HID + tx] = prod[0][tx];
}

// Forward pass, second part: block j sums the `nparts` partial sums of hidden unit j (a strided
// loop, then a shared-memory tree), adds the bias weight and applies the sigmoid.
// blockDim.x is a power of two.
extern "C" __global__ void bp_squash(const float* __restrict__ partial, int nparts,
                                     const float* __restrict__ w, int in,
                                     float* __restrict__ hidden) {
  extern __shared__ float sum[];
  int j = blockIdx.x, t = threadIdx.x;
  float s = 0.0f;
  for (int p = t; p < nparts; p += blockDim.x) s += partial[p * HID + j];
  sum[t] = s;
  __syncthreads();
  for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if (t < stride) sum[t] += sum[t + stride];
    __syncthreads();
  }
  if (t == 0) hidden[j] = 1.0f / (1.0f + expf(-(sum[0] + w[in * HID + j])));
}

// Weight adjustment with momentum for rows [0, in]: the last block row is partial.
//   dw = eta * delta[j] * x[i] + momentum * oldw[i][j];  w[i][j] += dw;  oldw[i][j] = dw
extern "C" __global__ void bp_adjust_weights(float* __restrict__ w, float* __restrict__ oldw,
                                             const float* __restrict__ delta,
                                             const float* __restrict__ x, int in, float eta,
                                             float momentum) {
  int j = threadIdx.x;
  int i = blockIdx.y * ROWS + threadIdx.y;
  if (i > in) return;
  float xi = i == in ? 1.0f : x[i];
  int k = i * HID + j;
  float dw = eta * delta[j] * xi + momentum * oldw[k];
  w[k] += dw;
  oldw[k] = dw;
}
