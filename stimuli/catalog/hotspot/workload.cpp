// hotspot: Rodinia-style transient thermal simulation of a chip on a 2D grid. Each launch runs
// up to `pyramid` time steps inside 16x16 shared-memory tiles (the pyramid scheme: overlapping
// tiles, a shrinking ring of valid cells, two barriers per step); launches alternate between
// two temperature buffers until all steps are done, the last launch doing the remainder.
// Exercises 2D grids, shared memory, repeated barriers, divergent edge blocks and inactive
// halo threads, and several launches with different arguments. The reference steps the whole
// grid in double precision.
#include <algorithm>

#include "catalog.hpp"

namespace gpusc::catalog {

namespace {

// Chip parameters (as in Rodinia's hotspot).
constexpr double kChipHeight = 0.016, kChipWidth = 0.016, kChipThickness = 0.0005;
constexpr double kFactorChip = 0.5, kSpecHeatSi = 1.75e6, kConductivitySi = 100;
constexpr double kMaxPowerDensity = 3.0e6, kPrecision = 0.001, kAmbient = 80.0;

class Hotspot : public Workload {
 public:
  explicit Hotspot(Size s) {
    switch (s) {
      case Size::Tiny:
        rows_ = 40, cols_ = 50, steps_ = 5, pyramid_ = 2;
        break;
      case Size::Small:
        rows_ = 200, cols_ = 300, steps_ = 8, pyramid_ = 2;
        break;
      case Size::Default:
        rows_ = 256, cols_ = 256, steps_ = 11, pyramid_ = 2;
        break;
      case Size::Large:  // a chip 8 times as wide and as high, at the default's cell size
        rows_ = 2048, cols_ = 2048, steps_ = 11, pyramid_ = 2;
        chipScale_ = 8.0;
        break;
    }
    double gridHeight = kChipHeight * chipScale_ / rows_,
           gridWidth = kChipWidth * chipScale_ / cols_;
    double cap = kFactorChip * kSpecHeatSi * kChipThickness * gridWidth * gridHeight;
    double rx = gridWidth / (2.0 * kConductivitySi * kChipThickness * gridHeight);
    double ry = gridHeight / (2.0 * kConductivitySi * kChipThickness * gridWidth);
    double rz = kChipThickness / (kConductivitySi * gridHeight * gridWidth);
    double maxSlope = kMaxPowerDensity / (kFactorChip * kChipThickness * kSpecHeatSi);
    double step = kPrecision / maxSlope;
    // The coefficients the device uses, as floats; the reference uses the same values.
    stepDivCap_ = static_cast<float>(step / cap);
    rx1_ = static_cast<float>(1 / rx);
    ry1_ = static_cast<float>(1 / ry);
    rz1_ = static_cast<float>(1 / rz);
  }

  std::string describe() const override {
    return fmt::format("grid={}x{} steps={} pyramid={}", rows_, cols_, steps_, pyramid_);
  }

  void setup(Device& dev) override {
    Rng rng(51);
    const size_t cells = size_t(rows_) * cols_;
    temp_.resize(cells);
    power_.resize(cells);
    for (size_t i = 0; i < cells; ++i) {
      temp_[i] = rng.uniformf(320.0f, 345.0f);
      power_[i] = rng.uniformf(0.0f, 0.5f);
    }
    dpower_ = dev.upload(power_);
    dtemp_[0] = dev.upload(temp_);
    dtemp_[1] = dev.malloc(cells * sizeof(float));
  }

  void run(Device& dev) override {
    const Kernel& k = loadPtx(dev, "hotspot").kernel("hotspot");
    const uint32_t block = 16;
    cur_ = 0;
    for (uint32_t done = 0; done < steps_;) {
      uint32_t steps = std::min(pyramid_, steps_ - done);
      uint32_t owned = block - 2 * steps;
      dev.launch(k, {(cols_ + owned - 1) / owned, (rows_ + owned - 1) / owned}, {block, block}, 0,
                 KernelArgs()
                     .ptr(dpower_)
                     .ptr(dtemp_[cur_])
                     .ptr(dtemp_[1 - cur_])
                     .i32(static_cast<int32_t>(rows_))
                     .i32(static_cast<int32_t>(cols_))
                     .i32(static_cast<int32_t>(steps))
                     .f32(stepDivCap_)
                     .f32(rx1_)
                     .f32(ry1_)
                     .f32(rz1_)
                     .f32(static_cast<float>(kAmbient)));
      cur_ = 1 - cur_;
      done += steps;
    }
  }

  CheckResult check(Device& dev) override {
    const int rows = static_cast<int>(rows_), cols = static_cast<int>(cols_);
    std::vector<double> t(temp_.begin(), temp_.end()), next(t.size());
    for (uint32_t step = 0; step < steps_; ++step) {
      for (int y = 0; y < rows; ++y)
        for (int x = 0; x < cols; ++x) {
          auto at = [&](int yy, int xx) {
            return t[size_t(std::clamp(yy, 0, rows - 1)) * cols + std::clamp(xx, 0, cols - 1)];
          };
          double c = at(y, x);
          next[size_t(y) * cols + x] =
              c + double(stepDivCap_) *
                      (power_[size_t(y) * cols + x] + (at(y + 1, x) + at(y - 1, x) - 2 * c) * ry1_ +
                       (at(y, x + 1) + at(y, x - 1) - 2 * c) * rx1_ + (kAmbient - c) * rz1_);
        }
      t.swap(next);
    }
    // Temperatures near 330 carry float roundings of about 2^-24 relative per step, and the
    // diffusion does not amplify them: the relative tolerance is a few roundings per step.
    return compareClose(asDouble(dev.download<float>(dtemp_[cur_], t.size())), t, 4e-7 * steps_,
                        0.0, "temperature");
  }

 private:
  uint32_t rows_ = 0, cols_ = 0, steps_ = 0, pyramid_ = 0;
  float stepDivCap_ = 0, rx1_ = 0, ry1_ = 0, rz1_ = 0;
  std::vector<float> temp_, power_;
  // The chip's width and height relative to kChipWidth and kChipHeight. The large grid keeps the
  // default's cell size: the explicit time step (from the power density, not the cell size) is
  // stable for that cell size, and a finer grid of the same chip would make it diverge.
  double chipScale_ = 1.0;
  DevPtr dpower_ = 0, dtemp_[2] = {0, 0};
  int cur_ = 0;
};

}  // namespace

CatalogEntry make_hotspot() {
  return {
      "hotspot", "Rodinia-style thermal simulation: pyramid 2D stencil, ping-pong launches",
      "2D grid, shared-memory tiles, repeated barriers, divergent edge blocks, several launches",
      [](Size s) { return std::make_unique<Hotspot>(s); }, true};
}

}  // namespace gpusc::catalog
