// vecadd: streaming, fully coalesced loads and stores, no reuse; the last block is partial.
#include "catalog.hpp"

namespace gpusc::catalog {

namespace {

class VecAdd : public Workload {
 public:
  explicit VecAdd(Size s) : n_(s == Size::Tiny ? 1000 : s == Size::Small ? 100000 : 1 << 20) {}

  std::string describe() const override { return fmt::format("n={}", n_); }

  void setup(Device& dev) override {
    Rng rng(1);
    a_.resize(n_);
    b_.resize(n_);
    for (uint32_t i = 0; i < n_; ++i) {
      a_[i] = rng.uniformf(-1.0f, 1.0f);
      b_[i] = rng.uniformf(-1.0f, 1.0f);
    }
    da_ = dev.upload(a_);
    db_ = dev.upload(b_);
    dc_ = dev.malloc(n_ * sizeof(float));
  }

  void run(Device& dev) override {
    const Kernel& k = loadPtx(dev, "vecadd").kernel("vecadd");
    const uint32_t block = 256;
    dev.launch(k, {(n_ + block - 1) / block}, {block}, 0,
               KernelArgs().ptr(da_).ptr(db_).ptr(dc_).i32(static_cast<int32_t>(n_)));
  }

  CheckResult check(Device& dev) override {
    std::vector<float> want(n_);
    for (uint32_t i = 0; i < n_; ++i) want[i] = a_[i] + b_[i];
    return compareExact(dev.download<float>(dc_, n_), want, "c");
  }

 private:
  uint32_t n_;
  std::vector<float> a_, b_;
  DevPtr da_ = 0, db_ = 0, dc_ = 0;
};

}  // namespace

CatalogEntry make_vecadd() {
  return {"vecadd", "Vector addition c = a + b", "streaming, coalesced, partial last block",
          [](Size s) { return std::make_unique<VecAdd>(s); }};
}

}  // namespace gpusc::catalog
