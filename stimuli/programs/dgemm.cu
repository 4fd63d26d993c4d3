// dgemm as a stand-alone CUDA program: the catalog kernels (stimuli/catalog/dgemm), a tiled
// double-precision C = A * B, then D = sqrt(|C|) * exp(-C^2 * invVar / 2), with the catalog
// workload's inputs, allocations and launches; C compared exactly (the reference accumulates with
// std::fma in ascending k, as the PTX does), D within 1e-14 relative.
//   dgemm [tiny|small|default]
#include "program.hpp"

#include "../catalog/dgemm/dgemm.cu"

int main(int argc, char** argv) {
  const Size size = parseSize(argc, argv);
  const uint32_t m = size == Size::Tiny ? 45 : size == Size::Small ? 200 : 256;
  const uint32_t n = size == Size::Tiny ? 29 : size == Size::Small ? 184 : 256;
  const uint32_t k = size == Size::Tiny ? 37 : size == Size::Small ? 232 : 256;
  const double invVar = 9.0 / k;
  gpusc::Rng rng(71);
  std::vector<double> a(size_t(m) * k), b(size_t(k) * n);
  for (auto& v : a) v = rng.uniform(-1.0, 1.0);
  for (auto& v : b) v = rng.uniform(-1.0, 1.0);
  double* da = upload(a);
  double* db = upload(b);
  double* dc = deviceAlloc<double>(size_t(m) * n);
  double* dd = deviceAlloc<double>(size_t(m) * n);

  const uint32_t tk = 16, tm = 32;
  dgemm<<<dim3((n + tk - 1) / tk, (m + tm - 1) / tm), dim3(tk, tk)>>>(da, db, dc, int(m), int(n),
                                                                      int(k));
  CHECK(cudaGetLastError());
  const uint32_t count = m * n, block = 128;
  dgemm_post<<<(count + block - 1) / block, block>>>(dc, dd, int(count), invVar);
  CHECK(cudaGetLastError());

  std::vector<double> c(size_t(m) * n), d(c.size());
  for (uint32_t i = 0; i < m; ++i)
    for (uint32_t j = 0; j < n; ++j) {
      double sum = 0.0;
      for (uint32_t kk = 0; kk < k; ++kk)
        sum = std::fma(a[size_t(i) * k + kk], b[size_t(kk) * n + j], sum);
      c[size_t(i) * n + j] = sum;
    }
  for (size_t i = 0; i < c.size(); ++i)
    d[i] = std::sqrt(std::fabs(c[i])) * std::exp(-0.5 * c[i] * c[i] * invVar);
  return finish(allOf({compareExact(download(dc, c.size()), c, "C"),
                       compareClose(download(dd, d.size()), d, 1e-14, 0.0, "D")}));
}
