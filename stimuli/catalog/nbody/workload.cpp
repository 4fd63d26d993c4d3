// nbody: all-pairs gravitational N-body simulation, a few integration steps as launches that
// alternate between two position buffers. Exercises shared-memory tiles of body positions with
// barriers, a real call of a __noinline__ device function taking and returning structs through
// .param space, rsqrtf (an approximate instruction), vector (float4) loads and stores, and a
// partial last block and tile. The reference integrates the same steps in double precision.
#include <algorithm>

#include "catalog.hpp"

namespace gpusc::catalog {

namespace {

struct Float4 {
  float x, y, z, w;
};

constexpr float kDt = 0.005f;
constexpr float kSoftening2 = 0.01f;
constexpr uint32_t kTile = 64;  // the block size the kernel is written for

// |got - want| <= bound for every element (element 3 * body + axis); reports the first
// mismatch, or the largest error as a fraction of its bound.
CheckResult compareBounded(const std::vector<double>& got, const std::vector<double>& want,
                           const std::vector<double>& bound, const std::string& what) {
  double worst = 0;
  for (size_t k = 0; k < got.size(); ++k) {
    double err = std::fabs(got[k] - want[k]);
    if (!(err <= bound[k]))
      return {false, fmt::format("{}[{}].{} = {:.9g}, expected {:.9g} (error bound {:.3g})", what,
                                 k / 3, "xyz"[k % 3], got[k], want[k], bound[k])};
    if (bound[k] > 0) worst = std::max(worst, err / bound[k]);
  }
  return {true, fmt::format("{}: {} values within their error bounds (worst {:.2f} of the bound)",
                            what, got.size(), worst)};
}

class NBody : public Workload {
 public:
  explicit NBody(Size s) {
    switch (s) {
      case Size::Tiny:
        n_ = 100, steps_ = 2;
        break;
      case Size::Small:
        n_ = 700, steps_ = 2;
        break;
      case Size::Large:  // none (CatalogEntry::large): make() refuses it
      case Size::Default:
        n_ = 800, steps_ = 3;
        break;
    }
  }

  std::string describe() const override { return fmt::format("bodies={} steps={}", n_, steps_); }

  void setup(Device& dev) override {
    // Bodies in a unit cube with small random velocities; w of a position is the mass.
    Rng rng(71);
    pos_.resize(n_);
    vel_.resize(n_);
    for (auto& p : pos_)
      p = {rng.uniformf(-1, 1), rng.uniformf(-1, 1), rng.uniformf(-1, 1),
           rng.uniformf(0.5f, 1.5f) / n_};
    for (auto& v : vel_)
      v = {rng.uniformf(-0.1f, 0.1f), rng.uniformf(-0.1f, 0.1f), rng.uniformf(-0.1f, 0.1f), 0.0f};
    dpos_[0] = dev.upload(pos_);
    dpos_[1] = dev.malloc(n_ * sizeof(Float4));
    dvel_ = dev.upload(vel_);
    daccel_ = dev.malloc(n_ * sizeof(Float4));
  }

  void run(Device& dev) override {
    const Kernel& k = loadPtx(dev, "nbody").kernel("nbody_step");
    cur_ = 0;
    for (uint32_t step = 0; step < steps_; ++step) {
      dev.launch(k, {(n_ + kTile - 1) / kTile}, {kTile}, 0,
                 KernelArgs()
                     .ptr(dpos_[cur_])
                     .ptr(dpos_[1 - cur_])
                     .ptr(dvel_)
                     .ptr(daccel_)
                     .i32(static_cast<int32_t>(n_))
                     .f32(kDt)
                     .f32(kSoftening2));
      cur_ = 1 - cur_;
    }
  }

  CheckResult check(Device& dev) override {
    // Reference integration in double, element 3 * body + axis. Alongside each value, a bound
    // on the error the float device computation may have made in it:
    //  - an acceleration term is good to about 7e-7 relative (rsqrt.approx is within 2^-22.9,
    //    cubed, plus a few float roundings); the terms have both signs, so the error of the sum
    //    is bounded relative to the sum of the terms' magnitudes, not to the (smaller) result.
    //    From the second step on, the device positions differ from the reference ones by up to
    //    their bound, which moves each term by up to its derivative times that difference;
    //  - velocities and positions add dt times the error of what they integrate, and a float
    //    rounding (2^-24 relative) of the product and of the sum.
    constexpr double kTermError = 1e-6, kRounding = 0x1.0p-23;
    const size_t n = n_;
    std::vector<double> p(3 * n), v(3 * n), a(3 * n), mass(n);
    std::vector<double> pBound(3 * n, 0.0), vBound(3 * n, 0.0), aBound(3 * n);
    for (size_t i = 0; i < n; ++i) {
      p[3 * i] = pos_[i].x, p[3 * i + 1] = pos_[i].y, p[3 * i + 2] = pos_[i].z;
      v[3 * i] = vel_[i].x, v[3 * i + 1] = vel_[i].y, v[3 * i + 2] = vel_[i].z;
      mass[i] = pos_[i].w;
    }
    for (uint32_t step = 0; step < steps_; ++step) {
      for (size_t i = 0; i < n; ++i) {
        double acc[3] = {0, 0, 0}, bound[3] = {0, 0, 0};
        for (size_t j = 0; j < n; ++j) {
          double r[3], dr[3];  // the separation and a bound on its error
          for (int c = 0; c < 3; ++c)
            r[c] = p[3 * j + c] - p[3 * i + c], dr[c] = pBound[3 * j + c] + pBound[3 * i + c];
          double d2 = r[0] * r[0] + r[1] * r[1] + r[2] * r[2] + double(kSoftening2);
          double s = mass[j] / (d2 * std::sqrt(d2));
          // d(m r_c / d^3) / d r_k = s * (delta_ck - 3 r_c r_k / d^2)
          double radial =
              (std::fabs(r[0]) * dr[0] + std::fabs(r[1]) * dr[1] + std::fabs(r[2]) * dr[2]) / d2;
          for (int c = 0; c < 3; ++c) {
            acc[c] += r[c] * s;
            bound[c] +=
                kTermError * std::fabs(r[c] * s) + s * (dr[c] + 3 * std::fabs(r[c]) * radial);
          }
        }
        for (int c = 0; c < 3; ++c) a[3 * i + c] = acc[c], aBound[3 * i + c] = bound[c];
      }
      for (size_t k = 0; k < 3 * n; ++k) {
        v[k] += a[k] * kDt;
        vBound[k] += aBound[k] * kDt + kRounding * std::fabs(v[k]);
        p[k] += v[k] * kDt;
        pBound[k] += vBound[k] * kDt + kRounding * std::fabs(p[k]);
      }
    }

    auto gotPos = dev.download<Float4>(dpos_[cur_], n);
    auto gotVel = dev.download<Float4>(dvel_, n);
    auto gotAccel = dev.download<Float4>(daccel_, n);
    std::vector<double> gotP(3 * n), gotV(3 * n), gotA(3 * n);
    std::vector<float> gotMass(n), wantMass(n);
    for (size_t i = 0; i < n; ++i) {
      gotP[3 * i] = gotPos[i].x, gotP[3 * i + 1] = gotPos[i].y, gotP[3 * i + 2] = gotPos[i].z;
      gotV[3 * i] = gotVel[i].x, gotV[3 * i + 1] = gotVel[i].y, gotV[3 * i + 2] = gotVel[i].z;
      gotA[3 * i] = gotAccel[i].x, gotA[3 * i + 1] = gotAccel[i].y, gotA[3 * i + 2] = gotAccel[i].z;
      gotMass[i] = gotPos[i].w, wantMass[i] = pos_[i].w;
    }
    return allOf({compareBounded(gotA, a, aBound, "accel (last step)"),
                  compareBounded(gotV, v, vBound, "velocity"),
                  compareBounded(gotP, p, pBound, "position"),
                  compareExact(gotMass, wantMass, "mass")});
  }

 private:
  uint32_t n_ = 0, steps_ = 0;
  std::vector<Float4> pos_, vel_;
  DevPtr dpos_[2] = {0, 0}, dvel_ = 0, daccel_ = 0;
  int cur_ = 0;
};

}  // namespace

CatalogEntry make_nbody() {
  return {"nbody", "All-pairs gravitational N-body steps with shared-memory tiles",
          "shared-memory tiles, barriers, real call of a __noinline__ function, rsqrtf, float4",
          [](Size s) { return std::make_unique<NBody>(s); }};
}

}  // namespace gpusc::catalog
