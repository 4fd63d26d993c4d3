// sobel: Sobel gradient magnitude of a 2D image on a 2D grid of 16x16 blocks. Exercises 2D
// thread and block indices, a shared-memory tile with a halo loaded in a strided loop, clamped
// borders (min/max), partial blocks on the right and bottom edges (early exit after the
// barrier), and sqrtf. The reference computes each pixel in double precision.
#include <algorithm>

#include "catalog.hpp"

namespace gpusc::catalog {

namespace {

class Sobel : public Workload {
 public:
  explicit Sobel(Size s) {
    switch (s) {
      case Size::Tiny:
        width_ = 100, height_ = 75;
        break;
      case Size::Small:
        width_ = 800, height_ = 600;
        break;
      case Size::Large:  // none (CatalogEntry::large): make() refuses it
      case Size::Default:
        width_ = 1280, height_ = 720;
        break;
    }
  }

  std::string describe() const override { return fmt::format("image={}x{}", width_, height_); }

  void setup(Device& dev) override {
    // Smooth shading, a bright rectangle (sharp edges) and noise.
    Rng rng(41);
    image_.resize(size_t(width_) * height_);
    for (uint32_t y = 0; y < height_; ++y)
      for (uint32_t x = 0; x < width_; ++x) {
        double v = 0.4 + 0.2 * std::sin(x * 0.05) * std::cos(y * 0.07) + rng.uniform(0.0, 0.1);
        if (x > width_ / 4 && x < width_ / 2 && y > height_ / 3 && y < 3 * height_ / 4) v += 0.3;
        image_[size_t(y) * width_ + x] = static_cast<float>(v);
      }
    din_ = dev.upload(image_);
    dout_ = dev.malloc(image_.size() * sizeof(float));
  }

  void run(Device& dev) override {
    const Kernel& k = loadPtx(dev, "sobel").kernel("sobel");
    const uint32_t tile = 16;
    dev.launch(k, {(width_ + tile - 1) / tile, (height_ + tile - 1) / tile}, {tile, tile}, 0,
               KernelArgs()
                   .ptr(din_)
                   .ptr(dout_)
                   .i32(static_cast<int32_t>(width_))
                   .i32(static_cast<int32_t>(height_)));
  }

  CheckResult check(Device& dev) override {
    const int w = static_cast<int>(width_), h = static_cast<int>(height_);
    auto at = [&](int x, int y) -> double {
      return image_[size_t(std::clamp(y, 0, h - 1)) * w + std::clamp(x, 0, w - 1)];
    };
    std::vector<double> want(image_.size());
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x) {
        double gx = (at(x + 1, y - 1) + 2 * at(x + 1, y) + at(x + 1, y + 1)) -
                    (at(x - 1, y - 1) + 2 * at(x - 1, y) + at(x - 1, y + 1));
        double gy = (at(x - 1, y + 1) + 2 * at(x, y + 1) + at(x + 1, y + 1)) -
                    (at(x - 1, y - 1) + 2 * at(x, y - 1) + at(x + 1, y - 1));
        want[size_t(y) * w + x] = std::sqrt(gx * gx + gy * gy);
      }
    // Pixels are below 1, so each of the few float roundings in gx and gy costs at most
    // 4 * 2^-24 absolute; near-zero gradients need that absolute slack, the rest 1e-5 relative.
    return compareClose(asDouble(dev.download<float>(dout_, want.size())), want, 1e-5, 2e-6,
                        "magnitude");
  }

 private:
  uint32_t width_ = 0, height_ = 0;
  std::vector<float> image_;
  DevPtr din_ = 0, dout_ = 0;
};

}  // namespace

CatalogEntry make_sobel() {
  return {
      "sobel", "Sobel edge detection (gradient magnitude) on a 2D image",
      "2D grid and blocks, shared-memory tile with halo, clamped borders, partial blocks, sqrtf",
      [](Size s) { return std::make_unique<Sobel>(s); }};
}

}  // namespace gpusc::catalog
