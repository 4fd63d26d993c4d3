// sgemm: tiled single-precision matrix multiply C = alpha * A * B + beta * C (row-major).
// Exercises: 2D grid of 16x16 blocks, shared-memory tiles reused 16 times each, __syncthreads
// twice per K step, fma-heavy inner loop, and zero-padded boundary tiles (Tiny and Small use
// sizes that are not multiples of 16, so edge blocks have inactive threads).
//
// The reference mirrors the kernel's arithmetic exactly: each element accumulates its K products
// in ascending k with a fused multiply-add (fma.rn.f32 in the PTX), then computes
// fma(sum, alpha, beta * c) as the PTX epilogue does. The zero padding only adds 0 * 0 = +0,
// which leaves the sum unchanged, so the result is bit-exact and compared exactly.
#include "catalog.hpp"

namespace gpusc::catalog {

namespace {

class Sgemm : public Workload {
 public:
  explicit Sgemm(Size s) {
    switch (s) {
      case Size::Tiny:
        m_ = 37, n_ = 45, k_ = 29;
        break;
      case Size::Small:
        m_ = 200, n_ = 184, k_ = 232;
        break;
      case Size::Default:
        m_ = 256, n_ = 256, k_ = 256;
        break;
      case Size::Large:
        m_ = 2048, n_ = 2048, k_ = 2048;
        break;
    }
  }

  std::string describe() const override {
    return fmt::format("M={} N={} K={} alpha={} beta={}", m_, n_, k_, alpha_, beta_);
  }

  void setup(Device& dev) override {
    Rng rng(11);
    a_.resize(size_t(m_) * k_);
    b_.resize(size_t(k_) * n_);
    c_.resize(size_t(m_) * n_);
    for (auto& v : a_) v = rng.uniformf(-1.0f, 1.0f);
    for (auto& v : b_) v = rng.uniformf(-1.0f, 1.0f);
    for (auto& v : c_) v = rng.uniformf(-1.0f, 1.0f);
    da_ = dev.upload(a_);
    db_ = dev.upload(b_);
    dc_ = dev.upload(c_);
  }

  void run(Device& dev) override {
    const Kernel& k = loadPtx(dev, "sgemm").kernel("sgemm");
    const uint32_t tile = 16;
    dev.launch(k, {(n_ + tile - 1) / tile, (m_ + tile - 1) / tile}, {tile, tile}, 0,
               KernelArgs()
                   .ptr(da_)
                   .ptr(db_)
                   .ptr(dc_)
                   .i32(static_cast<int32_t>(m_))
                   .i32(static_cast<int32_t>(n_))
                   .i32(static_cast<int32_t>(k_))
                   .f32(alpha_)
                   .f32(beta_));
  }

  CheckResult check(Device& dev) override {
    std::vector<float> want(c_.size(), 0.0f);
    for (uint32_t i = 0; i < m_; ++i) {
      float* sum = &want[size_t(i) * n_];
      for (uint32_t k = 0; k < k_; ++k)
        fmaRow(a_[size_t(i) * k_ + k], &b_[size_t(k) * n_], sum, n_);
      for (uint32_t j = 0; j < n_; ++j)
        sum[j] = std::fma(sum[j], alpha_, beta_ * c_[size_t(i) * n_ + j]);
    }
    return compareExact(dev.download<float>(dc_, want.size()), want, "C");
  }

 private:
  uint32_t m_ = 0, n_ = 0, k_ = 0;
  const float alpha_ = 1.5f, beta_ = -0.75f;
  std::vector<float> a_, b_, c_;
  DevPtr da_ = 0, db_ = 0, dc_ = 0;
};

}  // namespace

CatalogEntry make_sgemm() {
  return {"sgemm", "Tiled SGEMM C = alpha*A*B + beta*C with 16x16 shared-memory tiles",
          "2D grid, shared-memory tiling, barriers, fma-bound, boundary tiles",
          [](Size s) { return std::make_unique<Sgemm>(s); }, true};
}

}  // namespace gpusc::catalog
