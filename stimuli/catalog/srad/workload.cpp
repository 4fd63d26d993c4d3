// srad: speckle-reducing anisotropic diffusion (Rodinia-style) of a noisy image. Per
// iteration, four launches: a double-precision reduction of the region-of-interest statistics
// (shared-memory tree plus 64-bit warp shuffles), a one-warp finishing kernel, the per-pixel
// diffusion coefficients (fp32 divisions, clamped neighbours, a clamp branch) and the update.
// Exercises 2D grids with partial blocks, fp64 reduction, shuffles, many divisions, and
// several launches per iteration that depend on each other through device memory. The
// reference runs the same iterations in double precision.
#include <algorithm>

#include "catalog.hpp"

namespace gpusc::catalog {

namespace {

constexpr float kLambda = 0.5f;

class Srad : public Workload {
 public:
  explicit Srad(Size s) {
    switch (s) {
      case Size::Tiny:
        rows_ = 40, cols_ = 60, iterations_ = 2;
        break;
      case Size::Small:
        rows_ = 300, cols_ = 400, iterations_ = 3;
        break;
      case Size::Default:
        rows_ = 320, cols_ = 480, iterations_ = 4;
        break;
      case Size::Large:
        rows_ = 2048, cols_ = 2048, iterations_ = 4;
        break;
    }
    // The region of interest: a block of the top-left quarter, away from the edges.
    roiTop_ = rows_ / 8, roiLeft_ = cols_ / 8, roiRows_ = rows_ / 4, roiCols_ = cols_ / 3;
  }

  std::string describe() const override {
    return fmt::format("image={}x{} iterations={} roi={}x{}", rows_, cols_, iterations_, roiRows_,
                       roiCols_);
  }

  void setup(Device& dev) override {
    // Piecewise-constant regions multiplied by speckle noise.
    Rng rng(61);
    const size_t pixels = size_t(rows_) * cols_;
    image_.resize(pixels);
    for (uint32_t y = 0; y < rows_; ++y)
      for (uint32_t x = 0; x < cols_; ++x) {
        double level = (x < cols_ / 2 ? 1.0 : 2.0) + ((y / 16 + x / 16) % 3 == 0 ? 0.5 : 0.0);
        image_[size_t(y) * cols_ + x] = static_cast<float>(level * rng.uniform(0.5, 1.5));
      }
    dimage_ = dev.upload(image_);
    for (DevPtr& p : dgrad_) p = dev.malloc(pixels * sizeof(float));
    dcoeff_ = dev.malloc(pixels * sizeof(float));
    dpartial_ = dev.malloc(2 * kPartials * sizeof(double));
    dq0sqr_ = dev.malloc(sizeof(float));
  }

  void run(Device& dev) override {
    Module& mod = loadPtx(dev, "srad");
    const Kernel& partial = mod.kernel("srad_roi_partial");
    const Kernel& finish = mod.kernel("srad_roi_finish");
    const Kernel& coeff = mod.kernel("srad_coeff");
    const Kernel& update = mod.kernel("srad_update");
    const Dim3 block{16, 16}, grid{(cols_ + 15) / 16, (rows_ + 15) / 16};
    const auto rows = static_cast<int32_t>(rows_), cols = static_cast<int32_t>(cols_);
    for (uint32_t it = 0; it < iterations_; ++it) {
      dev.launch(partial, {kPartials}, {256}, 0,
                 KernelArgs()
                     .ptr(dimage_)
                     .i32(cols)
                     .i32(static_cast<int32_t>(roiTop_))
                     .i32(static_cast<int32_t>(roiLeft_))
                     .i32(static_cast<int32_t>(roiRows_))
                     .i32(static_cast<int32_t>(roiCols_))
                     .ptr(dpartial_));
      dev.launch(finish, {1}, {32}, 0,
                 KernelArgs()
                     .ptr(dpartial_)
                     .i32(static_cast<int32_t>(kPartials))
                     .i32(static_cast<int32_t>(roiRows_ * roiCols_))
                     .ptr(dq0sqr_));
      dev.launch(coeff, grid, block, 0,
                 KernelArgs()
                     .ptr(dimage_)
                     .ptr(dgrad_[0])
                     .ptr(dgrad_[1])
                     .ptr(dgrad_[2])
                     .ptr(dgrad_[3])
                     .ptr(dcoeff_)
                     .i32(rows)
                     .i32(cols)
                     .ptr(dq0sqr_));
      dev.launch(update, grid, block, 0,
                 KernelArgs()
                     .ptr(dimage_)
                     .ptr(dgrad_[0])
                     .ptr(dgrad_[1])
                     .ptr(dgrad_[2])
                     .ptr(dgrad_[3])
                     .ptr(dcoeff_)
                     .i32(rows)
                     .i32(cols)
                     .f32(kLambda));
    }
  }

  CheckResult check(Device& dev) override {
    const int rows = static_cast<int>(rows_), cols = static_cast<int>(cols_);
    const size_t pixels = size_t(rows) * cols;
    std::vector<double> j(image_.begin(), image_.end());
    std::vector<double> dn(pixels), ds(pixels), dw(pixels), de(pixels), c(pixels);
    double lastQ0sqr = 0;
    for (uint32_t it = 0; it < iterations_; ++it) {
      double sum = 0, sumSq = 0;
      for (uint32_t y = roiTop_; y < roiTop_ + roiRows_; ++y)
        for (uint32_t x = roiLeft_; x < roiLeft_ + roiCols_; ++x) {
          double v = j[size_t(y) * cols + x];
          sum += v;
          sumSq += v * v;
        }
      const double size = double(roiRows_) * roiCols_;
      const double mean = sum / size, var = sumSq / size - mean * mean;
      const double q0sqr = var / (mean * mean);
      lastQ0sqr = q0sqr;
      for (int y = 0; y < rows; ++y)
        for (int x = 0; x < cols; ++x) {
          const size_t k = size_t(y) * cols + x;
          const double jc = j[k];
          const double n = j[size_t(std::max(y - 1, 0)) * cols + x] - jc;
          const double s = j[size_t(std::min(y + 1, rows - 1)) * cols + x] - jc;
          const double w = j[size_t(y) * cols + std::max(x - 1, 0)] - jc;
          const double e = j[size_t(y) * cols + std::min(x + 1, cols - 1)] - jc;
          const double g2 = (n * n + s * s + w * w + e * e) / (jc * jc);
          const double l = (n + s + w + e) / jc;
          const double num = 0.5 * g2 - (1.0 / 16.0) * (l * l);
          const double den1 = 1.0 + 0.25 * l;
          const double qsqr = num / (den1 * den1);
          const double den = (qsqr - q0sqr) / (q0sqr * (1.0 + q0sqr));
          dn[k] = n, ds[k] = s, dw[k] = w, de[k] = e;
          c[k] = std::clamp(1.0 / (1.0 + den), 0.0, 1.0);
        }
      for (int y = 0; y < rows; ++y)
        for (int x = 0; x < cols; ++x) {
          const size_t k = size_t(y) * cols + x;
          const double cS = c[size_t(std::min(y + 1, rows - 1)) * cols + x];
          const double cE = c[size_t(y) * cols + std::min(x + 1, cols - 1)];
          const double d = c[k] * dn[k] + cS * ds[k] + c[k] * dw[k] + cE * de[k];
          j[k] += 0.25 * kLambda * d;
        }
    }
    // q0^2 is rounded to float, the coefficient goes through a chain of float divisions, and
    // each iteration adds a few roundings of J (around 2^-24 relative); diffusion does not
    // amplify them.
    auto q0sqr = dev.download<float>(dq0sqr_, 1);
    return allOf({compareClose(asDouble(q0sqr), {lastQ0sqr}, 1e-5, 0.0, "q0sqr (last iteration)"),
                  compareClose(asDouble(dev.download<float>(dcoeff_, pixels)), c, 2e-5, 1e-6,
                               "coefficient (last iteration)"),
                  compareClose(asDouble(dev.download<float>(dimage_, pixels)), j,
                               2e-6 * iterations_, 0.0, "image")});
  }

 private:
  static constexpr uint32_t kPartials = 32;  // blocks of the statistics reduction
  uint32_t rows_ = 0, cols_ = 0, iterations_ = 0;
  uint32_t roiTop_ = 0, roiLeft_ = 0, roiRows_ = 0, roiCols_ = 0;
  std::vector<float> image_;
  DevPtr dimage_ = 0, dgrad_[4] = {0, 0, 0, 0}, dcoeff_ = 0, dpartial_ = 0, dq0sqr_ = 0;
};

}  // namespace

CatalogEntry make_srad() {
  return {"srad", "Speckle-reducing anisotropic diffusion (Rodinia-style), 4 launches/iteration",
          "fp64 reduction with shuffles, fp32 divisions, clamped stencil, dependent launches",
          [](Size s) { return std::make_unique<Srad>(s); }, true};
}

}  // namespace gpusc::catalog
