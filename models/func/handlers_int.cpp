// Integer, bit-manipulation and carry-chain instructions.
//
// Semantics follow the PTX ISA. Where it leaves a result unspecified we choose, and document in
// docs/ptx-support.md: x / 0 gives all ones for unsigned types and -1 (x >= 0) or 1 (x < 0) for
// signed types, as NVIDIA's division sequence does; x % 0 gives x; MIN / -1 gives MIN.
#include <algorithm>
#include <limits>

#include "common/bits.hpp"
#include "func/handlers.hpp"
#include "func/lanes.hpp"

namespace gpusc::func::handlers {

namespace {

template <class T>
using Wide = std::conditional_t<
    sizeof(T) == 2, std::conditional_t<std::is_signed_v<T>, int32_t, uint32_t>,
    std::conditional_t<sizeof(T) == 4, std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>,
                       std::conditional_t<std::is_signed_v<T>, Int128, UInt128>>>;

template <class T>
using U = std::make_unsigned_t<T>;

template <class T>
constexpr unsigned kBits = sizeof(T) * 8;

// ---- binary operations -------------------------------------------------------------------------

template <class T>
T divide(T a, T b) {
  if (b == 0) {
    if constexpr (std::is_signed_v<T>) return a < 0 ? T(1) : T(-1);
    return static_cast<T>(~U<T>(0));
  }
  if constexpr (std::is_signed_v<T>) {
    if (a == std::numeric_limits<T>::min() && b == T(-1)) return a;
  }
  return static_cast<T>(a / b);
}

template <class T>
T remainder(T a, T b) {
  if (b == 0) return a;
  if constexpr (std::is_signed_v<T>) {
    if (b == T(-1)) return 0;
  }
  return static_cast<T>(a % b);
}

template <class T>
T mulHi(T a, T b) {
  using W = Wide<T>;
  return static_cast<T>((W(a) * W(b)) >> kBits<T>);
}

template <class T>
T shiftLeft(T a, uint32_t n) {
  return n >= kBits<T> ? T(0) : static_cast<T>(U<T>(a) << n);
}

template <class T>
T shiftRight(T a, uint32_t n) {
  if constexpr (std::is_signed_v<T>) {
    return n >= kBits<T> ? (a < 0 ? T(-1) : T(0)) : static_cast<T>(a >> n);
  } else {
    return n >= kBits<T> ? T(0) : static_cast<T>(a >> n);
  }
}

template <class T>
int64_t sext24(T a) {
  if constexpr (std::is_signed_v<T>) {
    int32_t v = static_cast<int32_t>(static_cast<uint32_t>(a) << 8) >> 8;
    return v;
  } else {
    return static_cast<int64_t>(static_cast<uint32_t>(a) & 0xffffffu);
  }
}

template <class T, IntBin Op>
void binary(ExecCtx& c, const Inst& in, uint32_t mask) {
  uint64_t* d = slot(c, in.dst[0]);
  const uint64_t* a = slot(c, in.src[0]);
  const uint64_t* b = slot(c, in.src[1]);
  if constexpr (Op == IntBin::MulWide) {
    if constexpr (sizeof(T) < 8) {
      forEachLane(
          mask, [&](int l) { put<Wide<T>>(d, l, Wide<T>(get<T>(a, l)) * Wide<T>(get<T>(b, l))); });
    }
  } else if constexpr (Op == IntBin::Shl || Op == IntBin::Shr) {
    forEachLane(mask, [&](int l) {
      uint32_t n = get<uint32_t>(b, l);
      put<T>(d, l, Op == IntBin::Shl ? shiftLeft(get<T>(a, l), n) : shiftRight(get<T>(a, l), n));
    });
  } else if constexpr (Op == IntBin::AddCC || Op == IntBin::AddC || Op == IntBin::AddCCC ||
                       Op == IntBin::SubCC || Op == IntBin::SubC || Op == IntBin::SubCCC) {
    using UT = U<T>;
    constexpr bool kSub = Op == IntBin::SubCC || Op == IntBin::SubC || Op == IntBin::SubCCC;
    constexpr bool kIn =
        Op == IntBin::AddC || Op == IntBin::AddCCC || Op == IntBin::SubC || Op == IntBin::SubCCC;
    constexpr bool kOut =
        Op == IntBin::AddCC || Op == IntBin::AddCCC || Op == IntBin::SubCC || Op == IntBin::SubCCC;
    // One carry flag for both: a subtraction is the addition x + ~y + 1, and the flag is the
    // carry out of that sum, so it is set when nothing was borrowed; subc adds the flag in place
    // of the 1. NVIDIA's own code depends on this: the CUDA headers' 128-bit division reads the
    // flag a sub.cc chain leaves with addc (set: the remainder did not go negative), and a
    // chain of sub.cc and subc gives the same difference as it would with a borrow flag.
    uint32_t carry = c.w->carry, newCarry = 0;
    forEachLane(mask, [&](int l) {
      const UT x = get<UT>(a, l), y = kSub ? UT(~get<UT>(b, l)) : get<UT>(b, l);
      const UT cin = kIn ? UT((carry >> l) & 1u) : UT(kSub ? 1 : 0);
      const Wide<UT> s = Wide<UT>(x) + Wide<UT>(y) + Wide<UT>(cin);
      put<UT>(d, l, static_cast<UT>(s));
      newCarry |= uint32_t((s >> kBits<UT>) != 0) << l;
    });
    if constexpr (kOut) c.w->carry = (carry & ~mask) | (newCarry & mask);
  } else {
    forEachLane(mask, [&](int l) {
      T x = get<T>(a, l), y = get<T>(b, l);
      T r;
      if constexpr (Op == IntBin::Add)
        r = static_cast<T>(U<T>(x) + U<T>(y));
      else if constexpr (Op == IntBin::Sub)
        r = static_cast<T>(U<T>(x) - U<T>(y));
      else if constexpr (Op == IntBin::MulLo)
        r = static_cast<T>(U<T>(x) * U<T>(y));
      else if constexpr (Op == IntBin::MulHi)
        r = mulHi(x, y);
      else if constexpr (Op == IntBin::Mul24Lo)
        r = static_cast<T>(sext24(x) * sext24(y));
      else if constexpr (Op == IntBin::Mul24Hi)
        r = static_cast<T>((sext24(x) * sext24(y)) >> 16);
      else if constexpr (Op == IntBin::Div)
        r = divide(x, y);
      else if constexpr (Op == IntBin::Rem)
        r = remainder(x, y);
      else if constexpr (Op == IntBin::Min)
        r = x < y ? x : y;
      else if constexpr (Op == IntBin::Max)
        r = x > y ? x : y;
      else if constexpr (Op == IntBin::And)
        r = x & y;
      else if constexpr (Op == IntBin::Or)
        r = x | y;
      else if constexpr (Op == IntBin::Xor)
        r = x ^ y;
      put<T>(d, l, r);
    });
  }
}

// ---- unary operations --------------------------------------------------------------------------

template <class T, IntUn Op>
void unary(ExecCtx& c, const Inst& in, uint32_t mask) {
  uint64_t* d = slot(c, in.dst[0]);
  const uint64_t* a = slot(c, in.src[0]);
  forEachLane(mask, [&](int l) {
    T x = get<T>(a, l);
    if constexpr (Op == IntUn::Popc) {
      put<uint32_t>(d, l, popcount64(U<T>(x)));
    } else if constexpr (Op == IntUn::Clz) {
      U<T> u = U<T>(x);
      uint32_t n = u == 0 ? kBits<T> : static_cast<uint32_t>(__builtin_clzll(u) - (64 - kBits<T>));
      put<uint32_t>(d, l, n);
    } else if constexpr (Op == IntUn::Brev) {
      U<T> u = U<T>(x), r = 0;
      for (unsigned i = 0; i < kBits<T>; ++i) r |= U<T>((u >> i) & 1u) << (kBits<T> - 1 - i);
      put<T>(d, l, static_cast<T>(r));
    } else {
      T r;
      if constexpr (Op == IntUn::Abs)
        r = x < 0 ? static_cast<T>(U<T>(0) - U<T>(x)) : x;
      else if constexpr (Op == IntUn::Neg)
        r = static_cast<T>(U<T>(0) - U<T>(x));
      else if constexpr (Op == IntUn::Not)
        r = static_cast<T>(~x);
      else if constexpr (Op == IntUn::CNot)
        r = x == 0 ? T(1) : T(0);
      else
        r = x;  // Mov
      put<T>(d, l, r);
    }
  });
}

// ---- ternary operations ------------------------------------------------------------------------

template <class T>
T bitfieldExtract(T a, uint32_t pos, uint32_t len) {
  constexpr unsigned msb = kBits<T> - 1;
  pos &= 0xff;
  len &= 0xff;
  using UT = U<T>;
  UT ua = UT(a);
  UT sbit = 0;
  if constexpr (std::is_signed_v<T>) {
    if (len != 0) sbit = (ua >> std::min<uint32_t>(pos + len - 1, msb)) & 1u;
  }
  UT r = 0;
  for (unsigned i = 0; i <= msb; ++i) {
    UT bit = (i < len && pos + i <= msb) ? ((ua >> (pos + i)) & 1u) : sbit;
    r |= bit << i;
  }
  return static_cast<T>(r);
}

uint32_t permute(uint32_t a, uint32_t b, uint32_t sel) {
  uint64_t bytes = (uint64_t(b) << 32) | a;
  uint32_t r = 0;
  for (int i = 0; i < 4; ++i) {
    uint32_t s = (sel >> (4 * i)) & 0xf;
    uint32_t byte = static_cast<uint32_t>((bytes >> (8 * (s & 7))) & 0xff);
    if (s & 8) byte = (byte & 0x80) ? 0xff : 0x00;
    r |= byte << (8 * i);
  }
  return r;
}

template <class T, IntTer Op>
void ternary(ExecCtx& c, const Inst& in, uint32_t mask) {
  uint64_t* d = slot(c, in.dst[0]);
  const uint64_t* a = slot(c, in.src[0]);
  const uint64_t* b = slot(c, in.src[1]);
  const uint64_t* cc = slot(c, in.src[2]);
  using UT = U<T>;
  if constexpr (Op == IntTer::MadWide) {
    if constexpr (sizeof(T) < 8) {
      forEachLane(mask, [&](int l) {
        using W = Wide<T>;
        put<W>(d, l,
               static_cast<W>(std::make_unsigned_t<W>(W(get<T>(a, l)) * W(get<T>(b, l))) +
                              std::make_unsigned_t<W>(get<W>(cc, l))));
      });
    }
  } else if constexpr (Op == IntTer::MadLoCC || Op == IntTer::MadHiCC || Op == IntTer::MadcLo ||
                       Op == IntTer::MadcHi || Op == IntTer::MadcLoCC || Op == IntTer::MadcHiCC) {
    constexpr bool kHi = Op == IntTer::MadHiCC || Op == IntTer::MadcHi || Op == IntTer::MadcHiCC;
    constexpr bool kIn = Op == IntTer::MadcLo || Op == IntTer::MadcHi || Op == IntTer::MadcLoCC ||
                         Op == IntTer::MadcHiCC;
    constexpr bool kOut = Op == IntTer::MadLoCC || Op == IntTer::MadHiCC ||
                          Op == IntTer::MadcLoCC || Op == IntTer::MadcHiCC;
    uint32_t carry = c.w->carry, newCarry = 0;
    forEachLane(mask, [&](int l) {
      T x = get<T>(a, l), y = get<T>(b, l);
      UT p = kHi ? UT(mulHi(x, y)) : UT(UT(x) * UT(y));
      Wide<UT> s =
          Wide<UT>(p) + Wide<UT>(get<UT>(cc, l)) + Wide<UT>(kIn ? ((carry >> l) & 1u) : 0u);
      put<UT>(d, l, static_cast<UT>(s));
      newCarry |= uint32_t((s >> kBits<UT>) != 0) << l;
    });
    if constexpr (kOut) c.w->carry = (carry & ~mask) | (newCarry & mask);
  } else {
    forEachLane(mask, [&](int l) {
      T x = get<T>(a, l), y = get<T>(b, l);
      T r;
      if constexpr (Op == IntTer::MadLo) {
        r = static_cast<T>(UT(UT(x) * UT(y)) + UT(get<T>(cc, l)));
      } else if constexpr (Op == IntTer::MadHi) {
        r = static_cast<T>(UT(mulHi(x, y)) + UT(get<T>(cc, l)));
      } else if constexpr (Op == IntTer::Mad24Lo) {
        r = static_cast<T>(UT(sext24(x) * sext24(y)) + UT(get<T>(cc, l)));
      } else if constexpr (Op == IntTer::Mad24Hi) {
        r = static_cast<T>(UT((sext24(x) * sext24(y)) >> 16) + UT(get<T>(cc, l)));
      } else if constexpr (Op == IntTer::MadHiSat || Op == IntTer::Mad24HiSat) {  // s32
        const int64_t hi = Op == IntTer::MadHiSat ? int64_t(mulHi(x, y))
                                                  : int64_t(int32_t((sext24(x) * sext24(y)) >> 16));
        r = static_cast<T>(std::clamp<int64_t>(hi + int64_t(get<T>(cc, l)), INT32_MIN, INT32_MAX));
      } else if constexpr (Op == IntTer::Sad) {
        UT diff = x > y ? UT(UT(x) - UT(y)) : UT(UT(y) - UT(x));
        r = static_cast<T>(diff + UT(get<T>(cc, l)));
      } else if constexpr (Op == IntTer::Bfe) {
        r = bitfieldExtract(x, get<uint32_t>(b, l), get<uint32_t>(cc, l));
      } else if constexpr (Op == IntTer::Prmt) {
        r = static_cast<T>(permute(get<uint32_t>(a, l), get<uint32_t>(b, l), get<uint32_t>(cc, l)));
      }
      put<T>(d, l, r);
    });
  }
}

template <class T>
void bfiHandler(ExecCtx& c, const Inst& in, uint32_t mask) {
  uint64_t* d = slot(c, in.dst[0]);
  const uint64_t* a = slot(c, in.src[0]);
  const uint64_t* b = slot(c, in.src[1]);
  const uint64_t* p = slot(c, in.src[2]);
  const uint64_t* n = slot(c, in.src[3]);
  forEachLane(mask, [&](int l) {
    T f = get<T>(b, l), x = get<T>(a, l);
    uint32_t pos = get<uint32_t>(p, l) & 0xff, len = get<uint32_t>(n, l) & 0xff;
    for (uint32_t i = 0; i < len && pos + i < kBits<T>; ++i) {
      T bit = T(1) << (pos + i);
      f = ((x >> i) & 1u) ? (f | bit) : (f & ~bit);
    }
    put<T>(d, l, f);
  });
}

void lop3Handler(ExecCtx& c, const Inst& in, uint32_t mask) {
  uint64_t* d = slot(c, in.dst[0]);
  const uint64_t* a = slot(c, in.src[0]);
  const uint64_t* b = slot(c, in.src[1]);
  const uint64_t* cc = slot(c, in.src[2]);
  const uint32_t lut = static_cast<uint32_t>(in.imm) & 0xff;
  forEachLane(mask, [&](int l) {
    uint32_t x = get<uint32_t>(a, l), y = get<uint32_t>(b, l), z = get<uint32_t>(cc, l), r = 0;
    // The LUT is indexed with a as bit 2 (0xF0), b as bit 1 (0xCC), c as bit 0 (0xAA).
    if (lut & 0x01) r |= ~x & ~y & ~z;
    if (lut & 0x02) r |= ~x & ~y & z;
    if (lut & 0x04) r |= ~x & y & ~z;
    if (lut & 0x08) r |= ~x & y & z;
    if (lut & 0x10) r |= x & ~y & ~z;
    if (lut & 0x20) r |= x & ~y & z;
    if (lut & 0x40) r |= x & y & ~z;
    if (lut & 0x80) r |= x & y & z;
    put<uint32_t>(d, l, r);
  });
}

template <bool Left, bool Wrap>
void shfHandler(ExecCtx& c, const Inst& in, uint32_t mask) {
  uint64_t* d = slot(c, in.dst[0]);
  const uint64_t* a = slot(c, in.src[0]);
  const uint64_t* b = slot(c, in.src[1]);
  const uint64_t* cc = slot(c, in.src[2]);
  forEachLane(mask, [&](int l) {
    uint64_t v = (uint64_t(get<uint32_t>(b, l)) << 32) | get<uint32_t>(a, l);
    uint32_t n = get<uint32_t>(cc, l);
    n = Wrap ? (n & 31) : std::min<uint32_t>(n, 32);
    uint32_t r = Left ? static_cast<uint32_t>((v << n) >> 32) : static_cast<uint32_t>(v >> n);
    put<uint32_t>(d, l, r);
  });
}

// ---- prmt modes, bfind, fns, szext, bmsk, dot products, packed min/max ------------------------

template <PrmtMode M>
void prmtHandler(ExecCtx& c, const Inst& in, uint32_t mask) {
  uint64_t* d = slot(c, in.dst[0]);
  const uint64_t* a = slot(c, in.src[0]);
  const uint64_t* b = slot(c, in.src[1]);
  const uint64_t* s = slot(c, in.src[2]);
  forEachLane(mask, [&](int l) {
    uint64_t bytes = (uint64_t(get<uint32_t>(b, l)) << 32) | get<uint32_t>(a, l);
    uint32_t sel = get<uint32_t>(s, l) & 3u;
    uint32_t idx[4];
    for (uint32_t i = 0; i < 4; ++i) {
      if constexpr (M == PrmtMode::F4e)
        idx[i] = (sel + i) & 7u;
      else if constexpr (M == PrmtMode::B4e)
        idx[i] = (sel - i) & 7u;
      else if constexpr (M == PrmtMode::Rc8)
        idx[i] = sel;
      else if constexpr (M == PrmtMode::Ecl)
        idx[i] = std::max(i, sel);
      else if constexpr (M == PrmtMode::Ecr)
        idx[i] = std::min(i, sel);
      else
        idx[i] = 2 * (sel & 1u) + (i & 1u);  // Rc16
    }
    uint32_t r = 0;
    for (uint32_t i = 0; i < 4; ++i) r |= uint32_t((bytes >> (8 * idx[i])) & 0xffu) << (8 * i);
    put<uint32_t>(d, l, r);
  });
}

template <class T, bool ShiftAmount>
void bfindHandler(ExecCtx& c, const Inst& in, uint32_t mask) {
  uint64_t* d = slot(c, in.dst[0]);
  const uint64_t* a = slot(c, in.src[0]);
  forEachLane(mask, [&](int l) {
    U<T> x = U<T>(get<T>(a, l));
    if constexpr (std::is_signed_v<T>) {
      if (get<T>(a, l) < 0) x = U<T>(~x);  // most significant non-sign bit
    }
    uint32_t r = 0xffffffffu;
    if (x != 0) {
      uint32_t msb = 63u - static_cast<uint32_t>(__builtin_clzll(uint64_t(x)));
      r = ShiftAmount ? (kBits<T> - 1) - msb : msb;
    }
    put<uint32_t>(d, l, r);
  });
}

void fnsHandler(ExecCtx& c, const Inst& in, uint32_t mask) {
  uint64_t* d = slot(c, in.dst[0]);
  const uint64_t* m = slot(c, in.src[0]);
  const uint64_t* b = slot(c, in.src[1]);
  const uint64_t* o = slot(c, in.src[2]);
  forEachLane(mask, [&](int l) {
    uint32_t bits = get<uint32_t>(m, l);
    int32_t base = static_cast<int32_t>(get<uint32_t>(b, l) & 31u);  // base > 31 is undefined
    int32_t off = get<int32_t>(o, l);
    uint32_t r = 0xffffffffu;
    if (off == 0) {
      if ((bits >> base) & 1u) r = static_cast<uint32_t>(base);
    } else {
      int64_t count = (off > 0 ? int64_t(off) : -int64_t(off)) - 1;
      int step = off > 0 ? 1 : -1;
      for (int32_t pos = base; pos >= 0 && pos < 32; pos += step) {
        if (((bits >> pos) & 1u) == 0) continue;
        if (count-- == 0) {
          r = static_cast<uint32_t>(pos);
          break;
        }
      }
    }
    put<uint32_t>(d, l, r);
  });
}

template <bool Clamp, bool Signed>
void szextHandler(ExecCtx& c, const Inst& in, uint32_t mask) {
  uint64_t* d = slot(c, in.dst[0]);
  const uint64_t* a = slot(c, in.src[0]);
  const uint64_t* b = slot(c, in.src[1]);
  forEachLane(mask, [&](int l) {
    uint32_t x = get<uint32_t>(a, l), n = get<uint32_t>(b, l);
    uint32_t n1 = n & 31u;
    bool tooLarge = Clamp && n >= 32;
    uint32_t hi = tooLarge ? 0u : (~0u << n1);  // the bits above the field
    bool sign = Signed && n1 != 0 && !tooLarge && ((x >> (n1 - 1)) & 1u);
    put<uint32_t>(d, l, (x & ~hi) | (sign ? hi : 0u));
  });
}

template <bool Clamp>
void bmskHandler(ExecCtx& c, const Inst& in, uint32_t mask) {
  uint64_t* d = slot(c, in.dst[0]);
  const uint64_t* a = slot(c, in.src[0]);
  const uint64_t* b = slot(c, in.src[1]);
  forEachLane(mask, [&](int l) {
    uint32_t pos = get<uint32_t>(a, l), width = get<uint32_t>(b, l);
    uint32_t p1 = pos & 31u, w1 = width & 31u, sum = p1 + w1;
    uint32_t low = ~0u << p1;  // bits at and above the start
    bool overflow = sum >= 32;
    if (Clamp && pos >= 32) {
      low = 0;
      overflow = true;
    }
    if (Clamp && width >= 32) overflow = true;
    uint32_t above = overflow ? 0u : w1 == 0 ? ~0u : (~0u << sum);  // bits past the field
    put<uint32_t>(d, l, low & ~above);
  });
}

template <bool ASigned>
inline int64_t lanePart(uint32_t v, unsigned i, unsigned width) {
  uint32_t part = (v >> (i * width)) & ((1u << width) - 1u);
  if (ASigned && (part >> (width - 1))) return int64_t(part) - (int64_t(1) << width);
  return part;
}

template <bool ASigned, bool BSigned>
void dp4aHandler(ExecCtx& c, const Inst& in, uint32_t mask) {
  uint64_t* d = slot(c, in.dst[0]);
  const uint64_t* a = slot(c, in.src[0]);
  const uint64_t* b = slot(c, in.src[1]);
  const uint64_t* e = slot(c, in.src[2]);
  forEachLane(mask, [&](int l) {
    uint32_t x = get<uint32_t>(a, l), y = get<uint32_t>(b, l);
    int64_t s = 0;
    for (unsigned i = 0; i < 4; ++i) s += lanePart<ASigned>(x, i, 8) * lanePart<BSigned>(y, i, 8);
    put<uint32_t>(d, l, get<uint32_t>(e, l) + static_cast<uint32_t>(s));
  });
}

template <bool ASigned, bool BSigned, bool Hi>
void dp2aHandler(ExecCtx& c, const Inst& in, uint32_t mask) {
  uint64_t* d = slot(c, in.dst[0]);
  const uint64_t* a = slot(c, in.src[0]);
  const uint64_t* b = slot(c, in.src[1]);
  const uint64_t* e = slot(c, in.src[2]);
  forEachLane(mask, [&](int l) {
    uint32_t x = get<uint32_t>(a, l), y = get<uint32_t>(b, l);
    const unsigned base = Hi ? 2 : 0;
    int64_t s = lanePart<ASigned>(x, 0, 16) * lanePart<BSigned>(y, base, 8) +
                lanePart<ASigned>(x, 1, 16) * lanePart<BSigned>(y, base + 1, 8);
    put<uint32_t>(d, l, get<uint32_t>(e, l) + static_cast<uint32_t>(s));
  });
}

template <bool IsMin>
void minMaxReluHandler(ExecCtx& c, const Inst& in, uint32_t mask) {
  uint64_t* d = slot(c, in.dst[0]);
  const uint64_t* a = slot(c, in.src[0]);
  const uint64_t* b = slot(c, in.src[1]);
  forEachLane(mask, [&](int l) {
    int32_t x = get<int32_t>(a, l), y = get<int32_t>(b, l);
    int32_t r = IsMin ? std::min(x, y) : std::max(x, y);
    put<int32_t>(d, l, std::max(r, 0));
  });
}

template <bool IsMin, bool Signed, bool Relu>
void minMax16x2Handler(ExecCtx& c, const Inst& in, uint32_t mask) {
  using H = std::conditional_t<Signed, int16_t, uint16_t>;
  uint64_t* d = slot(c, in.dst[0]);
  const uint64_t* a = slot(c, in.src[0]);
  const uint64_t* b = slot(c, in.src[1]);
  forEachLane(mask, [&](int l) {
    uint32_t x = get<uint32_t>(a, l), y = get<uint32_t>(b, l), r = 0;
    for (unsigned i = 0; i < 2; ++i) {
      H p = static_cast<H>(x >> (16 * i)), q = static_cast<H>(y >> (16 * i));
      H v = IsMin ? std::min(p, q) : std::max(p, q);
      if (Relu && v < 0) v = 0;
      r |= uint32_t(static_cast<uint16_t>(v)) << (16 * i);
    }
    put<uint32_t>(d, l, r);
  });
}

template <ReduxOp Op, class T>
void reduxHandler(ExecCtx& c, const Inst& in, uint32_t mask) {
  uint64_t* d = slot(c, in.dst[0]);
  const uint64_t* a = slot(c, in.src[0]);
  if (mask == 0) return;
  const auto reduce = [&](uint32_t g) {  // over the lanes g (not empty)
    T acc = get<T>(a, __builtin_ctz(g));
    forEachLane(g & (g - 1), [&](int l) {
      T v = get<T>(a, l);
      if constexpr (Op == ReduxOp::Add)
        acc = static_cast<T>(uint32_t(acc) + uint32_t(v));
      else if constexpr (Op == ReduxOp::Min)
        acc = std::min(acc, v);
      else if constexpr (Op == ReduxOp::Max)
        acc = std::max(acc, v);
      else if constexpr (Op == ReduxOp::And)
        acc &= v;
      else if constexpr (Op == ReduxOp::Or)
        acc |= v;
      else
        acc ^= v;
    });
    return acc;
  };
  uint32_t group[kWarpSize];
  if (!memberGroups(c, in, 1, mask, group)) {
    const T acc = reduce(mask);
    forEachLane(mask, [&](int l) { put<T>(d, l, acc); });
    return;
  }
  // Lanes of one group share its result: each group reduced once.
  uint32_t done = 0;
  forEachLane(mask, [&](int l) {
    if ((done >> l) & 1u) return;
    const uint32_t g = group[l];
    const T acc = g ? reduce(g) : get<T>(a, l);
    uint32_t same = 0;
    forEachLane(mask & ~done, [&](int k) { same |= uint32_t(group[k] == g) << k; });
    forEachLane(same, [&](int k) { put<T>(d, k, acc); });
    done |= same;
  });
}

// ---- type dispatch -----------------------------------------------------------------------------

template <template <class> class H>
Handler byIntType(Type t) {
  switch (t) {
    case Type::U16:
    case Type::B16:
      return withAvx2<H<uint16_t>::fn>();
    case Type::S16:
      return withAvx2<H<int16_t>::fn>();
    case Type::U32:
    case Type::B32:
      return withAvx2<H<uint32_t>::fn>();
    case Type::S32:
      return withAvx2<H<int32_t>::fn>();
    case Type::U64:
    case Type::B64:
      return withAvx2<H<uint64_t>::fn>();
    case Type::S64:
      return withAvx2<H<int64_t>::fn>();
    default:
      return nullptr;
  }
}

template <IntBin Op>
struct Bin {
  template <class T>
  struct H {
    static constexpr Handler fn = &binary<T, Op>;
  };
};
template <IntUn Op>
struct Un {
  template <class T>
  struct H {
    static constexpr Handler fn = &unary<T, Op>;
  };
};
template <IntTer Op>
struct Ter {
  template <class T>
  struct H {
    static constexpr Handler fn = &ternary<T, Op>;
  };
};
template <class T>
struct BfiH {
  static constexpr Handler fn = &bfiHandler<T>;
};

bool is64(Type t) { return t == Type::U64 || t == Type::S64 || t == Type::B64; }
bool is16(Type t) { return t == Type::U16 || t == Type::S16 || t == Type::B16; }

}  // namespace

Handler intBinary(IntBin op, Type t) {
  switch (op) {
    case IntBin::Add:
      return byIntType<Bin<IntBin::Add>::H>(t);
    case IntBin::Sub:
      return byIntType<Bin<IntBin::Sub>::H>(t);
    case IntBin::MulLo:
      return byIntType<Bin<IntBin::MulLo>::H>(t);
    case IntBin::MulHi:
      return byIntType<Bin<IntBin::MulHi>::H>(t);
    case IntBin::MulWide:
      return is64(t) ? nullptr : byIntType<Bin<IntBin::MulWide>::H>(t);
    case IntBin::Mul24Lo:
      return t == Type::U32 || t == Type::S32 ? byIntType<Bin<IntBin::Mul24Lo>::H>(t) : nullptr;
    case IntBin::Mul24Hi:
      return t == Type::U32 || t == Type::S32 ? byIntType<Bin<IntBin::Mul24Hi>::H>(t) : nullptr;
    case IntBin::Div:
      return byIntType<Bin<IntBin::Div>::H>(t);
    case IntBin::Rem:
      return byIntType<Bin<IntBin::Rem>::H>(t);
    case IntBin::Min:
      return byIntType<Bin<IntBin::Min>::H>(t);
    case IntBin::Max:
      return byIntType<Bin<IntBin::Max>::H>(t);
    case IntBin::And:
      return byIntType<Bin<IntBin::And>::H>(t);
    case IntBin::Or:
      return byIntType<Bin<IntBin::Or>::H>(t);
    case IntBin::Xor:
      return byIntType<Bin<IntBin::Xor>::H>(t);
    case IntBin::Shl:
      return byIntType<Bin<IntBin::Shl>::H>(t);
    case IntBin::Shr:
      return byIntType<Bin<IntBin::Shr>::H>(t);
    case IntBin::AddCC:
      return is16(t) ? nullptr : byIntType<Bin<IntBin::AddCC>::H>(t);
    case IntBin::AddC:
      return is16(t) ? nullptr : byIntType<Bin<IntBin::AddC>::H>(t);
    case IntBin::AddCCC:
      return is16(t) ? nullptr : byIntType<Bin<IntBin::AddCCC>::H>(t);
    case IntBin::SubCC:
      return is16(t) ? nullptr : byIntType<Bin<IntBin::SubCC>::H>(t);
    case IntBin::SubC:
      return is16(t) ? nullptr : byIntType<Bin<IntBin::SubC>::H>(t);
    case IntBin::SubCCC:
      return is16(t) ? nullptr : byIntType<Bin<IntBin::SubCCC>::H>(t);
  }
  return nullptr;
}

Handler intUnary(IntUn op, Type t) {
  switch (op) {
    case IntUn::Abs:
      return byIntType<Un<IntUn::Abs>::H>(t);
    case IntUn::Neg:
      return byIntType<Un<IntUn::Neg>::H>(t);
    case IntUn::Not:
      return byIntType<Un<IntUn::Not>::H>(t);
    case IntUn::CNot:
      return byIntType<Un<IntUn::CNot>::H>(t);
    case IntUn::Popc:
      return is16(t) ? nullptr : byIntType<Un<IntUn::Popc>::H>(t);
    case IntUn::Clz:
      return is16(t) ? nullptr : byIntType<Un<IntUn::Clz>::H>(t);
    case IntUn::Brev:
      return is16(t) ? nullptr : byIntType<Un<IntUn::Brev>::H>(t);
    case IntUn::Mov:
      return byIntType<Un<IntUn::Mov>::H>(t);
  }
  return nullptr;
}

Handler intTernary(IntTer op, Type t) {
  switch (op) {
    case IntTer::MadLo:
      return byIntType<Ter<IntTer::MadLo>::H>(t);
    case IntTer::MadHi:
      return byIntType<Ter<IntTer::MadHi>::H>(t);
    case IntTer::MadWide:
      return is64(t) ? nullptr : byIntType<Ter<IntTer::MadWide>::H>(t);
    case IntTer::Mad24Lo:
      return t == Type::U32 || t == Type::S32 ? byIntType<Ter<IntTer::Mad24Lo>::H>(t) : nullptr;
    case IntTer::Mad24Hi:
      return t == Type::U32 || t == Type::S32 ? byIntType<Ter<IntTer::Mad24Hi>::H>(t) : nullptr;
    case IntTer::Sad:
      return byIntType<Ter<IntTer::Sad>::H>(t);
    case IntTer::MadLoCC:
      return is16(t) ? nullptr : byIntType<Ter<IntTer::MadLoCC>::H>(t);
    case IntTer::MadHiCC:
      return is16(t) ? nullptr : byIntType<Ter<IntTer::MadHiCC>::H>(t);
    case IntTer::MadcLo:
      return is16(t) ? nullptr : byIntType<Ter<IntTer::MadcLo>::H>(t);
    case IntTer::MadcHi:
      return is16(t) ? nullptr : byIntType<Ter<IntTer::MadcHi>::H>(t);
    case IntTer::MadcLoCC:
      return is16(t) ? nullptr : byIntType<Ter<IntTer::MadcLoCC>::H>(t);
    case IntTer::MadcHiCC:
      return is16(t) ? nullptr : byIntType<Ter<IntTer::MadcHiCC>::H>(t);
    case IntTer::Bfe:
      return is16(t) ? nullptr : byIntType<Ter<IntTer::Bfe>::H>(t);
    case IntTer::Prmt:
      return t == Type::B32 ? &ternary<uint32_t, IntTer::Prmt> : nullptr;
    case IntTer::MadHiSat:
      return t == Type::S32 ? &ternary<int32_t, IntTer::MadHiSat> : nullptr;
    case IntTer::Mad24HiSat:
      return t == Type::S32 ? &ternary<int32_t, IntTer::Mad24HiSat> : nullptr;
  }
  return nullptr;
}

Handler bfi(Type t) {
  if (t == Type::B32) return BfiH<uint32_t>::fn;
  if (t == Type::B64) return BfiH<uint64_t>::fn;
  return nullptr;
}

Handler lop3() { return &lop3Handler; }

Handler shf(bool left, bool wrap) {
  if (left) return wrap ? &shfHandler<true, true> : &shfHandler<true, false>;
  return wrap ? &shfHandler<false, true> : &shfHandler<false, false>;
}

}  // namespace gpusc::func::handlers

namespace gpusc::func::handlers {

Handler prmt(PrmtMode mode) {
  switch (mode) {
    case PrmtMode::Default:
      return intTernary(IntTer::Prmt, Type::B32);
    case PrmtMode::F4e:
      return &prmtHandler<PrmtMode::F4e>;
    case PrmtMode::B4e:
      return &prmtHandler<PrmtMode::B4e>;
    case PrmtMode::Rc8:
      return &prmtHandler<PrmtMode::Rc8>;
    case PrmtMode::Ecl:
      return &prmtHandler<PrmtMode::Ecl>;
    case PrmtMode::Ecr:
      return &prmtHandler<PrmtMode::Ecr>;
    case PrmtMode::Rc16:
      return &prmtHandler<PrmtMode::Rc16>;
  }
  return nullptr;
}

Handler bfind(Type t, bool shiftAmount) {
  switch (t) {
    case Type::U32:
      return shiftAmount ? &bfindHandler<uint32_t, true> : &bfindHandler<uint32_t, false>;
    case Type::S32:
      return shiftAmount ? &bfindHandler<int32_t, true> : &bfindHandler<int32_t, false>;
    case Type::U64:
      return shiftAmount ? &bfindHandler<uint64_t, true> : &bfindHandler<uint64_t, false>;
    case Type::S64:
      return shiftAmount ? &bfindHandler<int64_t, true> : &bfindHandler<int64_t, false>;
    default:
      return nullptr;
  }
}

Handler fns() { return &fnsHandler; }

Handler szext(bool clamp, bool isSigned) {
  if (clamp) return isSigned ? &szextHandler<true, true> : &szextHandler<true, false>;
  return isSigned ? &szextHandler<false, true> : &szextHandler<false, false>;
}

Handler bmsk(bool clamp) { return clamp ? &bmskHandler<true> : &bmskHandler<false>; }

Handler dp4a(bool aSigned, bool bSigned) {
  if (aSigned) return bSigned ? &dp4aHandler<true, true> : &dp4aHandler<true, false>;
  return bSigned ? &dp4aHandler<false, true> : &dp4aHandler<false, false>;
}

Handler dp2a(bool aSigned, bool bSigned, bool hi) {
  if (hi) {
    if (aSigned) return bSigned ? &dp2aHandler<true, true, true> : &dp2aHandler<true, false, true>;
    return bSigned ? &dp2aHandler<false, true, true> : &dp2aHandler<false, false, true>;
  }
  if (aSigned) return bSigned ? &dp2aHandler<true, true, false> : &dp2aHandler<true, false, false>;
  return bSigned ? &dp2aHandler<false, true, false> : &dp2aHandler<false, false, false>;
}

Handler intMinMax32Relu(bool isMin) {
  return isMin ? &minMaxReluHandler<true> : &minMaxReluHandler<false>;
}

Handler intMinMax16x2(bool isMin, bool isSigned, bool relu) {
  if (!isSigned) {
    if (relu) return nullptr;
    return isMin ? &minMax16x2Handler<true, false, false> : &minMax16x2Handler<false, false, false>;
  }
  if (relu)
    return isMin ? &minMax16x2Handler<true, true, true> : &minMax16x2Handler<false, true, true>;
  return isMin ? &minMax16x2Handler<true, true, false> : &minMax16x2Handler<false, true, false>;
}

Handler redux(ReduxOp op, Type t) {
  const bool s = t == Type::S32;
  switch (op) {
    case ReduxOp::Add:
      return t == Type::B32 ? nullptr
             : s            ? &reduxHandler<ReduxOp::Add, int32_t>
                            : &reduxHandler<ReduxOp::Add, uint32_t>;
    case ReduxOp::Min:
      return t == Type::B32 ? nullptr
             : s            ? &reduxHandler<ReduxOp::Min, int32_t>
                            : &reduxHandler<ReduxOp::Min, uint32_t>;
    case ReduxOp::Max:
      return t == Type::B32 ? nullptr
             : s            ? &reduxHandler<ReduxOp::Max, int32_t>
                            : &reduxHandler<ReduxOp::Max, uint32_t>;
    case ReduxOp::And:
      return t == Type::B32 ? &reduxHandler<ReduxOp::And, uint32_t> : nullptr;
    case ReduxOp::Or:
      return t == Type::B32 ? &reduxHandler<ReduxOp::Or, uint32_t> : nullptr;
    case ReduxOp::Xor:
      return t == Type::B32 ? &reduxHandler<ReduxOp::Xor, uint32_t> : nullptr;
  }
  return nullptr;
}

}  // namespace gpusc::func::handlers
