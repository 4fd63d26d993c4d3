// k-means clustering, one Lloyd iteration per pair of launches (in the manner of Rodinia's
// kmeans). Features are stored feature-major, feat[f * n + point], so that the loads of a warp are
// coalesced. k * d <= 256 and blockDim.x >= k * d.

// Assignment step. Every block copies the centroids into shared memory; each thread finds the
// nearest centroid of its point (squared Euclidean distance, first minimum on ties), records
// whether the membership changed, and adds its point into per-block sums in shared memory with
// shared-memory atomics. The block then adds its sums into the global ones with global atomics.
extern "C" __global__ void kmeans_assign(const float* __restrict__ feat, int n, int d, int k,
                                         const float* __restrict__ centroids, int* membership,
                                         float* sums, int* counts, int* changed) {
  __shared__ float c[256];
  __shared__ float bsum[256];
  __shared__ int bcount[32];
  __shared__ int bchanged;
  int t = threadIdx.x;
  int kd = k * d;
  if (t < kd) {
    c[t] = centroids[t];
    bsum[t] = 0.0f;
  }
  if (t < k) bcount[t] = 0;
  if (t == 0) bchanged = 0;
  __syncthreads();

  int p = blockIdx.x * blockDim.x + t;
  if (p < n) {
    int best = 0;
    float bestDist = 0.0f;
    for (int j = 0; j < k; ++j) {
      float dist = 0.0f;
      for (int f = 0; f < d; ++f) {
        float diff = feat[f * n + p] - c[j * d + f];
        dist = fmaf(diff, diff, dist);
      }
      if (j == 0 || dist < bestDist) {
        bestDist = dist;
        best = j;
      }
    }
    if (membership[p] != best) {
      membership[p] = best;
      atomicAdd(&bchanged, 1);
    }
    for (int f = 0; f < d; ++f) atomicAdd(&bsum[best * d + f], feat[f * n + p]);
    atomicAdd(&bcount[best], 1);
  }
  __syncthreads();

  if (t < kd) atomicAdd(&sums[t], bsum[t]);
  if (t < k) atomicAdd(&counts[t], bcount[t]);
  if (t == 0) atomicAdd(changed, bchanged);
}

// Update step, one block of k * d threads: each centroid coordinate becomes the mean of its
// cluster (an empty cluster keeps its centroid), then the sums and counts are cleared for the
// next iteration.
extern "C" __global__ void kmeans_update(float* centroids, float* sums, int* counts, int d) {
  int t = threadIdx.x;
  int cnt = counts[t / d];
  if (cnt > 0) centroids[t] = sums[t] / cnt;
  sums[t] = 0.0f;
  __syncthreads();  // every thread has read its count
  if (t % d == 0) counts[t / d] = 0;
}
