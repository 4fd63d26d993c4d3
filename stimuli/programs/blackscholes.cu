// blackscholes as a stand-alone CUDA program: the catalog kernel (stimuli/catalog/blackscholes)
// with the catalog workload's inputs, allocations and launch, checked on the host against a
// double-precision reference with the same polynomial approximation.
//   blackscholes [tiny|small|default]
#include "program.hpp"

#include "../catalog/blackscholes/blackscholes.cu"

namespace {

constexpr float kRate = 0.02f;        // riskless interest rate
constexpr float kVolatility = 0.30f;  // volatility

double cumulativeNormal(double d) {
  const double a1 = 0.31938153, a2 = -0.356563782, a3 = 1.781477937, a4 = -1.821255978,
               a5 = 1.330274429;
  const double invSqrt2Pi = 0.39894228040143267794;
  double k = 1.0 / (1.0 + 0.2316419 * std::fabs(d));
  double tail =
      invSqrt2Pi * std::exp(-0.5 * d * d) * (k * (a1 + k * (a2 + k * (a3 + k * (a4 + k * a5)))));
  return d > 0 ? 1.0 - tail : tail;
}

}  // namespace

int main(int argc, char** argv) {
  const Size size = parseSize(argc, argv);
  const uint32_t n = size == Size::Tiny ? 3000 : size == Size::Small ? 250000 : 400000;
  const uint32_t grid = size == Size::Tiny ? 8 : 240, block = 128;
  gpusc::Rng rng(11);
  std::vector<float> spot(n), strike(n), years(n);
  for (uint32_t i = 0; i < n; ++i) {
    spot[i] = rng.uniformf(5.0f, 30.0f);
    strike[i] = rng.uniformf(1.0f, 100.0f);
    years[i] = rng.uniformf(0.25f, 10.0f);
  }
  float* dspot = upload(spot);
  float* dstrike = upload(strike);
  float* dyears = upload(years);
  float* dcall = deviceAlloc<float>(n);
  float* dput = deviceAlloc<float>(n);
  blackscholes<<<grid, block>>>(dcall, dput, dspot, dstrike, dyears, kRate, kVolatility, int(n));
  CHECK(cudaGetLastError());

  std::vector<double> call(n), put(n);
  const double r = kRate, v = kVolatility;
  for (uint32_t i = 0; i < n; ++i) {
    double s = spot[i], x = strike[i], t = years[i];
    double d1 = (std::log(s / x) + (r + 0.5 * v * v) * t) / (v * std::sqrt(t));
    double d2 = d1 - v * std::sqrt(t);
    double discountedStrike = x * std::exp(-r * t);
    call[i] = s * cumulativeNormal(d1) - discountedStrike * cumulativeNormal(d2);
    put[i] = discountedStrike * (1.0 - cumulativeNormal(d2)) - s * (1.0 - cumulativeNormal(d1));
  }
  // The catalog's tolerances: about 100 * 4 * 2^-24 absolute, 1e-5 relative.
  const auto gotCall = asDouble(download(dcall, n));
  const auto gotPut = asDouble(download(dput, n));
  return finish(allOf({compareClose(gotCall, call, 1e-5, 2.4e-5, "call"),
                       compareClose(gotPut, put, 1e-5, 2.4e-5, "put")}));
}
