// Conversions to and from the narrow floating-point formats (fp8 e4m3/e5m2, fp6 e2m3/e3m2, fp4
// e2m1, two values at a time) and cvt.pack.sat. Rounding to nearest even is done on exact
// doubles (scaling by powers of two and floor are exact), so the host's rounding mode does not
// matter.
#include <cmath>

#include "func/handlers.hpp"
#include "func/lanes.hpp"

namespace gpusc::func::handlers {

namespace {

struct MiniFormat {
  int ebits, mbits, bias;
  uint32_t maxCode;  // the largest finite magnitude's code
  bool hasNan;       // e4m3 and e5m2 (NaN code 0x7f); the fp6 and fp4 formats have none
};

MiniFormat formatOf(NarrowFormat f) {
  switch (f) {
    case NarrowFormat::E4M3:
      return {4, 3, 7, 0x7e, true};  // no infinities: 0x7f is NaN, 448 the largest
    case NarrowFormat::E5M2:
      return {5, 2, 15, 0x7b, true};  // IEEE-like: 0x7c infinity, 57344 the largest
    case NarrowFormat::E2M3:
      return {2, 3, 1, 0x1f, false};
    case NarrowFormat::E3M2:
      return {3, 2, 3, 0x1f, false};
    default:
      return {2, 1, 1, 0x7, false};
  }
}

// The magnitude of a code without its sign (finite codes only).
double magnitude(const MiniFormat& f, uint32_t code) {
  const uint32_t e = (code >> f.mbits) & ((1u << f.ebits) - 1), m = code & ((1u << f.mbits) - 1);
  if (e == 0) return std::ldexp(double(m), 1 - f.bias - f.mbits);
  return std::ldexp(double((1u << f.mbits) + m), int(e) - f.bias - f.mbits);
}

// Round to nearest even with saturation to the largest finite value (.satfinite); NaN gives
// the format's NaN, or its largest positive value when it has none.
uint32_t encode(const MiniFormat& f, double x, bool relu) {
  const uint32_t signBit = 1u << (f.ebits + f.mbits);
  if (std::isnan(x)) return f.hasNan ? 0x7fu : f.maxCode;
  const bool neg = std::signbit(x);
  if (relu && neg) return 0;
  const uint32_t sign = neg ? signBit : 0;
  const double a = std::fabs(x), maxv = magnitude(f, f.maxCode);
  if (a >= maxv) return sign | f.maxCode;
  if (a == 0) return sign;
  int k = 0;
  std::frexp(a, &k);  // a in [2^(k-1), 2^k)
  const int emin = 1 - f.bias;
  const int e = std::max(k - 1, emin);
  const double q = std::ldexp(1.0, e - f.mbits);  // the spacing of values at a's exponent
  double n = std::floor(a / q);
  const double rest = a / q - n;
  if (rest > 0.5 || (rest == 0.5 && std::fmod(n, 2.0) == 1.0)) n += 1;
  const double v = std::min(n * q, maxv);
  if (v == 0) return sign;
  if (v < std::ldexp(1.0, emin))  // subnormal
    return sign | static_cast<uint32_t>(v / std::ldexp(1.0, emin - f.mbits));
  std::frexp(v, &k);
  const int ev = k - 1;
  const uint32_t m = static_cast<uint32_t>(v / std::ldexp(1.0, ev - f.mbits)) - (1u << f.mbits);
  return sign | (uint32_t(ev + f.bias) << f.mbits) | m;
}

// A code as f16 bits (exact: every narrow value is an f16 value). NaN gives 0x7fff.
uint16_t toHalf(const MiniFormat& f, uint32_t code, bool relu) {
  const uint32_t signBit = 1u << (f.ebits + f.mbits), mag = code & (signBit - 1);
  if (f.hasNan) {
    const bool isNan = f.ebits == 4 ? mag == 0x7f : (mag >> 2) == 0x1f && (mag & 3) != 0;
    if (isNan) return 0x7fff;
  }
  if ((code & signBit) && relu) return 0;
  if (f.ebits == 5 && mag == 0x7c) return (code & signBit) ? 0xfc00 : 0x7c00;  // infinity
  const uint16_t h = roundToHalf(magnitude(f, mag), Round::Rn);
  return (code & signBit) ? static_cast<uint16_t>(h | 0x8000) : h;
}

template <NarrowFormat F>
void cvtNarrowHandler(ExecCtx& c, const Inst& in, uint32_t mask) {
  const MiniFormat f = formatOf(F);
  const bool relu = in.flags & 1;
  const unsigned width = F == NarrowFormat::E2M1 ? 4 : 8;  // bits per packed element
  const uint32_t elemMask = (1u << (f.ebits + f.mbits + 1)) - 1;
  uint64_t* d = slot(c, in.dst[0]);
  const uint64_t* a = slot(c, in.src[0]);
  const uint64_t* b = slot(c, in.src[1]);
  forEachLane(mask, [&](int l) {
    if (in.mode2 == 0) {  // two f32 values: a to the upper element
      const double hi = get<float>(a, l), lo = get<float>(b, l);
      d[l] = (encode(f, hi, relu) << width) | encode(f, lo, relu);
    } else if (in.mode2 == 1) {  // an f16x2 value
      const uint32_t x = get<uint32_t>(a, l);
      const double hi = halfToFloat(uint16_t(x >> 16)), lo = halfToFloat(uint16_t(x));
      d[l] = (encode(f, hi, relu) << width) | encode(f, lo, relu);
    } else {  // to f16x2
      const uint32_t x = static_cast<uint32_t>(a[l]);
      const uint32_t hi = (x >> width) & elemMask, lo = x & elemMask;
      d[l] = (uint32_t(toHalf(f, hi, relu)) << 16) | toHalf(f, lo, relu);
    }
  });
}

void cvtPackSatHandler(ExecCtx& c, const Inst& in, uint32_t mask) {
  const unsigned w = in.mode;  // 2, 4, 8 or 16 bits per value
  const bool isSigned = in.flags & 1;
  const int64_t lo = isSigned ? -(int64_t(1) << (w - 1)) : 0;
  const int64_t hi = isSigned ? (int64_t(1) << (w - 1)) - 1 : (int64_t(1) << w) - 1;
  const uint32_t m = (1u << w) - 1;
  uint64_t* d = slot(c, in.dst[0]);
  const uint64_t* a = slot(c, in.src[0]);
  const uint64_t* b = slot(c, in.src[1]);
  const uint64_t* e = slot(c, in.src[2]);
  forEachLane(mask, [&](int l) {
    auto sat = [&](int32_t v) {
      return static_cast<uint32_t>(std::min(std::max<int64_t>(v, lo), hi)) & m;
    };
    const uint32_t packed = (sat(get<int32_t>(a, l)) << w) | sat(get<int32_t>(b, l));
    const uint32_t rest = w == 16 ? 0 : get<uint32_t>(e, l) << (2 * w);
    d[l] = packed | rest;
  });
}

}  // namespace

Handler cvtNarrow(NarrowFormat f) {
  switch (f) {
    case NarrowFormat::E4M3:
      return &cvtNarrowHandler<NarrowFormat::E4M3>;
    case NarrowFormat::E5M2:
      return &cvtNarrowHandler<NarrowFormat::E5M2>;
    case NarrowFormat::E2M3:
      return &cvtNarrowHandler<NarrowFormat::E2M3>;
    case NarrowFormat::E3M2:
      return &cvtNarrowHandler<NarrowFormat::E3M2>;
    case NarrowFormat::E2M1:
      return &cvtNarrowHandler<NarrowFormat::E2M1>;
  }
  return nullptr;
}

Handler cvtPackSat() { return &cvtPackSatHandler; }

}  // namespace gpusc::func::handlers
