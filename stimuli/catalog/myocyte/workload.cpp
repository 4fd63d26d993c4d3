// myocyte: every thread integrates its own small ODE system (Rodinia's myocyte is the model),
// and every thread takes its own path: one of six kinds of equations (a switch inside a
// non-inlined function), 3-16 equations (the trip count of every inner loop), 8-96 time steps
// (the trip count of the outer loop), and comparisons of the state with thresholds. Exercises
// heavy divergence and low SIMD utilisation, calls with parameters and return values, local
// arrays indexed at run time (state and Heun stages, passed as generic pointers), scattered
// local read-modify-writes, expf, sinf (whose slow argument reduction uses its own local array)
// and division. Few threads: low occupancy, like myocyte. The check integrates every system in
// double on the host.
#include "catalog.hpp"

namespace gpusc::catalog {

namespace {

constexpr uint32_t kMaxEq = 16;  // MAXEQ in myocyte.cu
constexpr uint32_t kNPar = 4;    // NPAR in myocyte.cu
constexpr uint32_t kKinds = 6;

double gateRate(double v, double th, double a) {
  return v < th ? a * std::exp(v - th) : a * (1.0 + (v - th));
}

// The right-hand side of myocyte.cu's derivs, in double.
void derivs(int kind, int m, double t, const double* y, double* dy, const float* pf) {
  const double p[kNPar] = {pf[0], pf[1], pf[2], pf[3]};
  switch (kind) {
    case 0:
      for (int k = 0; k < m; ++k) {
        double left = k > 0 ? y[k - 1] : p[1];
        double right = k + 1 < m ? y[k + 1] : y[k];
        dy[k] = p[0] * (left - 2.0 * y[k] + right) - 0.5 * p[2] * y[k];
      }
      break;
    case 1: {
      double v = y[0], current = 0.0;
      for (int k = 1; k < m; ++k) {
        double alpha = gateRate(v, p[1] - 1.0, 0.5 * p[2]);
        double beta = gateRate(-v, 0.5 - p[1], 0.25 * p[3] * k);
        dy[k] = alpha * (1.0 - y[k]) - beta * y[k];
        current += (k & 1) ? y[k] : -y[k];
      }
      dy[0] = p[0] * (0.5 - v) + current / m;
      break;
    }
    case 2:
      for (int k = 0; k < m; ++k) {
        double in = k > 0 ? p[0] * y[k - 1] / (p[1] + y[k - 1]) : 0.5 * p[2];
        dy[k] = in - p[0] * y[k] / (p[1] + y[k]) - double(0.1f) * y[k];
      }
      break;
    case 3:
      for (int k = 0; k + 1 < m; k += 2) {
        double w = 0.5 * p[0] * (1 + k / 2);
        dy[k] = w * y[k + 1] - double(0.3f) * p[2] * y[k];
        dy[k + 1] = -w * y[k] - double(0.3f) * p[2] * y[k + 1];
      }
      if (m & 1) dy[m - 1] = -p[3] * y[m - 1];
      break;
    case 4:
      for (int k = 0; k < m; ++k) dy[k] = 0.5 * p[2] * (p[3] - y[k]);
      for (int k = 0; k < m; ++k) {
        if (y[k] > p[1]) {
          double release = p[0] * (y[k] - p[1]);
          dy[k] -= release;
          dy[(5 * k + 3) % m] += release;
        }
      }
      break;
    default:
      for (int k = 0; k < m; ++k)
        dy[k] = p[0] * y[k] * (1.0 - y[k] / (1.0 + p[1])) +
                double(0.3f) * (1.0 + std::sin(p[2] * t + k));
      break;
  }
}

class Myocyte : public Workload {
 public:
  explicit Myocyte(Size s) {
    if (s == Size::Tiny) {
      n_ = 40, maxEq_ = 6, maxSteps_ = 12;
    } else {
      n_ = s == Size::Small ? 160 : 250, maxEq_ = kMaxEq, maxSteps_ = 96;
    }
  }

  std::string describe() const override {
    return fmt::format("{} systems of up to {} equations, up to {} steps", n_, maxEq_, maxSteps_);
  }

  void setup(Device& dev) override {
    Rng rng(31337);
    kind_.resize(n_);
    neq_.resize(n_);
    steps_.resize(n_);
    params_.resize(n_ * kNPar);
    y0_.assign(n_ * kMaxEq, 0.0f);
    for (uint32_t i = 0; i < n_; ++i) {
      kind_[i] = static_cast<int32_t>(rng.below(kKinds));
      neq_[i] = static_cast<int32_t>(3 + rng.below(maxEq_ - 2));
      steps_[i] = static_cast<int32_t>(maxSteps_ / 12 + rng.below(maxSteps_ - maxSteps_ / 12 + 1));
      for (uint32_t q = 0; q < kNPar; ++q) params_[i * kNPar + q] = rng.uniformf(0.5f, 2.0f);
      for (int32_t k = 0; k < neq_[i]; ++k) y0_[i * kMaxEq + k] = rng.uniformf(0.0f, 1.5f);
    }
    dkind_ = dev.upload(kind_);
    dneq_ = dev.upload(neq_);
    dsteps_ = dev.upload(steps_);
    dparams_ = dev.upload(params_);
    dy0_ = dev.upload(y0_);
    dyout_ = dev.malloc(n_ * kMaxEq * sizeof(float));
  }

  void run(Device& dev) override {
    const Kernel& k = loadPtx(dev, "myocyte").kernel("myocyte");
    const uint32_t block = 64;
    dev.launch(k, {(n_ + block - 1) / block}, {block}, 0,
               KernelArgs()
                   .ptr(dkind_)
                   .ptr(dneq_)
                   .ptr(dsteps_)
                   .ptr(dparams_)
                   .ptr(dy0_)
                   .f32(kDt)
                   .ptr(dyout_)
                   .i32(static_cast<int32_t>(n_)));
  }

  CheckResult check(Device& dev) override {
    std::vector<double> want(n_ * kMaxEq, 0.0);
    const double dt = kDt;
    for (uint32_t i = 0; i < n_; ++i) {
      double y[kMaxEq], k1[kMaxEq], yt[kMaxEq], k2[kMaxEq];
      const int m = neq_[i];
      const float* p = &params_[i * kNPar];
      for (int k = 0; k < m; ++k) y[k] = y0_[i * kMaxEq + k];
      for (int it = 0; it < steps_[i]; ++it) {
        double t = double(float(it) * kDt);
        derivs(kind_[i], m, t, y, k1, p);
        for (int k = 0; k < m; ++k) yt[k] = y[k] + dt * k1[k];
        derivs(kind_[i], m, t + dt, yt, k2, p);
        for (int k = 0; k < m; ++k) y[k] += 0.5 * dt * (k1[k] + k2[k]);
      }
      for (int k = 0; k < m; ++k) want[i * kMaxEq + k] = y[k];
    }
    std::vector<float> got = dev.download<float>(dyout_, want.size());
    // Tolerance: the state stays O(1) and the systems are dissipative, so float rounding (a few
    // ulp per step, plus 2 ulp for expf/sinf) accumulates roughly linearly over <= 96 steps:
    // ~1e-5 relative at worst. Threshold tests that resolve differently in float and double
    // switch between branches that agree at the threshold, so they add only rounding-size errors.
    return compareClose(std::vector<double>(got.begin(), got.end()), want, 1e-4, 1e-5, "y");
  }

 private:
  static constexpr float kDt = 0.02f;
  uint32_t n_ = 0, maxEq_ = 0, maxSteps_ = 0;
  std::vector<int32_t> kind_, neq_, steps_;
  std::vector<float> params_, y0_;
  DevPtr dkind_ = 0, dneq_ = 0, dsteps_ = 0, dparams_ = 0, dy0_ = 0, dyout_ = 0;
};

}  // namespace

CatalogEntry make_myocyte() {
  return {
      "myocyte",
      "Per-thread ODE integration (Heun), a data-dependent kind, size and step count per thread",
      "heavy divergence, low SIMD utilisation, local arrays, device function calls, expf/sinf, low "
      "occupancy",
      [](Size s) { return std::make_unique<Myocyte>(s); }};
}

}  // namespace gpusc::catalog
