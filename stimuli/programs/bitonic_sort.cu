// bitonic_sort as a stand-alone CUDA program: the catalog kernels (stimuli/catalog/bitonic_sort)
// with the catalog workload's keys, allocation and launches (chunks sorted in shared memory, then
// per merge one global launch per stride down to the chunk size and one in-chunk launch),
// checked against std::sort.
//   bitonic_sort [tiny|small|default]
#include <algorithm>

#include "program.hpp"

#include "../catalog/bitonic_sort/bitonic_sort.cu"

int main(int argc, char** argv) {
  const Size size = parseSize(argc, argv);
  const uint32_t n = size == Size::Tiny ? 1u << 11 : size == Size::Small ? 1u << 15 : 1u << 16;
  const uint32_t block = size == Size::Tiny ? 64 : 256;

  gpusc::Rng rng(31);
  std::vector<uint32_t> keys(n);
  // Mostly full-range keys, with a share of small ones so that duplicates occur.
  for (uint32_t i = 0; i < n; ++i) keys[i] = rng.below(4) == 0 ? rng.below(64) : rng.next32();
  uint32_t* dkeys = upload(keys);

  const uint32_t chunk = 2 * block, chunks = n / chunk, shared = chunk * sizeof(uint32_t);
  const uint32_t globalBlock = std::min(256u, n / 2);
  bitonic_sort_chunks<<<chunks, block, shared>>>(dkeys);
  CHECK(cudaGetLastError());
  for (uint32_t sz = 2 * chunk; sz <= n; sz <<= 1) {
    for (uint32_t stride = sz / 2; stride >= chunk; stride >>= 1) {
      bitonic_merge_global<<<n / 2 / globalBlock, globalBlock>>>(dkeys, sz, stride);
      CHECK(cudaGetLastError());
    }
    bitonic_merge_chunk<<<chunks, block, shared>>>(dkeys, sz);
    CHECK(cudaGetLastError());
  }

  std::vector<uint32_t> want = keys;
  std::sort(want.begin(), want.end());
  return finish(compareExact(download(dkeys, n), want, "keys"));
}
