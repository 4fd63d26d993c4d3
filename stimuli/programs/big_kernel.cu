// big_kernel as a stand-alone CUDA program: the catalog kernel (stimuli/catalog/big_kernel) with
// the catalog workload's state, allocations and launch, checked exactly against the same body
// run on the host.
//   big_kernel [tiny|small|default]
//
// Under nvcc big_kernel_body.cuh makes bigKernelBody a __device__ function (and #pragma once
// keeps it from being included again for the host), so the host reference below is a copy of
// its host branch: std::fma, std::fmin/fmax and __builtin_popcount, each rounding as the device
// does.
#include "program.hpp"

#include "../catalog/big_kernel/big_kernel.cu"

namespace {

void hostBigKernelBody(BigKernelState& s) {
  for (int j = 0; j < kBigKernelSteps; ++j) {
    const int a = j % 4, b = (j + 1) % 4, c = (j + 2) % 4;
    const float mul = 0.125f * static_cast<float>(1 + (j * 5) % 4);  // 0.125 .. 0.5
    const unsigned k = 0x9e3779b9u * static_cast<unsigned>(2 * j + 1);
    const int sh = 1 + (j * 7) % 29;
    switch (j % 4) {
      case 0:
        s.f[a] = std::fma(s.f[a], mul, s.f[b]);
        s.u[a] = s.u[a] * (k | 1u) + s.u[b];
        s.f[c] = std::fma(s.f[c], -mul, 0.0625f * static_cast<float>(j % 5));
        break;
      case 1:
        s.u[a] = (s.u[a] ^ (s.u[b] >> sh)) + k;
        s.f[a] = std::fmin(std::fmax(s.f[a], -4.0f), 4.0f);
        s.u[c] ^= s.u[a] << (sh % 13);
        break;
      case 2:
        s.f[a] = std::fma(s.f[a], mul, static_cast<float>(s.u[a] & 0xffu) * 0.00390625f);
        s.u[b] += static_cast<unsigned>(__builtin_popcount(s.u[a] ^ k));
        s.f[b] = std::fma(s.f[c], mul, s.f[b]);
        break;
      default:
        s.u[a] = (s.u[a] << sh) | (s.u[a] >> (32 - sh));
        s.f[b] = std::fmin(std::fmax(s.f[b], -4.0f), 4.0f);
        s.f[c] = std::fmin(std::fmax(s.f[c], -4.0f), 4.0f);
        s.u[b] = s.u[b] * 0x01000193u + s.u[c];
        break;
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  const Size size = parseSize(argc, argv);
  const uint32_t grid = size == Size::Tiny ? 2 : 2 * multiprocessors();  // two blocks per SM
  const int32_t iters = size == Size::Tiny ? 2 : size == Size::Small ? 4 : 12;
  const uint32_t block = 128;
  const size_t n = size_t(grid) * block;

  gpusc::Rng rng(3003);
  std::vector<float> f(4 * n);
  std::vector<uint32_t> u(4 * n);
  for (auto& v : f) v = rng.uniformf(-4.0f, 4.0f);
  for (auto& v : u) v = rng.next32();
  float* dfin = upload(f);
  uint32_t* duin = upload(u);
  float* dfout = deviceAlloc<float>(4 * n);
  uint32_t* duout = deviceAlloc<uint32_t>(4 * n);

  big_kernel<<<grid, block>>>(dfin, duin, dfout, duout, iters);
  CHECK(cudaGetLastError());

  std::vector<float> wantF(4 * n);
  std::vector<uint32_t> wantU(4 * n);
  for (size_t t = 0; t < n; ++t) {
    BigKernelState s{};
    for (size_t k = 0; k < 4; ++k) {
      s.f[k] = f[k * n + t];
      s.u[k] = u[k * n + t];
    }
    for (int32_t i = 0; i < iters; ++i) hostBigKernelBody(s);
    for (size_t k = 0; k < 4; ++k) {
      wantF[k * n + t] = s.f[k];
      wantU[k * n + t] = s.u[k];
    }
  }
  return finish(allOf({compareExact(download(dfout, 4 * n), wantF, "float state"),
                       compareExact(download(duout, 4 * n), wantU, "integer state")}));
}
