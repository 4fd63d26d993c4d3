// hgemm: half-precision matrix multiply on tensor cores, C = A * B (row-major), A (MxK) and B
// (KxN) in f16, C in f32, with the WMMA API (m16n16k16 fragments, f32 accumulators): 64x64 tiles
// of C per block of 4 warps, A and B staged through a two-stage shared-memory double buffer with
// cp.async. Exercises tensor cores (wmma.load/mma/store), cp.async commit groups and timed
// wait_group, and barriers; on platforms without tensor cores (gtx480) the matrix instructions
// run on the SIMD datapaths. The PTX needs sm_80 (cp.async). M and N are multiples of 64 and K
// of 16, the kernel's tiles (it has no edge tiles).
//
// C is compared exactly. Every input is a multiple of 1/8 in [-2, 2] (k / 8, |k| <= 16: at most
// 5 significant bits, exponents -3 to 1, so exactly an f16). Every product is then a multiple of
// 2^-6 of magnitude at most 4, and every partial sum of a dot product, whatever the order in
// which the tensor core or the host adds the products, is a multiple of 2^-6 of magnitude at most
// 4 K <= 4096 = 2^12 (K <= 1024 at every size), i.e. at most 2^18 units of 2^-6: it needs at most
// 19 significant bits, fewer than f32's 24. So every product and every addition is exact in f32,
// the result does not depend on the order of the additions, and the host's float sum is the
// kernel's result bit for bit.
#include <cmath>
#include <cstdint>

#include "catalog.hpp"
#include "common/error.hpp"

namespace gpusc::catalog {

namespace {

// The IEEE binary16 encoding of f, which must be zero or a normal f16 exactly (an InternalError
// otherwise: the inputs are chosen so that no rounding happens).
uint16_t toHalf(float f) {
  if (f == 0.0f) return std::signbit(f) ? 0x8000 : 0x0000;
  int e = 0;
  const float m = std::frexp(std::fabs(f), &e);  // |f| = m * 2^e, m in [0.5, 1)
  const float sig = std::ldexp(m, 11);           // 11 significand bits: [1024, 2048)
  const int exp = e - 1;                         // |f| = (sig / 1024) * 2^exp
  if (exp < -14 || exp > 15 || sig != std::floor(sig))
    throw InternalError(fmt::format("hgemm: {} is not exactly a normal f16", f));
  return static_cast<uint16_t>((f < 0.0f ? 0x8000 : 0) | ((exp + 15) << 10) |
                               (static_cast<uint32_t>(sig) - 1024));
}

class Hgemm : public Workload {
 public:
  explicit Hgemm(Size s) {
    switch (s) {
      case Size::Tiny:
        m_ = 128, n_ = 192, k_ = 96;
        break;
      case Size::Small:
        m_ = 832, n_ = 704, k_ = 768;
        break;
      case Size::Large:  // none (CatalogEntry::large): make() refuses it
      case Size::Default:
        m_ = 1024, n_ = 1024, k_ = 1024;
        break;
    }
  }

  std::string describe() const override {
    return fmt::format("M={} N={} K={} (f16 inputs, f32 accumulators)", m_, n_, k_);
  }

  void setup(Device& dev) override {
    Rng rng(97);
    a_.resize(size_t(m_) * k_);
    b_.resize(size_t(k_) * n_);
    for (auto& v : a_) v = (static_cast<float>(rng.below(33)) - 16.0f) / 8.0f;
    for (auto& v : b_) v = (static_cast<float>(rng.below(33)) - 16.0f) / 8.0f;
    std::vector<uint16_t> ha(a_.size()), hb(b_.size());
    for (size_t i = 0; i < a_.size(); ++i) ha[i] = toHalf(a_[i]);
    for (size_t i = 0; i < b_.size(); ++i) hb[i] = toHalf(b_[i]);
    da_ = dev.upload(ha);
    db_ = dev.upload(hb);
    dc_ = dev.malloc(size_t(m_) * n_ * sizeof(float));
  }

  void run(Device& dev) override {
    const uint32_t tm = 64, tn = 64, threads = 128;  // the kernel's BM, BN and block size
    dev.launch(loadPtx(dev, "hgemm").kernel("hgemm"), {n_ / tn, m_ / tm}, {threads}, 0,
               KernelArgs()
                   .ptr(da_)
                   .ptr(db_)
                   .ptr(dc_)
                   .i32(static_cast<int32_t>(m_))
                   .i32(static_cast<int32_t>(n_))
                   .i32(static_cast<int32_t>(k_)));
  }

  CheckResult check(Device& dev) override {
    // Row by row (i, k, j), so that B is read along its rows; the order does not matter (above).
    std::vector<float> want(size_t(m_) * n_, 0.0f);
    for (uint32_t i = 0; i < m_; ++i) {
      float* c = &want[size_t(i) * n_];
      for (uint32_t k = 0; k < k_; ++k) {
        const float a = a_[size_t(i) * k_ + k];
        const float* b = &b_[size_t(k) * n_];
        for (uint32_t j = 0; j < n_; ++j) c[j] += a * b[j];
      }
    }
    return compareExact(dev.download<float>(dc_, want.size()), want, "C");
  }

 private:
  uint32_t m_ = 0, n_ = 0, k_ = 0;
  std::vector<float> a_, b_;  // the inputs' values (each exactly an f16)
  DevPtr da_ = 0, db_ = 0, dc_ = 0;
};

}  // namespace

CatalogEntry make_hgemm() {
  return {"hgemm",
          "Half-precision GEMM C = A*B on tensor cores (WMMA, f32 accumulators), cp.async double "
          "buffer",
          "tensor cores (wmma load/mma/store), cp.async commit groups and waits, double-buffered "
          "shared memory, barriers",
          [](Size s) { return std::make_unique<Hgemm>(s); }};
}

}  // namespace gpusc::catalog
