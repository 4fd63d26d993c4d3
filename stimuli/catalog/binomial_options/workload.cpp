// binomial_options: European call options priced on a binomial tree, one option per thread
// block. Exercises a barrier per tree level (hundreds per block), ping-pong dynamic shared
// memory, a shrinking number of active threads as the tree folds (divergence at the tail),
// single-thread fp64 setup (exp, sqrt in double) broadcast through shared memory, and expf.
// The reference folds the same tree in double precision.
#include <algorithm>

#include "catalog.hpp"

namespace gpusc::catalog {

namespace {

constexpr float kOptionRate = 0.06f;
constexpr float kOptionVolatility = 0.10f;

class BinomialOptions : public Workload {
 public:
  explicit BinomialOptions(Size s) {
    switch (s) {
      case Size::Tiny:
        options_ = 6, steps_ = 80, block_ = 32;
        break;
      case Size::Small:
        options_ = 24, steps_ = 512, block_ = 128;
        break;
      case Size::Large:  // none (CatalogEntry::large): make() refuses it
      case Size::Default:
        options_ = 32, steps_ = 640, block_ = 128;
        break;
    }
  }

  std::string describe() const override {
    return fmt::format("options={} steps={} block={}", options_, steps_, block_);
  }

  void setup(Device& dev) override {
    Rng rng(21);
    spot_.resize(options_);
    strike_.resize(options_);
    years_.resize(options_);
    for (uint32_t i = 0; i < options_; ++i) {
      spot_[i] = rng.uniformf(5.0f, 30.0f);
      strike_[i] = rng.uniformf(1.0f, 60.0f);
      years_[i] = rng.uniformf(0.25f, 10.0f);
    }
    dspot_ = dev.upload(spot_);
    dstrike_ = dev.upload(strike_);
    dyears_ = dev.upload(years_);
    dcall_ = dev.malloc(options_ * sizeof(float));
  }

  void run(Device& dev) override {
    const Kernel& k = loadPtx(dev, "binomial_options").kernel("binomial_options");
    const uint32_t shared = 2 * (steps_ + 1) * sizeof(float);
    dev.launch(k, {options_}, {block_}, shared,
               KernelArgs()
                   .ptr(dcall_)
                   .ptr(dspot_)
                   .ptr(dstrike_)
                   .ptr(dyears_)
                   .f32(kOptionRate)
                   .f32(kOptionVolatility)
                   .i32(static_cast<int32_t>(steps_)));
  }

  CheckResult check(Device& dev) override {
    std::vector<double> want(options_);
    const int n = static_cast<int>(steps_);
    std::vector<double> tree(n + 1);
    for (uint32_t o = 0; o < options_; ++o) {
      double dt = static_cast<double>(years_[o]) / n;
      double vDt = kOptionVolatility * std::sqrt(dt), rDt = kOptionRate * dt;
      double growth = std::exp(rDt), discount = std::exp(-rDt);
      double up = std::exp(vDt), down = std::exp(-vDt);
      double pu = (growth - down) / (up - down);
      double puByDf = pu * discount, pdByDf = (1.0 - pu) * discount;
      for (int i = 0; i <= n; ++i)
        tree[i] = std::max(spot_[o] * std::exp(vDt * (2 * i - n)) - strike_[o], 0.0);
      for (int level = n; level > 0; --level)
        for (int i = 0; i < level; ++i) tree[i] = puByDf * tree[i + 1] + pdByDf * tree[i];
      want[o] = tree[0];
    }
    // The device folds in float: the tree parameters are rounded to float (2^-24 relative), and
    // each of the `steps` levels adds a rounding, so the relative error grows with the depth
    // (steps * 2^-24 = 4e-5 for 640 steps). Far out-of-the-money options are worth almost
    // nothing; the absolute tolerance covers those.
    return compareClose(asDouble(dev.download<float>(dcall_, options_)), want, 1e-4, 1e-5, "call");
  }

 private:
  uint32_t options_ = 0, steps_ = 0, block_ = 0;
  std::vector<float> spot_, strike_, years_;
  DevPtr dspot_ = 0, dstrike_ = 0, dyears_ = 0, dcall_ = 0;
};

}  // namespace

CatalogEntry make_binomial_options() {
  return {"binomial_options", "Binomial-tree European call option pricing, one option per block",
          "a barrier per tree level, ping-pong shared memory, shrinking active threads, fp64 setup",
          [](Size s) { return std::make_unique<BinomialOptions>(s); }};
}

}  // namespace gpusc::catalog
