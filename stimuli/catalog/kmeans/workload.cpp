// kmeans: Lloyd's k-means on integer-valued features, a few iterations of two launches each.
// kmeans_assign: distance loops over k centroids kept in shared memory (broadcast reads),
// feature-major coalesced loads, a data-dependent argmin, privatised per-block sums built with
// shared-memory float and int atomics, then contended global atomics (k * d float sums, k int
// counts, a changed-membership counter). kmeans_update: one small block with a barrier.
//
// Float atomics are order-dependent in general. Here every feature is an integer in [0, 255] and
// n * 255 < 2^24, so every partial sum is an integer float represents exactly: the sums, and thus
// the centroids (one correctly rounded division), do not depend on the order of the atomics. The
// kernel accumulates distances with explicit fmaf and the reference with std::fma in the same
// order, so the whole result is bit-exact and compared exactly.
#include <algorithm>

#include "catalog.hpp"

namespace gpusc::catalog {

namespace {

class Kmeans : public Workload {
 public:
  explicit Kmeans(Size s) {
    if (s == Size::Tiny) {
      n_ = 700, d_ = 4, k_ = 5, iterations_ = 3;
    } else if (s == Size::Small) {
      n_ = 10000, d_ = 8, k_ = 10, iterations_ = 4;
    } else if (s == Size::Default) {
      n_ = 24000, d_ = 8, k_ = 10, iterations_ = 5;
    } else {
      // The largest n the exact sums allow (n * 255 < 2^24, above), and the largest k x d a
      // block's shared sums hold (256): 17 times the default's work.
      n_ = 65536, d_ = 16, k_ = 16, iterations_ = 10;
    }
  }

  std::string describe() const override {
    return fmt::format("n={} points, d={} features, k={} clusters, {} iterations", n_, d_, k_,
                       iterations_);
  }

  void setup(Device& dev) override {
    // Points scattered around 2k random blob centres (more blobs than clusters, so memberships
    // keep changing for a few iterations). Integer features in [0, 255], stored feature-major.
    Rng rng(2024);
    const uint32_t blobs = 2 * k_;
    std::vector<float> centre(blobs * d_);
    for (auto& c : centre) c = static_cast<float>(30 + rng.below(196));
    feat_.resize(size_t(d_) * n_);
    for (uint32_t p = 0; p < n_; ++p) {
      uint32_t b = rng.below(blobs);
      for (uint32_t f = 0; f < d_; ++f) {
        int v = static_cast<int>(centre[b * d_ + f]) + static_cast<int>(rng.below(41)) +
                static_cast<int>(rng.below(41)) - 40;
        feat_[size_t(f) * n_ + p] = static_cast<float>(std::clamp(v, 0, 255));
      }
    }
    // The first k points are the initial centroids.
    init_.resize(k_ * d_);
    for (uint32_t j = 0; j < k_; ++j)
      for (uint32_t f = 0; f < d_; ++f) init_[j * d_ + f] = feat_[size_t(f) * n_ + j];
    dfeat_ = dev.upload(feat_);
    dcentroids_ = dev.upload(init_);
    dmembership_ = dev.upload(std::vector<int32_t>(n_, -1));
    dsums_ = dev.upload(std::vector<float>(k_ * d_, 0.0f));
    dcounts_ = dev.upload(std::vector<int32_t>(k_, 0));
    dchanged_ = dev.malloc(sizeof(int32_t));
  }

  void run(Device& dev) override {
    Module& mod = loadPtx(dev, "kmeans");
    const Kernel& assign = mod.kernel("kmeans_assign");
    const Kernel& update = mod.kernel("kmeans_update");
    const uint32_t block = 256;
    changed_.clear();
    for (uint32_t it = 0; it < iterations_; ++it) {
      dev.memset(dchanged_, 0, sizeof(int32_t));
      dev.launch(assign, {(n_ + block - 1) / block}, {block}, 0,
                 KernelArgs()
                     .ptr(dfeat_)
                     .i32(static_cast<int32_t>(n_))
                     .i32(static_cast<int32_t>(d_))
                     .i32(static_cast<int32_t>(k_))
                     .ptr(dcentroids_)
                     .ptr(dmembership_)
                     .ptr(dsums_)
                     .ptr(dcounts_)
                     .ptr(dchanged_));
      dev.launch(
          update, {1}, {k_ * d_}, 0,
          KernelArgs().ptr(dcentroids_).ptr(dsums_).ptr(dcounts_).i32(static_cast<int32_t>(d_)));
      changed_.push_back(dev.download<int32_t>(dchanged_, 1)[0]);
    }
  }

  CheckResult check(Device& dev) override {
    std::vector<float> c = init_;
    std::vector<int32_t> member(n_, -1), changed;
    for (uint32_t it = 0; it < iterations_; ++it) {
      std::vector<float> sums(k_ * d_, 0.0f);
      std::vector<int32_t> counts(k_, 0);
      int32_t nchanged = 0;
      for (uint32_t p = 0; p < n_; ++p) {
        int32_t best = 0;
        float bestDist = 0.0f;
        for (uint32_t j = 0; j < k_; ++j) {
          float dist = 0.0f;
          for (uint32_t f = 0; f < d_; ++f) {
            float diff = feat_[size_t(f) * n_ + p] - c[j * d_ + f];
            dist = std::fma(diff, diff, dist);
          }
          if (j == 0 || dist < bestDist) {
            bestDist = dist;
            best = static_cast<int32_t>(j);
          }
        }
        if (member[p] != best) ++nchanged;
        member[p] = best;
        for (uint32_t f = 0; f < d_; ++f) sums[best * d_ + f] += feat_[size_t(f) * n_ + p];
        ++counts[best];
      }
      for (uint32_t t = 0; t < k_ * d_; ++t)
        if (counts[t / d_] > 0) c[t] = sums[t] / static_cast<float>(counts[t / d_]);
      changed.push_back(nchanged);
    }
    return allOf({compareExact(changed_, changed, "changed memberships per iteration"),
                  compareExact(dev.download<int32_t>(dmembership_, n_), member, "membership"),
                  compareExact(dev.download<float>(dcentroids_, k_ * d_), c, "centroids"),
                  compareExact(dev.download<int32_t>(dcounts_, k_), std::vector<int32_t>(k_, 0),
                               "cleared counts")});
  }

 private:
  uint32_t n_ = 0, d_ = 0, k_ = 0, iterations_ = 0;
  std::vector<float> feat_, init_;
  std::vector<int32_t> changed_;
  DevPtr dfeat_ = 0, dcentroids_ = 0, dmembership_ = 0, dsums_ = 0, dcounts_ = 0, dchanged_ = 0;
};

}  // namespace

CatalogEntry make_kmeans() {
  return {
      "kmeans",
      "k-means clustering: nearest-centroid assignment and atomic centroid update, 5 iterations",
      "distance loops, shared-memory broadcast, shared and global float/int atomics, several "
      "launches",
      [](Size s) { return std::make_unique<Kmeans>(s); }, true};
}

}  // namespace gpusc::catalog
