// Comparison, selection, conversion, data movement and warp-level instructions.
#include <cfenv>
#include <cmath>
#include <limits>

#include "func/handlers.hpp"
#include "func/lanes.hpp"
#include "func/step_env.hpp"

namespace gpusc::func {

// ---- half precision ----------------------------------------------------------------------------

float halfToFloat(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1f;
  uint32_t man = h & 0x3ffu;
  uint32_t bits;
  if (exp == 0) {
    if (man == 0) {
      bits = sign;
    } else {  // subnormal: normalise
      int e = -1;
      do {
        ++e;
        man <<= 1;
      } while ((man & 0x400u) == 0);
      bits = sign | uint32_t(127 - 15 - e) << 23 | (man & 0x3ffu) << 13;
    }
  } else if (exp == 31) {
    bits = sign | 0x7f800000u | man << 13;
  } else {
    bits = sign | (exp + 127 - 15) << 23 | man << 13;
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t floatToHalf(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  uint32_t absx = x & 0x7fffffffu;
  if (absx > 0x7f800000u) return 0x7fff;           // NaN (canonical)
  if (absx >= 0x477ff000u) return sign | 0x7c00u;  // rounds to infinity
  if (absx < 0x33000001u) return sign;             // rounds to zero
  int exp = int(absx >> 23) - 127 + 15;
  uint32_t man = (absx & 0x7fffffu) | 0x800000u;
  int shift = exp > 0 ? 13 : 14 - exp;  // subnormal results shift further
  uint32_t half = man >> shift;
  uint32_t rem = man & ((1u << shift) - 1);
  uint32_t mid = 1u << (shift - 1);
  if (rem > mid || (rem == mid && (half & 1u))) ++half;  // round to nearest even
  uint32_t bits = exp > 0 ? ((uint32_t(exp) << 10) + (half - 0x400u)) : half;
  return static_cast<uint16_t>(sign | bits);
}

float bhalfToFloat(uint16_t h) {
  uint32_t bits = uint32_t(h) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t floatToBhalf(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  if ((x & 0x7fffffffu) > 0x7f800000u) return 0x7fff;
  uint32_t lsb = (x >> 16) & 1u;
  return static_cast<uint16_t>((x + 0x7fffu + lsb) >> 16);
}

namespace handlers {

namespace {

// ---- comparisons -------------------------------------------------------------------------------

template <class T>
inline bool compare(Cmp op, T a, T b) {
  using UT =
      std::conditional_t<std::is_integral_v<T>,
                         std::make_unsigned_t<std::conditional_t<std::is_integral_v<T>, T, int>>,
                         T>;
  if constexpr (std::is_floating_point_v<T>) {
    bool unord = a != a || b != b;
    switch (op) {
      case Cmp::Eq:
        return !unord && a == b;
      case Cmp::Ne:
        return !unord && a != b;
      case Cmp::Lt:
        return !unord && a < b;
      case Cmp::Le:
        return !unord && a <= b;
      case Cmp::Gt:
        return !unord && a > b;
      case Cmp::Ge:
        return !unord && a >= b;
      case Cmp::Equ:
        return unord || a == b;
      case Cmp::Neu:
        return unord || a != b;
      case Cmp::Ltu:
        return unord || a < b;
      case Cmp::Leu:
        return unord || a <= b;
      case Cmp::Gtu:
        return unord || a > b;
      case Cmp::Geu:
        return unord || a >= b;
      case Cmp::Num:
        return !unord;
      case Cmp::Nan:
        return unord;
      default:
        return false;
    }
  } else {
    switch (op) {
      case Cmp::Eq:
        return a == b;
      case Cmp::Ne:
        return a != b;
      case Cmp::Lt:
        return a < b;
      case Cmp::Le:
        return a <= b;
      case Cmp::Gt:
        return a > b;
      case Cmp::Ge:
        return a >= b;
      case Cmp::Lo:
        return UT(a) < UT(b);
      case Cmp::Ls:
        return UT(a) <= UT(b);
      case Cmp::Hi:
        return UT(a) > UT(b);
      case Cmp::Hs:
        return UT(a) >= UT(b);
      default:
        return false;
    }
  }
}

// Operand values for comparisons; 16-bit floats compare as the floats they convert to exactly.
template <class T>
struct CmpOperand {
  using type = T;
  static T load(const uint64_t* s, int l) { return get<T>(s, l); }
};
template <>
struct CmpOperand<Half> {
  using type = float;
  static float load(const uint64_t* s, int l) { return halfToFloat(get<uint16_t>(s, l)); }
};
template <>
struct CmpOperand<BHalf> {
  using type = float;
  static float load(const uint64_t* s, int l) { return bhalfToFloat(get<uint16_t>(s, l)); }
};

// f16 with .ftz: a subnormal (exponent 0) is zero of its sign.
inline uint16_t ftzHalfBits(uint16_t h) { return (h & 0x7c00u) == 0 ? uint16_t(h & 0x8000u) : h; }
// f16 compared with .ftz (setp, set): each operand flushed first.
struct FtzF16 {};
template <>
struct CmpOperand<FtzF16> {
  using type = float;
  static float load(const uint64_t* s, int l) {
    return halfToFloat(ftzHalfBits(get<uint16_t>(s, l)));
  }
};

// f32 compared with .ftz: a subnormal operand is flushed to zero of its sign first.
struct FtzF32 {};
template <>
struct CmpOperand<FtzF32> {
  using type = float;
  static float load(const uint64_t* s, int l) { return ftzFloat(get<float>(s, l)); }
};

template <class T>
uint32_t compareMask(ExecCtx& c, const Inst& in, uint32_t mask) {
  const uint64_t* a = slot(c, in.src[0]);
  const uint64_t* b = slot(c, in.src[1]);
  const Cmp op = static_cast<Cmp>(in.mode);
  uint32_t r = 0;
  if constexpr (!std::is_same_v<typename CmpOperand<T>::type, T>) {
    forEachLane(mask, [&](int l) {
      r |= uint32_t(compare(op, CmpOperand<T>::load(a, l), CmpOperand<T>::load(b, l))) << l;
    });
    return r;
  } else {
    // Hoist the operator out of the lane loop for the common cases.
    switch (op) {
#define GPUSC_CMP_CASE(OP)                                                                         \
  case Cmp::OP:                                                                                    \
    forEachLane(mask,                                                                              \
                [&](int l) { r |= uint32_t(compare(Cmp::OP, get<T>(a, l), get<T>(b, l))) << l; }); \
    break;
      GPUSC_CMP_CASE(Eq)
      GPUSC_CMP_CASE(Ne)
      GPUSC_CMP_CASE(Lt)
      GPUSC_CMP_CASE(Le)
      GPUSC_CMP_CASE(Gt)
      GPUSC_CMP_CASE(Ge)
#undef GPUSC_CMP_CASE
      default:
        forEachLane(mask,
                    [&](int l) { r |= uint32_t(compare(op, get<T>(a, l), get<T>(b, l))) << l; });
    }
    return r;
  }
}

inline uint32_t combine(BoolOp op, uint32_t x, uint32_t y) {
  switch (op) {
    case BoolOp::And:
      return x & y;
    case BoolOp::Or:
      return x | y;
    case BoolOp::Xor:
      return x ^ y;
    default:
      return x;
  }
}

// setp's results: p and q, each combined with the predicate operand c when there is one.
inline void writeSetp(ExecCtx& c, const Inst& in, uint32_t mask, uint32_t p, uint32_t q) {
  BoolOp op = static_cast<BoolOp>(in.mode2);
  if (op != BoolOp::None) {
    uint32_t cp = readPred(c, in.src[2], in.predSrcNeg & 4);
    p = combine(op, p, cp);
    q = combine(op, q, cp);
  }
  writePred(c, in.dst[0], mask, p);
  if (in.ndst == 2) writePred(c, in.dst[1], mask, q);
}

template <class T>
void setpHandler(ExecCtx& c, const Inst& in, uint32_t mask) {
  uint32_t r = compareMask<T>(c, in, mask);
  writeSetp(c, in, mask, r, ~r);
}

// Compares the lower and the upper halves of f16x2/bf16x2 operands: a lane mask for each
// (f16x2 with .ftz: subnormal halves flushed to zero first).
template <bool Bf, bool Ftz = false>
void comparePairs(ExecCtx& c, const Inst& in, uint32_t mask, uint32_t& lo, uint32_t& hi) {
  const uint64_t* a = slot(c, in.src[0]);
  const uint64_t* b = slot(c, in.src[1]);
  const Cmp op = static_cast<Cmp>(in.mode);
  auto value = [](uint64_t v, unsigned half) {
    uint16_t h = static_cast<uint16_t>(v >> (16 * half));
    if constexpr (Ftz) h = ftzHalfBits(h);
    return Bf ? bhalfToFloat(h) : halfToFloat(h);
  };
  lo = hi = 0;
  forEachLane(mask, [&](int l) {
    lo |= uint32_t(compare(op, value(a[l], 0), value(b[l], 0))) << l;
    hi |= uint32_t(compare(op, value(a[l], 1), value(b[l], 1))) << l;
  });
}

// setp on f16x2/bf16x2: p holds the comparison of the lower halves, q of the upper halves.
template <bool Bf, bool Ftz = false>
void setpPairHandler(ExecCtx& c, const Inst& in, uint32_t mask) {
  uint32_t lo, hi;
  comparePairs<Bf, Ftz>(c, in, mask, lo, hi);
  writeSetp(c, in, mask, lo, hi);
}

template <class T>
void setHandler(ExecCtx& c, const Inst& in, uint32_t mask) {
  uint32_t r = compareMask<T>(c, in, mask);
  BoolOp op = static_cast<BoolOp>(in.mode2);
  if (op != BoolOp::None) r = combine(op, r, readPred(c, in.src[2], in.predSrcNeg & 4));
  uint64_t* d = slot(c, in.dst[0]);
  const uint64_t yes = static_cast<uint64_t>(in.imm);  // 1.0 or all ones in the result's type
  forEachLane(mask, [&](int l) { d[l] = (r >> l) & 1u ? yes : 0u; });
}

// set on f16x2/bf16x2: each half of the result holds the comparison of that half.
template <bool Bf, bool Ftz = false>
void setPairHandler(ExecCtx& c, const Inst& in, uint32_t mask) {
  uint32_t lo, hi;
  comparePairs<Bf, Ftz>(c, in, mask, lo, hi);
  const BoolOp bop = static_cast<BoolOp>(in.mode2);
  if (bop != BoolOp::None) {
    const uint32_t p = readPred(c, in.src[2], in.predSrcNeg & 4);
    lo = combine(bop, lo, p);
    hi = combine(bop, hi, p);
  }
  uint64_t* d = slot(c, in.dst[0]);
  const uint64_t yes = static_cast<uint64_t>(in.imm);  // per half: 1.0 or 0xffff
  forEachLane(
      mask, [&](int l) { d[l] = ((lo >> l) & 1u ? yes : 0u) | ((hi >> l) & 1u ? yes << 16 : 0u); });
}

void selpHandler(ExecCtx& c, const Inst& in, uint32_t mask) {
  uint64_t* d = slot(c, in.dst[0]);
  const uint64_t* a = slot(c, in.src[0]);
  const uint64_t* b = slot(c, in.src[1]);
  uint32_t p = readPred(c, in.src[2], in.predSrcNeg & 4);
  forEachLane(mask, [&](int l) { d[l] = ((p >> l) & 1u) ? a[l] : b[l]; });
}

template <class C>
void slctHandler(ExecCtx& c, const Inst& in, uint32_t mask) {
  uint64_t* d = slot(c, in.dst[0]);
  const uint64_t* a = slot(c, in.src[0]);
  const uint64_t* b = slot(c, in.src[1]);
  const uint64_t* s = slot(c, in.src[2]);
  forEachLane(mask, [&](int l) { d[l] = get<C>(s, l) >= C(0) ? a[l] : b[l]; });
}

// slct.ftz.f32: a negative subnormal selector is -0, which selects a.
void slctFtzHandler(ExecCtx& c, const Inst& in, uint32_t mask) {
  uint64_t* d = slot(c, in.dst[0]);
  const uint64_t* a = slot(c, in.src[0]);
  const uint64_t* b = slot(c, in.src[1]);
  const uint64_t* s = slot(c, in.src[2]);
  forEachLane(mask, [&](int l) { d[l] = ftzFloat(get<float>(s, l)) >= 0.0f ? a[l] : b[l]; });
}

// ---- conversions -------------------------------------------------------------------------------

template <class T>
struct Kind {
  static constexpr bool isHalf = std::is_same_v<T, Half> || std::is_same_v<T, BHalf>;
  static constexpr bool isFloat = std::is_floating_point_v<T> || isHalf;
};

template <class T>
inline float halfValue(T h) {
  if constexpr (std::is_same_v<T, Half>)
    return halfToFloat(h.bits);
  else
    return bhalfToFloat(h.bits);
}

// Rounds to f16/bf16 in the instruction's rounding mode (the integral roundings .rni etc. have
// already been applied, and their result is rounded to nearest).
template <class D>
inline D fromDouble(double f, Round r) {
  Round rr = (r == Round::Rz || r == Round::Rm || r == Round::Rp) ? r : Round::Rn;
  if constexpr (std::is_same_v<D, Half>)
    return Half{roundToHalf(f, rr)};
  else
    return BHalf{roundToBhalf(f, rr)};
}

// An integer as a double, rounded to odd when it has more than 53 significant bits, so that the
// rounding to a 16-bit format afterwards is the correctly rounded conversion.
template <class S>
inline double intToDoubleOdd(S x) {
  bool neg = false;
  uint64_t v;
  if constexpr (std::is_signed_v<S>) {
    neg = x < 0;
    v = neg ? uint64_t(0) - uint64_t(int64_t(x)) : uint64_t(x);
  } else {
    v = uint64_t(x);
  }
  int width = v == 0 ? 0 : 64 - __builtin_clzll(v);
  double d;
  if (width <= 53) {
    d = static_cast<double>(v);
  } else {
    int shift = width - 53;
    uint64_t m = v >> shift;
    if (v & ((1ull << shift) - 1)) m |= 1u;
    d = std::ldexp(static_cast<double>(m), shift);
  }
  return neg ? -d : d;
}

template <class F>
inline F roundIntegral(F x, Round r) {
  switch (r) {
    case Round::Rni:
      return std::nearbyint(x);  // host mode is round-to-nearest-even
    case Round::Rzi:
      return std::trunc(x);
    case Round::Rmi:
      return std::floor(x);
    case Round::Rpi:
      return std::ceil(x);
    default:
      return x;
  }
}

// F is float for f16, bf16 and f32 sources, double for f64.
template <class D, class F>
inline D floatToInt(F x, Round r) {
  // NaN (PTX ISA 9.0, cvt): 0 when the source is not .f64 and the destination not 64 bits wide;
  // otherwise 1 << (width - 1): MININT of a signed destination, (MAXINT >> 1) + 1 of an unsigned.
  if (x != x) {
    if constexpr (sizeof(F) == 8 || sizeof(D) == 8)
      return static_cast<D>(std::make_unsigned_t<D>(1) << (8 * sizeof(D) - 1));
    return D(0);
  }
  F v = roundIntegral(x, r);
  // Saturate to D's range (float-to-integer conversions always saturate in PTX).
  if (v <= F(std::numeric_limits<D>::min())) return std::numeric_limits<D>::min();
  if (v >= F(std::numeric_limits<D>::max())) return std::numeric_limits<D>::max();
  return static_cast<D>(v);
}

template <class D, class S>
inline D intToInt(S x, bool sat) {
  if (!sat) return static_cast<D>(static_cast<std::make_unsigned_t<D>>(x));
  if constexpr (std::is_signed_v<S>) {
    if (std::is_unsigned_v<D> && x < 0) return D(0);
    if (std::is_signed_v<D> && int64_t(x) < int64_t(std::numeric_limits<D>::min()))
      return std::numeric_limits<D>::min();
    if (x > 0 && uint64_t(x) > uint64_t(std::numeric_limits<D>::max()))
      return std::numeric_limits<D>::max();
  } else {
    if (uint64_t(x) > uint64_t(std::numeric_limits<D>::max())) return std::numeric_limits<D>::max();
  }
  return static_cast<D>(x);
}

template <class F>
inline F satFloat(F x) {
  if (!(x > F(0))) return F(0);
  return x > F(1) ? F(1) : x;
}

// A NaN result of a conversion is the canonical NaN (docs/ptx-support.md), whatever the input's
// payload; other values pass.
template <class F>
inline F canonicalNaN(F v) {
  if (v == v) return v;
  if constexpr (sizeof(F) == 4) {
    const uint32_t b = 0x7fffffffu;
    std::memcpy(&v, &b, 4);
  } else {
    const uint64_t b = 0x7fffffffffffffffull;
    std::memcpy(&v, &b, 8);
  }
  return v;
}

template <class D, class S>
inline D convert(S x, Round r, uint8_t flags) {
  const bool sat = flags & kSat, ftz = flags & kFtz;
  if constexpr (!Kind<S>::isFloat && !Kind<D>::isFloat) {
    return intToInt<D>(x, sat);
  } else if constexpr (Kind<S>::isFloat && !Kind<D>::isFloat) {
    if constexpr (Kind<S>::isHalf) {
      return floatToInt<D>(halfValue(x), r);
    } else {
      return floatToInt<D>(ftz ? ftzFloat(x) : x, r);
    }
  } else if constexpr (!Kind<S>::isFloat && Kind<D>::isFloat) {
    if constexpr (Kind<D>::isHalf) {
      double f = intToDoubleOdd(x);
      return fromDouble<D>(sat ? satFloat(f) : f, r);
    } else {
      D v = static_cast<D>(x);
      return sat ? satFloat(v) : v;
    }
  } else {
    // float -> float
    if constexpr (Kind<S>::isHalf || Kind<D>::isHalf) {
      double f;
      if constexpr (Kind<S>::isHalf)
        f = halfValue(x);
      else
        f = static_cast<double>(ftz ? ftzFloat(x) : x);
      f = roundIntegral(f, r);
      if (sat) f = satFloat(f);
      if constexpr (Kind<D>::isHalf) {
        D h = fromDouble<D>(f, r);
        if constexpr (std::is_same_v<D, Half>) {
          if (ftz && (h.bits & 0x7c00u) == 0) h.bits &= 0x8000u;
        }
        return h;
      } else {  // f16/bf16 -> f32/f64: a NaN (quiet or signalling, any payload) is canonical
        return canonicalNaN(static_cast<D>(f));
      }
    } else {
      S in = ftz ? ftzFloat(x) : x;
      D v = static_cast<D>(roundIntegral(in, r));
      if (ftz) v = ftzFloat(v);
      if (sat) v = satFloat(v);
      return canonicalNaN(v);
    }
  }
}

template <class D, class S>
void cvtHandler(ExecCtx& c, const Inst& in, uint32_t mask) {
  const Round r = static_cast<Round>(in.mode2);
  int mode = -1;
  if (r == Round::Rz)
    mode = FE_TOWARDZERO;
  else if (r == Round::Rm)
    mode = FE_DOWNWARD;
  else if (r == Round::Rp)
    mode = FE_UPWARD;
  if (mode >= 0) std::fesetround(mode);
  uint64_t* d = slot(c, in.dst[0]);
  const uint64_t* a = slot(c, in.src[0]);
  const uint8_t flags = in.flags;
  forEachLane(mask, [&](int l) { putWidened<D>(d, l, convert<D>(get<S>(a, l), r, flags)); });
  if (mode >= 0) std::fesetround(FE_TONEAREST);
}

template <class S>
Handler cvtFrom(Type dt) {
  switch (dt) {
    case Type::U8:
      return &cvtHandler<uint8_t, S>;
    case Type::U16:
      return &cvtHandler<uint16_t, S>;
    case Type::U32:
      return &cvtHandler<uint32_t, S>;
    case Type::U64:
      return &cvtHandler<uint64_t, S>;
    case Type::S8:
      return &cvtHandler<int8_t, S>;
    case Type::S16:
      return &cvtHandler<int16_t, S>;
    case Type::S32:
      return &cvtHandler<int32_t, S>;
    case Type::S64:
      return &cvtHandler<int64_t, S>;
    case Type::F16:
      return &cvtHandler<Half, S>;
    case Type::BF16:
      return &cvtHandler<BHalf, S>;
    case Type::F32:
      return &cvtHandler<float, S>;
    case Type::F64:
      return &cvtHandler<double, S>;
    default:
      return nullptr;
  }
}

// ---- data movement -----------------------------------------------------------------------------

void movPackHandler(ExecCtx& c, const Inst& in, uint32_t mask) {
  uint64_t* d = slot(c, in.dst[0]);
  const unsigned bits = in.mode * 8u;
  const uint64_t partMask = bits >= 64 ? ~0ull : ((1ull << bits) - 1);
  const uint64_t* srcs[6];
  for (unsigned i = 0; i < in.nsrc; ++i) srcs[i] = slot(c, in.src[i]);
  forEachLane(mask, [&](int l) {
    uint64_t v = 0;
    for (unsigned i = 0; i < in.nsrc; ++i) v |= (srcs[i][l] & partMask) << (i * bits);
    d[l] = v;
  });
}

void movUnpackHandler(ExecCtx& c, const Inst& in, uint32_t mask) {
  const uint64_t* s = slot(c, in.src[0]);
  const unsigned bits = in.mode * 8u;
  const uint64_t partMask = bits >= 64 ? ~0ull : ((1ull << bits) - 1);
  uint64_t tmp[kWarpSize];
  forEachLane(mask, [&](int l) { tmp[l] = s[l]; });
  for (unsigned i = 0; i < in.ndst; ++i) {
    uint64_t* d = slot(c, in.dst[i]);
    forEachLane(mask, [&](int l) { d[l] = (tmp[l] >> (i * bits)) & partMask; });
  }
}

void movSRegHandler(ExecCtx& c, const Inst& in, uint32_t mask) {
  uint64_t* d = slot(c, in.dst[0]);
  const uint64_t clock = c.env ? c.env->clock : c.L->clock;
  // %globaltimer counts nanoseconds: in timing mode the simulated time of the cycle %clock reads
  // (at the core clock); in functional mode, which has no time, the same count as %clock.
  const uint64_t ns = c.env ? static_cast<uint64_t>(double(clock) * c.env->nsPerCycle) : clock;
  uint64_t v = 0;
  switch (static_cast<ptx::SReg>(in.mode)) {
    case ptx::SReg::Clock:
      v = static_cast<uint32_t>(clock);
      break;
    case ptx::SReg::Clock64:
      v = clock;
      break;
    case ptx::SReg::GlobalTimer:
      v = ns;
      break;
    case ptx::SReg::GlobalTimerLo:
      v = static_cast<uint32_t>(ns);
      break;
    case ptx::SReg::GlobalTimerHi:
      v = static_cast<uint32_t>(ns >> 32);
      break;
    default:
      v = 0;
      break;
  }
  forEachLane(mask, [&](int l) { d[l] = v; });
}

template <bool ToGeneric>
void cvtaHandler(ExecCtx& c, const Inst& in, uint32_t mask) {
  uint64_t* d = slot(c, in.dst[0]);
  const uint64_t* a = slot(c, in.src[0]);
  const uint64_t base = static_cast<uint64_t>(in.imm);
  forEachLane(mask, [&](int l) { d[l] = ToGeneric ? a[l] + base : a[l] - base; });
}

// isspacep: imm is the window base of the space (0 for global: below every window).
void isspacepHandler(ExecCtx& c, const Inst& in, uint32_t mask) {
  const uint64_t* a = slot(c, in.src[0]);
  const uint64_t base = static_cast<uint64_t>(in.imm);
  uint32_t r = 0;
  forEachLane(mask, [&](int l) {
    bool inside = base == 0 ? a[l] < kWindowBase : (a[l] >= base && a[l] - base < kWindowSize);
    r |= uint32_t(inside) << l;
  });
  writePred(c, in.dst[0], mask, r);
}

void predLogicHandler(ExecCtx& c, const Inst& in, uint32_t mask) {
  uint32_t a = readPred(c, in.src[0], in.predSrcNeg & 1);
  uint32_t r = 0;
  switch (in.mode) {
    case 0:
      r = a & readPred(c, in.src[1], in.predSrcNeg & 2);
      break;
    case 1:
      r = a | readPred(c, in.src[1], in.predSrcNeg & 2);
      break;
    case 2:
      r = a ^ readPred(c, in.src[1], in.predSrcNeg & 2);
      break;
    case 3:
      r = ~a;
      break;
    default:
      r = a;
      break;
  }
  writePred(c, in.dst[0], mask, r);
}

void predConstHandler(ExecCtx& c, const Inst& in, uint32_t mask) {
  writePred(c, in.dst[0], mask, in.mode == 4 ? kFullMask : 0u);
}

void nopHandler(ExecCtx&, const Inst&, uint32_t) {}

// nanosleep t: the timing model's warp sleeps for the longest t of its lanes (the ISA allows any
// sleep in [0, 2t]); the functional engine, which has no time, ends the warp's turn, as a GPU's
// sleeping warp lets the others issue: a spin loop with a sleep (cuda::barrier before sm_80, say)
// waits one turn of the other warps, not thousands of its own instructions.
void sleepHandler(ExecCtx& c, const Inst& in, uint32_t mask) {
  if (c.env == nullptr || !c.env->timed) {
    c.w->state = WarpState::Yielded;
    return;
  }
  const uint64_t* t = slot(c, in.src[0]);
  uint64_t longest = 0;
  forEachLane(mask, [&](int l) { longest = std::max<uint64_t>(longest, uint32_t(t[l])); });
  c.env->sleepNs = longest;
}

template <bool Add>
void satAddSubHandler(ExecCtx& c, const Inst& in, uint32_t mask) {
  uint64_t* d = slot(c, in.dst[0]);
  const uint64_t* a = slot(c, in.src[0]);
  const uint64_t* b = slot(c, in.src[1]);
  forEachLane(mask, [&](int l) {
    int64_t r = Add ? int64_t(get<int32_t>(a, l)) + get<int32_t>(b, l)
                    : int64_t(get<int32_t>(a, l)) - get<int32_t>(b, l);
    r = std::min<int64_t>(std::max<int64_t>(r, INT32_MIN), INT32_MAX);
    put<int32_t>(d, l, static_cast<int32_t>(r));
  });
}

// ---- warp-level --------------------------------------------------------------------------------

template <ShflMode Mode>
void shflHandler(ExecCtx& c, const Inst& in, uint32_t mask) {
  uint64_t* d = slot(c, in.dst[0]);
  const uint64_t* a = slot(c, in.src[0]);
  const uint64_t* b = slot(c, in.src[1]);
  const uint64_t* cc = slot(c, in.src[2]);
  uint32_t src[kWarpSize];
  for (int l = 0; l < kWarpSize; ++l) src[l] = static_cast<uint32_t>(a[l]);
  uint32_t pmask = 0;
  forEachLane(mask, [&](int l) {
    uint32_t bval = get<uint32_t>(b, l) & 31u;
    uint32_t cv = get<uint32_t>(cc, l);
    int cval = static_cast<int>(cv & 31u);
    int segmask = static_cast<int>((cv >> 8) & 31u);
    int maxLane = (l & segmask) | (cval & ~segmask);
    int minLane = l & segmask;
    int j;
    bool pval;
    if constexpr (Mode == ShflMode::Up) {
      j = l - static_cast<int>(bval);
      pval = j >= maxLane;
    } else if constexpr (Mode == ShflMode::Down) {
      j = l + static_cast<int>(bval);
      pval = j <= maxLane;
    } else if constexpr (Mode == ShflMode::Bfly) {
      j = l ^ static_cast<int>(bval);
      pval = j <= maxLane;
    } else {
      j = minLane | (static_cast<int>(bval) & ~segmask);
      pval = j <= maxLane;
    }
    if (!pval) j = l;
    d[l] = src[j];
    pmask |= uint32_t(pval) << l;
  });
  if (in.ndst == 2) writePred(c, in.dst[1], mask, pmask);
}

template <VoteMode Mode>
void voteHandler(ExecCtx& c, const Inst& in, uint32_t mask) {
  const uint32_t p = readPred(c, in.src[0], in.predSrcNeg & 1) & mask;
  const auto vote = [&](uint32_t g) {  // over the lanes g
    const uint32_t v = p & g;
    if constexpr (Mode == VoteMode::Ballot)
      return v;
    else if constexpr (Mode == VoteMode::All)
      return uint32_t(v == g);
    else if constexpr (Mode == VoteMode::Any)
      return uint32_t(v != 0);
    else
      return uint32_t(v == g || v == 0);
  };
  uint32_t group[kWarpSize];
  const bool split = in.nsrc > 1 && memberGroups(c, in, 1, mask, group);
  if constexpr (Mode == VoteMode::Ballot) {
    uint64_t* d = slot(c, in.dst[0]);
    const uint32_t whole = vote(mask);
    forEachLane(mask, [&](int l) { d[l] = split ? vote(group[l]) : whole; });
  } else {
    uint32_t r = 0;
    if (!split)
      r = vote(mask) ? mask : 0u;
    else
      forEachLane(mask, [&](int l) { r |= vote(group[l]) << l; });
    writePred(c, in.dst[0], mask, r);
  }
}

void activemaskHandler(ExecCtx& c, const Inst& in, uint32_t mask) {
  uint64_t* d = slot(c, in.dst[0]);
  const uint32_t active = c.active;
  forEachLane(mask, [&](int l) { d[l] = active; });
}

template <class T>
void matchAnyHandler(ExecCtx& c, const Inst& in, uint32_t mask) {
  uint64_t* d = slot(c, in.dst[0]);
  const uint64_t* a = slot(c, in.src[0]);
  T vals[kWarpSize];
  forEachLane(mask, [&](int l) { vals[l] = get<T>(a, l); });
  uint32_t group[kWarpSize];
  const bool split = memberGroups(c, in, 1, mask, group);
  uint32_t res[kWarpSize] = {};
  forEachLane(mask, [&](int l) {
    uint32_t m = 0;
    forEachLane(split ? group[l] : mask, [&](int k) { m |= uint32_t(vals[k] == vals[l]) << k; });
    res[l] = m;
  });
  forEachLane(mask, [&](int l) { d[l] = res[l]; });
}

template <class T>
void matchAllHandler(ExecCtx& c, const Inst& in, uint32_t mask) {
  uint64_t* d = slot(c, in.dst[0]);
  const uint64_t* a = slot(c, in.src[0]);
  uint32_t group[kWarpSize];
  const bool split = memberGroups(c, in, 1, mask, group);
  const auto allEqual = [&](uint32_t g) {
    if (g == 0) return true;
    const T v0 = get<T>(a, __builtin_ctz(g));
    bool all = true;
    forEachLane(g, [&](int l) { all &= get<T>(a, l) == v0; });
    return all;
  };
  const bool whole = !split && allEqual(mask);
  uint32_t p = 0;
  forEachLane(mask, [&](int l) {
    const uint32_t g = split ? group[l] : mask;
    const bool all = split ? allEqual(g) : whole;
    d[l] = all ? g : 0u;
    p |= uint32_t(all) << l;
  });
  if (in.ndst == 2) writePred(c, in.dst[1], mask, p);
}

}  // namespace

Handler setp(Cmp, BoolOp, Type t, bool ftz) {
  if (ftz)
    return t == Type::F32     ? &setpHandler<FtzF32>
           : t == Type::F16   ? &setpHandler<FtzF16>
           : t == Type::F16x2 ? &setpPairHandler<false, true>
                              : nullptr;
  switch (t) {
    case Type::B16:
    case Type::U16:
      return withAvx2<&setpHandler<uint16_t>>();
    case Type::S16:
      return withAvx2<&setpHandler<int16_t>>();
    case Type::B32:
    case Type::U32:
      return withAvx2<&setpHandler<uint32_t>>();
    case Type::S32:
      return withAvx2<&setpHandler<int32_t>>();
    case Type::B64:
    case Type::U64:
      return withAvx2<&setpHandler<uint64_t>>();
    case Type::S64:
      return withAvx2<&setpHandler<int64_t>>();
    case Type::F32:
      return &setpHandler<float>;
    case Type::F64:
      return &setpHandler<double>;
    case Type::F16:
      return &setpHandler<Half>;
    case Type::BF16:
      return &setpHandler<BHalf>;
    case Type::F16x2:
      return &setpPairHandler<false>;
    case Type::BF16x2:
      return &setpPairHandler<true>;
    default:
      return nullptr;
  }
}

Handler set(Cmp, BoolOp, Type, Type st, bool ftz) {
  if (ftz)
    return st == Type::F32     ? &setHandler<FtzF32>
           : st == Type::F16   ? &setHandler<FtzF16>
           : st == Type::F16x2 ? &setPairHandler<false, true>
                               : nullptr;
  switch (st) {
    case Type::B16:
    case Type::U16:
      return &setHandler<uint16_t>;
    case Type::S16:
      return &setHandler<int16_t>;
    case Type::B32:
    case Type::U32:
      return &setHandler<uint32_t>;
    case Type::S32:
      return &setHandler<int32_t>;
    case Type::B64:
    case Type::U64:
      return &setHandler<uint64_t>;
    case Type::S64:
      return &setHandler<int64_t>;
    case Type::F32:
      return &setHandler<float>;
    case Type::F64:
      return &setHandler<double>;
    case Type::F16:
      return &setHandler<Half>;
    case Type::BF16:
      return &setHandler<BHalf>;
    case Type::F16x2:
      return &setPairHandler<false>;
    case Type::BF16x2:
      return &setPairHandler<true>;
    default:
      return nullptr;
  }
}

Handler selp(Type) { return &selpHandler; }

Handler slct(Type, Type ct, uint8_t flags) {
  if (ct == Type::F32 && (flags & kFtz)) return &slctFtzHandler;
  if (ct == Type::S32) return &slctHandler<int32_t>;
  if (ct == Type::F32) return &slctHandler<float>;
  return nullptr;
}

Handler cvt(Type dt, Type st, Round, uint8_t) {
  switch (st) {
    case Type::U8:
      return cvtFrom<uint8_t>(dt);
    case Type::U16:
      return cvtFrom<uint16_t>(dt);
    case Type::U32:
      return cvtFrom<uint32_t>(dt);
    case Type::U64:
      return cvtFrom<uint64_t>(dt);
    case Type::S8:
      return cvtFrom<int8_t>(dt);
    case Type::S16:
      return cvtFrom<int16_t>(dt);
    case Type::S32:
      return cvtFrom<int32_t>(dt);
    case Type::S64:
      return cvtFrom<int64_t>(dt);
    case Type::F16:
      return cvtFrom<Half>(dt);
    case Type::BF16:
      return cvtFrom<BHalf>(dt);
    case Type::F32:
      return cvtFrom<float>(dt);
    case Type::F64:
      return cvtFrom<double>(dt);
    default:
      return nullptr;
  }
}

Handler movPack(unsigned, unsigned) { return &movPackHandler; }
Handler movUnpack(unsigned, unsigned) { return &movUnpackHandler; }
Handler movSReg(ptx::SReg) { return &movSRegHandler; }
Handler cvta(bool toGeneric, MemSpace) {
  return toGeneric ? &cvtaHandler<true> : &cvtaHandler<false>;
}
Handler isspacep() { return &isspacepHandler; }
Handler predLogic() { return &predLogicHandler; }
Handler predConst() { return &predConstHandler; }
Handler nop() { return &nopHandler; }
Handler sleep() { return &sleepHandler; }
Handler satAddS32() { return &satAddSubHandler<true>; }
Handler satSubS32() { return &satAddSubHandler<false>; }

Handler shfl(ShflMode mode) {
  switch (mode) {
    case ShflMode::Up:
      return &shflHandler<ShflMode::Up>;
    case ShflMode::Down:
      return &shflHandler<ShflMode::Down>;
    case ShflMode::Bfly:
      return &shflHandler<ShflMode::Bfly>;
    case ShflMode::Idx:
      return &shflHandler<ShflMode::Idx>;
  }
  return nullptr;
}

Handler vote(VoteMode mode) {
  switch (mode) {
    case VoteMode::All:
      return &voteHandler<VoteMode::All>;
    case VoteMode::Any:
      return &voteHandler<VoteMode::Any>;
    case VoteMode::Uni:
      return &voteHandler<VoteMode::Uni>;
    case VoteMode::Ballot:
      return &voteHandler<VoteMode::Ballot>;
  }
  return nullptr;
}

Handler activemask() { return &activemaskHandler; }

Handler matchAny(Type t) {
  if (t == Type::B32) return &matchAnyHandler<uint32_t>;
  if (t == Type::B64) return &matchAnyHandler<uint64_t>;
  return nullptr;
}

Handler matchAll(Type t) {
  if (t == Type::B32) return &matchAllHandler<uint32_t>;
  if (t == Type::B64) return &matchAllHandler<uint64_t>;
  return nullptr;
}

}  // namespace handlers
}  // namespace gpusc::func
