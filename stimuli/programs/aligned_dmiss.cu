// aligned_dmiss as a stand-alone CUDA program: the catalog kernel (stimuli/catalog/aligned_dmiss)
// with the catalog workload's inputs, allocations and launches (one stream of phases split into
// several launches), checked exactly on the host.
//   aligned_dmiss [tiny|small|default]
#include "program.hpp"

#include "../catalog/aligned_dmiss/aligned_dmiss.cu"

int main(int argc, char** argv) {
  const Size size = parseSize(argc, argv);
  const uint32_t grid = size == Size::Tiny ? 2 : multiprocessors();  // one block per SM
  const uint32_t launches = size == Size::Tiny ? 1 : size == Size::Small ? 3 : 8;
  const uint32_t phases = size == Size::Tiny ? 2 : size == Size::Small ? 4 : 5;
  const uint32_t block = 256;
  const int32_t rounds = 16;
  const float m = 0.75f, c = 0.25f;
  const size_t count = size_t(launches) * phases * 8 * grid * block;

  gpusc::Rng rng(2002);
  std::vector<float> in(count);
  for (auto& v : in) v = rng.uniformf(-1.0f, 1.0f);
  float* din = upload(in);
  float* dout = deviceAlloc<float>(count);

  // Launch l runs phases [l * phases, (l + 1) * phases) of one long stream.
  const size_t perLaunch = size_t(phases) * 8 * grid * block;
  for (uint32_t l = 0; l < launches; ++l) {
    aligned_dmiss<<<grid, block>>>(din + l * perLaunch, dout + l * perLaunch, int(phases), rounds,
                                   m, c);
    CHECK(cudaGetLastError());
  }

  const size_t n = size_t(grid) * block;
  std::vector<float> want(count);
  for (size_t i = 0; i < count; ++i) {
    const float ck = c + static_cast<float>((i / n) % 8);  // value k of its phase
    float v = in[i];
    for (int32_t r = 0; r < rounds; ++r) v = std::fma(v, m, ck);
    want[i] = v;
  }
  return finish(compareExact(download(dout, count), want, "out"));
}
