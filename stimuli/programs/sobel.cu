// sobel as a stand-alone CUDA program: the catalog kernel (stimuli/catalog/sobel) with the
// catalog workload's image, allocations and launch, checked on the host against a reference in
// double precision.
//   sobel [tiny|small|default]
#include <algorithm>

#include "program.hpp"

#include "../catalog/sobel/sobel.cu"

int main(int argc, char** argv) {
  const Size size = parseSize(argc, argv);
  uint32_t width = 0, height = 0;
  switch (size) {
    case Size::Tiny:
      width = 100, height = 75;
      break;
    case Size::Small:
      width = 800, height = 600;
      break;
    case Size::Default:
      width = 1280, height = 720;
      break;
  }
  // Smooth shading, a bright rectangle (sharp edges) and noise.
  gpusc::Rng rng(41);
  std::vector<float> image(size_t(width) * height);
  for (uint32_t y = 0; y < height; ++y)
    for (uint32_t x = 0; x < width; ++x) {
      double v = 0.4 + 0.2 * std::sin(x * 0.05) * std::cos(y * 0.07) + rng.uniform(0.0, 0.1);
      if (x > width / 4 && x < width / 2 && y > height / 3 && y < 3 * height / 4) v += 0.3;
      image[size_t(y) * width + x] = static_cast<float>(v);
    }
  float* din = upload(image);
  float* dout = deviceAlloc<float>(image.size());

  const uint32_t tile = 16;
  sobel<<<dim3((width + tile - 1) / tile, (height + tile - 1) / tile), dim3(tile, tile)>>>(
      din, dout, int(width), int(height));
  CHECK(cudaGetLastError());

  const int w = static_cast<int>(width), h = static_cast<int>(height);
  auto at = [&](int x, int y) -> double {
    return image[size_t(std::clamp(y, 0, h - 1)) * w + std::clamp(x, 0, w - 1)];
  };
  std::vector<double> want(image.size());
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      double gx = (at(x + 1, y - 1) + 2 * at(x + 1, y) + at(x + 1, y + 1)) -
                  (at(x - 1, y - 1) + 2 * at(x - 1, y) + at(x - 1, y + 1));
      double gy = (at(x - 1, y + 1) + 2 * at(x, y + 1) + at(x + 1, y + 1)) -
                  (at(x - 1, y - 1) + 2 * at(x, y - 1) + at(x + 1, y - 1));
      want[size_t(y) * w + x] = std::sqrt(gx * gx + gy * gy);
    }
  // Pixels are below 1, so each of the few float roundings in gx and gy costs at most
  // 4 * 2^-24 absolute; near-zero gradients need that absolute slack, the rest 1e-5 relative.
  return finish(compareClose(asDouble(download(dout, want.size())), want, 1e-5, 2e-6, "magnitude"));
}
