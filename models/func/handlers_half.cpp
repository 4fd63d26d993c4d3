// Half-precision (f16, bf16) and packed-pair (f16x2, bf16x2) arithmetic, and the rounding of
// wider values to these formats in every IEEE rounding mode.
//
// Each operation is computed in double precision rounded to odd (round toward zero, then set the
// last bit when the result was inexact) and then rounded once to the 16-bit format in the
// instruction's rounding mode. A double has more than twice the precision of either format plus
// two bits, so this gives the correctly rounded result for add, sub, mul and fma.
#include <cfenv>
#include <cmath>
#include <cstring>

#include "func/handlers.hpp"
#include "func/lanes.hpp"

namespace gpusc::func {

namespace {

struct Format {
  int manBits;  // stored mantissa bits
  int bias;
  int expBits;
};
constexpr Format kHalf{10, 15, 5};
constexpr Format kBf16{7, 127, 8};

uint16_t roundTo(const Format& f, double x, handlers::Round r) {
  using handlers::Round;
  if (x != x) return 0x7fff;  // canonical NaN
  const bool neg = std::signbit(x);
  const uint16_t sign = neg ? 0x8000u : 0u;
  const uint32_t expMax = (1u << f.expBits) - 1;  // exponent field of inf/NaN
  const uint16_t inf = static_cast<uint16_t>(sign | (expMax << f.manBits));
  const uint16_t maxFinite =
      static_cast<uint16_t>(sign | (((expMax - 1) << f.manBits) | ((1u << f.manBits) - 1)));
  double a = std::fabs(x);
  if (std::isinf(a)) return inf;
  if (a == 0) return sign;
  int e;
  std::frexp(a, &e);  // a = m * 2^e, m in [0.5, 1): the leading bit has weight 2^(e-1)
  const int minExp = 1 - f.bias;
  int q = std::max(e - 1, minExp) - f.manBits;  // weight of the last stored bit
  double scaled = std::ldexp(a, -q);
  double n = std::floor(scaled);
  double frac = scaled - n;
  bool up = false;
  switch (r) {
    case Round::Rz:
      break;
    case Round::Rm:
      up = neg && frac > 0;
      break;
    case Round::Rp:
      up = !neg && frac > 0;
      break;
    default:  // nearest even
      up = frac > 0.5 || (frac == 0.5 && std::fmod(n, 2.0) != 0);
      break;
  }
  uint64_t m = static_cast<uint64_t>(n) + (up ? 1 : 0);
  const uint64_t hidden = 1ull << f.manBits;
  if (m < hidden) return static_cast<uint16_t>(sign | m);  // subnormal (or zero)
  if (m >= 2 * hidden) {                                   // carried into the next binade
    m >>= 1;
    ++q;
  }
  int64_t expField = int64_t(q) + f.manBits + f.bias;
  if (expField >= int64_t(expMax)) {  // overflow
    switch (r) {
      case Round::Rz:
        return maxFinite;
      case Round::Rm:
        return neg ? inf : maxFinite;
      case Round::Rp:
        return neg ? maxFinite : inf;
      default:
        return inf;
    }
  }
  return static_cast<uint16_t>(sign | (uint64_t(expField) << f.manBits) | (m - hidden));
}

}  // namespace

uint16_t roundToHalf(double x, handlers::Round r) { return roundTo(kHalf, x, r); }
uint16_t roundToBhalf(double x, handlers::Round r) { return roundTo(kBf16, x, r); }

double roundToOdd(double towardZero, bool inexact) {
  if (!inexact) return towardZero;
  uint64_t b;
  std::memcpy(&b, &towardZero, 8);
  b |= 1u;
  std::memcpy(&towardZero, &b, 8);
  return towardZero;
}

namespace handlers {

namespace {

template <bool Bf>
inline double toDouble(uint16_t h) {
  return Bf ? bhalfToFloat(h) : halfToFloat(h);
}

template <bool Bf>
inline uint16_t fromDouble(double x, Round r) {
  return Bf ? roundToBhalf(x, r) : roundToHalf(x, r);
}

template <bool Bf>
inline bool isNaN(uint16_t h) {
  return Bf ? (h & 0x7fffu) > 0x7f80u : (h & 0x7fffu) > 0x7c00u;
}

template <bool Bf>
inline uint16_t flush(uint16_t h) {  // .ftz: subnormal inputs and results become signed zero
  const uint16_t expMask = Bf ? 0x7f80u : 0x7c00u;
  return (h & expMask) == 0 ? static_cast<uint16_t>(h & 0x8000u) : h;
}

// An exact operation result, rounded to odd in double precision.
template <HalfOp Op>
inline double compute(double a, double b, double c) {
  std::feclearexcept(FE_INEXACT);
  std::fesetround(FE_TOWARDZERO);
  volatile double r;
  if constexpr (Op == HalfOp::Add)
    r = a + b;
  else if constexpr (Op == HalfOp::Sub)
    r = a - b;
  else if constexpr (Op == HalfOp::Mul)
    r = a * b;
  else
    r = std::fma(a, b, c);
  double v = r;
  bool inexact = std::fetestexcept(FE_INEXACT) != 0;
  std::fesetround(FE_TONEAREST);
  return roundToOdd(v, inexact);
}

template <bool Bf>
inline uint16_t minMax(uint16_t a, uint16_t b, bool isMin, bool nanProp) {
  bool na = isNaN<Bf>(a), nb = isNaN<Bf>(b);
  if (na || nb) {
    if (nanProp || (na && nb)) return 0x7fff;
    return na ? b : a;
  }
  double x = toDouble<Bf>(a), y = toDouble<Bf>(b);
  if (x == y) {  // -0 is below +0
    bool aNeg = a & 0x8000u;
    return (isMin == aNeg) ? a : b;
  }
  return (isMin ? x < y : x > y) ? a : b;
}

template <bool Bf, HalfOp Op>
uint16_t element(uint16_t a, uint16_t b, uint16_t c, Round r, uint8_t flags) {
  const bool ftz = flags & kHalfFtz;
  if (ftz) {
    a = flush<Bf>(a);
    b = flush<Bf>(b);
    c = flush<Bf>(c);
  }
  uint16_t out;
  if constexpr (Op == HalfOp::Neg) {
    out = static_cast<uint16_t>(a ^ 0x8000u);
  } else if constexpr (Op == HalfOp::Abs) {
    out = static_cast<uint16_t>(a & 0x7fffu);
  } else if constexpr (Op == HalfOp::Min || Op == HalfOp::Max || Op == HalfOp::MinNaN ||
                       Op == HalfOp::MaxNaN) {
    const bool xorSign = flags & kHalfXorSignAbs;  // magnitudes compared, signs xor-ed
    out = minMax<Bf>(xorSign ? uint16_t(a & 0x7fffu) : a, xorSign ? uint16_t(b & 0x7fffu) : b,
                     Op == HalfOp::Min || Op == HalfOp::MinNaN,
                     Op == HalfOp::MinNaN || Op == HalfOp::MaxNaN);
    if (xorSign && !isNaN<Bf>(out)) out = static_cast<uint16_t>(out | ((a ^ b) & 0x8000u));
  } else if constexpr (Op == HalfOp::Ex2 || Op == HalfOp::Tanh) {
    double x = toDouble<Bf>(a);
    out = fromDouble<Bf>(Op == HalfOp::Ex2 ? std::exp2(x) : std::tanh(x), Round::Rn);
  } else {
    double v = compute<Op>(toDouble<Bf>(a), toDouble<Bf>(b), toDouble<Bf>(c));
    out = fromDouble<Bf>(v, r);
  }
  if (ftz) out = flush<Bf>(out);
  if (flags & kHalfSat) {
    if (isNaN<Bf>(out) || (out & 0x8000u)) return 0;  // NaN and negatives (also -0) give +0
    if (toDouble<Bf>(out) > 1.0) return Bf ? 0x3f80u : 0x3c00u;
  }
  if (flags & kHalfRelu) {
    if (isNaN<Bf>(out)) return 0x7fff;
    if (out & 0x8000u) return 0;
  }
  return out;
}

template <bool Bf, bool Pair, HalfOp Op>
void halfHandler(ExecCtx& c, const Inst& in, uint32_t mask) {
  uint64_t* d = slot(c, in.dst[0]);
  const uint64_t* a = slot(c, in.src[0]);
  const uint64_t* b = slot(c, in.src[in.nsrc > 1 ? 1 : 0]);
  const uint64_t* e = slot(c, in.src[in.nsrc > 2 ? 2 : 0]);
  const Round r = static_cast<Round>(in.mode2);
  forEachLane(mask, [&](int l) {
    uint32_t x = static_cast<uint32_t>(a[l]), y = static_cast<uint32_t>(b[l]),
             z = static_cast<uint32_t>(e[l]);
    uint32_t out = element<Bf, Op>(uint16_t(x), uint16_t(y), uint16_t(z), r, in.flags);
    if constexpr (Pair)
      out |= uint32_t(element<Bf, Op>(uint16_t(x >> 16), uint16_t(y >> 16), uint16_t(z >> 16), r,
                                      in.flags))
             << 16;
    d[l] = out;
  });
}

template <bool Bf, bool Pair>
Handler pick(HalfOp op) {
  switch (op) {
    case HalfOp::Add:
      return &halfHandler<Bf, Pair, HalfOp::Add>;
    case HalfOp::Sub:
      return &halfHandler<Bf, Pair, HalfOp::Sub>;
    case HalfOp::Mul:
      return &halfHandler<Bf, Pair, HalfOp::Mul>;
    case HalfOp::Fma:
      return &halfHandler<Bf, Pair, HalfOp::Fma>;
    case HalfOp::Min:
      return &halfHandler<Bf, Pair, HalfOp::Min>;
    case HalfOp::Max:
      return &halfHandler<Bf, Pair, HalfOp::Max>;
    case HalfOp::MinNaN:
      return &halfHandler<Bf, Pair, HalfOp::MinNaN>;
    case HalfOp::MaxNaN:
      return &halfHandler<Bf, Pair, HalfOp::MaxNaN>;
    case HalfOp::Neg:
      return &halfHandler<Bf, Pair, HalfOp::Neg>;
    case HalfOp::Abs:
      return &halfHandler<Bf, Pair, HalfOp::Abs>;
    case HalfOp::Ex2:
      return &halfHandler<Bf, Pair, HalfOp::Ex2>;
    case HalfOp::Tanh:
      return &halfHandler<Bf, Pair, HalfOp::Tanh>;
  }
  return nullptr;
}

// cvt.rn{.relu}{.satfinite}.f16x2.f32 d, a, b: d's upper half from a, lower half from b.
template <bool Bf>
void cvtPairHandler(ExecCtx& c, const Inst& in, uint32_t mask) {
  uint64_t* d = slot(c, in.dst[0]);
  const uint64_t* a = slot(c, in.src[0]);
  const uint64_t* b = slot(c, in.src[1]);
  const Round r = static_cast<Round>(in.mode2);
  auto one = [&](float f) -> uint32_t {
    uint16_t h = fromDouble<Bf>(f, r);
    if ((in.flags & kHalfSatFinite) && !isNaN<Bf>(h) && (h & 0x7fffu) == (Bf ? 0x7f80u : 0x7c00u))
      h = static_cast<uint16_t>((h & 0x8000u) | (Bf ? 0x7f7fu : 0x7bffu));
    if (in.flags & kHalfRelu) {
      if (isNaN<Bf>(h)) return 0x7fff;
      if (h & 0x8000u) return 0;
    }
    return h;
  };
  forEachLane(mask, [&](int l) { d[l] = (one(get<float>(a, l)) << 16) | one(get<float>(b, l)); });
}

// cvt.{rn,rz}{.relu}{.satfinite}.{f16,bf16}.f32 d, a: one value, as one half of the pair form.
template <bool Bf>
void cvtSingleHandler(ExecCtx& c, const Inst& in, uint32_t mask) {
  uint64_t* d = slot(c, in.dst[0]);
  const uint64_t* a = slot(c, in.src[0]);
  const Round r = static_cast<Round>(in.mode2);
  forEachLane(mask, [&](int l) {
    uint16_t h = fromDouble<Bf>(get<float>(a, l), r);
    if ((in.flags & kHalfSatFinite) && !isNaN<Bf>(h) && (h & 0x7fffu) == (Bf ? 0x7f80u : 0x7c00u))
      h = static_cast<uint16_t>((h & 0x8000u) | (Bf ? 0x7f7fu : 0x7bffu));
    if (in.flags & kHalfRelu) {
      if (isNaN<Bf>(h))
        h = 0x7fff;
      else if (h & 0x8000u)
        h = 0;
    }
    d[l] = h;
  });
}

}  // namespace

Handler cvtHalfSingle(Type dt) {
  if (dt == Type::F16) return &cvtSingleHandler<false>;
  if (dt == Type::BF16) return &cvtSingleHandler<true>;
  return nullptr;
}

Handler halfArith(HalfOp op, Type t) {
  switch (t) {
    case Type::F16:
      return pick<false, false>(op);
    case Type::F16x2:
      return pick<false, true>(op);
    case Type::BF16:
      return pick<true, false>(op);
    case Type::BF16x2:
      return pick<true, true>(op);
    default:
      return nullptr;
  }
}

Handler cvtPackPair(Type dt) {
  if (dt == Type::F16x2) return &cvtPairHandler<false>;
  if (dt == Type::BF16x2) return &cvtPairHandler<true>;
  return nullptr;
}

}  // namespace handlers
}  // namespace gpusc::func
