// dgemm: double-precision matrix multiply C = A * B (row-major), then an element-wise pass
// D = sqrt(|C|) * exp(-C^2 * invVar / 2) with invVar = 9 / K (C's entries have variance K / 9).
// Exercises: f64 arithmetic (fma.rn.f64, ld/st.shared.f64), 2D grid of 16x16 blocks each computing
// a 32x16 tile (two accumulators per thread), shared-memory tiles with barriers, zero-padded edge
// tiles (the sizes are not multiples of the tiles), and double sqrt/exp, which nvcc inlines as
// a polynomial with range reduction and a branch for large arguments. Two launches.
//
// C is compared exactly: the reference accumulates in ascending k with std::fma, as the PTX does.
// D is compared with rtol 1e-14 (about 45 ulp): sqrt is correctly rounded on both sides and the
// argument of exp is computed the same way, so the only difference is CUDA's exp (within 1 ulp)
// against the host's (within 1 ulp).
#include "catalog.hpp"

namespace gpusc::catalog {

namespace {

class Dgemm : public Workload {
 public:
  explicit Dgemm(Size s) {
    switch (s) {
      case Size::Tiny:
        m_ = 45, n_ = 29, k_ = 37;
        break;
      case Size::Small:
        m_ = 200, n_ = 184, k_ = 232;
        break;
      case Size::Large:  // none (CatalogEntry::large): make() refuses it
      case Size::Default:
        m_ = 256, n_ = 256, k_ = 256;
        break;
    }
  }

  std::string describe() const override { return fmt::format("M={} N={} K={} (f64)", m_, n_, k_); }

  void setup(Device& dev) override {
    Rng rng(71);
    a_.resize(size_t(m_) * k_);
    b_.resize(size_t(k_) * n_);
    for (auto& v : a_) v = rng.uniform(-1.0, 1.0);
    for (auto& v : b_) v = rng.uniform(-1.0, 1.0);
    da_ = dev.upload(a_);
    db_ = dev.upload(b_);
    dc_ = dev.malloc(size_t(m_) * n_ * sizeof(double));
    dd_ = dev.malloc(size_t(m_) * n_ * sizeof(double));
  }

  void run(Device& dev) override {
    Module& mod = loadPtx(dev, "dgemm");
    const uint32_t tk = 16, tm = 32;
    dev.launch(mod.kernel("dgemm"), {(n_ + tk - 1) / tk, (m_ + tm - 1) / tm}, {tk, tk}, 0,
               KernelArgs()
                   .ptr(da_)
                   .ptr(db_)
                   .ptr(dc_)
                   .i32(static_cast<int32_t>(m_))
                   .i32(static_cast<int32_t>(n_))
                   .i32(static_cast<int32_t>(k_)));
    const uint32_t count = m_ * n_, block = 128;
    dev.launch(mod.kernel("dgemm_post"), {(count + block - 1) / block}, {block}, 0,
               KernelArgs().ptr(dc_).ptr(dd_).i32(static_cast<int32_t>(count)).f64(invVar()));
  }

  CheckResult check(Device& dev) override {
    std::vector<double> c(size_t(m_) * n_, 0.0), d(c.size());
    for (uint32_t i = 0; i < m_; ++i)
      for (uint32_t k = 0; k < k_; ++k)
        fmaRow(a_[size_t(i) * k_ + k], &b_[size_t(k) * n_], &c[size_t(i) * n_], n_);
    for (size_t i = 0; i < c.size(); ++i)
      d[i] = std::sqrt(std::fabs(c[i])) * std::exp(-0.5 * c[i] * c[i] * invVar());
    return allOf({compareExact(dev.download<double>(dc_, c.size()), c, "C"),
                  compareClose(dev.download<double>(dd_, d.size()), d, 1e-14, 0.0, "D")});
  }

 private:
  double invVar() const { return 9.0 / k_; }

  uint32_t m_ = 0, n_ = 0, k_ = 0;
  std::vector<double> a_, b_;
  DevPtr da_ = 0, db_ = 0, dc_ = 0, dd_ = 0;
};

}  // namespace

CatalogEntry make_dgemm() {
  return {"dgemm", "Tiled DGEMM C = A*B, then D = sqrt(|C|) * exp(-C^2/2var) in double precision",
          "double precision, shared-memory tiling, register blocking, barriers, f64 sqrt/exp",
          [](Size s) { return std::make_unique<Dgemm>(s); }};
}

}  // namespace gpusc::catalog
