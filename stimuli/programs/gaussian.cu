// gaussian as a stand-alone CUDA program: the catalog kernels (stimuli/catalog/gaussian),
// Gaussian elimination with two launches per pivot (gauss_fan1, gauss_fan2) and back substitution
// in one block (gauss_backsub), with the catalog workload's inputs, allocations and launches;
// checked against a double-precision host elimination with the catalog's tolerances.
//   gaussian [tiny|small|default]
#include <cfloat>

#include "program.hpp"

#include "../catalog/gaussian/gaussian.cu"

int main(int argc, char** argv) {
  const Size size = parseSize(argc, argv);
  const uint32_t n = size == Size::Tiny ? 37 : size == Size::Small ? 130 : 180;
  // A diagonally dominant system: off-diagonal entries in [-1, 1), each diagonal entry twice its
  // row's off-diagonal absolute sum plus 1; b = A x for a random x, computed in double.
  gpusc::Rng rng(99);
  std::vector<float> ha(size_t(n) * n);
  for (uint32_t i = 0; i < n; ++i) {
    double off = 0;
    for (uint32_t j = 0; j < n; ++j) {
      if (i == j) continue;
      ha[i * n + j] = rng.uniformf(-1.0f, 1.0f);
      off += std::fabs(ha[i * n + j]);
    }
    ha[i * n + i] = static_cast<float>(2 * off + 1);
  }
  std::vector<double> hx(n);
  for (auto& v : hx) v = rng.uniform(-1.0, 1.0);
  std::vector<float> hb(n);
  for (uint32_t i = 0; i < n; ++i) {
    double s = 0;
    for (uint32_t j = 0; j < n; ++j) s += double(ha[i * n + j]) * hx[j];
    hb[i] = static_cast<float>(s);
  }
  float* da = upload(ha);
  float* db = upload(hb);
  float* dm = upload(std::vector<float>(size_t(n) * n, 0.0f));  // the workload copies zeros
  float* dx = deviceAlloc<float>(n);

  const int ni = int(n);
  const uint32_t block1 = 128, tile = 16;
  for (uint32_t t = 0; t + 1 < n; ++t) {
    const uint32_t rows = n - 1 - t, cols = n - t;
    gauss_fan1<<<(rows + block1 - 1) / block1, block1>>>(da, dm, ni, int(t));
    CHECK(cudaGetLastError());
    gauss_fan2<<<dim3((cols + tile - 1) / tile, (rows + tile - 1) / tile), dim3(tile, tile)>>>(
        da, db, dm, ni, int(t));
    CHECK(cudaGetLastError());
  }
  gauss_backsub<<<1, 128>>>(da, db, dx, ni);
  CHECK(cudaGetLastError());

  // The same elimination in double.
  std::vector<double> a(ha.begin(), ha.end()), b(hb.begin(), hb.end()), m(size_t(n) * n, 0.0);
  for (uint32_t t = 0; t + 1 < n; ++t) {
    for (uint32_t i = t + 1; i < n; ++i) {
      m[i * n + t] = a[i * n + t] / a[t * n + t];
      for (uint32_t j = t; j < n; ++j) a[i * n + j] -= m[i * n + t] * a[t * n + j];
      b[i] -= m[i * n + t] * b[t];
    }
  }
  std::vector<double> x(n);
  for (uint32_t ii = n; ii-- > 0;) {
    double s = b[ii];
    for (uint32_t j = ii + 1; j < n; ++j) s -= a[ii * n + j] * x[j];
    x[ii] = s / a[ii * n + ii];
  }
  // The device's a and m restricted to what elimination defines: the upper triangle of a and
  // the strictly lower triangle of m.
  const std::vector<float> ga = download(da, a.size()), gm = download(dm, m.size());
  std::vector<double> gotU, wantU, gotM, wantM;
  for (uint32_t i = 0; i < n; ++i)
    for (uint32_t j = 0; j < n; ++j) {
      if (j >= i) {
        gotU.push_back(ga[i * n + j]);
        wantU.push_back(a[i * n + j]);
      } else {
        gotM.push_back(gm[i * n + j]);
        wantM.push_back(m[i * n + j]);
      }
    }
  // The catalog's tolerances (see stimuli/catalog/gaussian/workload.cpp).
  const double tol = n * FLT_EPSILON;
  return finish(allOf({compareClose(asDouble(download(dx, n)), x, 3 * tol, 3 * tol, "x"),
                       compareClose(gotU, wantU, tol, tol, "upper triangle of a"),
                       compareClose(gotM, wantM, tol, 2 * FLT_EPSILON, "multipliers m"),
                       compareClose(asDouble(download(db, n)), b, tol, tol, "eliminated b")}));
}
