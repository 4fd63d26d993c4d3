// cta_waves: aligned thread-block launch and retirement, a root cause of the global second-order
// droop (seed 001, section 4.2, Fig. 16). Many one-warp blocks of identical work: a load that
// misses, then a chain of 8 x iters dependent FMAs, then a store. Each block reserves a quarter of
// the SM's shared memory (12 KB on gtx480; the kernel does not touch it) so that 4 fit on an SM,
// and a wave is that many blocks on every SM (60 on gtx480: the sizes count waves). The SM's issue
// is then bound by the chain's latency (4 warps, one FMA each per 6 cycles), so every block takes
// the same time whatever its neighbours do, the 60 blocks of a wave (15 SMs x 4) finish within
// one or two hundred cycles of one another, and the next wave starts on every SM at once: a stall
// on its load misses, then a burst. (With 8 blocks per SM, as the block limit allows, the SM is
// issue-bound, GTO favours the oldest block, a wave's blocks finish one after another, and the
// correlation of the SMs' power falls from 0.85 to below 0.2 within 30,000 cycles.) Measured on
// gtx480 (small, `--set power.sample_cycles=10`): a wave every ~1430 cycles; the start times of a
// wave's blocks spread over 3 cycles in the first wave, ~90 in the second and ~230 by the twelfth
// (the launches of the default size start aligned again); at every wave boundary the 15 SMs' power
// sum drops from about 64 W to 49 W for a few hundred cycles and comes back (5.6 W amplitude at the
// wave period, the SMs' power traces correlated 0.87).
//
// Checks: every output exactly (the reference repeats the PTX's fused multiply-adds in order).
#include <algorithm>
#include <array>

#include "catalog.hpp"

namespace gpusc::catalog {

namespace {

class CtaWaves : public Workload {
 public:
  explicit CtaWaves(Size s) {
    switch (s) {
      case Size::Tiny:
        launches_ = 1, waves_ = 2, iters_ = 2;
        break;
      case Size::Small:
        launches_ = 1, waves_ = 12, iters_ = 16;
        break;
      case Size::Large:  // none (CatalogEntry::large): make() refuses it
      case Size::Default:
        launches_ = 2, waves_ = 30, iters_ = 16;
        break;
    }
  }

  std::string describe() const override {
    if (wave_ == 0)
      return fmt::format(
          "{} launch(es) of {} waves of 4 blocks per SM, block={}, {} x 8 dependent FMAs",
          launches_, waves_, kBlock, iters_);
    return fmt::format(
        "{} launch(es) of grid={} block={} ({} waves of {} blocks, {} B of shared memory each), "
        "{} x 8 dependent FMAs",
        launches_, blocks_, kBlock, waves_, wave_, shared_, iters_);
  }

  void setup(Device& dev) override {
    // A quarter of the SM's shared memory per block (less what the system reserves per block),
    // in 256-byte units; a wave is as many blocks as the SMs hold at once with it.
    const auto& sm = dev.config().sm;
    shared_ = (sm.shared_memory_bytes / 4 -
               std::min(sm.shared_memory_bytes / 4, sm.shared_reserved_per_cta)) /
              256 * 256;
    const Kernel& k = loadPtx(dev, "cta_waves").kernel("cta_waves");
    wave_ = dev.config().gpu.num_sms * std::max(1u, dev.ctasPerSm(k, {kBlock}, shared_));
    blocks_ = waves_ * wave_;
    Rng rng(4004);
    in_.resize(size_t(launches_) * blocks_ * kBlock);
    for (auto& v : in_) v = rng.uniformf(-1.0f, 1.0f);
    din_ = dev.upload(in_);
    dm_ = dev.upload(std::vector<float>(kM.begin(), kM.end()));
    dout_ = dev.malloc(in_.size() * sizeof(float));
  }

  void run(Device& dev) override {
    const Kernel& k = loadPtx(dev, "cta_waves").kernel("cta_waves");
    const uint64_t bytesPerLaunch = uint64_t(blocks_) * kBlock * sizeof(float);
    for (uint32_t l = 0; l < launches_; ++l)
      dev.launch(k, {blocks_}, {kBlock}, shared_,
                 KernelArgs()
                     .ptr(din_ + l * bytesPerLaunch)
                     .ptr(dm_)
                     .ptr(dout_ + l * bytesPerLaunch)
                     .i32(iters_));
  }

  CheckResult check(Device& dev) override {
    std::vector<float> want(in_.size());
    for (size_t i = 0; i < in_.size(); ++i) {
      const float x = in_[i];
      float a = x;
      for (int32_t r = 0; r < iters_; ++r)
        for (float m : kM) a = std::fma(a, m, x);
      want[i] = a;
    }
    return compareExact(dev.download<float>(dout_, in_.size()), want, "out");
  }

 private:
  static constexpr uint32_t kBlock = 32;
  static constexpr std::array<float, 8> kM = {0.5f,  0.5625f, 0.625f, 0.6875f,
                                              0.75f, 0.8125f, 0.875f, 0.9375f};
  uint32_t launches_ = 0, waves_ = 0;
  uint32_t shared_ = 0, wave_ = 0, blocks_ = 0;  // set by setup(), from the platform
  int32_t iters_ = 0;
  std::vector<float> in_;
  DevPtr din_ = 0, dm_ = 0, dout_ = 0;
};

}  // namespace

CatalogEntry make_cta_waves() {
  return {
      "cta_waves",
      "Waves of short, identical one-warp blocks that finish together; the next wave starts at "
      "once",
      "many short blocks, aligned block launch and retirement, load miss then a dependent chain",
      [](Size s) { return std::make_unique<CtaWaves>(s); }};
}

}  // namespace gpusc::catalog
