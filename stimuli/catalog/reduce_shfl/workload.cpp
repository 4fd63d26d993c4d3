// reduce_shfl: sum of a float array plus the count of its positive elements, in one launch.
// Exercises: warp shuffles (__shfl_down_sync trees for float and integer values), warp votes
// (__ballot_sync + __popc count the positive elements of each warp), a grid-stride loop, a
// cross-warp reduction through shared memory and __syncthreads, divergence (only warp 0 does the
// second level; only lane 0 writes), and global atomicAdd of both f32 and u32, one per block.
// n is not a multiple of 32, so the last warp has lanes past the end.
//
// Checks:
// - positives: exact.
// - blockSums (each block's float sum): exact. Within a block the order of the float additions
//   is fixed by the algorithm (each thread's grid-stride chain, then the shuffle trees), and the
//   reference performs the same additions in the same order.
// - sum: the blocks' atomicAdds may happen in any order, so it is compared with the double sum
//   of the reference block sums within the classical bound for B sequential float additions in
//   any order, gamma_B * sum_b |blockSum_b| with gamma_B = B*u / (1 - B*u) and u = 2^-24, plus
//   u * |sum| for rounding the reference to float. The bound is rigorous: no slack is added.
#include <array>

#include "catalog.hpp"

namespace gpusc::catalog {

namespace {

class ReduceShfl : public Workload {
 public:
  explicit ReduceShfl(Size s) {
    switch (s) {
      case Size::Tiny:
        n_ = 20001, blocks_ = 8;
        break;
      case Size::Small:
        n_ = 3000017, blocks_ = 120;
        break;
      case Size::Large:  // none (CatalogEntry::large): make() refuses it
      case Size::Default:
        n_ = 6000011, blocks_ = 240;
        break;
    }
  }

  std::string describe() const override {
    return fmt::format("n={} grid={} block={}", n_, blocks_, kBlock);
  }

  void setup(Device& dev) override {
    Rng rng(61);
    x_.resize(n_);
    for (auto& v : x_) v = rng.below(16) == 0 ? 0.0f : rng.uniformf(-1.0f, 1.0f);  // some zeros
    dx_ = dev.upload(x_);
    dsum_ = dev.malloc(sizeof(float));
    dcount_ = dev.malloc(sizeof(uint32_t));
    dblockSums_ = dev.malloc(blocks_ * sizeof(float));
    dev.memset(dsum_, 0, sizeof(float));
    dev.memset(dcount_, 0, sizeof(uint32_t));
  }

  void run(Device& dev) override {
    const Kernel& k = loadPtx(dev, "reduce_shfl").kernel("reduce_shfl");
    dev.launch(k, {blocks_}, {kBlock}, 0,
               KernelArgs()
                   .ptr(dx_)
                   .i32(static_cast<int32_t>(n_))
                   .ptr(dsum_)
                   .ptr(dcount_)
                   .ptr(dblockSums_));
  }

  CheckResult check(Device& dev) override {
    uint32_t positives = 0;
    for (float v : x_) positives += v > 0.0f;

    const uint32_t stride = blocks_ * kBlock, nRounded = (n_ + 31) / 32 * 32;
    std::vector<float> blockSums(blocks_);
    for (uint32_t b = 0; b < blocks_; ++b) {
      std::array<float, kBlock / 32> warpSums{};
      for (uint32_t w = 0; w < kBlock / 32; ++w) {
        std::array<float, 32> lanes{};
        for (uint32_t l = 0; l < 32; ++l)
          for (uint32_t i = b * kBlock + w * 32 + l; i < nRounded; i += stride)
            lanes[l] += i < n_ ? x_[i] : 0.0f;
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
    const double u = 0x1.0p-24, bu = blocks_ * u;
    const double bound = bu / (1 - bu) * sumAbsBlocks + u * std::fabs(sum);
    return allOf({compareExact(dev.download<uint32_t>(dcount_, 1), {positives}, "positives"),
                  compareExact(dev.download<float>(dblockSums_, blocks_), blockSums, "blockSums"),
                  compareClose(dev.download<float>(dsum_, 1), {static_cast<float>(sum)}, 0.0, bound,
                               "sum")});
  }

 private:
  static constexpr uint32_t kBlock = 256;

  // Lane 0's result of `for (off = 16; off > 0; off >>= 1) s += __shfl_down_sync(full, s, off)`:
  // at each step the lanes below `off` (the only ones lane 0 later depends on) add lane + off.
  static float warpTree(std::array<float, 32> v) {
    for (uint32_t off = 16; off > 0; off >>= 1)
      for (uint32_t l = 0; l < off; ++l) v[l] += v[l + off];
    return v[0];
  }

  uint32_t n_ = 0, blocks_ = 0;
  std::vector<float> x_;
  DevPtr dx_ = 0, dsum_ = 0, dcount_ = 0, dblockSums_ = 0;
};

}  // namespace

CatalogEntry make_reduce_shfl() {
  return {"reduce_shfl", "Float sum and positive count with warp shuffles, ballots and atomics",
          "warp shuffles, ballot/popc, grid-stride loop, shared memory, f32/u32 global atomics",
          [](Size s) { return std::make_unique<ReduceShfl>(s); }};
}

}  // namespace gpusc::catalog
