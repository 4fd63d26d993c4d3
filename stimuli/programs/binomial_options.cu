// binomial_options as a stand-alone CUDA program: the catalog kernel
// (stimuli/catalog/binomial_options) with the catalog workload's options, allocations and launch
// (one option per block, two tree levels of dynamic shared memory), checked against a
// double-precision host fold of the same tree.
//   binomial_options [tiny|small|default]
#include <algorithm>

#include "program.hpp"

#include "../catalog/binomial_options/binomial_options.cu"

int main(int argc, char** argv) {
  const Size size = parseSize(argc, argv);
  const uint32_t options = size == Size::Tiny ? 6 : size == Size::Small ? 24 : 32;
  const uint32_t steps = size == Size::Tiny ? 80 : size == Size::Small ? 512 : 640;
  const uint32_t block = size == Size::Tiny ? 32 : 128;
  const float rate = 0.06f, volatility = 0.10f;

  gpusc::Rng rng(21);
  std::vector<float> spot(options), strike(options), years(options);
  for (uint32_t i = 0; i < options; ++i) {
    spot[i] = rng.uniformf(5.0f, 30.0f);
    strike[i] = rng.uniformf(1.0f, 60.0f);
    years[i] = rng.uniformf(0.25f, 10.0f);
  }
  float* dspot = upload(spot);
  float* dstrike = upload(strike);
  float* dyears = upload(years);
  float* dcall = deviceAlloc<float>(options);

  const uint32_t shared = 2 * (steps + 1) * sizeof(float);
  binomial_options<<<options, block, shared>>>(dcall, dspot, dstrike, dyears, rate, volatility,
                                               int(steps));
  CHECK(cudaGetLastError());

  std::vector<double> want(options);
  const int n = static_cast<int>(steps);
  std::vector<double> tree(n + 1);
  for (uint32_t o = 0; o < options; ++o) {
    const double dt = static_cast<double>(years[o]) / n;
    const double vDt = volatility * std::sqrt(dt), rDt = rate * dt;
    const double growth = std::exp(rDt), discount = std::exp(-rDt);
    const double up = std::exp(vDt), down = std::exp(-vDt);
    const double pu = (growth - down) / (up - down);
    const double puByDf = pu * discount, pdByDf = (1.0 - pu) * discount;
    for (int i = 0; i <= n; ++i)
      tree[i] = std::max(spot[o] * std::exp(vDt * (2 * i - n)) - strike[o], 0.0);
    for (int level = n; level > 0; --level)
      for (int i = 0; i < level; ++i) tree[i] = puByDf * tree[i + 1] + pdByDf * tree[i];
    want[o] = tree[0];
  }
  // The device folds in float: each of the `steps` levels adds a rounding (steps * 2^-24
  // relative); the absolute tolerance covers the options worth almost nothing.
  return finish(compareClose(asDouble(download(dcall, options)), want, 1e-4, 1e-5, "call"));
}
