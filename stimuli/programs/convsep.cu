// convsep as a stand-alone CUDA program: the catalog kernels (stimuli/catalog/convsep), a rows
// pass then a columns pass with the filter in __constant__ memory, with the catalog workload's
// inputs, allocations and launches; both passes compared exactly with a host reference that
// repeats the kernels' fused multiply-adds.
//   convsep [tiny|small|default]
#include <algorithm>

#include "program.hpp"

#include "../catalog/convsep/convsep.cu"

namespace {

constexpr int kRadius = 4;
constexpr int kTaps = 2 * kRadius + 1;
// The same literals as c_filter in convsep.cu.
constexpr float kFilter[kTaps] = {0.02f, 0.05f, 0.09f, 0.14f, 0.30f, 0.17f, 0.11f, 0.08f, 0.04f};

}  // namespace

int main(int argc, char** argv) {
  const Size size = parseSize(argc, argv);
  const uint32_t w = size == Size::Tiny ? 67 : size == Size::Small ? 509 : 800;
  const uint32_t h = size == Size::Tiny ? 45 : size == Size::Small ? 301 : 600;
  gpusc::Rng rng(21);
  std::vector<float> img(size_t(w) * h);
  for (auto& v : img) v = rng.uniformf(0.0f, 1.0f);
  float* din = upload(img);
  float* dtmp = deviceAlloc<float>(img.size());
  float* dout = deviceAlloc<float>(img.size());

  const uint32_t bx = 32, by = 8;
  const dim3 grid((w + bx - 1) / bx, (h + by - 1) / by, 1);
  conv_rows<<<grid, dim3(bx, by)>>>(din, dtmp, int(w), int(h));
  CHECK(cudaGetLastError());
  conv_cols<<<grid, dim3(bx, by)>>>(dtmp, dout, int(w), int(h));
  CHECK(cudaGetLastError());

  const int wi = int(w), hi = int(h);
  auto at = [wi](const std::vector<float>& v, int x, int y) { return v[size_t(y) * wi + x]; };
  std::vector<float> tmp(img.size()), out(img.size());
  for (int y = 0; y < hi; ++y)
    for (int x = 0; x < wi; ++x) {
      float sum = 0.0f;
      for (int k = 0; k < kTaps; ++k)
        sum = std::fma(kFilter[k], at(img, std::clamp(x + k - kRadius, 0, wi - 1), y), sum);
      tmp[size_t(y) * wi + x] = sum;
    }
  for (int y = 0; y < hi; ++y)
    for (int x = 0; x < wi; ++x) {
      float sum = 0.0f;
      for (int k = 0; k < kTaps; ++k)
        sum = std::fma(kFilter[k], at(tmp, x, std::clamp(y + k - kRadius, 0, hi - 1)), sum);
      out[size_t(y) * wi + x] = sum;
    }
  return finish(allOf({compareExact(download(dtmp, tmp.size()), tmp, "rows pass"),
                       compareExact(download(dout, out.size()), out, "output")}));
}
