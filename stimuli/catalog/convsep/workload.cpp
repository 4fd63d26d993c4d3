// convsep: separable 2D convolution, a rows pass then a columns pass (two kernels, two launches),
// with a 9-tap filter in __constant__ memory (ld.const) and clamp-to-edge borders.
// Exercises: shared-memory tiles with a halo (apron) loaded by a strided loop, __syncthreads,
// constant-memory broadcast reads, 2D grids with partial edge blocks (the sizes are not multiples
// of the 32x8 block), and a producer/consumer dependence between two launches.
//
// The reference mirrors the kernels' arithmetic: each output is a chain of fused multiply-adds
// over the taps in ascending order starting from 0 (fma.rn.f32 in the PTX), so both the
// intermediate and the final image are bit-exact and compared exactly.
#include <algorithm>

#include "catalog.hpp"

namespace gpusc::catalog {

namespace {

constexpr int kRadius = 4;
constexpr int kTaps = 2 * kRadius + 1;
// The same literals as c_filter in convsep.cu.
constexpr float kFilter[kTaps] = {0.02f, 0.05f, 0.09f, 0.14f, 0.30f, 0.17f, 0.11f, 0.08f, 0.04f};

class ConvSep : public Workload {
 public:
  explicit ConvSep(Size s) {
    switch (s) {
      case Size::Tiny:
        w_ = 67, h_ = 45;
        break;
      case Size::Small:
        w_ = 509, h_ = 301;
        break;
      case Size::Large:  // none (CatalogEntry::large): make() refuses it
      case Size::Default:
        w_ = 800, h_ = 600;
        break;
    }
  }

  std::string describe() const override {
    return fmt::format("{}x{} image, {}-tap filter", w_, h_, kTaps);
  }

  void setup(Device& dev) override {
    Rng rng(21);
    img_.resize(size_t(w_) * h_);
    for (auto& v : img_) v = rng.uniformf(0.0f, 1.0f);
    din_ = dev.upload(img_);
    dtmp_ = dev.malloc(img_.size() * sizeof(float));
    dout_ = dev.malloc(img_.size() * sizeof(float));
  }

  void run(Device& dev) override {
    Module& mod = loadPtx(dev, "convsep");
    const uint32_t bx = 32, by = 8;
    const Dim3 grid{(w_ + bx - 1) / bx, (h_ + by - 1) / by, 1};
    const auto w = static_cast<int32_t>(w_), h = static_cast<int32_t>(h_);
    dev.launch(mod.kernel("conv_rows"), grid, {bx, by}, 0,
               KernelArgs().ptr(din_).ptr(dtmp_).i32(w).i32(h));
    dev.launch(mod.kernel("conv_cols"), grid, {bx, by}, 0,
               KernelArgs().ptr(dtmp_).ptr(dout_).i32(w).i32(h));
  }

  CheckResult check(Device& dev) override {
    const int w = static_cast<int>(w_), h = static_cast<int>(h_);
    auto at = [w](const std::vector<float>& v, int x, int y) { return v[size_t(y) * w + x]; };
    std::vector<float> tmp(img_.size()), out(img_.size());
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x) {
        float sum = 0.0f;
        for (int k = 0; k < kTaps; ++k)
          sum = std::fma(kFilter[k], at(img_, std::clamp(x + k - kRadius, 0, w - 1), y), sum);
        tmp[size_t(y) * w + x] = sum;
      }
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x) {
        float sum = 0.0f;
        for (int k = 0; k < kTaps; ++k)
          sum = std::fma(kFilter[k], at(tmp, x, std::clamp(y + k - kRadius, 0, h - 1)), sum);
        out[size_t(y) * w + x] = sum;
      }
    return allOf({compareExact(dev.download<float>(dtmp_, tmp.size()), tmp, "rows pass"),
                  compareExact(dev.download<float>(dout_, out.size()), out, "output")});
  }

 private:
  uint32_t w_ = 0, h_ = 0;
  std::vector<float> img_;
  DevPtr din_ = 0, dtmp_ = 0, dout_ = 0;
};

}  // namespace

CatalogEntry make_convsep() {
  return {"convsep", "Separable 2D convolution (rows then columns) with a constant-memory filter",
          "shared-memory halo tiles, constant memory, barriers, two dependent launches, 2D grid",
          [](Size s) { return std::make_unique<ConvSep>(s); }};
}

}  // namespace gpusc::catalog
