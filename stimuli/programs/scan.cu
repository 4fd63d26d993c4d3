// scan as a stand-alone CUDA program: the catalog kernels (stimuli/catalog/scan) with the catalog
// workload's inputs, allocations and launches (a recursive scan of the block sums, allocating each
// level's arrays between the launches as the workload does), checked on the host.
//   scan [tiny|small|default]
#include "program.hpp"

#include "../catalog/scan/scan.cu"

namespace {

uint32_t blockSize = 0;

// Scans n elements of `in` into `out`; returns the device address of the one-element array that
// holds the grand total (the block sum of the top level).
unsigned* scanLevel(const unsigned* in, unsigned* out, uint32_t n) {
  const uint32_t perBlock = 2 * blockSize;
  const uint32_t blocks = (n + perBlock - 1) / perBlock;
  unsigned* sums = deviceAlloc<unsigned>(blocks);
  scan_blocks<<<blocks, blockSize, perBlock * sizeof(uint32_t)>>>(in, out, sums, int(n));
  CHECK(cudaGetLastError());
  if (blocks == 1) return sums;
  unsigned* scannedSums = deviceAlloc<unsigned>(blocks);
  unsigned* total = scanLevel(sums, scannedSums, blocks);
  add_offsets<<<blocks, blockSize>>>(out, scannedSums, int(n));
  CHECK(cudaGetLastError());
  return total;
}

}  // namespace

int main(int argc, char** argv) {
  const Size size = parseSize(argc, argv);
  uint32_t n = 0;
  switch (size) {
    case Size::Tiny:  // 79 blocks -> 2 -> 1
      n = 5000, blockSize = 32;
      break;
    case Size::Small:  // 1172 blocks -> 5 -> 1
      n = 300000, blockSize = 128;
      break;
    case Size::Default:  // 1563 blocks -> 4 -> 1
      n = 800000, blockSize = 256;
      break;
  }
  gpusc::Rng rng(41);
  std::vector<uint32_t> in(n);
  for (auto& v : in) v = rng.next32();  // full range: the sums wrap
  unsigned* din = upload(in);
  unsigned* dout = deviceAlloc<unsigned>(n);
  unsigned* dtotal = scanLevel(din, dout, n);

  std::vector<uint32_t> want(n);
  uint32_t sum = 0;
  for (uint32_t i = 0; i < n; ++i) {
    want[i] = sum;
    sum += in[i];
  }
  return finish(allOf({compareExact(download(dout, n), want, "scan"),
                       compareExact(download(dtotal, 1), {sum}, "total")}));
}
