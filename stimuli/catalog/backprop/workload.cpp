// backprop: one training step of the input -> hidden layer of a neural network (Rodinia's
// backprop). bp_layerforward multiplies inputs by weights in 16x16 blocks and reduces them with a
// shared-memory tree (barrier per level); bp_squash reduces the per-block partial sums (dynamic
// shared memory) and applies the sigmoid with expf; the host computes the small output layer and
// the hidden-layer error terms, as Rodinia does; bp_adjust_weights updates every weight with
// momentum (2D grid whose last block row is partial). The check compares the hidden activations,
// the new weights and the weight changes with a double-precision host reference.
#include "catalog.hpp"

namespace gpusc::catalog {

namespace {

constexpr uint32_t kHid = 16;   // hidden units (HID in backprop.cu)
constexpr uint32_t kRows = 16;  // input units per forward block (ROWS in backprop.cu)
constexpr uint32_t kOut = 4;    // output units (computed on the host)
constexpr float kEta = 0.3f, kMomentum = 0.3f;

template <class T>
T sigmoid(T v) {
  return T(1) / (T(1) + std::exp(-v));
}

// The output layer and the hidden-layer error terms, from hidden activations h: the part of the
// step Rodinia runs on the CPU. T is float in run() and double in the reference.
template <class T>
std::vector<T> hiddenDeltas(const std::vector<T>& h, const std::vector<float>& v,
                            const std::vector<float>& c, const std::vector<float>& target) {
  std::vector<T> outDelta(kOut);
  for (uint32_t k = 0; k < kOut; ++k) {
    T s = c[k];
    for (uint32_t j = 0; j < kHid; ++j) s += h[j] * T(v[j * kOut + k]);
    T o = sigmoid(s);
    outDelta[k] = o * (T(1) - o) * (T(target[k]) - o);
  }
  std::vector<T> delta(kHid);
  for (uint32_t j = 0; j < kHid; ++j) {
    T e = 0;
    for (uint32_t k = 0; k < kOut; ++k) e += outDelta[k] * T(v[j * kOut + k]);
    delta[j] = h[j] * (T(1) - h[j]) * e;
  }
  return delta;
}

class Backprop : public Workload {
 public:
  explicit Backprop(Size s) : in_(s == Size::Tiny ? 256 : s == Size::Small ? 24576 : 65536) {}

  std::string describe() const override {
    return fmt::format("{} inputs, {} hidden units", in_, kHid);
  }

  void setup(Device& dev) override {
    // Weights scaled by 1/sqrt(in) so the hidden sums are O(1) and the sigmoid does not saturate.
    Rng rng(7);
    const float a = 3.0f / std::sqrt(static_cast<float>(in_));
    x_.resize(in_);
    for (auto& v : x_) v = rng.uniformf(0.0f, 1.0f);
    w_.resize((in_ + 1) * kHid);
    for (auto& v : w_) v = rng.uniformf(-a, a);
    oldw_.resize(w_.size());
    for (auto& v : oldw_) v = rng.uniformf(-0.01f, 0.01f);
    v_.resize(kHid * kOut);
    for (auto& v : v_) v = rng.uniformf(-1.0f, 1.0f);
    c_.resize(kOut);
    for (auto& v : c_) v = rng.uniformf(-0.5f, 0.5f);
    target_.resize(kOut);
    for (auto& v : target_) v = rng.uniformf(0.1f, 0.9f);
    dx_ = dev.upload(x_);
    dw_ = dev.upload(w_);
    doldw_ = dev.upload(oldw_);
    dpartial_ = dev.malloc(in_ / kRows * kHid * sizeof(float));
    dhidden_ = dev.malloc(kHid * sizeof(float));
    ddelta_ = dev.malloc(kHid * sizeof(float));
  }

  void run(Device& dev) override {
    Module& mod = loadPtx(dev, "backprop");
    const auto in = static_cast<int32_t>(in_);
    const uint32_t parts = in_ / kRows;
    dev.launch(mod.kernel("bp_layerforward"), {1, parts}, {kHid, kRows}, 0,
               KernelArgs().ptr(dx_).ptr(dw_).ptr(dpartial_));
    const uint32_t squashBlock = 256;
    dev.launch(mod.kernel("bp_squash"), {kHid}, {squashBlock}, squashBlock * sizeof(float),
               KernelArgs()
                   .ptr(dpartial_)
                   .i32(static_cast<int32_t>(parts))
                   .ptr(dw_)
                   .i32(in)
                   .ptr(dhidden_));
    hidden_ = dev.download<float>(dhidden_, kHid);
    dev.copyToDevice(ddelta_, hiddenDeltas(hidden_, v_, c_, target_).data(), kHid * sizeof(float));
    dev.launch(
        mod.kernel("bp_adjust_weights"), {1, (in_ + 1 + kRows - 1) / kRows}, {kHid, kRows}, 0,
        KernelArgs().ptr(dw_).ptr(doldw_).ptr(ddelta_).ptr(dx_).i32(in).f32(kEta).f32(kMomentum));
  }

  CheckResult check(Device& dev) override {
    std::vector<double> h(kHid);
    for (uint32_t j = 0; j < kHid; ++j) {
      double s = w_[in_ * kHid + j];  // bias
      for (uint32_t i = 0; i < in_; ++i) s += double(x_[i]) * w_[i * kHid + j];
      h[j] = sigmoid(s);
    }
    std::vector<double> delta = hiddenDeltas(h, v_, c_, target_);
    std::vector<double> w(w_.size()), dw(w_.size());
    for (uint32_t i = 0; i <= in_; ++i) {
      double xi = i == in_ ? 1.0 : x_[i];
      for (uint32_t j = 0; j < kHid; ++j) {
        uint32_t k = i * kHid + j;
        dw[k] = double(kEta) * delta[j] * xi + double(kMomentum) * oldw_[k];
        w[k] = w_[k] + dw[k];
      }
    }
    // Tolerances: a hidden sum is O(1) and accumulates in float through ~log2(in) + 16 roundings
    // of values up to a few units (~1e-6 absolute); the sigmoid scales that by at most 1/4 and
    // expf adds 2 ulp. A weight change adds two terms of magnitude up to ~3e-3 that may cancel;
    // the deltas the host computes in float from the float activations carry a relative error
    // up to ~1e-5 (they are short sums that may cancel too), so the changes and the weights get
    // an absolute tolerance of 1e-5 x 3e-3 = 3e-8 besides a few float roundings.
    return allOf(
        {compareClose(asDouble(dev.download<float>(dhidden_, kHid)), h, 1e-5, 1e-6, "hidden"),
         compareClose(asDouble(dev.download<float>(doldw_, dw.size())), dw, 1e-5, 3e-8,
                      "weight change"),
         compareClose(asDouble(dev.download<float>(dw_, w.size())), w, 1e-5, 3e-8, "weights")});
  }

 private:
  uint32_t in_;
  std::vector<float> x_, w_, oldw_, v_, c_, target_, hidden_;
  DevPtr dx_ = 0, dw_ = 0, doldw_ = 0, dpartial_ = 0, dhidden_ = 0, ddelta_ = 0;
};

}  // namespace

CatalogEntry make_backprop() {
  return {
      "backprop",
      "Neural-network layer: forward pass with shared-memory reductions, sigmoid, weight update",
      "2D blocks, shared-memory tree reductions with barriers, dynamic shared memory, expf, "
      "partial block row",
      [](Size s) { return std::make_unique<Backprop>(s); }};
}

}  // namespace gpusc::catalog
