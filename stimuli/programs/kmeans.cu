// kmeans as a stand-alone CUDA program: the catalog kernels (stimuli/catalog/kmeans) with the
// catalog workload's inputs, allocations and launches (a memset, kmeans_assign, kmeans_update
// and a read-back of the changed count per iteration), checked exactly on the host.
//   kmeans [tiny|small|default]
#include "program.hpp"

#include <algorithm>

#include "../catalog/kmeans/kmeans.cu"

int main(int argc, char** argv) {
  const Size size = parseSize(argc, argv);
  uint32_t n = 24000, d = 8, k = 10, iterations = 5;
  if (size == Size::Tiny) n = 700, d = 4, k = 5, iterations = 3;
  if (size == Size::Small) n = 10000, d = 8, k = 10, iterations = 4;

  // Points scattered around 2k random blob centres; integer features in [0, 255], stored
  // feature-major.
  gpusc::Rng rng(2024);
  const uint32_t blobs = 2 * k;
  std::vector<float> centre(blobs * d);
  for (auto& c : centre) c = static_cast<float>(30 + rng.below(196));
  std::vector<float> feat(size_t(d) * n);
  for (uint32_t p = 0; p < n; ++p) {
    const uint32_t b = rng.below(blobs);
    for (uint32_t f = 0; f < d; ++f) {
      const int v = static_cast<int>(centre[b * d + f]) + static_cast<int>(rng.below(41)) +
                    static_cast<int>(rng.below(41)) - 40;
      feat[size_t(f) * n + p] = static_cast<float>(std::clamp(v, 0, 255));
    }
  }
  // The first k points are the initial centroids.
  std::vector<float> init(k * d);
  for (uint32_t j = 0; j < k; ++j)
    for (uint32_t f = 0; f < d; ++f) init[j * d + f] = feat[size_t(f) * n + j];
  float* dfeat = upload(feat);
  float* dcentroids = upload(init);
  int32_t* dmembership = upload(std::vector<int32_t>(n, -1));
  float* dsums = upload(std::vector<float>(k * d, 0.0f));
  int32_t* dcounts = upload(std::vector<int32_t>(k, 0));
  int32_t* dchanged = deviceAlloc<int32_t>(1);

  const uint32_t block = 256;
  std::vector<int32_t> changedGot;
  for (uint32_t it = 0; it < iterations; ++it) {
    CHECK(cudaMemset(dchanged, 0, sizeof(int32_t)));
    kmeans_assign<<<(n + block - 1) / block, block>>>(dfeat, int(n), int(d), int(k), dcentroids,
                                                      dmembership, dsums, dcounts, dchanged);
    CHECK(cudaGetLastError());
    kmeans_update<<<1, k * d>>>(dcentroids, dsums, dcounts, int(d));
    CHECK(cudaGetLastError());
    changedGot.push_back(download(dchanged, 1)[0]);
  }

  std::vector<float> c = init;
  std::vector<int32_t> member(n, -1), changed;
  for (uint32_t it = 0; it < iterations; ++it) {
    std::vector<float> sums(k * d, 0.0f);
    std::vector<int32_t> counts(k, 0);
    int32_t nchanged = 0;
    for (uint32_t p = 0; p < n; ++p) {
      int32_t best = 0;
      float bestDist = 0.0f;
      for (uint32_t j = 0; j < k; ++j) {
        float dist = 0.0f;
        for (uint32_t f = 0; f < d; ++f) {
          const float diff = feat[size_t(f) * n + p] - c[j * d + f];
          dist = std::fma(diff, diff, dist);
        }
        if (j == 0 || dist < bestDist) {
          bestDist = dist;
          best = static_cast<int32_t>(j);
        }
      }
      if (member[p] != best) ++nchanged;
      member[p] = best;
      for (uint32_t f = 0; f < d; ++f) sums[best * d + f] += feat[size_t(f) * n + p];
      ++counts[best];
    }
    for (uint32_t t = 0; t < k * d; ++t)
      if (counts[t / d] > 0) c[t] = sums[t] / static_cast<float>(counts[t / d]);
    changed.push_back(nchanged);
  }
  return finish(
      allOf({compareExact(changedGot, changed, "changed memberships per iteration"),
             compareExact(download(dmembership, n), member, "membership"),
             compareExact(download(dcentroids, k * d), c, "centroids"),
             compareExact(download(dcounts, k), std::vector<int32_t>(k, 0), "cleared counts")}));
}
