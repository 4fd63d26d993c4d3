// myocyte as a stand-alone CUDA program: the catalog kernel (stimuli/catalog/myocyte) with the
// catalog workload's inputs, allocations and launch, checked on the host by integrating every
// system in double.
//   myocyte [tiny|small|default]
#include "program.hpp"

#include "../catalog/myocyte/myocyte.cu"

constexpr uint32_t kMaxEq = MAXEQ;
constexpr uint32_t kNPar = NPAR;
constexpr uint32_t kKinds = 6;
constexpr float kDt = 0.02f;

static double gateRate(double v, double th, double a) {
  return v < th ? a * std::exp(v - th) : a * (1.0 + (v - th));
}

// The right-hand side of myocyte.cu's derivs, in double.
static void derivsRef(int kind, int m, double t, const double* y, double* dy, const float* pf) {
  const double p[kNPar] = {pf[0], pf[1], pf[2], pf[3]};
  switch (kind) {
    case 0:
      for (int k = 0; k < m; ++k) {
        const double left = k > 0 ? y[k - 1] : p[1];
        const double right = k + 1 < m ? y[k + 1] : y[k];
        dy[k] = p[0] * (left - 2.0 * y[k] + right) - 0.5 * p[2] * y[k];
      }
      break;
    case 1: {
      double v = y[0], current = 0.0;
      for (int k = 1; k < m; ++k) {
        const double alpha = gateRate(v, p[1] - 1.0, 0.5 * p[2]);
        const double beta = gateRate(-v, 0.5 - p[1], 0.25 * p[3] * k);
        dy[k] = alpha * (1.0 - y[k]) - beta * y[k];
        current += (k & 1) ? y[k] : -y[k];
      }
      dy[0] = p[0] * (0.5 - v) + current / m;
      break;
    }
    case 2:
      for (int k = 0; k < m; ++k) {
        const double in = k > 0 ? p[0] * y[k - 1] / (p[1] + y[k - 1]) : 0.5 * p[2];
        dy[k] = in - p[0] * y[k] / (p[1] + y[k]) - double(0.1f) * y[k];
      }
      break;
    case 3:
      for (int k = 0; k + 1 < m; k += 2) {
        const double w = 0.5 * p[0] * (1 + k / 2);
        dy[k] = w * y[k + 1] - double(0.3f) * p[2] * y[k];
        dy[k + 1] = -w * y[k] - double(0.3f) * p[2] * y[k + 1];
      }
      if (m & 1) dy[m - 1] = -p[3] * y[m - 1];
      break;
    case 4:
      for (int k = 0; k < m; ++k) dy[k] = 0.5 * p[2] * (p[3] - y[k]);
      for (int k = 0; k < m; ++k) {
        if (y[k] > p[1]) {
          const double release = p[0] * (y[k] - p[1]);
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

int main(int argc, char** argv) {
  const Size size = parseSize(argc, argv);
  uint32_t n = 250, maxEq = kMaxEq, maxSteps = 96;
  if (size == Size::Tiny) n = 40, maxEq = 6, maxSteps = 12;
  if (size == Size::Small) n = 160;

  gpusc::Rng rng(31337);
  std::vector<int32_t> kind(n), neq(n), steps(n);
  std::vector<float> params(n * kNPar), y0(n * kMaxEq, 0.0f);
  for (uint32_t i = 0; i < n; ++i) {
    kind[i] = static_cast<int32_t>(rng.below(kKinds));
    neq[i] = static_cast<int32_t>(3 + rng.below(maxEq - 2));
    steps[i] = static_cast<int32_t>(maxSteps / 12 + rng.below(maxSteps - maxSteps / 12 + 1));
    for (uint32_t q = 0; q < kNPar; ++q) params[i * kNPar + q] = rng.uniformf(0.5f, 2.0f);
    for (int32_t k = 0; k < neq[i]; ++k) y0[i * kMaxEq + k] = rng.uniformf(0.0f, 1.5f);
  }
  int32_t* dkind = upload(kind);
  int32_t* dneq = upload(neq);
  int32_t* dsteps = upload(steps);
  float* dparams = upload(params);
  float* dy0 = upload(y0);
  float* dyout = deviceAlloc<float>(n * kMaxEq);

  const uint32_t block = 64;
  myocyte<<<(n + block - 1) / block, block>>>(dkind, dneq, dsteps, dparams, dy0, kDt, dyout,
                                              int(n));
  CHECK(cudaGetLastError());

  std::vector<double> want(n * kMaxEq, 0.0);
  const double dt = kDt;
  for (uint32_t i = 0; i < n; ++i) {
    double y[kMaxEq], k1[kMaxEq], yt[kMaxEq], k2[kMaxEq];
    const int m = neq[i];
    const float* p = &params[i * kNPar];
    for (int k = 0; k < m; ++k) y[k] = y0[i * kMaxEq + k];
    for (int it = 0; it < steps[i]; ++it) {
      const double t = double(float(it) * kDt);
      derivsRef(kind[i], m, t, y, k1, p);
      for (int k = 0; k < m; ++k) yt[k] = y[k] + dt * k1[k];
      derivsRef(kind[i], m, t + dt, yt, k2, p);
      for (int k = 0; k < m; ++k) y[k] += 0.5 * dt * (k1[k] + k2[k]);
    }
    for (int k = 0; k < m; ++k) want[i * kMaxEq + k] = y[k];
  }
  const std::vector<float> got = download(dyout, want.size());
  // Float rounding accumulates roughly linearly over <= 96 steps (see the catalog workload).
  return finish(compareClose(asDouble(got), want, 1e-4, 1e-5, "y"));
}
