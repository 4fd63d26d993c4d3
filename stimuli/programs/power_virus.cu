// power_virus as a stand-alone CUDA program: the catalog kernel (stimuli/catalog/power_virus)
// with the catalog workload's inputs, allocations and two launches ("dram" and "short"), every
// thread's sum and hash and every block's chain end checked exactly on the host.
//   power_virus [tiny|small|default]
#include "program.hpp"

#include <array>
#include <utility>

#include "../catalog/power_virus/power_virus.cu"

struct VirusLaunch {
  const char* name;
  uint32_t block;      // threads per block
  uint32_t tableSize;  // entries of the chain's random cycle
  int32_t chaseSteps;  // dependent loads per phase
  int32_t rounds;      // burst rounds per phase
  int32_t phases;
};

struct Data {
  std::vector<uint32_t> next;
  std::vector<float> coef;
  uint32_t* dNext = nullptr;
  float* dCoef = nullptr;
  float* dOut = nullptr;
  uint32_t* dHash = nullptr;
  uint32_t* dChase = nullptr;
};

int main(int argc, char** argv) {
  const Size size = parseSize(argc, argv);
  uint32_t grid = multiprocessors();  // one block per SM
  std::vector<VirusLaunch> launches;
  switch (size) {
    case Size::Tiny:
      grid = 2;
      launches = {VirusLaunch{"dram", 256, 1u << 14, 1, 1, 4},
                  VirusLaunch{"short", 64, 1, 0, 1, 8}};
      break;
    case Size::Small:
      launches = {VirusLaunch{"dram", 384, 1u << 20, 1, 1, 40},
                  VirusLaunch{"short", 64, 1, 0, 1, 200}};
      break;
    case Size::Default:
      launches = {VirusLaunch{"dram", 384, 1u << 20, 1, 1, 120},
                  VirusLaunch{"short", 64, 1, 0, 1, 600}};
      break;
  }

  // Per launch: its inputs drawn, uploaded and its outputs allocated before the next launch's.
  gpusc::Rng rng(1001);
  std::vector<Data> data;
  for (const auto& l : launches) {
    Data d;
    // One random cycle through all entries (Sattolo's algorithm): every chain is long.
    d.next.resize(l.tableSize);
    for (uint32_t i = 0; i < l.tableSize; ++i) d.next[i] = i;
    for (uint32_t i = l.tableSize - 1; i > 0; --i) std::swap(d.next[i], d.next[rng.below(i)]);
    const uint32_t n = grid * l.block;
    d.coef.resize(8 * size_t(n));
    for (uint32_t i = 0; i < 4 * n; ++i) d.coef[i] = rng.uniformf(0.5f, 0.9f);
    for (uint32_t i = 4 * n; i < 8 * n; ++i) d.coef[i] = rng.uniformf(-1.0f, 1.0f);
    d.dNext = upload(d.next);
    d.dCoef = upload(d.coef);
    d.dOut = deviceAlloc<float>(n);
    d.dHash = deviceAlloc<uint32_t>(n);
    d.dChase = deviceAlloc<uint32_t>(grid);
    data.push_back(std::move(d));
  }

  for (size_t i = 0; i < launches.size(); ++i) {
    const VirusLaunch& l = launches[i];
    const Data& d = data[i];
    power_virus<<<grid, l.block>>>(d.dNext, d.dCoef, d.dOut, d.dHash, d.dChase, l.phases,
                                   l.chaseSteps, l.rounds);
    CHECK(cudaGetLastError());
  }

  std::vector<CheckResult> results;
  for (size_t i = 0; i < launches.size(); ++i) {
    const VirusLaunch& l = launches[i];
    const Data& d = data[i];
    const uint32_t n = grid * l.block;
    std::vector<float> wantOut(n);
    std::vector<uint32_t> wantHash(n), wantChase(grid);
    for (uint32_t b = 0; b < grid; ++b) {
      // The value thread 0 publishes each phase.
      std::vector<uint32_t> token(l.phases);
      uint32_t p = b;
      for (int32_t ph = 0; ph < l.phases; ++ph) {
        for (int32_t s = 0; s < l.chaseSteps; ++s) p = d.next[p];
        token[ph] = p;
      }
      wantChase[b] = p;
      for (uint32_t t = 0; t < l.block; ++t) {
        const uint32_t gid = b * l.block + t;
        std::array<float, 4> m{}, c{};
        for (int k = 0; k < 4; ++k) {
          m[k] = d.coef[size_t(k) * n + gid];
          c[k] = d.coef[size_t(k + 4) * n + gid];
        }
        std::array<float, 16> a{};
        uint32_t h0 = gid, h1 = gid * 0x9e3779b9u;
        for (int32_t ph = 0; ph < l.phases; ++ph) {
          for (int32_t r = 0; r < l.rounds; ++r) {
            for (int k = 0; k < 16; ++k) a[k] = std::fma(a[k], m[k % 4], c[(k + k / 4 + 1) % 4]);
            h0 = h0 * 0x01000193u + h1;
            h1 = (h1 ^ (h1 >> 7)) + h0;
          }
          h0 ^= token[ph];
        }
        std::array<float, 4> q{};
        for (int k = 0; k < 4; ++k)
          q[k] = (a[4 * k] + a[4 * k + 1]) + (a[4 * k + 2] + a[4 * k + 3]);
        wantOut[gid] = (q[0] + q[1]) + (q[2] + q[3]);
        wantHash[gid] = h0 ^ h1;
      }
    }
    const std::string name = l.name;
    results.push_back(compareExact(download(d.dOut, n), wantOut, name + " out"));
    results.push_back(compareExact(download(d.dHash, n), wantHash, name + " hash"));
    results.push_back(compareExact(download(d.dChase, grid), wantChase, name + " chain end"));
  }
  for (const auto& r : results)
    if (!r.pass) return finish(r);
  return finish({true, std::to_string(launches.size()) +
                           " launches: every thread's sum and hash and every chain end exact"});
}
