// Floating-point instructions (f32, f64): arithmetic, fma, min/max, special functions, testp.
//
// IEEE operations (.rn and the directed roundings .rz/.rm/.rp) are exact: the host FPU computes
// them, switching its rounding mode for the directed ones (this file is compiled with
// -frounding-math). NaN results are canonical (0x7fffffff / 0x7fffffffffffffff) as on NVIDIA
// GPUs. The .approx special functions use the host's correctly rounded functions, which are at
// least as accurate as the hardware's; docs/ptx-support.md lists the differences.
#include <cfenv>
#include <cmath>
#include <cstring>
#include <limits>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "func/handlers.hpp"
#include "func/lanes.hpp"

namespace gpusc::func::handlers {

namespace {

template <class T>
inline T flushDenormal(T x) {
  if constexpr (sizeof(T) == 4) {
    uint32_t b;
    std::memcpy(&b, &x, 4);
    if ((b & 0x7f800000u) == 0) b &= 0x80000000u;
    std::memcpy(&x, &b, 4);
    return x;
  } else {
    uint64_t b;
    std::memcpy(&b, &x, 8);
    if ((b & 0x7ff0000000000000ull) == 0) b &= 0x8000000000000000ull;
    std::memcpy(&x, &b, 8);
    return x;
  }
}

template <class T>
inline T canonical(T x) {
  if (x != x) {
    if constexpr (sizeof(T) == 4) {
      uint32_t b = 0x7fffffffu;
      std::memcpy(&x, &b, 4);
    } else {
      uint64_t b = 0x7fffffffffffffffull;
      std::memcpy(&x, &b, 8);
    }
  }
  return x;
}

template <class T>
inline T saturate(T x) {
  if (!(x > T(0))) return T(0);  // also NaN -> +0
  return x > T(1) ? T(1) : x;
}

// Switches the host rounding mode for directed-rounding instructions.
class RoundScope {
 public:
  explicit RoundScope(uint8_t r) {
    int mode = -1;
    switch (static_cast<Round>(r)) {
      case Round::Rz:
        mode = FE_TOWARDZERO;
        break;
      case Round::Rm:
        mode = FE_DOWNWARD;
        break;
      case Round::Rp:
        mode = FE_UPWARD;
        break;
      default:
        break;
    }
    if (mode >= 0) {
      std::fesetround(mode);
      active_ = true;
    }
  }
  ~RoundScope() {
    if (active_) std::fesetround(FE_TONEAREST);
  }
  RoundScope(const RoundScope&) = delete;
  RoundScope& operator=(const RoundScope&) = delete;

 private:
  bool active_ = false;
};

template <class T>
inline T fmin(T a, T b) {
  if (a != a) return b != b ? canonical(a) : b;
  if (b != b) return a;
  if (a == b) return std::signbit(a) ? a : b;  // min(-0, +0) = -0
  return a < b ? a : b;
}

template <class T>
inline T fmax(T a, T b) {
  if (a != a) return b != b ? canonical(a) : b;
  if (b != b) return a;
  if (a == b) return std::signbit(a) ? b : a;  // max(-0, +0) = +0
  return a > b ? a : b;
}

template <class T, FBin Op>
inline T binaryOp(T x, T y) {
  if constexpr (Op == FBin::Add)
    return x + y;
  else if constexpr (Op == FBin::Sub)
    return x - y;
  else if constexpr (Op == FBin::Mul)
    return x * y;
  else if constexpr (Op == FBin::Div || Op == FBin::DivFull)
    return x / y;
  else if constexpr (Op == FBin::DivApprox) {
    // div.approx.f32 is a * (1/b): for 2^126 < |b| < 2^128 the reciprocal is below the normal
    // range and the PTX ISA gives 0, or NaN when a is infinite.
    if constexpr (std::is_same_v<T, float>) {
      const float ay = std::fabs(y);
      if (ay > 0x1p126f && !std::isinf(ay) && x == x) {
        if (std::isinf(x)) return std::numeric_limits<float>::quiet_NaN();
        return std::signbit(x) != std::signbit(y) ? -0.0f : 0.0f;
      }
    }
    return x / y;
  } else if constexpr (Op == FBin::Min)
    return fmin(x, y);
  else if constexpr (Op == FBin::Max)
    return fmax(x, y);
  else if constexpr (Op == FBin::MinNaN)
    return (x != x || y != y) ? canonical(x + y) : fmin(x, y);
  else if constexpr (Op == FBin::MaxNaN)
    return (x != x || y != y) ? canonical(x + y) : fmax(x, y);
  else
    return std::copysign(y, x);  // copysign d, a, b: b with the sign of a
}

// min/max .f32 with .abs, .xorsign.abs or three inputs. Without .NaN a NaN input is ignored
// (all NaN: canonical NaN); with .NaN any NaN input gives the canonical NaN.
void minMaxF32(ExecCtx& c, const Inst& in, uint32_t mask) {
  uint64_t* d = slot(c, in.dst[0]);
  const uint64_t* s[3] = {slot(c, in.src[0]), slot(c, in.src[1]), slot(c, in.src[2])};
  const bool isMin = in.mode & kMmMin, nanProp = in.mode & kMmNaN;
  const bool useAbs = in.mode & (kMmAbs | kMmXorSign), xorSign = in.mode & kMmXorSign;
  const bool ftz = in.flags & kFtz;
  const int n = in.nsrc;
  forEachLane(mask, [&](int l) {
    float v[3] = {0, 0, 0};
    bool anyNaN = false;
    for (int i = 0; i < n; ++i) {
      v[i] = get<float>(s[i], l);
      if (ftz) v[i] = flushDenormal(v[i]);
      anyNaN = anyNaN || v[i] != v[i];
    }
    const bool sign = xorSign && (std::signbit(v[0]) != std::signbit(v[1]));
    float r;
    if (anyNaN && nanProp) {
      r = canonical(std::numeric_limits<float>::quiet_NaN());
    } else {
      r = useAbs ? std::fabs(v[0]) : v[0];
      for (int i = 1; i < n; ++i) {
        const float x = useAbs ? std::fabs(v[i]) : v[i];
        r = isMin ? fmin(r, x) : fmax(r, x);
      }
      r = canonical(r);
    }
    if (xorSign && r == r) r = std::copysign(r, sign ? -1.0f : 1.0f);
    if (ftz) r = flushDenormal(r);
    put<float>(d, l, r);
  });
}

template <class T, FBin Op, bool Ftz, bool Sat>
void binary(ExecCtx& c, const Inst& in, uint32_t mask) {
  RoundScope rs(in.mode2);
  uint64_t* d = slot(c, in.dst[0]);
  const uint64_t* a = slot(c, in.src[0]);
  const uint64_t* b = slot(c, in.src[1]);
  forEachLane(mask, [&](int l) {
    T x = get<T>(a, l), y = get<T>(b, l);
    if constexpr (Ftz) {
      x = flushDenormal(x);
      y = flushDenormal(y);
    }
    T r = binaryOp<T, Op>(x, y);
    if constexpr (Ftz) r = flushDenormal(r);
    if constexpr (Sat) r = saturate(r);
    if constexpr (Op != FBin::Copysign) r = canonical(r);
    put<T>(d, l, r);
  });
}

template <class T, FUn Op>
inline T unaryOp(T x) {
  if constexpr (Op == FUn::Abs)
    return std::fabs(x);
  else if constexpr (Op == FUn::Neg)
    return -x;
  else if constexpr (Op == FUn::Mov)
    return x;
  else if constexpr (Op == FUn::Sqrt || Op == FUn::SqrtApprox)
    return std::sqrt(x);
  else if constexpr (Op == FUn::Rsqrt) {
    // One rounding, not two (1 / a rounded square root can be 1.4 ulp off; CUDA gives
    // rsqrt(double), a single rsqrt.approx.f64, 1 ulp): computed in long double, rounded once.
    if constexpr (std::is_same_v<T, double>)
      return static_cast<double>(1.0L / std::sqrt(static_cast<long double>(x)));
    else
      return T(1) / std::sqrt(x);
  } else if constexpr (Op == FUn::Rcp || Op == FUn::RcpApprox)
    return T(1) / x;
  else if constexpr (Op == FUn::Ex2)
    return std::exp2(x);
  else if constexpr (Op == FUn::Lg2)
    return std::log2(x);
  else if constexpr (Op == FUn::Sin)
    return std::sin(x);
  else if constexpr (Op == FUn::Cos)
    return std::cos(x);
  else
    return std::tanh(x);
}

template <class T, FUn Op, bool Ftz, bool Sat>
void unary(ExecCtx& c, const Inst& in, uint32_t mask) {
  RoundScope rs(in.mode2);
  uint64_t* d = slot(c, in.dst[0]);
  const uint64_t* a = slot(c, in.src[0]);
  constexpr bool kBitOp = Op == FUn::Abs || Op == FUn::Neg || Op == FUn::Mov;
  forEachLane(mask, [&](int l) {
    T x = get<T>(a, l);
    if constexpr (Ftz) x = flushDenormal(x);
    T r = unaryOp<T, Op>(x);
    if constexpr (Ftz) r = flushDenormal(r);
    if constexpr (Sat) r = saturate(r);
    if constexpr (!kBitOp) r = canonical(r);
    put<T>(d, l, r);
  });
}

// fma: one rounding. The host's fma instruction is used where the CPU has one (chosen once at
// start-up); otherwise libm's exact software fma.
template <class T, bool Ftz, bool Sat>
inline void fmaLoop(ExecCtx& c, const Inst& in, uint32_t mask) {
  uint64_t* d = slot(c, in.dst[0]);
  const uint64_t* a = slot(c, in.src[0]);
  const uint64_t* b = slot(c, in.src[1]);
  const uint64_t* e = slot(c, in.src[2]);
  auto lane = [&](int l) {
    T x = get<T>(a, l), y = get<T>(b, l), z = get<T>(e, l);
    if constexpr (Ftz) {
      x = flushDenormal(x);
      y = flushDenormal(y);
      z = flushDenormal(z);
    }
    T r = std::fma(x, y, z);
    if constexpr (Ftz) r = flushDenormal(r);
    if constexpr (Sat) r = saturate(r);
    put<T>(d, l, canonical(r));
  };
  if (mask == kFullMask) {
    for (int l = 0; l < kWarpSize; ++l) lane(l);
  } else {
    while (mask) {
      int l = __builtin_ctz(mask);
      mask &= mask - 1;
      lane(l);
    }
  }
}

template <class T, bool Ftz, bool Sat>
void fmaPortable(ExecCtx& c, const Inst& in, uint32_t mask) {
  RoundScope rs(in.mode2);
  fmaLoop<T, Ftz, Sat>(c, in, mask);
}

#if defined(__x86_64__)
template <class T, bool Ftz, bool Sat>
__attribute__((target("fma"), flatten)) void fmaHardware(ExecCtx& c, const Inst& in,
                                                         uint32_t mask) {
  RoundScope rs(in.mode2);
  fmaLoop<T, Ftz, Sat>(c, in, mask);
}
#endif

#if defined(__x86_64__)
// A full warp's f32 and f64 arithmetic eight (f32) or four (f64) lanes at a time, on hosts with
// AVX2 and FMA (chosen once at start-up, as the scalar fma is). Each vector instruction is the
// same IEEE operation as the scalar one in every lane, in the rounding mode RoundScope set, so the
// results are bit for bit the scalar loop's; NaNs become canonical and .ftz flushes subnormals as
// there. A chunk's sources are read before its destination is written, so a destination that is
// also a source (fma's accumulator) reads its old values. (The compiler does not vectorize the
// scalar loop: under -frounding-math it keeps every floating-point operation in order.)
namespace simd {

#define GPUSC_AVX2 __attribute__((target("avx2,fma"), always_inline)) inline

// Lanes l..l+7's f32 values (the low 32 bits of their cells) as one vector.
GPUSC_AVX2 __m256 load8(const uint64_t* s) {
  const __m256i lowHalves = _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7);
  const __m256i a = _mm256_permutevar8x32_epi32(
      _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s)), lowHalves);
  const __m256i b = _mm256_permutevar8x32_epi32(
      _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + 4)), lowHalves);
  return _mm256_castsi256_ps(_mm256_permute2x128_si256(a, b, 0x20));
}
// Eight f32 values into lanes l..l+7, each cell zero-extended from the value's bits (as put).
GPUSC_AVX2 void store8(uint64_t* d, __m256 v) {
  const __m256i x = _mm256_castps_si256(v);
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(d),
                      _mm256_cvtepu32_epi64(_mm256_castsi256_si128(x)));
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(d + 4),
                      _mm256_cvtepu32_epi64(_mm256_extracti128_si256(x, 1)));
}
GPUSC_AVX2 __m256 canonical8(__m256 r) {
  return _mm256_blendv_ps(r, _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff)),
                          _mm256_cmp_ps(r, r, _CMP_UNORD_Q));
}
// flushDenormal: a zero exponent keeps only the sign.
GPUSC_AVX2 __m256 flush8(__m256 x) {
  const __m256i b = _mm256_castps_si256(x);
  const __m256i zeroExp = _mm256_cmpeq_epi32(_mm256_and_si256(b, _mm256_set1_epi32(0x7f800000)),
                                             _mm256_setzero_si256());
  return _mm256_castsi256_ps(
      _mm256_blendv_epi8(b, _mm256_and_si256(b, _mm256_set1_epi32(INT32_MIN)), zeroExp));
}
GPUSC_AVX2 __m256d load4(const uint64_t* s) {
  return _mm256_castsi256_pd(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(s)));
}
GPUSC_AVX2 void store4(uint64_t* d, __m256d v) {
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(d), _mm256_castpd_si256(v));
}
GPUSC_AVX2 __m256d canonical4(__m256d r) {
  return _mm256_blendv_pd(r, _mm256_castsi256_pd(_mm256_set1_epi64x(0x7fffffffffffffffll)),
                          _mm256_cmp_pd(r, r, _CMP_UNORD_Q));
}

// Whether the vector forms handle .ftz on T: PTX gives .ftz to f32 alone, and only the f32 forms
// flush.
template <class T, bool Ftz>
constexpr bool kVectorFlush = std::is_same_v<T, float> || !Ftz;

// Whether binary<T, Op, Ftz, false> has a vector form: the operations that are one IEEE
// instruction.
template <class T, FBin Op, bool Ftz>
constexpr bool kVectorBinary = (Op == FBin::Add || Op == FBin::Sub || Op == FBin::Mul ||
                                Op == FBin::Div || Op == FBin::DivFull) &&
                               kVectorFlush<T, Ftz>;

// Whether fma<T, Ftz, Sat> has a vector form (.sat keeps the scalar loop).
template <class T, bool Ftz, bool Sat>
constexpr bool kVectorFma = !Sat && kVectorFlush<T, Ftz>;

template <FBin Op>
GPUSC_AVX2 __m256 apply8(__m256 x, __m256 y) {
  if constexpr (Op == FBin::Add) return _mm256_add_ps(x, y);
  if constexpr (Op == FBin::Sub) return _mm256_sub_ps(x, y);
  if constexpr (Op == FBin::Mul) return _mm256_mul_ps(x, y);
  return _mm256_div_ps(x, y);  // Div, DivFull
}
template <FBin Op>
GPUSC_AVX2 __m256d apply4(__m256d x, __m256d y) {
  if constexpr (Op == FBin::Add) return _mm256_add_pd(x, y);
  if constexpr (Op == FBin::Sub) return _mm256_sub_pd(x, y);
  if constexpr (Op == FBin::Mul) return _mm256_mul_pd(x, y);
  return _mm256_div_pd(x, y);  // Div, DivFull
}

template <class T, FBin Op, bool Ftz>
GPUSC_AVX2 void binaryWarp(uint64_t* d, const uint64_t* a, const uint64_t* b) {
  if constexpr (std::is_same_v<T, float>) {
    for (int l = 0; l < kWarpSize; l += 8) {
      __m256 x = load8(a + l), y = load8(b + l);
      if constexpr (Ftz) {
        x = flush8(x);
        y = flush8(y);
      }
      __m256 r = apply8<Op>(x, y);
      if constexpr (Ftz) r = flush8(r);
      store8(d + l, canonical8(r));
    }
  } else {
    for (int l = 0; l < kWarpSize; l += 4)
      store4(d + l, canonical4(apply4<Op>(load4(a + l), load4(b + l))));
  }
}

template <class T, bool Ftz>
GPUSC_AVX2 void fmaWarp(uint64_t* d, const uint64_t* a, const uint64_t* b, const uint64_t* e) {
  if constexpr (std::is_same_v<T, float>) {
    for (int l = 0; l < kWarpSize; l += 8) {
      __m256 x = load8(a + l), y = load8(b + l), z = load8(e + l);
      if constexpr (Ftz) {
        x = flush8(x);
        y = flush8(y);
        z = flush8(z);
      }
      __m256 r = _mm256_fmadd_ps(x, y, z);
      if constexpr (Ftz) r = flush8(r);
      store8(d + l, canonical8(r));
    }
  } else {
    for (int l = 0; l < kWarpSize; l += 4)
      store4(d + l, canonical4(_mm256_fmadd_pd(load4(a + l), load4(b + l), load4(e + l))));
  }
}

#undef GPUSC_AVX2

}  // namespace simd

template <class T, bool Ftz, bool Sat>
__attribute__((target("avx2,fma"))) void fmaVector(ExecCtx& c, const Inst& in, uint32_t mask) {
  RoundScope rs(in.mode2);
  if constexpr (simd::kVectorFma<T, Ftz, Sat>) {
    if (mask == kFullMask) {
      simd::fmaWarp<T, Ftz>(slot(c, in.dst[0]), slot(c, in.src[0]), slot(c, in.src[1]),
                            slot(c, in.src[2]));
      return;
    }
  }
  fmaLoop<T, Ftz, Sat>(c, in, mask);
}
#endif

template <class T, bool Ftz, bool Sat>
Handler pickFma() {
#if defined(__x86_64__)
  if (simd::kVectorFma<T, Ftz, Sat> && hostHasAvx2Fma()) return &fmaVector<T, Ftz, Sat>;
  if (__builtin_cpu_supports("fma")) return &fmaHardware<T, Ftz, Sat>;
#endif
  return &fmaPortable<T, Ftz, Sat>;
}

template <class T>
void testpHandler(ExecCtx& c, const Inst& in, uint32_t mask) {
  const uint64_t* a = slot(c, in.src[0]);
  uint32_t result = 0;
  forEachLane(mask, [&](int l) {
    T x = get<T>(a, l);
    int cls = std::fpclassify(x);
    bool r = false;
    switch (in.mode) {
      case 0:
        r = std::isfinite(x);
        break;
      case 1:
        r = std::isinf(x);
        break;
      case 2:
        r = !std::isnan(x);
        break;
      case 3:
        r = std::isnan(x);
        break;
      case 4:
        r = cls == FP_NORMAL;
        break;
      case 5:
        r = cls == FP_SUBNORMAL;
        break;
    }
    result |= uint32_t(r) << l;
  });
  writePred(c, in.dst[0], mask, result);
}

#if defined(__x86_64__)
// binary<T, Op, Ftz, false> with a full warp's lanes in vectors (simd above).
template <class T, FBin Op, bool Ftz>
__attribute__((target("avx2,fma"))) void binaryVector(ExecCtx& c, const Inst& in, uint32_t mask) {
  if (mask != kFullMask) return binary<T, Op, Ftz, false>(c, in, mask);
  RoundScope rs(in.mode2);
  simd::binaryWarp<T, Op, Ftz>(slot(c, in.dst[0]), slot(c, in.src[0]), slot(c, in.src[1]));
}
#endif

// The handler of binary<T, Op, Ftz, false>: its vector form where there is one and the host runs
// it.
template <class T, FBin Op, bool Ftz>
Handler pickBinaryUnsaturated() {
#if defined(__x86_64__)
  if constexpr (simd::kVectorBinary<T, Op, Ftz>)
    if (hostHasAvx2Fma()) return &binaryVector<T, Op, Ftz>;
#endif
  return &binary<T, Op, Ftz, false>;
}

template <class T, FBin Op>
Handler pickBinary(uint8_t flags) {
  switch (flags & (kFtz | kSat)) {
    case 0:
      return pickBinaryUnsaturated<T, Op, false>();
    case kFtz:
      return pickBinaryUnsaturated<T, Op, true>();
    case kSat:
      return &binary<T, Op, false, true>;
    default:
      return &binary<T, Op, true, true>;
  }
}

template <class T, FUn Op>
Handler pickUnary(uint8_t flags) {
  switch (flags & (kFtz | kSat)) {
    case 0:
      return &unary<T, Op, false, false>;
    case kFtz:
      return &unary<T, Op, true, false>;
    case kSat:
      return &unary<T, Op, false, true>;
    default:
      return &unary<T, Op, true, true>;
  }
}

template <class T>
Handler binaryFor(FBin op, uint8_t flags) {
  switch (op) {
    case FBin::Add:
      return pickBinary<T, FBin::Add>(flags);
    case FBin::Sub:
      return pickBinary<T, FBin::Sub>(flags);
    case FBin::Mul:
      return pickBinary<T, FBin::Mul>(flags);
    case FBin::Div:
      return pickBinary<T, FBin::Div>(flags);
    case FBin::DivApprox:
      return pickBinary<T, FBin::DivApprox>(flags);
    case FBin::DivFull:
      return pickBinary<T, FBin::DivFull>(flags);
    case FBin::Min:
      return pickBinary<T, FBin::Min>(flags);
    case FBin::Max:
      return pickBinary<T, FBin::Max>(flags);
    case FBin::MinNaN:
      return pickBinary<T, FBin::MinNaN>(flags);
    case FBin::MaxNaN:
      return pickBinary<T, FBin::MaxNaN>(flags);
    case FBin::Copysign:
      return pickBinary<T, FBin::Copysign>(flags);
  }
  return nullptr;
}

template <class T>
Handler unaryFor(FUn op, uint8_t flags) {
  switch (op) {
    case FUn::Abs:
      return pickUnary<T, FUn::Abs>(flags);
    case FUn::Neg:
      return pickUnary<T, FUn::Neg>(flags);
    case FUn::Mov:
      return pickUnary<T, FUn::Mov>(flags);
    case FUn::Sqrt:
      return pickUnary<T, FUn::Sqrt>(flags);
    case FUn::SqrtApprox:
      return pickUnary<T, FUn::SqrtApprox>(flags);
    case FUn::Rsqrt:
      return pickUnary<T, FUn::Rsqrt>(flags);
    case FUn::Rcp:
      return pickUnary<T, FUn::Rcp>(flags);
    case FUn::RcpApprox:
      return pickUnary<T, FUn::RcpApprox>(flags);
    case FUn::Ex2:
      return pickUnary<T, FUn::Ex2>(flags);
    case FUn::Lg2:
      return pickUnary<T, FUn::Lg2>(flags);
    case FUn::Sin:
      return pickUnary<T, FUn::Sin>(flags);
    case FUn::Cos:
      return pickUnary<T, FUn::Cos>(flags);
    case FUn::Tanh:
      return pickUnary<T, FUn::Tanh>(flags);
  }
  return nullptr;
}

}  // namespace

Handler floatBinary(FBin op, Type t, Round, uint8_t flags) {
  if (t == Type::F32) return binaryFor<float>(op, flags);
  if (t == Type::F64) return binaryFor<double>(op, flags);
  return nullptr;
}

Handler floatUnary(FUn op, Type t, Round, uint8_t flags) {
  if (t == Type::F32) return unaryFor<float>(op, flags);
  if (t == Type::F64) return unaryFor<double>(op, flags);
  return nullptr;
}

Handler floatMinMaxF32() { return &minMaxF32; }

namespace {
// mode2: rounding (Rna ties away, Rn ties to even, Rz truncates); flags 1: .satfinite.
void cvtTf32Handler(ExecCtx& c, const Inst& in, uint32_t mask) {
  uint64_t* d = slot(c, in.dst[0]);
  const uint64_t* a = slot(c, in.src[0]);
  const Round r = static_cast<Round>(in.mode2);
  forEachLane(mask, [&](int l) {
    uint32_t b = uint32_t(a[l]);
    if ((b & 0x7fffffffu) > 0x7f800000u) {
      d[l] = 0x7fffffffu;  // NaN
      return;
    }
    if ((b & 0x7f800000u) != 0x7f800000u) {  // finite: round the magnitude's low 13 bits
      const uint32_t low = b & 0x1fffu;
      b &= ~0x1fffu;
      const bool up = r == Round::Rna  ? low >= 0x1000u
                      : r == Round::Rn ? (low > 0x1000u || (low == 0x1000u && (b & 0x2000u)))
                                       : false;
      if (up) b += 0x2000u;  // may carry into the exponent, up to infinity
      if ((in.flags & 1) && (b & 0x7fffffffu) == 0x7f800000u)
        b = (b & 0x80000000u) | 0x7f7fe000u;  // .satfinite: the largest finite tf32
    } else if (in.flags & 1) {
      b = (b & 0x80000000u) | 0x7f7fe000u;
    }
    d[l] = b;
  });
}
}  // namespace

Handler cvtTf32() { return &cvtTf32Handler; }

Handler floatFma(Type t, Round, uint8_t flags) {
  bool ftz = flags & kFtz, sat = flags & kSat;
  if (t == Type::F32) {
    if (ftz) return sat ? pickFma<float, true, true>() : pickFma<float, true, false>();
    return sat ? pickFma<float, false, true>() : pickFma<float, false, false>();
  }
  if (t == Type::F64) {
    if (ftz) return sat ? pickFma<double, true, true>() : pickFma<double, true, false>();
    return sat ? pickFma<double, false, true>() : pickFma<double, false, false>();
  }
  return nullptr;
}

Handler testp(uint8_t, Type t) {
  if (t == Type::F32) return &testpHandler<float>;
  if (t == Type::F64) return &testpHandler<double>;
  return nullptr;
}

}  // namespace gpusc::func::handlers
