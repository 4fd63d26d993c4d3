// cta_waves as a stand-alone CUDA program: the catalog kernel (stimuli/catalog/cta_waves), waves
// of one-warp blocks with a quarter of the SM's shared memory each (12 KB on gtx480; a wave is
// as many blocks as the SMs hold at once), with the catalog workload's inputs,
// allocations and launches (two launches at the default size, each on its own half of the
// buffers); every output compared exactly with a host reference of the same fused multiply-adds.
//   cta_waves [tiny|small|default]
#include <algorithm>
#include <array>

#include "program.hpp"

#include "../catalog/cta_waves/cta_waves.cu"

namespace {

constexpr uint32_t kBlock = 32;
constexpr std::array<float, 8> kM = {0.5f,  0.5625f, 0.625f, 0.6875f,
                                     0.75f, 0.8125f, 0.875f, 0.9375f};

}  // namespace

int main(int argc, char** argv) {
  const Size size = parseSize(argc, argv);
  const uint32_t launches = size == Size::Default ? 2 : 1;
  // A quarter of the SM's shared memory per block, less what the system reserves per block, in
  // 256-byte units; a wave is as many blocks as the SMs hold at once with it.
  cudaDeviceProp prop{};
  CHECK(cudaGetDeviceProperties(&prop, 0));
  const size_t quarter = prop.sharedMemPerMultiprocessor / 4;
  const uint32_t shared = static_cast<uint32_t>(
      (quarter - std::min(quarter, prop.reservedSharedMemPerBlock)) / 256 * 256);
  int perSm = 0;
  CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&perSm, cta_waves, kBlock, shared));
  const uint32_t wave =
      static_cast<uint32_t>(prop.multiProcessorCount) * static_cast<uint32_t>(std::max(1, perSm));
  const uint32_t blocks = (size == Size::Tiny ? 2 : size == Size::Small ? 12 : 30) * wave;
  const int32_t iters = size == Size::Tiny ? 2 : 16;
  gpusc::Rng rng(4004);
  std::vector<float> in(size_t(launches) * blocks * kBlock);
  for (auto& v : in) v = rng.uniformf(-1.0f, 1.0f);
  float* din = upload(in);
  float* dm = upload(std::vector<float>(kM.begin(), kM.end()));
  float* dout = deviceAlloc<float>(in.size());

  const size_t perLaunch = size_t(blocks) * kBlock;  // floats
  for (uint32_t l = 0; l < launches; ++l) {
    cta_waves<<<blocks, kBlock, shared>>>(din + l * perLaunch, dm, dout + l * perLaunch, iters);
    CHECK(cudaGetLastError());
  }

  std::vector<float> want(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    const float x = in[i];
    float a = x;
    for (int32_t r = 0; r < iters; ++r)
      for (float m : kM) a = std::fma(a, m, x);
    want[i] = a;
  }
  return finish(compareExact(download(dout, in.size()), want, "out"));
}
