// backprop as a stand-alone CUDA program: the catalog kernels (stimuli/catalog/backprop) with the
// catalog workload's network, allocations and launches (forward pass, squash, the host's output
// layer and hidden deltas copied back, weight update), checked against a double-precision host
// reference.
//   backprop [tiny|small|default]
#include "program.hpp"

#include "../catalog/backprop/backprop.cu"

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
// step Rodinia runs on the CPU. T is float for the run and double in the reference.
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

}  // namespace

int main(int argc, char** argv) {
  const Size size = parseSize(argc, argv);
  const uint32_t in = size == Size::Tiny ? 256 : size == Size::Small ? 24576 : 65536;

  // Weights scaled by 1/sqrt(in) so the hidden sums are O(1) and the sigmoid does not saturate.
  gpusc::Rng rng(7);
  const float a = 3.0f / std::sqrt(static_cast<float>(in));
  std::vector<float> x(in), w((in + 1) * kHid), oldw(w.size()), v(kHid * kOut), c(kOut),
      target(kOut);
  for (auto& e : x) e = rng.uniformf(0.0f, 1.0f);
  for (auto& e : w) e = rng.uniformf(-a, a);
  for (auto& e : oldw) e = rng.uniformf(-0.01f, 0.01f);
  for (auto& e : v) e = rng.uniformf(-1.0f, 1.0f);
  for (auto& e : c) e = rng.uniformf(-0.5f, 0.5f);
  for (auto& e : target) e = rng.uniformf(0.1f, 0.9f);
  float* dx = upload(x);
  float* dw = upload(w);
  float* doldw = upload(oldw);
  float* dpartial = deviceAlloc<float>(in / kRows * kHid);
  float* dhidden = deviceAlloc<float>(kHid);
  float* ddelta = deviceAlloc<float>(kHid);

  const uint32_t parts = in / kRows;
  bp_layerforward<<<dim3(1, parts), dim3(kHid, kRows)>>>(dx, dw, dpartial);
  CHECK(cudaGetLastError());
  const uint32_t squashBlock = 256;
  bp_squash<<<kHid, squashBlock, squashBlock * sizeof(float)>>>(dpartial, int(parts), dw, int(in),
                                                                dhidden);
  CHECK(cudaGetLastError());
  const std::vector<float> hidden = download(dhidden, kHid);
  CHECK(cudaMemcpy(ddelta, hiddenDeltas(hidden, v, c, target).data(), kHid * sizeof(float),
                   cudaMemcpyHostToDevice));
  bp_adjust_weights<<<dim3(1, (in + 1 + kRows - 1) / kRows), dim3(kHid, kRows)>>>(
      dw, doldw, ddelta, dx, int(in), kEta, kMomentum);
  CHECK(cudaGetLastError());

  std::vector<double> h(kHid);
  for (uint32_t j = 0; j < kHid; ++j) {
    double s = w[in * kHid + j];  // bias
    for (uint32_t i = 0; i < in; ++i) s += double(x[i]) * w[i * kHid + j];
    h[j] = sigmoid(s);
  }
  const std::vector<double> delta = hiddenDeltas(h, v, c, target);
  std::vector<double> wantW(w.size()), wantDw(w.size());
  for (uint32_t i = 0; i <= in; ++i) {
    const double xi = i == in ? 1.0 : x[i];
    for (uint32_t j = 0; j < kHid; ++j) {
      const uint32_t k = i * kHid + j;
      wantDw[k] = double(kEta) * delta[j] * xi + double(kMomentum) * oldw[k];
      wantW[k] = w[k] + wantDw[k];
    }
  }
  // Tolerances as in the catalog workload: hidden sums accumulate float roundings (~1e-6
  // absolute); the weight changes inherit the host's float deltas (~1e-5 relative of ~3e-3).
  return finish(allOf(
      {compareClose(asDouble(download(dhidden, kHid)), h, 1e-5, 1e-6, "hidden"),
       compareClose(asDouble(download(doldw, wantDw.size())), wantDw, 1e-5, 3e-8, "weight change"),
       compareClose(asDouble(download(dw, wantW.size())), wantW, 1e-5, 3e-8, "weights")}));
}
