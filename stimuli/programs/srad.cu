// srad as a stand-alone CUDA program: the catalog kernels (stimuli/catalog/srad) with the catalog
// workload's image, allocations and four launches per iteration, checked on the host against the
// same iterations in double precision.
//   srad [tiny|small|default]
#include <algorithm>

#include "program.hpp"

#include "../catalog/srad/srad.cu"

namespace {

constexpr float kLambda = 0.5f;
constexpr uint32_t kPartials = 32;  // blocks of the statistics reduction

}  // namespace

int main(int argc, char** argv) {
  const Size size = parseSize(argc, argv);
  uint32_t nrows = 0, ncols = 0, iterations = 0;
  switch (size) {
    case Size::Tiny:
      nrows = 40, ncols = 60, iterations = 2;
      break;
    case Size::Small:
      nrows = 300, ncols = 400, iterations = 3;
      break;
    case Size::Default:
      nrows = 320, ncols = 480, iterations = 4;
      break;
  }
  // The region of interest: a block of the top-left quarter, away from the edges.
  const uint32_t roiTop = nrows / 8, roiLeft = ncols / 8, roiRows = nrows / 4, roiCols = ncols / 3;

  // Piecewise-constant regions multiplied by speckle noise.
  gpusc::Rng rng(61);
  const size_t pixels = size_t(nrows) * ncols;
  std::vector<float> image(pixels);
  for (uint32_t y = 0; y < nrows; ++y)
    for (uint32_t x = 0; x < ncols; ++x) {
      double level = (x < ncols / 2 ? 1.0 : 2.0) + ((y / 16 + x / 16) % 3 == 0 ? 0.5 : 0.0);
      image[size_t(y) * ncols + x] = static_cast<float>(level * rng.uniform(0.5, 1.5));
    }
  float* dimage = upload(image);
  float* dgrad[4];
  for (float*& p : dgrad) p = deviceAlloc<float>(pixels);
  float* dcoeff = deviceAlloc<float>(pixels);
  double* dpartial = deviceAlloc<double>(2 * kPartials);
  float* dq0sqr = deviceAlloc<float>(1);

  const dim3 block(16, 16), grid((ncols + 15) / 16, (nrows + 15) / 16);
  const int rows = int(nrows), cols = int(ncols);
  for (uint32_t it = 0; it < iterations; ++it) {
    srad_roi_partial<<<kPartials, 256>>>(dimage, cols, int(roiTop), int(roiLeft), int(roiRows),
                                         int(roiCols), dpartial);
    CHECK(cudaGetLastError());
    srad_roi_finish<<<1, 32>>>(dpartial, int(kPartials), int(roiRows * roiCols), dq0sqr);
    CHECK(cudaGetLastError());
    srad_coeff<<<grid, block>>>(dimage, dgrad[0], dgrad[1], dgrad[2], dgrad[3], dcoeff, rows, cols,
                                dq0sqr);
    CHECK(cudaGetLastError());
    srad_update<<<grid, block>>>(dimage, dgrad[0], dgrad[1], dgrad[2], dgrad[3], dcoeff, rows, cols,
                                 kLambda);
    CHECK(cudaGetLastError());
  }

  std::vector<double> j(image.begin(), image.end());
  std::vector<double> dn(pixels), ds(pixels), dw(pixels), de(pixels), c(pixels);
  double lastQ0sqr = 0;
  for (uint32_t it = 0; it < iterations; ++it) {
    double sum = 0, sumSq = 0;
    for (uint32_t y = roiTop; y < roiTop + roiRows; ++y)
      for (uint32_t x = roiLeft; x < roiLeft + roiCols; ++x) {
        double v = j[size_t(y) * cols + x];
        sum += v;
        sumSq += v * v;
      }
    const double roiSize = double(roiRows) * roiCols;
    const double mean = sum / roiSize, var = sumSq / roiSize - mean * mean;
    const double q0sqr = var / (mean * mean);
    lastQ0sqr = q0sqr;
    for (int y = 0; y < rows; ++y)
      for (int x = 0; x < cols; ++x) {
        const size_t k = size_t(y) * cols + x;
        const double jc = j[k];
        const double n = j[size_t(std::max(y - 1, 0)) * cols + x] - jc;
        const double s = j[size_t(std::min(y + 1, rows - 1)) * cols + x] - jc;
        const double w = j[size_t(y) * cols + std::max(x - 1, 0)] - jc;
        const double e = j[size_t(y) * cols + std::min(x + 1, cols - 1)] - jc;
        const double g2 = (n * n + s * s + w * w + e * e) / (jc * jc);
        const double l = (n + s + w + e) / jc;
        const double num = 0.5 * g2 - (1.0 / 16.0) * (l * l);
        const double den1 = 1.0 + 0.25 * l;
        const double qsqr = num / (den1 * den1);
        const double den = (qsqr - q0sqr) / (q0sqr * (1.0 + q0sqr));
        dn[k] = n, ds[k] = s, dw[k] = w, de[k] = e;
        c[k] = std::clamp(1.0 / (1.0 + den), 0.0, 1.0);
      }
    for (int y = 0; y < rows; ++y)
      for (int x = 0; x < cols; ++x) {
        const size_t k = size_t(y) * cols + x;
        const double cS = c[size_t(std::min(y + 1, rows - 1)) * cols + x];
        const double cE = c[size_t(y) * cols + std::min(x + 1, cols - 1)];
        const double d = c[k] * dn[k] + cS * ds[k] + c[k] * dw[k] + cE * de[k];
        j[k] += 0.25 * kLambda * d;
      }
  }
  // q0^2 is rounded to float, the coefficient goes through a chain of float divisions, and each
  // iteration adds a few roundings of J (around 2^-24 relative); diffusion does not amplify them.
  // The downloads in the catalog check's order: q0sqr, coefficient, image.
  const std::vector<float> q0sqr = download(dq0sqr, 1);
  const std::vector<float> coeff = download(dcoeff, pixels);
  const std::vector<float> result = download(dimage, pixels);
  return finish(
      allOf({compareClose(asDouble(q0sqr), {lastQ0sqr}, 1e-5, 0.0, "q0sqr (last iteration)"),
             compareClose(asDouble(coeff), c, 2e-5, 1e-6, "coefficient (last iteration)"),
             compareClose(asDouble(result), j, 2e-6 * iterations, 0.0, "image")}));
}
