// The workload shared by transpose_conflicts and transpose_padded: the same matrices, launches
// and exact check, run on the kernel of the catalog folder named `name`.
// Exercises: 2D grid of 32x8 blocks, coalesced global reads and writes, a barrier between the
// shared-memory writes and reads, and boundary predicates (the matrix is not square and neither
// dimension is a multiple of 32, so edge tiles are partial). A transpose only moves data, so the
// result is compared exactly.
#pragma once

#include "catalog.hpp"

namespace gpusc::catalog {

class TransposeWorkload : public Workload {
 public:
  TransposeWorkload(std::string name, Size s) : name_(std::move(name)) {
    switch (s) {
      case Size::Tiny:
        rows_ = 45, cols_ = 70;
        break;
      case Size::Small:
        rows_ = 1111, cols_ = 1234;
        break;
      case Size::Large:  // none (CatalogEntry::large): make() refuses it
      case Size::Default:
        rows_ = 1500, cols_ = 2000;
        break;
    }
  }

  std::string describe() const override {
    return fmt::format("{}x{} -> {}x{}", rows_, cols_, cols_, rows_);
  }

  void setup(Device& dev) override {
    Rng rng(31);
    in_.resize(size_t(rows_) * cols_);
    for (auto& v : in_) v = rng.uniformf(-100.0f, 100.0f);
    din_ = dev.upload(in_);
    dout_ = dev.malloc(in_.size() * sizeof(float));
  }

  void run(Device& dev) override {
    const Kernel& k = loadPtx(dev, name_).kernel(name_);
    const uint32_t tile = 32, blockRows = 8;
    dev.launch(k, {(cols_ + tile - 1) / tile, (rows_ + tile - 1) / tile}, {tile, blockRows}, 0,
               KernelArgs()
                   .ptr(din_)
                   .ptr(dout_)
                   .i32(static_cast<int32_t>(rows_))
                   .i32(static_cast<int32_t>(cols_)));
  }

  CheckResult check(Device& dev) override {
    std::vector<float> want(in_.size());
    for (uint32_t r = 0; r < rows_; ++r)
      for (uint32_t c = 0; c < cols_; ++c) want[size_t(c) * rows_ + r] = in_[size_t(r) * cols_ + c];
    return compareExact(dev.download<float>(dout_, want.size()), want, "out");
  }

 private:
  std::string name_;
  uint32_t rows_ = 0, cols_ = 0;
  std::vector<float> in_;
  DevPtr din_ = 0, dout_ = 0;
};

}  // namespace gpusc::catalog
