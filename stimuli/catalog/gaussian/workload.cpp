// gaussian: Gaussian elimination of a dense diagonally dominant system (Rodinia's gaussian), two
// launches per pivot: gauss_fan1 (multipliers, a division per row) and gauss_fan2 (trailing
// submatrix update on a 2D grid that shrinks every step, partial blocks at the edges), so
// 2 (n - 1) launches; then gauss_backsub solves the triangular system in one block, a barrier per
// row. The check compares the solution, the multipliers, the upper triangle and the eliminated
// right-hand side with a double-precision host elimination.
#include <cfloat>

#include "catalog.hpp"

namespace gpusc::catalog {

namespace {

class Gaussian : public Workload {
 public:
  explicit Gaussian(Size s)
      : n_(s == Size::Tiny      ? 37
           : s == Size::Small   ? 130
           : s == Size::Default ? 180
                                : 1024) {}

  std::string describe() const override {
    return fmt::format("n={} ({} launches)", n_, 2 * (n_ - 1) + 1);
  }

  void setup(Device& dev) override {
    // Off-diagonal entries in [-1, 1); each diagonal entry is twice its row's off-diagonal
    // absolute sum (plus 1), so no pivoting is needed, elimination growth is at most 2 and the
    // condition number is below ~3. b = A x for a random x, computed in double.
    Rng rng(99);
    a_.resize(size_t(n_) * n_);
    for (uint32_t i = 0; i < n_; ++i) {
      double off = 0;
      for (uint32_t j = 0; j < n_; ++j) {
        if (i == j) continue;
        a_[i * n_ + j] = rng.uniformf(-1.0f, 1.0f);
        off += std::fabs(a_[i * n_ + j]);
      }
      a_[i * n_ + i] = static_cast<float>(2 * off + 1);
    }
    std::vector<double> x(n_);
    for (auto& v : x) v = rng.uniform(-1.0, 1.0);
    b_.resize(n_);
    for (uint32_t i = 0; i < n_; ++i) {
      double s = 0;
      for (uint32_t j = 0; j < n_; ++j) s += double(a_[i * n_ + j]) * x[j];
      b_[i] = static_cast<float>(s);
    }
    da_ = dev.upload(a_);
    db_ = dev.upload(b_);
    dm_ = dev.upload(std::vector<float>(size_t(n_) * n_, 0.0f));
    dx_ = dev.malloc(n_ * sizeof(float));
  }

  void run(Device& dev) override {
    Module& mod = loadPtx(dev, "gaussian");
    const Kernel& fan1 = mod.kernel("gauss_fan1");
    const Kernel& fan2 = mod.kernel("gauss_fan2");
    const auto n = static_cast<int32_t>(n_);
    const uint32_t block1 = 128, tile = 16;
    for (uint32_t t = 0; t + 1 < n_; ++t) {
      const uint32_t rows = n_ - 1 - t, cols = n_ - t;
      dev.launch(fan1, {(rows + block1 - 1) / block1}, {block1}, 0,
                 KernelArgs().ptr(da_).ptr(dm_).i32(n).i32(static_cast<int32_t>(t)));
      dev.launch(fan2, {(cols + tile - 1) / tile, (rows + tile - 1) / tile}, {tile, tile}, 0,
                 KernelArgs().ptr(da_).ptr(db_).ptr(dm_).i32(n).i32(static_cast<int32_t>(t)));
    }
    dev.launch(mod.kernel("gauss_backsub"), {1}, {128}, 0,
               KernelArgs().ptr(da_).ptr(db_).ptr(dx_).i32(n));
  }

  CheckResult check(Device& dev) override {
    // The same elimination in double.
    const uint32_t n = n_;
    std::vector<double> a(a_.begin(), a_.end()), b(b_.begin(), b_.end()), m(size_t(n) * n, 0.0);
    for (uint32_t t = 0; t + 1 < n; ++t) {
      for (uint32_t i = t + 1; i < n; ++i) {
        m[i * n + t] = a[i * n + t] / a[t * n + t];
        for (uint32_t j = t; j < n; ++j) a[i * n + j] -= m[i * n + t] * a[t * n + j];
        b[i] -= m[i * n + t] * b[t];
      }
    }
    std::vector<double> x(n);
    for (uint32_t ii = n; ii-- > 0;) {
      double s = b[ii];
      for (uint32_t j = ii + 1; j < n; ++j) s -= a[ii * n + j] * x[j];
      x[ii] = s / a[ii * n + ii];
    }
    // The device's a and m restricted to what elimination defines: the upper triangle of a
    // (its strictly lower part holds rounding residue) and the strictly lower triangle of m.
    std::vector<float> ga = dev.download<float>(da_, a.size()),
                       gm = dev.download<float>(dm_, m.size());
    std::vector<double> gotU, wantU, gotM, wantM;
    for (uint32_t i = 0; i < n; ++i)
      for (uint32_t j = 0; j < n; ++j) {
        if (j >= i) {
          gotU.push_back(ga[i * n + j]);
          wantU.push_back(a[i * n + j]);
        } else {
          gotM.push_back(gm[i * n + j]);
          wantM.push_back(m[i * n + j]);
        }
      }
    // Tolerances: every entry goes through at most n float updates, each rounding by at most
    // FLT_EPSILON/2 of operands that diagonal dominance keeps within twice the row's original
    // magnitude, so absolute errors stay below ~n * FLT_EPSILON times the entry scale (O(1) off
    // the diagonal, O(n) on it: hence a relative and an absolute part). The multipliers divide
    // such errors by a diagonal entry, about n (twice the off-diagonal sum ~ (n - 1) / 2, plus
    // 1); the solution multiplies them by cond(A) < 3.
    const double tol = n * FLT_EPSILON;
    return allOf(
        {compareClose(asDouble(dev.download<float>(dx_, n)), x, 3 * tol, 3 * tol, "x"),
         compareClose(gotU, wantU, tol, tol, "upper triangle of a"),
         compareClose(gotM, wantM, tol, 2 * FLT_EPSILON, "multipliers m"),
         compareClose(asDouble(dev.download<float>(db_, n)), b, tol, tol, "eliminated b")});
  }

 private:
  uint32_t n_;
  std::vector<float> a_, b_;
  DevPtr da_ = 0, db_ = 0, dm_ = 0, dx_ = 0;
};

}  // namespace

CatalogEntry make_gaussian() {
  return {"gaussian",
          "Gaussian elimination, two launches per pivot, then back substitution in one block",
          "hundreds of launches with shrinking 2D grids, partial blocks, float division, barriers "
          "in a loop",
          [](Size s) { return std::make_unique<Gaussian>(s); }, true};
}

}  // namespace gpusc::catalog
