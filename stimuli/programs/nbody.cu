// nbody as a stand-alone CUDA program: the catalog kernel (stimuli/catalog/nbody) with the
// catalog workload's inputs, allocations and steps (launches alternating between two position
// buffers), checked on the host against a double-precision integration with error bounds.
//   nbody [tiny|small|default]
#include "program.hpp"

#include <algorithm>

#include "../catalog/nbody/nbody.cu"

constexpr float kDt = 0.005f;
constexpr float kSoftening2 = 0.01f;
constexpr uint32_t kTile = TILE;  // the block size the kernel is written for

// |got - want| <= bound for every element (element 3 * body + axis); reports the first
// mismatch, or the largest error as a fraction of its bound.
static CheckResult compareBounded(const std::vector<double>& got, const std::vector<double>& want,
                                  const std::vector<double>& bound, const std::string& what) {
  double worst = 0;
  char text[256];
  for (size_t k = 0; k < got.size(); ++k) {
    const double err = std::fabs(got[k] - want[k]);
    if (!(err <= bound[k])) {
      std::snprintf(text, sizeof text, "%s[%zu].%c = %.9g, expected %.9g (error bound %.3g)",
                    what.c_str(), k / 3, "xyz"[k % 3], got[k], want[k], bound[k]);
      return {false, text};
    }
    if (bound[k] > 0) worst = std::max(worst, err / bound[k]);
  }
  std::snprintf(text, sizeof text,
                "%s: %zu values within their error bounds (worst %.2f of the bound)", what.c_str(),
                got.size(), worst);
  return {true, text};
}

int main(int argc, char** argv) {
  const Size size = parseSize(argc, argv);
  uint32_t n = 800, steps = 3;
  if (size == Size::Tiny) n = 100, steps = 2;
  if (size == Size::Small) n = 700, steps = 2;

  // Bodies in a unit cube with small random velocities; w of a position is the mass.
  gpusc::Rng rng(71);
  std::vector<float4> pos(n), vel(n);
  for (auto& p : pos) {
    // Braced initialisers are evaluated left to right: the workload's draw order.
    p = float4{rng.uniformf(-1, 1), rng.uniformf(-1, 1), rng.uniformf(-1, 1),
               rng.uniformf(0.5f, 1.5f) / n};
  }
  for (auto& v : vel)
    v = float4{rng.uniformf(-0.1f, 0.1f), rng.uniformf(-0.1f, 0.1f), rng.uniformf(-0.1f, 0.1f),
               0.0f};
  float4* dpos[2];
  dpos[0] = upload(pos);
  dpos[1] = deviceAlloc<float4>(n);
  float4* dvel = upload(vel);
  float4* daccel = deviceAlloc<float4>(n);

  int cur = 0;
  for (uint32_t step = 0; step < steps; ++step) {
    nbody_step<<<(n + kTile - 1) / kTile, kTile>>>(dpos[cur], dpos[1 - cur], dvel, daccel, int(n),
                                                   kDt, kSoftening2);
    CHECK(cudaGetLastError());
    cur = 1 - cur;
  }

  // Reference integration in double, element 3 * body + axis, with a bound on the error the
  // float device computation may have made in each value (see the catalog workload).
  constexpr double kTermError = 1e-6, kRounding = 0x1.0p-23;
  std::vector<double> p(3 * size_t(n)), v(3 * size_t(n)), a(3 * size_t(n)), mass(n);
  std::vector<double> pBound(3 * size_t(n), 0.0), vBound(3 * size_t(n), 0.0), aBound(3 * size_t(n));
  for (size_t i = 0; i < n; ++i) {
    p[3 * i] = pos[i].x, p[3 * i + 1] = pos[i].y, p[3 * i + 2] = pos[i].z;
    v[3 * i] = vel[i].x, v[3 * i + 1] = vel[i].y, v[3 * i + 2] = vel[i].z;
    mass[i] = pos[i].w;
  }
  for (uint32_t step = 0; step < steps; ++step) {
    for (size_t i = 0; i < n; ++i) {
      double acc[3] = {0, 0, 0}, bound[3] = {0, 0, 0};
      for (size_t j = 0; j < n; ++j) {
        double r[3], dr[3];  // the separation and a bound on its error
        for (int c = 0; c < 3; ++c)
          r[c] = p[3 * j + c] - p[3 * i + c], dr[c] = pBound[3 * j + c] + pBound[3 * i + c];
        const double d2 = r[0] * r[0] + r[1] * r[1] + r[2] * r[2] + double(kSoftening2);
        const double s = mass[j] / (d2 * std::sqrt(d2));
        // d(m r_c / d^3) / d r_k = s * (delta_ck - 3 r_c r_k / d^2)
        const double radial =
            (std::fabs(r[0]) * dr[0] + std::fabs(r[1]) * dr[1] + std::fabs(r[2]) * dr[2]) / d2;
        for (int c = 0; c < 3; ++c) {
          acc[c] += r[c] * s;
          bound[c] += kTermError * std::fabs(r[c] * s) + s * (dr[c] + 3 * std::fabs(r[c]) * radial);
        }
      }
      for (int c = 0; c < 3; ++c) a[3 * i + c] = acc[c], aBound[3 * i + c] = bound[c];
    }
    for (size_t k = 0; k < 3 * size_t(n); ++k) {
      v[k] += a[k] * kDt;
      vBound[k] += aBound[k] * kDt + kRounding * std::fabs(v[k]);
      p[k] += v[k] * kDt;
      pBound[k] += vBound[k] * kDt + kRounding * std::fabs(p[k]);
    }
  }

  const std::vector<float4> gotPos = download(dpos[cur], n);
  const std::vector<float4> gotVel = download(dvel, n);
  const std::vector<float4> gotAccel = download(daccel, n);
  std::vector<double> gotP(3 * size_t(n)), gotV(3 * size_t(n)), gotA(3 * size_t(n));
  std::vector<float> gotMass(n), wantMass(n);
  for (size_t i = 0; i < n; ++i) {
    gotP[3 * i] = gotPos[i].x, gotP[3 * i + 1] = gotPos[i].y, gotP[3 * i + 2] = gotPos[i].z;
    gotV[3 * i] = gotVel[i].x, gotV[3 * i + 1] = gotVel[i].y, gotV[3 * i + 2] = gotVel[i].z;
    gotA[3 * i] = gotAccel[i].x, gotA[3 * i + 1] = gotAccel[i].y, gotA[3 * i + 2] = gotAccel[i].z;
    gotMass[i] = gotPos[i].w, wantMass[i] = pos[i].w;
  }
  return finish(allOf({compareBounded(gotA, a, aBound, "accel (last step)"),
                       compareBounded(gotV, v, vBound, "velocity"),
                       compareBounded(gotP, p, pBound, "position"),
                       compareExact(gotMass, wantMass, "mass")}));
}
