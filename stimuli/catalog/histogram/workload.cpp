// histogram: 256-bin byte histograms of two inputs, uniform bytes and a skewed text-like
// distribution (about 60% of the bytes are ' ' and 20% 'e': heavy contention on two bins).
// Exercises: shared-memory atomicAdd (with many lanes of a warp hitting the same address in the
// skewed input), per-block privatised bins, global atomicAdd merging, 32-bit loads split into
// bytes, a grid-stride loop, barriers, and a byte-load tail (n is not a multiple of 4).
// Counts are integers: compared exactly.
#include "catalog.hpp"

namespace gpusc::catalog {

namespace {

class Histogram : public Workload {
 public:
  explicit Histogram(Size s) {
    switch (s) {
      case Size::Tiny:
        n_ = 10003, blocks_ = 4;
        break;
      case Size::Small:
        n_ = 3000001, blocks_ = 60;
        break;
      case Size::Large:  // none (CatalogEntry::large): make() refuses it
      case Size::Default:
        n_ = 6000002, blocks_ = 120;
        break;
    }
  }

  std::string describe() const override {
    return fmt::format("2 inputs of {} bytes (uniform, skewed), grid={} block={}", n_, blocks_,
                       kBlock);
  }

  void setup(Device& dev) override {
    Rng rng(81);
    uniform_.resize(n_);
    skewed_.resize(n_);
    for (auto& v : uniform_) v = static_cast<uint8_t>(rng.below(256));
    for (auto& v : skewed_) {
      const uint32_t r = rng.below(100);
      v = static_cast<uint8_t>(r < 60   ? ' '
                               : r < 80 ? 'e'
                               : r < 90 ? 'a' + rng.below(26)
                                        : rng.below(256));
    }
    dUniform_ = dev.upload(uniform_);
    dSkewed_ = dev.upload(skewed_);
    dHistU_ = dev.malloc(256 * sizeof(uint32_t));
    dHistS_ = dev.malloc(256 * sizeof(uint32_t));
    dev.memset(dHistU_, 0, 256 * sizeof(uint32_t));
    dev.memset(dHistS_, 0, 256 * sizeof(uint32_t));
  }

  void run(Device& dev) override {
    const Kernel& k = loadPtx(dev, "histogram").kernel("histogram");
    const auto n = static_cast<int32_t>(n_);
    dev.launch(k, {blocks_}, {kBlock}, 0, KernelArgs().ptr(dUniform_).i32(n).ptr(dHistU_));
    dev.launch(k, {blocks_}, {kBlock}, 0, KernelArgs().ptr(dSkewed_).i32(n).ptr(dHistS_));
  }

  CheckResult check(Device& dev) override {
    std::vector<uint32_t> wantU(256, 0), wantS(256, 0);
    for (uint8_t v : uniform_) ++wantU[v];
    for (uint8_t v : skewed_) ++wantS[v];
    return allOf({compareExact(dev.download<uint32_t>(dHistU_, 256), wantU, "uniform histogram"),
                  compareExact(dev.download<uint32_t>(dHistS_, 256), wantS, "skewed histogram")});
  }

 private:
  static constexpr uint32_t kBlock = 256;
  uint32_t n_ = 0, blocks_ = 0;
  std::vector<uint8_t> uniform_, skewed_;
  DevPtr dUniform_ = 0, dSkewed_ = 0, dHistU_ = 0, dHistS_ = 0;
};

}  // namespace

CatalogEntry make_histogram() {
  return {"histogram",
          "256-bin byte histogram with shared-memory atomics (uniform and skewed input)",
          "shared and global atomics, atomic contention, privatisation, grid-stride loop, barriers",
          [](Size s) { return std::make_unique<Histogram>(s); }};
}

}  // namespace gpusc::catalog
