// histogram as a stand-alone CUDA program: the catalog kernel (stimuli/catalog/histogram),
// 256-bin byte histograms of a uniform and a skewed input (two launches), with the catalog
// workload's inputs, allocations, memsets and launches; counts compared exactly.
//   histogram [tiny|small|default]
#include "program.hpp"

#include "../catalog/histogram/histogram.cu"

int main(int argc, char** argv) {
  const Size size = parseSize(argc, argv);
  const uint32_t n = size == Size::Tiny ? 10003 : size == Size::Small ? 3000001 : 6000002;
  const uint32_t blocks = size == Size::Tiny ? 4 : size == Size::Small ? 60 : 120, block = 256;
  gpusc::Rng rng(81);
  std::vector<uint8_t> uniform(n), skewed(n);
  for (auto& v : uniform) v = static_cast<uint8_t>(rng.below(256));
  for (auto& v : skewed) {
    const uint32_t r = rng.below(100);
    v = static_cast<uint8_t>(r < 60   ? ' '
                             : r < 80 ? 'e'
                             : r < 90 ? 'a' + rng.below(26)
                                      : rng.below(256));
  }
  uint8_t* dUniform = upload(uniform);
  uint8_t* dSkewed = upload(skewed);
  unsigned* dHistU = deviceAlloc<unsigned>(256);
  unsigned* dHistS = deviceAlloc<unsigned>(256);
  CHECK(cudaMemset(dHistU, 0, 256 * sizeof(unsigned)));
  CHECK(cudaMemset(dHistS, 0, 256 * sizeof(unsigned)));

  histogram<<<blocks, block>>>(dUniform, int(n), dHistU);
  CHECK(cudaGetLastError());
  histogram<<<blocks, block>>>(dSkewed, int(n), dHistS);
  CHECK(cudaGetLastError());

  std::vector<unsigned> wantU(256, 0), wantS(256, 0);
  for (uint8_t v : uniform) ++wantU[v];
  for (uint8_t v : skewed) ++wantS[v];
  return finish(allOf({compareExact(download(dHistU, 256), wantU, "uniform histogram"),
                       compareExact(download(dHistS, 256), wantS, "skewed histogram")}));
}
