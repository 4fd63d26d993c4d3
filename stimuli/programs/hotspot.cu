// hotspot as a stand-alone CUDA program: the catalog kernel (stimuli/catalog/hotspot) with the
// catalog workload's inputs, allocations and ping-pong launches, checked on the host against a
// double-precision reference.
//   hotspot [tiny|small|default]
#include "program.hpp"

#include <algorithm>

#include "../catalog/hotspot/hotspot.cu"

// Chip parameters (as in Rodinia's hotspot).
constexpr double kChipHeight = 0.016, kChipWidth = 0.016, kChipThickness = 0.0005;
constexpr double kFactorChip = 0.5, kSpecHeatSi = 1.75e6, kConductivitySi = 100;
constexpr double kMaxPowerDensity = 3.0e6, kPrecision = 0.001, kAmbient = 80.0;

int main(int argc, char** argv) {
  const Size size = parseSize(argc, argv);
  uint32_t rows = 256, cols = 256, totalSteps = 11, pyramid = 2;
  if (size == Size::Tiny) rows = 40, cols = 50, totalSteps = 5, pyramid = 2;
  if (size == Size::Small) rows = 200, cols = 300, totalSteps = 8, pyramid = 2;
  const double gridHeight = kChipHeight / rows, gridWidth = kChipWidth / cols;
  const double cap = kFactorChip * kSpecHeatSi * kChipThickness * gridWidth * gridHeight;
  const double rx = gridWidth / (2.0 * kConductivitySi * kChipThickness * gridHeight);
  const double ry = gridHeight / (2.0 * kConductivitySi * kChipThickness * gridWidth);
  const double rz = kChipThickness / (kConductivitySi * gridHeight * gridWidth);
  const double maxSlope = kMaxPowerDensity / (kFactorChip * kChipThickness * kSpecHeatSi);
  const double step = kPrecision / maxSlope;
  // The coefficients the device uses, as floats; the reference uses the same values.
  const float stepDivCap = static_cast<float>(step / cap);
  const float rx1 = static_cast<float>(1 / rx);
  const float ry1 = static_cast<float>(1 / ry);
  const float rz1 = static_cast<float>(1 / rz);

  gpusc::Rng rng(51);
  const size_t cells = size_t(rows) * cols;
  std::vector<float> temp(cells), power(cells);
  for (size_t i = 0; i < cells; ++i) {
    temp[i] = rng.uniformf(320.0f, 345.0f);
    power[i] = rng.uniformf(0.0f, 0.5f);
  }
  float* dpower = upload(power);
  float* dtemp[2];
  dtemp[0] = upload(temp);
  dtemp[1] = deviceAlloc<float>(cells);

  const uint32_t block = 16;
  int cur = 0;
  for (uint32_t done = 0; done < totalSteps;) {
    const uint32_t steps = std::min(pyramid, totalSteps - done);
    const uint32_t owned = block - 2 * steps;
    const dim3 grid((cols + owned - 1) / owned, (rows + owned - 1) / owned);
    hotspot<<<grid, dim3(block, block)>>>(dpower, dtemp[cur], dtemp[1 - cur], int(rows), int(cols),
                                          int(steps), stepDivCap, rx1, ry1, rz1,
                                          static_cast<float>(kAmbient));
    CHECK(cudaGetLastError());
    cur = 1 - cur;
    done += steps;
  }

  const int r = static_cast<int>(rows), c = static_cast<int>(cols);
  std::vector<double> t(temp.begin(), temp.end()), next(t.size());
  for (uint32_t s = 0; s < totalSteps; ++s) {
    for (int y = 0; y < r; ++y)
      for (int x = 0; x < c; ++x) {
        auto at = [&](int yy, int xx) {
          return t[size_t(std::clamp(yy, 0, r - 1)) * c + std::clamp(xx, 0, c - 1)];
        };
        const double v = at(y, x);
        next[size_t(y) * c + x] =
            v + double(stepDivCap) *
                    (power[size_t(y) * c + x] + (at(y + 1, x) + at(y - 1, x) - 2 * v) * ry1 +
                     (at(y, x + 1) + at(y, x - 1) - 2 * v) * rx1 + (kAmbient - v) * rz1);
      }
    t.swap(next);
  }
  // A few float roundings per step, relative (see the catalog workload).
  return finish(compareClose(asDouble(download(dtemp[cur], t.size())), t, 4e-7 * totalSteps, 0.0,
                             "temperature"));
}
