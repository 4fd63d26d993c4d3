// The RTL blocks' fixed point: a non-negative real as an unsigned integer with `fracBits`
// fractional bits, rounded to nearest and saturating at `max` (negative and NaN: 0). Every
// transactor converts its inputs with it, so the model and the RTL see the same grid.
#pragma once

#include <cmath>
#include <cstdint>

namespace gpusc::rtl {

inline uint32_t toFixed(double value, int fracBits, uint32_t max = 0xffffffffu) {
  const double q = std::nearbyint(std::ldexp(value, fracBits));
  if (!(q > 0)) return 0;
  if (q >= double(max)) return max;
  return static_cast<uint32_t>(q);
}

}  // namespace gpusc::rtl
