// blackscholes: Black-Scholes European call and put prices, one option per iteration of a
// grid-stride loop (the grid is smaller than the option count, so threads loop and the last
// round is partial). Exercises transcendental functions (expf, logf, sqrtf expanded inline),
// full-precision division, and selects (the reflection in the cumulative normal distribution).
// The reference is computed in double precision with the same polynomial approximation.
#include <algorithm>

#include "catalog.hpp"

namespace gpusc::catalog {

namespace {

constexpr float kRate = 0.02f;        // riskless interest rate
constexpr float kVolatility = 0.30f;  // volatility

double cumulativeNormal(double d) {
  const double a1 = 0.31938153, a2 = -0.356563782, a3 = 1.781477937, a4 = -1.821255978,
               a5 = 1.330274429;
  const double invSqrt2Pi = 0.39894228040143267794;
  double k = 1.0 / (1.0 + 0.2316419 * std::fabs(d));
  double tail =
      invSqrt2Pi * std::exp(-0.5 * d * d) * (k * (a1 + k * (a2 + k * (a3 + k * (a4 + k * a5)))));
  return d > 0 ? 1.0 - tail : tail;
}

class BlackScholes : public Workload {
 public:
  explicit BlackScholes(Size s)
      : n_(s == Size::Tiny    ? 3000
           : s == Size::Small ? 250000
                              : 400000),
        grid_(s == Size::Tiny ? 8 : 240) {}

  std::string describe() const override {
    return fmt::format("options={} grid={}x{}", n_, grid_, kBlock);
  }

  void setup(Device& dev) override {
    Rng rng(11);
    spot_.resize(n_);
    strike_.resize(n_);
    years_.resize(n_);
    for (uint32_t i = 0; i < n_; ++i) {
      spot_[i] = rng.uniformf(5.0f, 30.0f);
      strike_[i] = rng.uniformf(1.0f, 100.0f);
      years_[i] = rng.uniformf(0.25f, 10.0f);
    }
    dspot_ = dev.upload(spot_);
    dstrike_ = dev.upload(strike_);
    dyears_ = dev.upload(years_);
    dcall_ = dev.malloc(n_ * sizeof(float));
    dput_ = dev.malloc(n_ * sizeof(float));
  }

  void run(Device& dev) override {
    const Kernel& k = loadPtx(dev, "blackscholes").kernel("blackscholes");
    dev.launch(k, {grid_}, {kBlock}, 0,
               KernelArgs()
                   .ptr(dcall_)
                   .ptr(dput_)
                   .ptr(dspot_)
                   .ptr(dstrike_)
                   .ptr(dyears_)
                   .f32(kRate)
                   .f32(kVolatility)
                   .i32(static_cast<int32_t>(n_)));
  }

  CheckResult check(Device& dev) override {
    std::vector<double> call(n_), put(n_);
    const double r = kRate, v = kVolatility;
    for (uint32_t i = 0; i < n_; ++i) {
      double s = spot_[i], x = strike_[i], t = years_[i];
      double d1 = (std::log(s / x) + (r + 0.5 * v * v) * t) / (v * std::sqrt(t));
      double d2 = d1 - v * std::sqrt(t);
      double discountedStrike = x * std::exp(-r * t);
      call[i] = s * cumulativeNormal(d1) - discountedStrike * cumulativeNormal(d2);
      put[i] = discountedStrike * (1.0 - cumulativeNormal(d2)) - s * (1.0 - cumulativeNormal(d1));
    }
    // Prices are differences of terms up to max(S, X) = 100 times a cumulative probability.
    // In float the probability 1 - tail (and 1 - that, for the put) has an absolute precision
    // of a few 2^-24, so a price is good to about 100 * 4 * 2^-24 = 2.4e-5 absolute (observed
    // up to 5.5e-7); large prices also carry roundings of d1 and d2, hence 1e-5 relative.
    auto gotCall = asDouble(dev.download<float>(dcall_, n_));
    auto gotPut = asDouble(dev.download<float>(dput_, n_));
    return allOf({compareClose(gotCall, call, 1e-5, 2.4e-5, "call"),
                  compareClose(gotPut, put, 1e-5, 2.4e-5, "put")});
  }

 private:
  static constexpr uint32_t kBlock = 128;
  uint32_t n_, grid_;
  std::vector<float> spot_, strike_, years_;
  DevPtr dspot_ = 0, dstrike_ = 0, dyears_ = 0, dcall_ = 0, dput_ = 0;
};

}  // namespace

CatalogEntry make_blackscholes() {
  return {
      "blackscholes", "Black-Scholes European call and put option pricing",
      "transcendentals (expf/logf/sqrtf), fp32 division, selects, grid-stride loop, partial round",
      [](Size s) { return std::make_unique<BlackScholes>(s); }};
}

}  // namespace gpusc::catalog
