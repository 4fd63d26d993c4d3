// power_virus: the local first-order droop's root causes (seed 001, section 4.1), dispatch
// stalls followed by bursts of register-file and SIMD activity. One block per SM at small and
// default size (grid = the platform's gpu.num_sms, 15 on gtx480; CTAs are placed round-robin),
// two blocks at tiny. Each phase one thread of the block follows a chain of dependent loads while
// the other warps wait at a barrier, then every warp bursts into 16 independent FMAs and 4
// integer operations per round.
// Two launches of the same kernel set the period of the power swing (gtx480, small size,
// `--set power.sample_cycles=10`):
// - "dram": 12 warps; the chain walks a 4 MB random cycle (larger than the L2), so each step is
//   a DRAM miss of about 300 cycles, and the warps burst for about 450: a swing of about 750
//   cycles, the second-order (~1 MHz at 700 MHz) resonance;
// - "short": 2 warps and no chain: thread 0's shared-memory store and the two barriers are the
//   stall, the burst lasts about 50 cycles: a swing of about 130 cycles, towards the first-order
//   (~100 MHz) resonance; the SM goes from idle to most of its burst power within one 10-cycle
//   sample of the barrier's release.
//
// Checks, all exact: each thread's accumulator sum (the reference repeats the PTX's fused
// multiply-adds and additions in the same order with std::fma), its integer hash (which mixes in
// the chain's value of every phase, so a barrier that let a warp read a stale value would show),
// and where each block's chain ended.
#include <array>

#include "catalog.hpp"

namespace gpusc::catalog {

namespace {

struct VirusLaunch {
  const char* name;
  uint32_t block;      // threads per block
  uint32_t tableSize;  // entries of the chain's random cycle
  int32_t chaseSteps;  // dependent loads per phase
  int32_t rounds;      // burst rounds per phase
  int32_t phases;
};

class PowerVirus : public Workload {
 public:
  explicit PowerVirus(Size s) {
    switch (s) {
      case Size::Tiny:
        grid_ = 2;
        perSm_ = 0;
        launches_ = {VirusLaunch{"dram", 256, 1u << 14, 1, 1, 4},
                     VirusLaunch{"short", 64, 1, 0, 1, 8}};
        break;
      case Size::Small:
        launches_ = {VirusLaunch{"dram", 384, 1u << 20, 1, 1, 40},
                     VirusLaunch{"short", 64, 1, 0, 1, 200}};
        break;
      case Size::Large:  // none (CatalogEntry::large): make() refuses it
      case Size::Default:
        launches_ = {VirusLaunch{"dram", 384, 1u << 20, 1, 1, 120},
                     VirusLaunch{"short", 64, 1, 0, 1, 600}};
        break;
    }
  }

  std::string describe() const override {
    std::string d =
        grid_ > 0 ? fmt::format("grid={}", grid_) : std::string("grid=one block per SM");
    for (const auto& l : launches_)
      d += fmt::format("; {}: block={}, {} x ({}, {} burst round(s))", l.name, l.block, l.phases,
                       l.chaseSteps > 0 ? fmt::format("{} load(s) in a cycle of {} entries",
                                                      l.chaseSteps, l.tableSize)
                                        : std::string("no chain"),
                       l.rounds);
    return d;
  }

  void setup(Device& dev) override {
    if (perSm_ > 0) grid_ = perSm_ * dev.config().gpu.num_sms;
    Rng rng(1001);
    for (auto& l : launches_) {
      Data d;
      // One random cycle through all entries (Sattolo's algorithm): every chain is long.
      d.next.resize(l.tableSize);
      for (uint32_t i = 0; i < l.tableSize; ++i) d.next[i] = i;
      for (uint32_t i = l.tableSize - 1; i > 0; --i) std::swap(d.next[i], d.next[rng.below(i)]);
      const uint32_t n = grid_ * l.block;
      d.coef.resize(8 * size_t(n));
      for (uint32_t i = 0; i < 4 * n; ++i) d.coef[i] = rng.uniformf(0.5f, 0.9f);
      for (uint32_t i = 4 * n; i < 8 * n; ++i) d.coef[i] = rng.uniformf(-1.0f, 1.0f);
      d.dNext = dev.upload(d.next);
      d.dCoef = dev.upload(d.coef);
      d.dOut = dev.malloc(n * sizeof(float));
      d.dHash = dev.malloc(n * sizeof(uint32_t));
      d.dChase = dev.malloc(grid_ * sizeof(uint32_t));
      data_.push_back(std::move(d));
    }
  }

  void run(Device& dev) override {
    const Kernel& k = loadPtx(dev, "power_virus").kernel("power_virus");
    for (size_t i = 0; i < launches_.size(); ++i) {
      const VirusLaunch& l = launches_[i];
      const Data& d = data_[i];
      dev.launch(k, {grid_}, {l.block}, 0,
                 KernelArgs()
                     .ptr(d.dNext)
                     .ptr(d.dCoef)
                     .ptr(d.dOut)
                     .ptr(d.dHash)
                     .ptr(d.dChase)
                     .i32(l.phases)
                     .i32(l.chaseSteps)
                     .i32(l.rounds));
    }
  }

  CheckResult check(Device& dev) override {
    std::vector<CheckResult> results;
    for (size_t i = 0; i < launches_.size(); ++i) {
      const VirusLaunch& l = launches_[i];
      const Data& d = data_[i];
      const uint32_t n = grid_ * l.block;
      std::vector<float> wantOut(n);
      std::vector<uint32_t> wantHash(n), wantChase(grid_);
      for (uint32_t b = 0; b < grid_; ++b) {
        // The value thread 0 publishes each phase.
        std::vector<uint32_t> token(l.phases);
        uint32_t p = b;
        for (int32_t ph = 0; ph < l.phases; ++ph) {
          for (int32_t s = 0; s < l.chaseSteps; ++s) p = d.next[p];
          token[ph] = p;
        }
        wantChase[b] = p;
        for (uint32_t t = 0; t < l.block; ++t) {
          const uint32_t gid = b * l.block + t;
          std::array<float, 4> m{}, c{};
          for (int k = 0; k < 4; ++k) {
            m[k] = d.coef[size_t(k) * n + gid];
            c[k] = d.coef[size_t(k + 4) * n + gid];
          }
          std::array<float, 16> a{};
          uint32_t h0 = gid, h1 = gid * 0x9e3779b9u;
          for (int32_t ph = 0; ph < l.phases; ++ph) {
            for (int32_t r = 0; r < l.rounds; ++r) {
              for (int k = 0; k < 16; ++k) a[k] = std::fma(a[k], m[k % 4], c[(k + k / 4 + 1) % 4]);
              h0 = h0 * 0x01000193u + h1;
              h1 = (h1 ^ (h1 >> 7)) + h0;
            }
            h0 ^= token[ph];
          }
          std::array<float, 4> q{};
          for (int k = 0; k < 4; ++k)
            q[k] = (a[4 * k] + a[4 * k + 1]) + (a[4 * k + 2] + a[4 * k + 3]);
          wantOut[gid] = (q[0] + q[1]) + (q[2] + q[3]);
          wantHash[gid] = h0 ^ h1;
        }
      }
      const std::string name = l.name;
      results.push_back(compareExact(dev.download<float>(d.dOut, n), wantOut, name + " out"));
      results.push_back(compareExact(dev.download<uint32_t>(d.dHash, n), wantHash, name + " hash"));
      results.push_back(
          compareExact(dev.download<uint32_t>(d.dChase, grid_), wantChase, name + " chain end"));
    }
    for (const auto& r : results)
      if (!r.pass) return r;
    return {true, fmt::format("{} launches: every thread's sum and hash and every chain end exact",
                              launches_.size())};
  }

 private:
  struct Data {
    std::vector<uint32_t> next;
    std::vector<float> coef;
    DevPtr dNext = 0, dCoef = 0, dOut = 0, dHash = 0, dChase = 0;
  };
  uint32_t grid_ = 0;   // set by setup() when sized by the SM count
  uint32_t perSm_ = 1;  // blocks per SM (0: grid_ is fixed)
  std::vector<VirusLaunch> launches_;
  std::vector<Data> data_;
};

}  // namespace

CatalogEntry make_power_virus() {
  return {
      "power_virus",
      "Power virus: warps wait for a slow warp's dependent loads, then burst into FMAs together",
      "dispatch stalls then register-file and SIMD bursts, barrier per phase, one block per SM",
      [](Size s) { return std::make_unique<PowerVirus>(s); }};
}

}  // namespace gpusc::catalog
