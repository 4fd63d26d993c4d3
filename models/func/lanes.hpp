// Lane-level helpers shared by the instruction handlers (internal to models/func).
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "func/handlers.hpp"
#include "func/state.hpp"

namespace gpusc::func {

__extension__ typedef __int128 Int128;
__extension__ typedef unsigned __int128 UInt128;

// IEEE half precision as a storage type (bits only; arithmetic converts to float).
struct Half {
  uint16_t bits;
};
struct BHalf {
  uint16_t bits;
};

// Whether the host runs AVX2 and FMA (x86-64 hosts since 2013), checked once. Handlers with a
// form for them are chosen when a kernel is decoded; the binary itself stays baseline x86-64.
inline bool hostHasAvx2Fma() {
#if defined(__x86_64__)
  static const bool has = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return has;
#else
  return false;
#endif
}

#if defined(__x86_64__)
// Handler H compiled again for AVX2 (everything it calls inlined into it, so that the compiler
// vectorizes its lane loops four 64-bit cells per instruction instead of two). Not FMA: no
// floating-point expression may be contracted differently from H's.
template <Handler H>
__attribute__((target("avx2"), flatten)) void avx2Twin(ExecCtx& c, const Inst& in, uint32_t mask) {
  H(c, in, mask);
}
#endif

// H, or its AVX2 twin where the host has AVX2.
template <Handler H>
Handler withAvx2() {
#if defined(__x86_64__)
  if (hostHasAvx2Fma()) return &avx2Twin<H>;
#endif
  return H;
}

// The unsigned integer of `Bytes` bytes (1, 2, 4 or 8).
template <size_t Bytes>
using UIntOfSize = std::conditional_t<
    Bytes == 1, uint8_t,
    std::conditional_t<Bytes == 2, uint16_t, std::conditional_t<Bytes == 4, uint32_t, uint64_t>>>;

template <class T>
struct Raw {  // the unsigned integer with T's bits
  using type = UIntOfSize<sizeof(T)>;
};

// Reads lane `l` of slot array `s` as T (the low sizeof(T) bytes).
template <class T>
inline T get(const uint64_t* s, int l) {
  typename Raw<T>::type r = static_cast<typename Raw<T>::type>(s[l]);
  T v;
  std::memcpy(&v, &r, sizeof(T));
  return v;
}

// Writes T to lane `l`; the cell is zero-extended from T's bits.
template <class T>
inline void put(uint64_t* s, int l, T v) {
  typename Raw<T>::type r;
  std::memcpy(&r, &v, sizeof(T));
  s[l] = r;
}

// Writes T to lane `l` as cvt writes a register that may be wider than its type (PTX ISA,
// "Operand Size Exceeding Instruction-Type Size"): a signed integer sign-extended to the cell, as a
// signed load extends it, anything else zero-extended. Readers of the register's own width see
// the value either way.
template <class T>
inline void putWidened(uint64_t* s, int l, T v) {
  if constexpr (std::is_integral_v<T> && std::is_signed_v<T>)
    s[l] = static_cast<uint64_t>(static_cast<int64_t>(v));
  else
    put<T>(s, l, v);
}

// .ftz on f32: a subnormal becomes zero of its sign (other types are returned as they are).
template <class F>
inline F ftzFloat(F x) {
  if constexpr (std::is_same_v<F, float>) {
    if (std::fpclassify(x) == FP_SUBNORMAL) return std::copysign(0.0f, x);
  }
  return x;
}

template <class F>
inline void forEachLane(uint32_t mask, F&& f) {
  if (mask == kFullMask) {
    for (int l = 0; l < kWarpSize; ++l) f(l);
  } else {
    while (mask) {
      int l = __builtin_ctz(mask);
      mask &= mask - 1;
      f(l);
    }
  }
}

inline uint64_t* slot(ExecCtx& c, uint32_t s) { return rowOf(c.R, c.K, s); }

// The lanes each executing lane combines with in a warp-synchronous instruction (vote, match and
// redux .sync): the lanes of its membermask operand (source `src`) that execute it. A tile of a
// cooperative group names its own lanes, so two halves of a warp can combine separately in one
// instruction. Returns false when every lane's group is `mask` itself (a full member mask, or
// one equal to the executing lanes): the common case, which needs no `group`.
inline bool memberGroups(ExecCtx& c, const Inst& in, int src, uint32_t mask, uint32_t* group) {
  const uint64_t* m = slot(c, in.src[src]);
  bool split = false;
  forEachLane(mask, [&](int l) {
    group[l] = static_cast<uint32_t>(m[l]) & mask;
    split |= group[l] != mask;
  });
  return split;
}

inline void writePred(ExecCtx& c, uint32_t p, uint32_t mask, uint32_t value) {
  c.P[p] = (c.P[p] & ~mask) | (value & mask);
}

inline uint32_t readPred(const ExecCtx& c, uint32_t p, bool neg) { return neg ? ~c.P[p] : c.P[p]; }

float halfToFloat(uint16_t h);
uint16_t floatToHalf(float f);  // round to nearest even
float bhalfToFloat(uint16_t h);
uint16_t floatToBhalf(float f);  // round to nearest even
// Rounds a double to f16 / bf16 in any IEEE rounding mode (Default and Rn: nearest even).
uint16_t roundToHalf(double x, handlers::Round r);
uint16_t roundToBhalf(double x, handlers::Round r);
// The host pointer behind `bytes` at `addr` in `space` for lane `l` (generic addresses resolved);
// faults (KernelFault) on a misaligned or out-of-range access.
// With `rec`, the access is also recorded for the timing model (MemRecord of lane l).
uint8_t* memoryPointer(ExecCtx& c, MemSpace space, uint64_t addr, unsigned bytes, int l, bool write,
                       MemRecord* rec = nullptr);

// The round-to-odd value of a result computed with rounding toward zero.
double roundToOdd(double towardZero, bool inexact);

}  // namespace gpusc::func
