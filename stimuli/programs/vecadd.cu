// vecadd as a stand-alone CUDA program: the catalog kernel (stimuli/catalog/vecadd) with the
// catalog workload's inputs, allocations and launch, checked on the host.
//   vecadd [tiny|small|default]
#include "program.hpp"

#include "../catalog/vecadd/vecadd.cu"

int main(int argc, char** argv) {
  const Size size = parseSize(argc, argv);
  const uint32_t n = size == Size::Tiny ? 1000 : size == Size::Small ? 100000 : 1 << 20;
  gpusc::Rng rng(1);
  std::vector<float> a(n), b(n);
  for (uint32_t i = 0; i < n; ++i) {
    a[i] = rng.uniformf(-1.0f, 1.0f);
    b[i] = rng.uniformf(-1.0f, 1.0f);
  }
  float* da = upload(a);
  float* db = upload(b);
  float* dc = deviceAlloc<float>(n);
  const uint32_t block = 256;
  vecadd<<<(n + block - 1) / block, block>>>(da, db, dc, int(n));
  CHECK(cudaGetLastError());
  const std::vector<float> c = download(dc, n);
  std::vector<float> want(n);
  for (uint32_t i = 0; i < n; ++i) want[i] = a[i] + b[i];
  return finish(compareExact(c, want, "c"));
}
