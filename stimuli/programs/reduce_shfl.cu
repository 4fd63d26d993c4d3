// reduce_shfl as a stand-alone CUDA program: the catalog kernel (stimuli/catalog/reduce_shfl)
// with the catalog workload's inputs, allocations, memsets and launch. The positive count and
// the block sums are checked exactly, the atomically accumulated sum within a rigorous bound.
//   reduce_shfl [tiny|small|default]
#include "program.hpp"

#include <array>

#include "../catalog/reduce_shfl/reduce_shfl.cu"

constexpr uint32_t kBlock = 256;

// Lane 0's result of `for (off = 16; off > 0; off >>= 1) s += __shfl_down_sync(full, s, off)`:
// at each step the lanes below `off` (the only ones lane 0 later depends on) add lane + off.
static float warpTree(std::array<float, 32> v) {
  for (uint32_t off = 16; off > 0; off >>= 1)
    for (uint32_t l = 0; l < off; ++l) v[l] += v[l + off];
  return v[0];
}

int main(int argc, char** argv) {
  const Size size = parseSize(argc, argv);
  uint32_t n = 6000011, blocks = 240;
  if (size == Size::Tiny) n = 20001, blocks = 8;
  if (size == Size::Small) n = 3000017, blocks = 120;

  gpusc::Rng rng(61);
  std::vector<float> x(n);
  for (auto& v : x) v = rng.below(16) == 0 ? 0.0f : rng.uniformf(-1.0f, 1.0f);  // some zeros
  float* dx = upload(x);
  float* dsum = deviceAlloc<float>(1);
  uint32_t* dcount = deviceAlloc<uint32_t>(1);
  float* dblockSums = deviceAlloc<float>(blocks);
  CHECK(cudaMemset(dsum, 0, sizeof(float)));
  CHECK(cudaMemset(dcount, 0, sizeof(uint32_t)));

  reduce_shfl<<<blocks, kBlock>>>(dx, int(n), dsum, dcount, dblockSums);
  CHECK(cudaGetLastError());

  uint32_t positives = 0;
  for (float v : x) positives += v > 0.0f;

  const uint32_t stride = blocks * kBlock, nRounded = (n + 31) / 32 * 32;
  std::vector<float> blockSums(blocks);
  for (uint32_t b = 0; b < blocks; ++b) {
    std::array<float, kBlock / 32> warpSums{};
    for (uint32_t w = 0; w < kBlock / 32; ++w) {
      std::array<float, 32> lanes{};
      for (uint32_t l = 0; l < 32; ++l)
        for (uint32_t i = b * kBlock + w * 32 + l; i < nRounded; i += stride)
          lanes[l] += i < n ? x[i] : 0.0f;
      warpSums[w] = warpTree(lanes);
    }
    std::array<float, 32> lanes{};  // warp 0's second level: lanes past the warps hold 0
    for (uint32_t w = 0; w < kBlock / 32; ++w) lanes[w] = warpSums[w];
    blockSums[b] = warpTree(lanes);
  }

  double sum = 0, sumAbsBlocks = 0;
  for (float s : blockSums) {
    sum += s;
    sumAbsBlocks += std::fabs(s);
  }
  // gamma_B * sum_b |blockSum_b| for B float additions in any order, plus rounding to float.
  const double u = 0x1.0p-24, bu = blocks * u;
  const double bound = bu / (1 - bu) * sumAbsBlocks + u * std::fabs(sum);
  return finish(
      allOf({compareExact(download(dcount, 1), std::vector<uint32_t>{positives}, "positives"),
             compareExact(download(dblockSums, blocks), blockSums, "blockSums"),
             compareClose(download(dsum, 1), std::vector<float>{static_cast<float>(sum)}, 0.0,
                          bound, "sum")}));
}
