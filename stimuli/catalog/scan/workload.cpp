// scan: work-efficient (Blelloch) exclusive prefix sum of uint32 over arrays much larger than a
// block: scan_blocks scans each block's 2*blockDim elements in `extern __shared__` memory sized
// at launch and writes the block totals; the totals are scanned recursively with the same kernel;
// add_offsets adds them back. Tiny and Small recurse through three levels.
// Exercises: dynamic shared memory, a barrier per tree level, divergence that halves the active
// threads at each level of the up-sweep (and doubles them in the down-sweep), strided shared
// accesses with growing bank conflicts, a partial last block, and several dependent launches.
// Integer arithmetic (wrapping modulo 2^32): compared exactly, with the grand total.
#include "catalog.hpp"

namespace gpusc::catalog {

namespace {

class Scan : public Workload {
 public:
  explicit Scan(Size s) {
    switch (s) {
      case Size::Tiny:  // 79 blocks -> 2 -> 1
        n_ = 5000, block_ = 32;
        break;
      case Size::Small:  // 1172 blocks -> 5 -> 1
        n_ = 300000, block_ = 128;
        break;
      case Size::Large:    // none (CatalogEntry::large): make() refuses it
      case Size::Default:  // 1563 blocks -> 4 -> 1
        n_ = 800000, block_ = 256;
        break;
    }
  }

  std::string describe() const override {
    return fmt::format("n={} block={} ({} elements per block)", n_, block_, 2 * block_);
  }

  void setup(Device& dev) override {
    Rng rng(41);
    in_.resize(n_);
    for (auto& v : in_) v = rng.next32();  // full range: the sums wrap
    din_ = dev.upload(in_);
    dout_ = dev.malloc(n_ * sizeof(uint32_t));
  }

  void run(Device& dev) override {
    Module& mod = loadPtx(dev, "scan");
    total_ = scanLevel(dev, mod, din_, dout_, n_);
  }

  CheckResult check(Device& dev) override {
    std::vector<uint32_t> want(n_);
    uint32_t sum = 0;
    for (uint32_t i = 0; i < n_; ++i) {
      want[i] = sum;
      sum += in_[i];
    }
    return allOf({compareExact(dev.download<uint32_t>(dout_, n_), want, "scan"),
                  compareExact(dev.download<uint32_t>(total_, 1), {sum}, "total")});
  }

 private:
  // Scans n elements of `in` into `out`; returns the device address of the one-element array
  // that holds the grand total (the block sum of the top level).
  DevPtr scanLevel(Device& dev, Module& mod, DevPtr in, DevPtr out, uint32_t n) {
    const uint32_t perBlock = 2 * block_;
    const uint32_t blocks = (n + perBlock - 1) / perBlock;
    DevPtr sums = dev.malloc(blocks * sizeof(uint32_t));
    dev.launch(mod.kernel("scan_blocks"), {blocks}, {block_}, perBlock * sizeof(uint32_t),
               KernelArgs().ptr(in).ptr(out).ptr(sums).i32(static_cast<int32_t>(n)));
    if (blocks == 1) return sums;
    DevPtr scannedSums = dev.malloc(blocks * sizeof(uint32_t));
    DevPtr total = scanLevel(dev, mod, sums, scannedSums, blocks);
    dev.launch(mod.kernel("add_offsets"), {blocks}, {block_}, 0,
               KernelArgs().ptr(out).ptr(scannedSums).i32(static_cast<int32_t>(n)));
    return total;
  }

  uint32_t n_ = 0, block_ = 0;
  std::vector<uint32_t> in_;
  DevPtr din_ = 0, dout_ = 0, total_ = 0;
};

}  // namespace

CatalogEntry make_scan() {
  return {"scan", "Blelloch exclusive prefix sum of uint32 with recursive block-sum scans",
          "dynamic shared memory, per-level barriers, halving divergence, several launches",
          [](Size s) { return std::make_unique<Scan>(s); }};
}

}  // namespace gpusc::catalog
