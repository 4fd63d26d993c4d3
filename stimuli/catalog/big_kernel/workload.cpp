// big_kernel: instruction-cache miss stalls on every SM at the same places, a root cause of the
// global second-order droop (seed 001, section 4.2, Fig. 15). The loop body is about 730 PTX
// instructions of straight-line code (5.7 KB at 8 bytes an instruction; the I-cache of gtx480 is
// 2 KB, 4 sets of 4 ways of 128-byte lines), executed `iters` times: the cache, LRU and
// smaller than the loop, keeps none of it from one iteration to the next, so every warp of
// every SM walks through about 46 line misses per iteration, at the same points of the code.
// Two blocks of 4 warps per SM at small and default size (grid = twice the platform's
// gpu.num_sms, 30 on gtx480; the body keeps about 90 registers per
// thread live; blocks of 128 threads also fit the stream platforms' 16K-register SMs).
// Measured on gtx480 (small, `--set power.sample_cycles=10`): 2925 I-cache misses (15 SMs x 4
// iterations x ~46 lines + the prologue); fetch is the scheduler's outcome in 60% of cycles;
// each SM alternates a burst of about 130 cycles (its 8 warps run the 16 instructions of a line)
// with about 100 cycles waiting for the next line, and the 15 SMs do so within tens of cycles of
// one another: their sum swings between 49 and 68 W with a period of 234 cycles.
//
// Checks, all exact: the 4 float and 4 integer state registers of every thread. The host runs
// the same body (big_kernel_body.cuh, compiled by the host compiler), whose float operations
// each round once (fused multiply-adds, min/max, exact conversions).
#include "big_kernel_body.cuh"
#include "catalog.hpp"

namespace gpusc::catalog {

namespace {

class BigKernel : public Workload {
 public:
  explicit BigKernel(Size s) {
    switch (s) {
      case Size::Tiny:
        grid_ = 2, perSm_ = 0, iters_ = 2;
        break;
      case Size::Small:
        iters_ = 4;
        break;
      case Size::Large:  // none (CatalogEntry::large): make() refuses it
      case Size::Default:
        iters_ = 12;
        break;
    }
  }

  std::string describe() const override {
    return fmt::format("grid={} block={}, {} iterations of a {}-step body",
                       grid_ > 0 ? std::to_string(grid_) : fmt::format("{} blocks per SM", perSm_),
                       kBlock, iters_, kBigKernelSteps);
  }

  void setup(Device& dev) override {
    if (perSm_ > 0) grid_ = perSm_ * dev.config().gpu.num_sms;
    Rng rng(3003);
    const size_t n = threads();
    f_.resize(4 * n);
    u_.resize(4 * n);
    for (auto& v : f_) v = rng.uniformf(-4.0f, 4.0f);
    for (auto& v : u_) v = rng.next32();
    dfin_ = dev.upload(f_);
    duin_ = dev.upload(u_);
    dfout_ = dev.malloc(4 * n * sizeof(float));
    duout_ = dev.malloc(4 * n * sizeof(uint32_t));
  }

  void run(Device& dev) override {
    const Kernel& k = loadPtx(dev, "big_kernel").kernel("big_kernel");
    dev.launch(k, {grid_}, {kBlock}, 0,
               KernelArgs().ptr(dfin_).ptr(duin_).ptr(dfout_).ptr(duout_).i32(iters_));
  }

  CheckResult check(Device& dev) override {
    const size_t n = threads();
    std::vector<float> wantF(4 * n);
    std::vector<uint32_t> wantU(4 * n);
    for (size_t t = 0; t < n; ++t) {
      BigKernelState s{};
      for (size_t k = 0; k < 4; ++k) {
        s.f[k] = f_[k * n + t];
        s.u[k] = u_[k * n + t];
      }
      for (int32_t i = 0; i < iters_; ++i) bigKernelBody(s);
      for (size_t k = 0; k < 4; ++k) {
        wantF[k * n + t] = s.f[k];
        wantU[k * n + t] = s.u[k];
      }
    }
    return allOf({compareExact(dev.download<float>(dfout_, 4 * n), wantF, "float state"),
                  compareExact(dev.download<uint32_t>(duout_, 4 * n), wantU, "integer state")});
  }

 private:
  static constexpr uint32_t kBlock = 128;
  size_t threads() const { return size_t(grid_) * kBlock; }
  uint32_t grid_ = 0;   // set by setup() when sized by the SM count
  uint32_t perSm_ = 2;  // blocks per SM (0: grid_ is fixed)
  int32_t iters_ = 0;
  std::vector<float> f_;
  std::vector<uint32_t> u_;
  DevPtr dfin_ = 0, duin_ = 0, dfout_ = 0, duout_ = 0;
};

}  // namespace

CatalogEntry make_big_kernel() {
  return {"big_kernel",
          "A loop of 5.7 KB of straight-line code: I-cache misses at the same places on every SM",
          "instruction footprint over twice the I-cache, fetch stalls, varied int/float ops",
          [](Size s) { return std::make_unique<BigKernel>(s); }};
}

}  // namespace gpusc::catalog
