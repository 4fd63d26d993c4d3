// Deterministic pseudo-random numbers for inputs: the same seed gives the same values on every
// platform and standard library (std:: distributions are implementation-defined, so we do not
// use them).
#pragma once

#include <cstdint>

namespace gpusc {

class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}

  // splitmix64
  uint64_t next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  uint32_t next32() { return static_cast<uint32_t>(next() >> 32); }
  // Uniform in [0, n).
  uint32_t below(uint32_t n) {
    return n == 0 ? 0 : static_cast<uint32_t>((uint64_t(next32()) * n) >> 32);
  }
  // Uniform in [lo, hi).
  double uniform(double lo, double hi) {
    return lo + (hi - lo) * (double(next() >> 11) * 0x1.0p-53);
  }
  float uniformf(float lo, float hi) { return static_cast<float>(uniform(lo, hi)); }

 private:
  uint64_t state_;
};

}  // namespace gpusc
