// aligned_dmiss: aligned data-cache-miss stalls across the SMs, a root cause of the global
// second-order droop (seed 001, section 4.2, Fig. 13 and 14). Every phase each thread issues 8
// independent coalesced loads of lines no cache holds, computes 16 rounds of 8 independent FMAs
// on them, and issues 8 independent stores that miss; the phases stream through `in` and `out`
// so nothing is reused. One block of 8 warps per SM (grid = the platform's gpu.num_sms, 15 on
// gtx480; two blocks at tiny): their 64 load misses fill the L1's 64 miss entries, the stores
// queue behind them, and every warp of the SM stalls (on data or on the load/store unit) until
// the memory system has answered; then the SM computes for about 1300 cycles. A barrier per
// phase keeps a block's warps in step, as the block-wide loop of a real kernel would; across the
// SMs nothing but the shared memory system lines the phases up.
// Measured on gtx480 (small, `--set power.sample_cycles=10`): each SM swings between 3.3 and
// 4.7 W with a period of about 2700 cycles, and the 15 SMs' sum between 49 and 69 W, in step
// (10 W amplitude at the phase period, against 0.68 W for one SM). The memory system lets the
// SMs drift apart slowly (their power's mean pairwise correlation falls from about 0.8 in the
// first phases to 0.3-0.5 by the fifth), so the stream is split into launches of 4 or 5 phases,
// as an iterative solver relaunches its kernels.
//
// Checks: every output exactly (the reference repeats the PTX's fused multiply-adds with
// std::fma), so a lost, duplicated or misplaced load or store shows.
#include "catalog.hpp"

namespace gpusc::catalog {

namespace {

class AlignedDmiss : public Workload {
 public:
  explicit AlignedDmiss(Size s) {
    switch (s) {
      case Size::Tiny:
        grid_ = 2, perSm_ = 0, launches_ = 1, phases_ = 2;
        break;
      case Size::Small:
        launches_ = 3, phases_ = 4;
        break;
      case Size::Large:  // none (CatalogEntry::large): make() refuses it
      case Size::Default:
        launches_ = 8, phases_ = 5;
        break;
    }
  }

  std::string describe() const override {
    return fmt::format(
        "grid={} block={}, {} launch(es) of {} phases of 8 loads, {} x 8 FMAs, 8 stores per thread",
        grid_ > 0 ? std::to_string(grid_) : std::string("one block per SM"), kBlock, launches_,
        phases_, kRounds);
  }

  void setup(Device& dev) override {
    if (perSm_ > 0) grid_ = perSm_ * dev.config().gpu.num_sms;
    Rng rng(2002);
    in_.resize(count());
    for (auto& v : in_) v = rng.uniformf(-1.0f, 1.0f);
    din_ = dev.upload(in_);
    dout_ = dev.malloc(count() * sizeof(float));
  }

  void run(Device& dev) override {
    const Kernel& k = loadPtx(dev, "aligned_dmiss").kernel("aligned_dmiss");
    // Launch l runs phases [l * phases_, (l + 1) * phases_) of one long stream.
    const uint64_t bytesPerLaunch = uint64_t(phases_) * 8 * grid_ * kBlock * sizeof(float);
    for (uint32_t l = 0; l < launches_; ++l)
      dev.launch(k, {grid_}, {kBlock}, 0,
                 KernelArgs()
                     .ptr(din_ + l * bytesPerLaunch)
                     .ptr(dout_ + l * bytesPerLaunch)
                     .i32(static_cast<int32_t>(phases_))
                     .i32(kRounds)
                     .f32(kM)
                     .f32(kC));
  }

  CheckResult check(Device& dev) override {
    const size_t n = size_t(grid_) * kBlock;
    std::vector<float> want(count());
    for (size_t i = 0; i < want.size(); ++i) {
      const float ck = kC + static_cast<float>((i / n) % 8);  // value k of its phase
      float v = in_[i];
      for (int32_t r = 0; r < kRounds; ++r) v = std::fma(v, kM, ck);
      want[i] = v;
    }
    return compareExact(dev.download<float>(dout_, count()), want, "out");
  }

 private:
  static constexpr uint32_t kBlock = 256;
  static constexpr int32_t kRounds = 16;
  static constexpr float kM = 0.75f, kC = 0.25f;
  size_t count() const { return size_t(launches_) * phases_ * 8 * grid_ * kBlock; }
  uint32_t grid_ = 0;   // set by setup() when sized by the SM count
  uint32_t perSm_ = 1;  // blocks per SM (0: grid_ is fixed)
  uint32_t launches_ = 0, phases_ = 0;
  std::vector<float> in_;
  DevPtr din_ = 0, dout_ = 0;
};

}  // namespace

CatalogEntry make_aligned_dmiss() {
  return {"aligned_dmiss",
          "Streaming load and store misses in phases: all SMs stall on full miss buffers together",
          "streaming misses, full L1 miss buffers and memory back-pressure, a barrier per phase",
          [](Size s) { return std::make_unique<AlignedDmiss>(s); }};
}

}  // namespace gpusc::catalog
