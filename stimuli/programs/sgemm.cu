// sgemm as a stand-alone CUDA program: the catalog kernel (stimuli/catalog/sgemm) with the
// catalog workload's inputs, allocations and launch, checked on the host against a reference
// that mirrors the kernel's fused multiply-adds, so the result is compared exactly.
//   sgemm [tiny|small|default]
#include "program.hpp"

#include "../catalog/sgemm/sgemm.cu"

int main(int argc, char** argv) {
  const Size size = parseSize(argc, argv);
  uint32_t m = 0, n = 0, k = 0;
  switch (size) {
    case Size::Tiny:
      m = 37, n = 45, k = 29;
      break;
    case Size::Small:
      m = 200, n = 184, k = 232;
      break;
    case Size::Default:
      m = 256, n = 256, k = 256;
      break;
  }
  const float alpha = 1.5f, beta = -0.75f;
  gpusc::Rng rng(11);
  std::vector<float> a(size_t(m) * k), b(size_t(k) * n), c(size_t(m) * n);
  for (auto& v : a) v = rng.uniformf(-1.0f, 1.0f);
  for (auto& v : b) v = rng.uniformf(-1.0f, 1.0f);
  for (auto& v : c) v = rng.uniformf(-1.0f, 1.0f);
  float* da = upload(a);
  float* db = upload(b);
  float* dc = upload(c);

  const uint32_t tile = 16;
  sgemm<<<dim3((n + tile - 1) / tile, (m + tile - 1) / tile), dim3(tile, tile)>>>(
      da, db, dc, int(m), int(n), int(k), alpha, beta);
  CHECK(cudaGetLastError());

  std::vector<float> want(c.size());
  for (uint32_t i = 0; i < m; ++i)
    for (uint32_t j = 0; j < n; ++j) {
      float sum = 0.0f;
      for (uint32_t kk = 0; kk < k; ++kk)
        sum = std::fma(a[size_t(i) * k + kk], b[size_t(kk) * n + j], sum);
      const float scaledC = beta * c[size_t(i) * n + j];
      want[size_t(i) * n + j] = std::fma(sum, alpha, scaledC);
    }
  return finish(compareExact(download(dc, want.size()), want, "C"));
}
