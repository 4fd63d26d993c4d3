// Gaussian elimination without pivoting, in the manner of Rodinia's gaussian: for each pivot t
// the host launches gauss_fan1 (the multipliers of column t) and gauss_fan2 (the update of the
// trailing submatrix and right-hand side), n - 1 times each; gauss_backsub then solves the upper
// triangular system in one block. a is row-major n x n; m holds the multipliers.

// Multipliers of pivot t: m[i][t] = a[i][t] / a[t][t] for the rows i > t.
extern "C" __global__ void gauss_fan1(const float* __restrict__ a, float* __restrict__ m, int n,
                                      int t) {
  int i = t + 1 + blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  m[i * n + t] = a[i * n + t] / a[t * n + t];
}

// Trailing update of pivot t over a 2D grid: x covers the columns j >= t, y the rows i > t.
// The threads of column t also update the right-hand side.
extern "C" __global__ void gauss_fan2(float* __restrict__ a, float* __restrict__ b,
                                      const float* __restrict__ m, int n, int t) {
  int j = t + blockIdx.x * blockDim.x + threadIdx.x;
  int i = t + 1 + blockIdx.y * blockDim.y + threadIdx.y;
  if (i >= n || j >= n) return;
  float mi = m[i * n + t];
  a[i * n + j] -= mi * a[t * n + j];
  if (j == t) b[i] -= mi * b[t];
}

// Back substitution in one block: x starts as a copy of b; for i = n-1 .. 0, thread 0 divides
// x[i] by the diagonal, then every thread removes x[i] from the rows above (a barrier per row).
extern "C" __global__ void gauss_backsub(const float* __restrict__ a, const float* __restrict__ b,
                                         float* x, int n) {
  for (int r = threadIdx.x; r < n; r += blockDim.x) x[r] = b[r];
  __syncthreads();
  for (int i = n - 1; i >= 0; --i) {
    if (threadIdx.x == 0) x[i] /= a[i * n + i];
    __syncthreads();
    float xi = x[i];
    for (int r = threadIdx.x; r < i; r += blockDim.x) x[r] -= a[r * n + i] * xi;
    __syncthreads();
  }
}
