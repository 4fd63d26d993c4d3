// bitonic_sort: sorts 2^k unsigned keys with a bitonic network. Chunks of 2 * block keys are
// sorted in dynamic shared memory; each larger merge then runs one global compare-exchange
// launch per stride down to the chunk size, and finishes in shared memory. Exercises many
// launches of the same kernels with different arguments, barriers, data-dependent divergence
// (the swap), shared-memory bank conflicts at small strides, and unsigned comparisons across
// the full 32-bit range. The result must equal std::sort exactly.
#include <algorithm>

#include "catalog.hpp"

namespace gpusc::catalog {

namespace {

class BitonicSort : public Workload {
 public:
  explicit BitonicSort(Size s) {
    switch (s) {
      case Size::Tiny:
        n_ = 1u << 11, block_ = 64;
        break;
      case Size::Small:
        n_ = 1u << 15, block_ = 256;
        break;
      case Size::Large:  // none (CatalogEntry::large): make() refuses it
      case Size::Default:
        n_ = 1u << 16, block_ = 256;
        break;
    }
  }

  std::string describe() const override { return fmt::format("n={} chunk={}", n_, 2 * block_); }

  void setup(Device& dev) override {
    Rng rng(31);
    keys_.resize(n_);
    // Mostly full-range keys, with a share of small ones so that duplicates occur.
    for (uint32_t i = 0; i < n_; ++i) keys_[i] = rng.below(4) == 0 ? rng.below(64) : rng.next32();
    dkeys_ = dev.upload(keys_);
  }

  void run(Device& dev) override {
    Module& mod = loadPtx(dev, "bitonic_sort");
    const Kernel& sortChunks = mod.kernel("bitonic_sort_chunks");
    const Kernel& mergeGlobal = mod.kernel("bitonic_merge_global");
    const Kernel& mergeChunk = mod.kernel("bitonic_merge_chunk");
    const uint32_t chunk = 2 * block_, chunks = n_ / chunk, shared = chunk * sizeof(uint32_t);
    const uint32_t globalBlock = std::min(256u, n_ / 2);

    dev.launch(sortChunks, {chunks}, {block_}, shared, KernelArgs().ptr(dkeys_));
    for (uint32_t size = 2 * chunk; size <= n_; size <<= 1) {
      for (uint32_t stride = size / 2; stride >= chunk; stride >>= 1)
        dev.launch(mergeGlobal, {n_ / 2 / globalBlock}, {globalBlock}, 0,
                   KernelArgs().ptr(dkeys_).u32(size).u32(stride));
      dev.launch(mergeChunk, {chunks}, {block_}, shared, KernelArgs().ptr(dkeys_).u32(size));
    }
  }

  CheckResult check(Device& dev) override {
    std::vector<uint32_t> want = keys_;
    std::sort(want.begin(), want.end());
    return compareExact(dev.download<uint32_t>(dkeys_, n_), want, "keys");
  }

 private:
  uint32_t n_ = 0, block_ = 0;
  std::vector<uint32_t> keys_;
  DevPtr dkeys_ = 0;
};

}  // namespace

CatalogEntry make_bitonic_sort() {
  return {"bitonic_sort", "Bitonic sort of 32-bit keys (shared-memory chunks + global merges)",
          "many launches with varying arguments, barriers, data-dependent swaps, bank conflicts",
          [](Size s) { return std::make_unique<BitonicSort>(s); }};
}

}  // namespace gpusc::catalog
