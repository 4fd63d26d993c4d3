// The two transposes' program (transpose_conflicts.cu, transpose_padded.cu): the catalog
// workload's matrix (stimuli/catalog/transpose_workload.hpp), allocations and launch of the
// kernel `kernel`, checked exactly on the host.
#pragma once

#include "program.hpp"

inline int runTranspose(int argc, char** argv, void (*kernel)(const float*, float*, int, int)) {
  const Size size = parseSize(argc, argv);
  uint32_t rows = 0, cols = 0;
  switch (size) {
    case Size::Tiny:
      rows = 45, cols = 70;
      break;
    case Size::Small:
      rows = 1111, cols = 1234;
      break;
    case Size::Default:
      rows = 1500, cols = 2000;
      break;
  }
  gpusc::Rng rng(31);
  std::vector<float> in(size_t(rows) * cols);
  for (auto& v : in) v = rng.uniformf(-100.0f, 100.0f);
  float* din = upload(in);
  float* dout = deviceAlloc<float>(in.size());

  const uint32_t tile = 32, blockRows = 8;
  kernel<<<dim3((cols + tile - 1) / tile, (rows + tile - 1) / tile), dim3(tile, blockRows)>>>(
      din, dout, int(rows), int(cols));
  CHECK(cudaGetLastError());

  std::vector<float> want(in.size());
  for (uint32_t r = 0; r < rows; ++r)
    for (uint32_t c = 0; c < cols; ++c) want[size_t(c) * rows + r] = in[size_t(r) * cols + c];
  return finish(compareExact(download(dout, want.size()), want, "out"));
}
