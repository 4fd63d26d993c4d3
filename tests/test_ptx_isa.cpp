// Semantics of the PTX ISA 9.0 integer, bit, half-precision and warp-reduction instructions that
// real kernels use beyond the catalog. Every expected value comes from a reference written here
// in plain C++ from the ISA's definition (bit loops, byte tables, IEEE rounding done on integers),
// not from the engine's own helpers.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <random>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "common/error.hpp"
#include "support/ptx_harness.hpp"

using namespace gpusc;
using namespace gpusc::test;

namespace {

using Rows = std::vector<std::array<uint64_t, 3>>;

// Runs `body` on every row and checks %o32 against `ref(a, b, c)`.
template <class Ref>
void checkRows32(const std::string& body, const Rows& rows, Ref ref) {
  auto out = eval(body, rows);
  for (size_t i = 0; i < rows.size(); ++i) {
    uint32_t want = ref(uint32_t(rows[i][0]), uint32_t(rows[i][1]), uint32_t(rows[i][2]));
    EXPECT_EQ(out[i].o32, want) << body << " with a=0x" << std::hex << rows[i][0] << " b=0x"
                                << rows[i][1] << " c=0x" << rows[i][2];
  }
}

// A deterministic mix of edge values and random words.
std::vector<uint32_t> words(size_t n, uint32_t seed) {
  std::vector<uint32_t> v = {0u,          1u,          2u,          0x7fffffffu, 0x80000000u,
                             0xffffffffu, 0xfffffffeu, 0x00010000u, 0x0000ffffu, 0x12345678u,
                             0x80808080u, 0x7f7f7f7fu, 31u,         32u,         33u};
  std::mt19937 rng(seed);
  while (v.size() < n) v.push_back(rng());
  return v;
}

Rows grid(const std::vector<uint32_t>& as, const std::vector<uint32_t>& bs,
          const std::vector<uint32_t>& cs = {0}) {
  Rows r;
  for (uint32_t a : as)
    for (uint32_t b : bs)
      for (uint32_t c : cs)
        if (r.size() < 1024) r.push_back({a, b, c});
  return r;
}

// ---- bit counts, bit fields, 24-bit multiplies, sad: against bit-loop references ---------------

TEST(BitInstructions, CountsAndReversalMatchBitLoops) {
  Rows rows;
  std::mt19937_64 rng(2);
  for (uint64_t v : {0ull, 1ull, ~0ull, 1ull << 63, 0x8000000080000000ull})
    rows.push_back({v, 0, 0});
  while (rows.size() < 64) rows.push_back({rng() >> (rng() % 64), 0, 0});
  auto popc = [](uint64_t v, int w) {
    uint32_t n = 0;
    for (int i = 0; i < w; ++i) n += (v >> i) & 1;
    return n;
  };
  auto clz = [](uint64_t v, int w) {
    uint32_t n = 0;
    for (int i = w - 1; i >= 0 && !((v >> i) & 1); --i) ++n;
    return n;
  };
  auto brev = [](uint64_t v, int w) {
    uint64_t r = 0;
    for (int i = 0; i < w; ++i) r |= ((v >> i) & 1) << (w - 1 - i);
    return r;
  };
  auto out = eval(
      "popc.b32 %r1, %a32; popc.b64 %r2, %a64; clz.b32 %r3, %a32; clz.b64 %r4, %a64;\n"
      "shl.b32 %r2, %r2, 8; shl.b32 %r3, %r3, 16; shl.b32 %r4, %r4, 24;\n"
      "or.b32 %r1, %r1, %r2; or.b32 %r1, %r1, %r3; or.b32 %o32, %r1, %r4;\n"
      "brev.b64 %o, %a64; brev.b32 %r5, %a32; cvt.u64.u32 %rd1, %r5; xor.b64 %o, %o, %rd1;",
      rows);
  for (size_t i = 0; i < rows.size(); ++i) {
    uint64_t v = rows[i][0];
    uint32_t want = popc(v & 0xffffffffu, 32) | popc(v, 64) << 8 | clz(v & 0xffffffffu, 32) << 16 |
                    clz(v, 64) << 24;
    EXPECT_EQ(out[i].o32, want) << std::hex << v;
    EXPECT_EQ(out[i].o, brev(v, 64) ^ brev(v & 0xffffffffu, 32)) << std::hex << v;
  }
}

TEST(BitInstructions, BitFieldExtractAndInsert64) {
  auto bfe = [](uint64_t a, uint32_t pos, uint32_t len, bool sgn) {
    pos &= 0xff;
    len &= 0xff;
    uint64_t sbit = 0;
    if (sgn && len) sbit = (a >> std::min(pos + len - 1, 63u)) & 1;
    uint64_t r = 0;
    for (uint32_t i = 0; i < 64; ++i) {
      uint64_t bit = (i < len && pos + i <= 63) ? (a >> (pos + i)) & 1 : (sgn ? sbit : 0);
      r |= bit << i;
    }
    return r;
  };
  auto bfi = [](uint64_t a, uint64_t b, uint32_t pos, uint32_t len) {
    pos &= 0xff;
    len &= 0xff;
    for (uint32_t i = 0; i < len && pos + i < 64; ++i)
      b = (b & ~(1ull << (pos + i))) | (((a >> i) & 1) << (pos + i));
    return b;
  };
  Rows rows;
  std::mt19937_64 rng(4);
  for (uint32_t pos : {0u, 1u, 31u, 32u, 60u, 63u, 64u, 300u})
    for (uint32_t len : {0u, 1u, 8u, 33u, 64u, 70u})
      rows.push_back({rng(), rng(), pos | len << 16});
  auto out = eval(
      "and.b32 %r1, %c32, 0xffff; shr.u32 %r2, %c32, 16;\n"
      "bfe.u64 %rd1, %a64, %r1, %r2; bfe.s64 %rd2, %a64, %r1, %r2; xor.b64 %o, %rd1, %rd2;\n"
      "bfi.b64 %rd3, %a64, %b64, %r1, %r2; cvt.u32.u64 %o32, %rd3; shr.u64 %rd3, %rd3, 32;\n"
      "cvt.u32.u64 %r3, %rd3; xor.b32 %o32, %o32, %r3; cvt.u32.u64 %r4, %rd1; add.u32 %o32, %o32, "
      "%r4;",
      rows);
  for (size_t i = 0; i < rows.size(); ++i) {
    uint64_t a = rows[i][0], b = rows[i][1];
    uint32_t pos = uint32_t(rows[i][2]) & 0xffff, len = uint32_t(rows[i][2]) >> 16;
    uint64_t u = bfe(a, pos, len, false), sg = bfe(a, pos, len, true), ins = bfi(a, b, pos, len);
    EXPECT_EQ(out[i].o, u ^ sg) << pos << " " << len;
    EXPECT_EQ(out[i].o32, (uint32_t(ins) ^ uint32_t(ins >> 32)) + uint32_t(u)) << pos << " " << len;
  }
}

TEST(IntegerArithmeticExt, Mul24Mad24SadAgainstWideProducts) {
  Rows rows = grid(words(12, 61), words(12, 62), {0u, 7u, 0xffffffffu});
  auto s24 = [](uint32_t v) { return int64_t(int32_t(v << 8) >> 8); };
  auto u24 = [](uint32_t v) { return int64_t(v & 0xffffff); };
  checkRows32("mul24.hi.u32 %o32, %a32, %b32;", rows,
              [&](uint32_t a, uint32_t b, uint32_t) { return uint32_t((u24(a) * u24(b)) >> 16); });
  checkRows32("mul24.hi.s32 %o32, %a32, %b32;", rows,
              [&](uint32_t a, uint32_t b, uint32_t) { return uint32_t((s24(a) * s24(b)) >> 16); });
  checkRows32("mul24.lo.s32 %o32, %a32, %b32;", rows,
              [&](uint32_t a, uint32_t b, uint32_t) { return uint32_t(s24(a) * s24(b)); });
  checkRows32("mad24.lo.u32 %o32, %a32, %b32, %c32;", rows,
              [&](uint32_t a, uint32_t b, uint32_t c) { return uint32_t(u24(a) * u24(b)) + c; });
  checkRows32(
      "mad24.hi.s32 %o32, %a32, %b32, %c32;", rows,
      [&](uint32_t a, uint32_t b, uint32_t c) { return uint32_t((s24(a) * s24(b)) >> 16) + c; });
  checkRows32("sad.s32 %o32, %a32, %b32, %c32;", rows, [](uint32_t a, uint32_t b, uint32_t c) {
    int64_t d = int64_t(int32_t(a)) - int64_t(int32_t(b));
    return uint32_t(d < 0 ? -d : d) + c;
  });
}

TEST(IntegerArithmeticExt, CarryChainsAcross192Bits) {
  // (a64 : b64 : c64) +/- (b64 : c64 : a64) as 192-bit numbers, and a 64x64 -> 128 multiply-add
  // built from madc, compared with __int128 arithmetic.
  Rows rows;
  std::mt19937_64 rng(9);
  for (uint64_t v : {0ull, ~0ull, 1ull}) rows.push_back({v, ~v, v});
  while (rows.size() < 48) rows.push_back({rng(), rng() | (rng() & 1 ? ~0ull << 60 : 0), rng()});
  auto add = eval(
      "add.cc.u64 %rd1, %c64, %a64; addc.cc.u64 %rd2, %b64, %c64; addc.u64 %rd3, %a64, %b64;\n"
      "xor.b64 %o, %rd1, %rd2; xor.b64 %o, %o, %rd3; cvt.u32.u64 %o32, %rd3;",
      rows);
  auto sub = eval(
      "sub.cc.u64 %rd1, %c64, %a64; subc.cc.u64 %rd2, %b64, %c64; subc.u64 %rd3, %a64, %b64;\n"
      "xor.b64 %o, %rd1, %rd2; xor.b64 %o, %o, %rd3; cvt.u32.u64 %o32, %rd3;",
      rows);
  auto mad = eval(
      "mad.lo.cc.u64 %rd1, %a64, %b64, %c64; madc.hi.u64 %rd2, %a64, %b64, 0;\n"
      "mov.b64 %o, %rd1; cvt.u32.u64 %o32, %rd2;",
      rows);
  __extension__ typedef unsigned __int128 U128;
  for (size_t i = 0; i < rows.size(); ++i) {
    uint64_t a = rows[i][0], b = rows[i][1], c = rows[i][2];
    // low word c +/- a, middle b +/- c, high a +/- b, with carries/borrows.
    U128 lo = U128(c) + a;
    U128 mid = U128(b) + c + uint64_t(lo >> 64);
    uint64_t hi = a + b + uint64_t(mid >> 64);
    EXPECT_EQ(add[i].o, uint64_t(lo) ^ uint64_t(mid) ^ hi);
    EXPECT_EQ(add[i].o32, uint32_t(hi));
    uint64_t l2 = c - a, borrow1 = c < a;
    uint64_t m2 = b - c - borrow1;
    uint64_t borrow2 = U128(b) < U128(c) + borrow1;
    uint64_t h2 = a - b - borrow2;
    EXPECT_EQ(sub[i].o, l2 ^ m2 ^ h2);
    EXPECT_EQ(sub[i].o32, uint32_t(h2));
    U128 full = U128(a) * b + c;
    EXPECT_EQ(mad[i].o, uint64_t(full));
    EXPECT_EQ(mad[i].o32, uint32_t(full >> 64));
  }
}

// ---- bfind -------------------------------------------------------------------------------------

uint32_t refBfind(uint64_t a, unsigned width, bool isSigned, bool shiftAmount) {
  const unsigned msb = width - 1;
  if (isSigned && ((a >> msb) & 1)) a = ~a;
  if (width == 32) a &= 0xffffffffull;
  for (int i = int(msb); i >= 0; --i)
    if ((a >> i) & 1) return shiftAmount ? msb - unsigned(i) : unsigned(i);
  return 0xffffffffu;
}

TEST(BitInstructions, BfindFindsTheMostSignificantNonSignBit) {
  Rows rows;
  for (uint32_t w : words(64, 1)) rows.push_back({w, 0, 0});
  for (bool sh : {false, true}) {
    const std::string m = sh ? ".shiftamt" : "";
    checkRows32("bfind" + m + ".u32 %o32, %a32;", rows,
                [&](uint32_t a, uint32_t, uint32_t) { return refBfind(a, 32, false, sh); });
    checkRows32("bfind" + m + ".s32 %o32, %a32;", rows,
                [&](uint32_t a, uint32_t, uint32_t) { return refBfind(a, 32, true, sh); });
  }
  Rows rows64;
  std::mt19937_64 rng(7);
  for (uint64_t v : {0ull, 1ull, ~0ull, 1ull << 63, (1ull << 63) - 1, 0x100000000ull})
    rows64.push_back({v, 0, 0});
  for (int i = 0; i < 20; ++i) rows64.push_back({rng() >> (i % 60), 0, 0});
  for (bool sh : {false, true}) {
    const std::string m = sh ? ".shiftamt" : "";
    for (bool s : {false, true}) {
      auto out = eval("bfind" + m + (s ? ".s64" : ".u64") + " %o32, %a64;", rows64);
      for (size_t i = 0; i < rows64.size(); ++i)
        EXPECT_EQ(out[i].o32, refBfind(rows64[i][0], 64, s, sh)) << std::hex << rows64[i][0];
    }
  }
  // __ffs(x) as nvcc emits it: brev, then bfind.shiftamt, plus one.
  EXPECT_EQ(
      eval1("brev.b32 %r1, %a32; bfind.shiftamt.u32 %r2, %r1; add.u32 %o32, %r2, 1;", 0x50).o32,
      5u);
}

// ---- fns ---------------------------------------------------------------------------------------

uint32_t refFns(uint32_t mask, uint32_t base, int32_t offset) {
  if (offset == 0) return ((mask >> base) & 1) ? base : 0xffffffffu;
  int64_t count = std::llabs(int64_t(offset)) - 1;
  for (int pos = int(base); pos >= 0 && pos<32; pos += offset> 0 ? 1 : -1) {
    if (!((mask >> pos) & 1)) continue;
    if (count == 0) return uint32_t(pos);
    --count;
  }
  return 0xffffffffu;
}

TEST(BitInstructions, FnsFindsTheNthSetBit) {
  // The ISA's examples.
  EXPECT_EQ(eval1("fns.b32 %o32, 0xaaaaaaaa, 3, 1;", 0).o32, 3u);
  EXPECT_EQ(eval1("fns.b32 %o32, 0xaaaaaaaa, 3, -1;", 0).o32, 3u);
  EXPECT_EQ(eval1("fns.b32 %o32, 0xaaaaaaaa, 2, 1;", 0).o32, 3u);
  EXPECT_EQ(eval1("fns.b32 %o32, 0xaaaaaaaa, 2, -1;", 0).o32, 1u);
  Rows rows;
  std::mt19937 rng(3);
  const uint32_t masks[] = {
      0u, 0xffffffffu, 0x80000001u, 0xaaaaaaaau, uint32_t(rng()), uint32_t(rng()), uint32_t(rng())};
  const int32_t offsets[] = {0, 1, 2, 5, 31, 32, 33, -1, -2, -7, -32, -33};
  for (uint32_t m : masks)
    for (uint32_t base : {0u, 1u, 15u, 31u})
      for (int32_t off : offsets) rows.push_back({m, base, uint32_t(off)});
  checkRows32("fns.b32 %o32, %a32, %b32, %c32;", rows,
              [](uint32_t m, uint32_t b, uint32_t c) { return refFns(m, b, int32_t(c)); });
}

// ---- szext, bmsk -------------------------------------------------------------------------------

uint32_t refSzext(uint32_t a, uint32_t n, bool clamp, bool isSigned) {
  if (clamp && n >= 32) return a;  // the whole word is the field
  n &= 31;
  if (n == 0) return 0;
  uint32_t r = 0;
  for (uint32_t i = 0; i < 32; ++i) {
    uint32_t bit = i < n ? (a >> i) & 1 : (isSigned ? (a >> (n - 1)) & 1 : 0);
    r |= bit << i;
  }
  return r;
}

uint32_t refBmsk(uint32_t a, uint32_t b, bool clamp) {
  uint32_t start = a & 31, width = b & 31;
  if (clamp && a >= 32) return 0;
  if (clamp && b >= 32) width = 32;
  uint32_t r = 0;
  for (uint32_t i = start; i < 32 && i < start + width; ++i) r |= 1u << i;
  return r;
}

TEST(BitInstructions, SzextSignOrZeroExtendsAField) {
  EXPECT_EQ(eval1("szext.wrap.u32 %o32, 0xffffffff, 0;", 0).o32, 0u);  // the ISA's example
  Rows rows = grid({0u, 0xffffffffu, 0x80u, 0x7fu, 0x12345678u, 0x8000u, 0xdeadbeefu},
                   {0u, 1u, 7u, 8u, 16u, 31u, 32u, 33u, 40u, 0xffffffffu});
  for (bool clamp : {false, true})
    for (bool s : {false, true})
      checkRows32(std::string("szext.") + (clamp ? "clamp" : "wrap") + (s ? ".s32" : ".u32") +
                      " %o32, %a32, %b32;",
                  rows, [&](uint32_t a, uint32_t b, uint32_t) { return refSzext(a, b, clamp, s); });
}

TEST(BitInstructions, BmskBuildsAMask) {
  EXPECT_EQ(eval1("bmsk.wrap.b32 %o32, 1, 2;", 0).o32, 6u);  // the ISA's example
  Rows rows = grid({0u, 1u, 5u, 16u, 31u, 32u, 33u, 64u}, {0u, 1u, 3u, 16u, 31u, 32u, 33u});
  for (bool clamp : {false, true})
    checkRows32(std::string("bmsk.") + (clamp ? "clamp" : "wrap") + ".b32 %o32, %a32, %b32;", rows,
                [&](uint32_t a, uint32_t b, uint32_t) { return refBmsk(a, b, clamp); });
}

// ---- prmt modes --------------------------------------------------------------------------------

// The PTX ISA's selector tables: for c[1:0] = 0..3, the source byte of d.b3 d.b2 d.b1 d.b0
// (one hex digit each).
struct PrmtTable {
  const char* mode;
  uint16_t sel[4];
};
constexpr PrmtTable kPrmtTables[] = {
    {"f4e", {0x3210, 0x4321, 0x5432, 0x6543}}, {"b4e", {0x5670, 0x6701, 0x7012, 0x0123}},
    {"rc8", {0x0000, 0x1111, 0x2222, 0x3333}}, {"ecl", {0x3210, 0x3211, 0x3222, 0x3333}},
    {"ecr", {0x0000, 0x1110, 0x2210, 0x3210}}, {"rc16", {0x1010, 0x3232, 0x1010, 0x3232}},
};

TEST(BitInstructions, PrmtModesFollowTheSelectorTables) {
  const uint32_t a = 0x33221100u, b = 0x77665544u;  // byte i holds 0x11 * i
  Rows rows;
  for (uint32_t c = 0; c < 8; ++c) rows.push_back({a, b, c | (c << 8)});  // upper bits ignored
  for (const auto& t : kPrmtTables) {
    checkRows32(std::string("prmt.b32.") + t.mode + " %o32, %a32, %b32, %c32;", rows,
                [&](uint32_t, uint32_t, uint32_t c) {
                  uint32_t r = 0;
                  for (int i = 0; i < 4; ++i)
                    r |= (0x11u * ((t.sel[c & 3] >> (4 * i)) & 0xf)) << (8 * i);
                  return r;
                });
  }
  // The default mode with sign replication (selector bit 3).
  EXPECT_EQ(eval1("prmt.b32 %o32, %a32, %b32, 0x8880;", 0x00000080u, 0).o32, 0xffffff80u);
}

// ---- dp4a, dp2a --------------------------------------------------------------------------------

int64_t part(uint32_t v, int i, int width, bool isSigned) {
  uint32_t p = (v >> (i * width)) & ((1u << width) - 1);
  if (isSigned && width == 8) return int8_t(uint8_t(p));
  if (isSigned && width == 16) return int16_t(uint16_t(p));
  return p;
}

TEST(IntegerDotProduct, Dp4aAndDp2aAccumulateBytes) {
  Rows rows = grid(words(8, 11), words(8, 12), {0u, 5u, 0xffffffffu, 0x80000000u});
  for (bool as : {false, true})
    for (bool bs : {false, true}) {
      std::string types = std::string(as ? ".s32" : ".u32") + (bs ? ".s32" : ".u32");
      checkRows32("dp4a" + types + " %o32, %a32, %b32, %c32;", rows,
                  [&](uint32_t a, uint32_t b, uint32_t c) {
                    int64_t s = 0;
                    for (int i = 0; i < 4; ++i) s += part(a, i, 8, as) * part(b, i, 8, bs);
                    return uint32_t(uint64_t(s) + c);
                  });
      for (bool hi : {false, true})
        checkRows32(std::string("dp2a.") + (hi ? "hi" : "lo") + types + " %o32, %a32, %b32, %c32;",
                    rows, [&](uint32_t a, uint32_t b, uint32_t c) {
                      int o = hi ? 2 : 0;
                      int64_t s = part(a, 0, 16, as) * part(b, o, 8, bs) +
                                  part(a, 1, 16, as) * part(b, o + 1, 8, bs);
                      return uint32_t(uint64_t(s) + c);
                    });
    }
}

// ---- min/max .relu and packed 16x2 -------------------------------------------------------------

TEST(IntegerArithmeticExt, MinMaxReluAndPackedHalves) {
  Rows rows = grid(words(20, 21), words(20, 22));
  checkRows32("min.relu.s32 %o32, %a32, %b32;", rows, [](uint32_t a, uint32_t b, uint32_t) {
    return uint32_t(std::max(std::min(int32_t(a), int32_t(b)), 0));
  });
  checkRows32("max.relu.s32 %o32, %a32, %b32;", rows, [](uint32_t a, uint32_t b, uint32_t) {
    return uint32_t(std::max(std::max(int32_t(a), int32_t(b)), 0));
  });
  auto packed = [](bool isMin, bool isSigned, bool relu) {
    return [=](uint32_t a, uint32_t b, uint32_t) {
      uint32_t r = 0;
      for (int i = 0; i < 2; ++i) {
        int32_t x = isSigned ? int16_t(a >> (16 * i)) : uint16_t(a >> (16 * i));
        int32_t y = isSigned ? int16_t(b >> (16 * i)) : uint16_t(b >> (16 * i));
        int32_t v = isMin ? std::min(x, y) : std::max(x, y);
        if (relu) v = std::max(v, 0);
        r |= (uint32_t(v) & 0xffffu) << (16 * i);
      }
      return r;
    };
  };
  checkRows32("min.u16x2 %o32, %a32, %b32;", rows, packed(true, false, false));
  checkRows32("max.u16x2 %o32, %a32, %b32;", rows, packed(false, false, false));
  checkRows32("min.s16x2 %o32, %a32, %b32;", rows, packed(true, true, false));
  checkRows32("max.s16x2 %o32, %a32, %b32;", rows, packed(false, true, false));
  checkRows32("min.relu.s16x2 %o32, %a32, %b32;", rows, packed(true, true, true));
  checkRows32("max.relu.s16x2 %o32, %a32, %b32;", rows, packed(false, true, true));
}

// ---- min/max: three inputs, .abs and .xorsign.abs ------------------------------------------

// A floating-point format's bit fields, for references that work on the encodings only.
struct Bits {
  uint32_t sign, expMask, manMask, nan;
  bool isNaN(uint32_t v) const { return (v & expMask) == expMask && (v & manMask) != 0; }
  uint32_t flush(uint32_t v) const { return (v & expMask) == 0 ? v & sign : v; }
  // A key that orders encodings as real numbers, with -0 below +0.
  int64_t key(uint32_t v) const {
    const int64_t mag = v & (expMask | manMask);
    return (v & sign) ? -2 * mag - 1 : 2 * mag;
  }
};
constexpr Bits kF32Bits{0x80000000u, 0x7f800000u, 0x007fffffu, 0x7fffffffu};
constexpr Bits kF16Bits{0x8000u, 0x7c00u, 0x03ffu, 0x7fffu};
constexpr Bits kBF16Bits{0x8000u, 0x7f80u, 0x007fu, 0x7fffu};

// min/max of `n` encodings with the PTX modifiers, from the ISA's description.
uint32_t refMinMax(const Bits& f, bool isMin, bool nanProp, bool ftz, bool abs, bool xorSign,
                   std::vector<uint32_t> v) {
  const uint32_t sign = xorSign ? ((v[0] ^ v[1]) & f.sign) : 0;
  bool haveNaN = false, haveNumber = false;
  uint32_t best = 0;
  for (uint32_t x : v) {
    if (ftz) x = f.flush(x);
    if (abs || xorSign) x &= ~f.sign;
    if (f.isNaN(x)) {
      haveNaN = true;
      continue;
    }
    if (!haveNumber || (isMin ? f.key(x) < f.key(best) : f.key(x) > f.key(best))) best = x;
    haveNumber = true;
  }
  if (!haveNumber || (haveNaN && nanProp)) return f.nan;
  best |= sign;
  return ftz ? f.flush(best) : best;
}

TEST(FloatMinMax, ThreeInputsAbsAndXorSign) {
  const std::vector<uint32_t> vals = {0x00000000u, 0x80000000u, 0x3f800000u, 0xbf800000u,
                                      0x40200000u, 0xc0400000u, 0x7f800000u, 0xff800000u,
                                      0x7fc00001u, 0x00000005u, 0x80400000u};
  Rows rows;
  for (uint32_t a : vals)
    for (uint32_t b : vals)
      for (uint32_t c : vals)
        if (rows.size() < 1024) rows.push_back({a, b, c});
  for (const char* op : {"min", "max"})
    for (const char* mods : {"", ".NaN", ".abs", ".ftz.NaN.abs", ".ftz"}) {
      const std::string m = mods;
      const bool isMin = op[1] == 'i', nan = m.find("NaN") != std::string::npos,
                 ftz = m.find("ftz") != std::string::npos, abs = m.find("abs") != std::string::npos;
      const std::string body = std::string(op) + m + ".f32 %fo, %fa, %fb, %fc; mov.b32 %o32, %fo;";
      checkRows32(body, rows, [&](uint32_t a, uint32_t b, uint32_t c) {
        return refMinMax(kF32Bits, isMin, nan, ftz, abs, false, {a, b, c});
      });
    }
  for (const char* op : {"min", "max"})
    for (const char* mods : {".xorsign.abs", ".NaN.xorsign.abs", ".ftz.xorsign.abs"}) {
      const std::string m = mods;
      const bool isMin = op[1] == 'i', nan = m.find("NaN") != std::string::npos,
                 ftz = m.find("ftz") != std::string::npos;
      checkRows32(std::string(op) + m + ".f32 %fo, %fa, %fb; mov.b32 %o32, %fo;", rows,
                  [&](uint32_t a, uint32_t b, uint32_t) {
                    return refMinMax(kF32Bits, isMin, nan, ftz, false, true, {a, b});
                  });
    }
  // Packed halves: each half on its own.
  const std::vector<uint32_t> halves = {0x0000u, 0x8000u, 0x3c00u, 0xbc00u, 0x4100u, 0xc500u,
                                        0x7c00u, 0xfc00u, 0x7e01u, 0x0003u, 0x8200u, 0x3f80u,
                                        0xbfc0u, 0x7f80u, 0x7fc1u, 0x0001u};
  Rows hrows;
  std::mt19937 rng(31);
  while (hrows.size() < 512) {
    auto h2 = [&] { return halves[rng() % halves.size()] | (halves[rng() % halves.size()] << 16); };
    hrows.push_back({h2(), h2(), 0});
  }
  struct Form {
    const char* text;
    const Bits* f;
    bool isMin, nan, ftz;
  };
  for (const Form& form : {Form{"min.xorsign.abs.f16x2", &kF16Bits, true, false, false},
                           Form{"max.NaN.xorsign.abs.f16x2", &kF16Bits, false, true, false},
                           Form{"min.ftz.xorsign.abs.f16x2", &kF16Bits, true, false, true},
                           Form{"max.xorsign.abs.bf16x2", &kBF16Bits, false, false, false},
                           Form{"min.NaN.xorsign.abs.bf16x2", &kBF16Bits, true, true, false}}) {
    checkRows32(std::string(form.text) + " %o32, %a32, %b32;", hrows,
                [&](uint32_t a, uint32_t b, uint32_t) {
                  uint32_t r = 0;
                  for (int i = 0; i < 2; ++i)
                    r |= refMinMax(*form.f, form.isMin, form.nan, form.ftz, false, true,
                                   {(a >> (16 * i)) & 0xffffu, (b >> (16 * i)) & 0xffffu})
                         << (16 * i);
                  return r;
                });
  }
  checkRows32(
      "mov.b32 {%h0, %h1}, %a32; mov.b32 {%h2, %h3}, %b32; min.xorsign.abs.bf16 %h4, %h0, %h2;"
      "max.xorsign.abs.f16 %h5, %h1, %h3; mov.b32 %o32, {%h4, %h5};",
      hrows, [&](uint32_t a, uint32_t b, uint32_t) {
        return refMinMax(kBF16Bits, true, false, false, false, true, {a & 0xffffu, b & 0xffffu}) |
               refMinMax(kF16Bits, false, false, false, false, true, {a >> 16, b >> 16}) << 16;
      });
  // What the ISA does not have: integer three-input forms, .abs without .xorsign on two inputs,
  // .xorsign on three inputs or f64.
  for (const char* bad : {"min.s32 %o32, %a32, %b32, %c32;", "max.abs.f32 %fo, %fa, %fb;",
                          "min.xorsign.abs.f32 %fo, %fa, %fb, %fc;",
                          "max.xorsign.abs.f64 %do, %da, %db;", "min.f64 %do, %da, %db, %dc;"})
    EXPECT_THROW(eval1(bad, 1), InputError) << bad;
}

// ---- redux.sync --------------------------------------------------------------------------------

TEST(WarpReduction, ReduxSyncCombinesTheWarp) {
  Rows rows;
  std::vector<uint32_t> v = words(64, 31);
  for (uint32_t w : v) rows.push_back({w, 0, 0});
  struct Case {
    const char* op;
    uint32_t (*f)(uint32_t, uint32_t);
  };
  const Case cases[] = {
      {"add.u32", [](uint32_t x, uint32_t y) { return x + y; }},
      {"min.u32", [](uint32_t x, uint32_t y) { return std::min(x, y); }},
      {"max.u32", [](uint32_t x, uint32_t y) { return std::max(x, y); }},
      {"min.s32",
       [](uint32_t x, uint32_t y) { return uint32_t(std::min(int32_t(x), int32_t(y))); }},
      {"max.s32",
       [](uint32_t x, uint32_t y) { return uint32_t(std::max(int32_t(x), int32_t(y))); }},
      {"add.s32", [](uint32_t x, uint32_t y) { return x + y; }},
      {"and.b32", [](uint32_t x, uint32_t y) { return x & y; }},
      {"or.b32", [](uint32_t x, uint32_t y) { return x | y; }},
      {"xor.b32", [](uint32_t x, uint32_t y) { return x ^ y; }},
  };
  for (const auto& cs : cases) {
    auto out = eval(std::string("redux.sync.") + cs.op + " %o32, %a32, 0xffffffff;", rows);
    for (size_t w = 0; w < 2; ++w) {
      uint32_t want = v[w * 32];
      for (size_t l = 1; l < 32; ++l) want = cs.f(want, v[w * 32 + l]);
      for (size_t l = 0; l < 32; ++l)
        EXPECT_EQ(out[w * 32 + l].o32, want) << cs.op << " lane " << l;
    }
  }
  // Only the even lanes take part.
  auto out = eval(
      "and.b32 %r1, %t, 1; setp.eq.u32 %p1, %r1, 0;\n"
      "@%p1 redux.sync.add.u32 %o32, %a32, 0x55555555;",
      Rows(rows.begin(), rows.begin() + 32));
  uint32_t even = 0;
  for (size_t l = 0; l < 32; l += 2) even += v[l];
  for (size_t l = 0; l < 32; ++l) EXPECT_EQ(out[l].o32, l % 2 ? 0u : even) << l;
}

// ---- IEEE half and bfloat16, by integer arithmetic --------------------------------------------

__extension__ typedef __int128 I128;

enum class Rnd { Rn, Rz, Rm, Rp };
struct Fmt {
  int man, bias, exp;
};
constexpr Fmt kF16{10, 15, 5}, kBF16{7, 127, 8};

// Rounds (-1)^neg * mag * 2^scale to the format.
uint16_t refRound(const Fmt& f, bool neg, I128 mag, int scale, Rnd r) {
  uint16_t sign = neg ? 0x8000 : 0;
  if (mag == 0) return sign;
  int len = 0;
  while (len < 127 && (mag >> len) != 0) ++len;
  int lead = len - 1 + scale;  // exponent of the leading bit
  int q = std::max(lead, 1 - f.bias) - f.man;
  int shift = q - scale;
  I128 kept, rem = 0, half = 0;
  if (shift <= 0) {
    kept = mag << -shift;
  } else if (shift >= 126) {
    kept = 0;
    rem = 1;  // nonzero, below half
    half = 2;
  } else {
    kept = mag >> shift;
    rem = mag & ((I128(1) << shift) - 1);
    half = I128(1) << (shift - 1);
  }
  bool up = rem == 0       ? false
            : r == Rnd::Rn ? (rem > half || (rem == half && (kept & 1)))
            : r == Rnd::Rm ? (neg && rem != 0)
            : r == Rnd::Rp ? (!neg && rem != 0)
                           : false;
  if (up) ++kept;
  if (kept == (I128(1) << (f.man + 1))) {
    kept >>= 1;
    ++q;
  }
  const int expMax = (1 << f.exp) - 1;
  if (kept < (I128(1) << f.man)) return uint16_t(sign | uint16_t(kept));
  int e = q + f.man + f.bias;
  if (e >= expMax) {
    uint16_t inf = uint16_t(sign | (expMax << f.man));
    uint16_t maxf = uint16_t(sign | ((expMax - 1) << f.man) | ((1 << f.man) - 1));
    if (r == Rnd::Rz) return maxf;
    if (r == Rnd::Rm) return neg ? inf : maxf;
    if (r == Rnd::Rp) return neg ? maxf : inf;
    return inf;
  }
  return uint16_t(sign | (e << f.man) | uint16_t(kept - (I128(1) << f.man)));
}

// A finite 16-bit value as (neg, integer mantissa, exponent of its last bit).
struct Exact {
  bool neg;
  I128 mag;
  int scale;
};
Exact decode(const Fmt& f, uint16_t h) {
  int e = (h >> f.man) & ((1 << f.exp) - 1);
  I128 m = h & ((1 << f.man) - 1);
  if (e != 0) m |= I128(1) << f.man;
  if (m == 0) return {bool(h & 0x8000), 0, 0};  // zeros get a neutral scale
  return {bool(h & 0x8000), m, (e == 0 ? 1 : e) - f.bias - f.man};
}
bool isNan(const Fmt& f, uint16_t h) {
  return ((h >> f.man) & ((1 << f.exp) - 1)) == (1 << f.exp) - 1 && (h & ((1 << f.man) - 1));
}
bool isInf(const Fmt& f, uint16_t h) {
  return ((h >> f.man) & ((1 << f.exp) - 1)) == (1 << f.exp) - 1 && !(h & ((1 << f.man) - 1));
}
double value(const Fmt& f, uint16_t h) {
  if (isNan(f, h)) return NAN;
  if (isInf(f, h)) return h & 0x8000 ? -INFINITY : INFINITY;
  Exact x = decode(f, h);
  double v = std::ldexp(double(x.mag), x.scale);
  return x.neg ? -v : v;
}

// Signed fixed-point value at a common scale.
I128 fixed(const Exact& x, int scale) {
  if (x.mag == 0) return 0;
  I128 v = x.mag << (x.scale - scale);
  return x.neg ? -v : v;
}

enum class HOp { Add, Sub, Mul, Fma };

// a op b (+ c): special values through IEEE double rules, finite ones exactly.
uint16_t refArith(const Fmt& f, HOp op, uint16_t a, uint16_t b, uint16_t c, Rnd r) {
  if (isNan(f, a) || isNan(f, b) || (op == HOp::Fma && isNan(f, c))) return 0x7fff;
  bool special = isInf(f, a) || isInf(f, b) || (op == HOp::Fma && isInf(f, c));
  if (special) {
    double x = value(f, a), y = value(f, b), z = value(f, c);
    double v = op == HOp::Add ? x + y : op == HOp::Sub ? x - y : op == HOp::Mul ? x * y : x * y + z;
    if (std::isnan(v)) return 0x7fff;
    return uint16_t((v < 0 ? 0x8000 : 0) | (((1 << f.exp) - 1) << f.man));
  }
  Exact x = decode(f, a), y = decode(f, b), z = decode(f, c);
  // The finest bit of the exact result; the operands' exponents are within 100 of each other.
  int base = op == HOp::Add || op == HOp::Sub ? std::min(x.scale, y.scale)
             : op == HOp::Mul                 ? x.scale + y.scale
                                              : std::min(x.scale + y.scale, z.scale);
  I128 v;
  if (op == HOp::Mul || op == HOp::Fma) {
    I128 p = (x.mag * y.mag) << ((x.scale + y.scale) - base);
    v = (x.neg != y.neg) ? -p : p;
    if (op == HOp::Fma) v += fixed(z, base);
  } else {
    v = fixed(x, base) + (op == HOp::Add ? fixed(y, base) : -fixed(y, base));
  }
  bool neg = v < 0;
  if (v == 0) {
    // Exact zero: +0 except -0 (+) -0, or -0 under rounding down.
    bool negZero;
    if (op == HOp::Add || op == HOp::Sub) {
      bool yNeg = op == HOp::Add ? y.neg : !y.neg;
      negZero = (x.mag == 0 && y.mag == 0) ? (x.neg && yNeg) : r == Rnd::Rm;
    } else if (op == HOp::Mul) {
      negZero = x.neg != y.neg;
    } else {
      bool pNeg = x.neg != y.neg;
      bool pZero = x.mag == 0 || y.mag == 0;
      negZero = (pZero && z.mag == 0) ? (pNeg && z.neg) : r == Rnd::Rm;
    }
    return negZero ? 0x8000 : 0;
  }
  return refRound(f, neg, neg ? -v : v, base, r);
}

// Zeros, ones, infinities, NaN and random values with exponents within maxExpSpread of 1.0; for
// f16 also the smallest and largest subnormals and the largest finite value (bf16's extremes are
// too far apart for the fixed-point reference and are tested separately).
std::vector<uint16_t> halves(const Fmt& f, size_t n, uint32_t seed, int maxExpSpread) {
  std::vector<uint16_t> v;
  const uint16_t one = uint16_t(f.bias << f.man);
  const uint16_t inf = uint16_t(((1 << f.exp) - 1) << f.man);
  for (uint16_t s : {uint16_t(0), uint16_t(0x8000)}) {
    for (uint16_t x : {uint16_t(0), one, uint16_t(one + 1), inf}) v.push_back(uint16_t(s | x));
    if (f.exp == 5)
      for (uint16_t x : {uint16_t(1), uint16_t((1 << f.man) - 1), uint16_t(inf - 1)})
        v.push_back(uint16_t(s | x));
  }
  v.push_back(0x7fff);  // NaN
  std::mt19937 rng(seed);
  while (v.size() < n) {
    int e = f.bias + int(rng() % (2 * maxExpSpread + 1)) - maxExpSpread;
    e = std::clamp(e, 0, (1 << f.exp) - 2);
    v.push_back(uint16_t((rng() & 0x8000) | (e << f.man) | (rng() & ((1 << f.man) - 1))));
  }
  return v;
}

// Every pair (and a third operand) of `vals`, packed for f16x2: the low half holds vals[i], the
// high half vals[j]; checks both halves of the result.
template <class Ref>
void checkPairs(const std::string& body, const std::vector<uint16_t>& vals, Ref ref) {
  Rows rows;
  std::mt19937 rng(99);
  for (size_t i = 0; i < vals.size() && rows.size() < 1024; ++i)
    for (size_t j = 0; j < vals.size() && rows.size() < 1024; ++j) {
      uint16_t a0 = vals[i], b0 = vals[j], a1 = vals[(i + j) % vals.size()],
               b1 = vals[(i * 7 + 3) % vals.size()];
      uint16_t c0 = vals[rng() % vals.size()], c1 = vals[rng() % vals.size()];
      rows.push_back({uint64_t(a0) | uint64_t(a1) << 16, uint64_t(b0) | uint64_t(b1) << 16,
                      uint64_t(c0) | uint64_t(c1) << 16});
    }
  auto out = eval(body, rows);
  for (size_t k = 0; k < rows.size(); ++k)
    for (int h = 0; h < 2; ++h) {
      uint16_t a = uint16_t(rows[k][0] >> (16 * h)), b = uint16_t(rows[k][1] >> (16 * h)),
               c = uint16_t(rows[k][2] >> (16 * h));
      uint16_t want = ref(a, b, c);
      uint16_t got = uint16_t(out[k].o32 >> (16 * h));
      ASSERT_EQ(got, want) << body << std::hex << " a=0x" << a << " b=0x" << b << " c=0x" << c;
    }
}

// add, sub, mul, fma on packed pairs of `f` (type suffix `t`), against the exact reference.
void checkArithmeticPairs(const Fmt& f, const std::string& t, const std::vector<uint16_t>& vals) {
  const std::pair<const char*, HOp> ops[] = {
      {"add.rn", HOp::Add}, {"sub", HOp::Sub}, {"mul.rn", HOp::Mul}, {"fma.rn", HOp::Fma}};
  for (const auto& entry : ops) {
    const HOp op = entry.second;
    const std::string body = std::string(entry.first) + "." + t + " %o32, %a32, %b32" +
                             (op == HOp::Fma ? ", %c32;" : ";");
    checkPairs(body, vals, [&](uint16_t a, uint16_t b, uint16_t c) {
      return refArith(f, op, a, b, c, Rnd::Rn);
    });
  }
}

TEST(HalfPrecision, F16x2ArithmeticIsCorrectlyRounded) {
  checkArithmeticPairs(kF16, "f16x2", halves(kF16, 40, 5, 14));
}

TEST(HalfPrecision, Bf16x2ArithmeticIsCorrectlyRounded) {
  checkArithmeticPairs(kBF16, "bf16x2", halves(kBF16, 40, 6, 30));
}

TEST(HalfPrecision, Bf16ExtremesOverflowAndUnderflow) {
  // Largest finite * 2 overflows; the smallest subnormal / 2 is a tie that rounds to even (zero);
  // 1.5 * smallest subnormal rounds up to 2 * smallest.
  EXPECT_EQ(eval1("mul.rn.bf16x2 %o32, %a32, %b32;", 0x7f7fff7fu, 0x40004000u).o32, 0x7f80ff80u);
  EXPECT_EQ(eval1("mul.rn.bf16x2 %o32, %a32, %b32;", 0x00010001u, 0x3f003fc0u).o32, 0x00000002u);
  EXPECT_EQ(eval1("add.rn.bf16x2 %o32, %a32, %b32;", 0x7f7f0001u, 0x7f7f0001u).o32, 0x7f800002u);
}

// Scalar forms through 16-bit registers.
std::string scalar(const std::string& op, int nsrc) {
  std::string s =
      "cvt.u16.u32 %h1, %a32; cvt.u16.u32 %h2, %b32; cvt.u16.u32 %h3, %c32;\n" + op + " %h0, %h1";
  if (nsrc > 1) s += ", %h2";
  if (nsrc > 2) s += ", %h3";
  return s + ";\ncvt.u32.u16 %o32, %h0;";
}

uint16_t flushSub(const Fmt& f, uint16_t h) {
  return ((h >> f.man) & ((1 << f.exp) - 1)) == 0 ? uint16_t(h & 0x8000) : h;
}

template <class Ref>
void checkScalar(const std::string& body, const std::vector<uint16_t>& vals, Ref ref) {
  Rows rows;
  std::mt19937 rng(17);
  for (size_t i = 0; i < vals.size() && rows.size() < 1024; ++i)
    for (size_t j = 0; j < vals.size() && rows.size() < 1024; ++j)
      rows.push_back({vals[i], vals[j], vals[rng() % vals.size()]});
  auto out = eval(body, rows);
  for (size_t k = 0; k < rows.size(); ++k) {
    uint16_t a = uint16_t(rows[k][0]), b = uint16_t(rows[k][1]), c = uint16_t(rows[k][2]);
    ASSERT_EQ(out[k].o32, uint32_t(ref(a, b, c)))
        << body << std::hex << " a=0x" << a << " b=0x" << b << " c=0x" << c;
  }
}

uint16_t sat(const Fmt& f, uint16_t h) {
  if (isNan(f, h) || (h & 0x8000)) return 0;
  return value(f, h) > 1.0 ? uint16_t(f.bias << f.man) : h;
}
uint16_t relu(const Fmt& f, uint16_t h) {
  if (isNan(f, h)) return 0x7fff;
  return (h & 0x8000) ? 0 : h;
}

TEST(HalfPrecision, ScalarFormsWithFtzSatAndRelu) {
  auto vals = halves(kF16, 32, 8, 15);
  checkScalar(scalar("add.rn.ftz.f16", 2), vals, [](uint16_t a, uint16_t b, uint16_t) {
    return flushSub(kF16,
                    refArith(kF16, HOp::Add, flushSub(kF16, a), flushSub(kF16, b), 0, Rnd::Rn));
  });
  checkScalar(scalar("mul.sat.f16", 2), vals, [](uint16_t a, uint16_t b, uint16_t) {
    return sat(kF16, refArith(kF16, HOp::Mul, a, b, 0, Rnd::Rn));
  });
  checkScalar(scalar("fma.rn.relu.f16", 3), vals, [](uint16_t a, uint16_t b, uint16_t c) {
    return relu(kF16, refArith(kF16, HOp::Fma, a, b, c, Rnd::Rn));
  });
  auto bvals = halves(kBF16, 32, 9, 20);
  checkScalar(scalar("fma.rn.relu.bf16", 3), bvals, [](uint16_t a, uint16_t b, uint16_t c) {
    return relu(kBF16, refArith(kBF16, HOp::Fma, a, b, c, Rnd::Rn));
  });
  checkScalar(scalar("sub.rn.bf16", 2), bvals, [](uint16_t a, uint16_t b, uint16_t) {
    return refArith(kBF16, HOp::Sub, a, b, 0, Rnd::Rn);
  });
  checkScalar(scalar("neg.f16", 1), vals,
              [](uint16_t a, uint16_t, uint16_t) { return uint16_t(a ^ 0x8000); });
  checkScalar(scalar("abs.bf16", 1), bvals,
              [](uint16_t a, uint16_t, uint16_t) { return uint16_t(a & 0x7fff); });
}

// min/max: NaN loses unless .NaN; -0 < +0; .relu clamps at +0.
uint16_t refMinMax(const Fmt& f, uint16_t a, uint16_t b, bool isMin, bool nanProp, bool rl) {
  uint16_t r;
  if (isNan(f, a) || isNan(f, b)) {
    r = (nanProp || (isNan(f, a) && isNan(f, b))) ? 0x7fff : isNan(f, a) ? b : a;
  } else {
    double x = value(f, a), y = value(f, b);
    if (x == y)
      r = isMin ? ((a & 0x8000) ? a : b) : ((a & 0x8000) ? b : a);
    else
      r = (isMin ? x < y : x > y) ? a : b;
  }
  return rl ? relu(f, r) : r;
}

TEST(HalfPrecision, MinMaxNaNAndSignedZero) {
  auto vals = halves(kF16, 24, 10, 6);
  auto bvals = halves(kBF16, 24, 11, 6);
  for (bool isMin : {true, false})
    for (bool nan : {false, true})
      for (bool rl : {false, true}) {
        std::string m =
            std::string(isMin ? "min" : "max") + (nan ? ".NaN" : "") + (rl ? ".relu" : "");
        checkPairs(m + ".f16x2 %o32, %a32, %b32;", vals, [&](uint16_t a, uint16_t b, uint16_t) {
          return refMinMax(kF16, a, b, isMin, nan, rl);
        });
        checkScalar(scalar(m + ".bf16", 2), bvals, [&](uint16_t a, uint16_t b, uint16_t) {
          return refMinMax(kBF16, a, b, isMin, nan, rl);
        });
      }
}

// ---- comparisons -------------------------------------------------------------------------------

TEST(HalfPrecision, SetpComparesAsRealNumbers) {
  auto vals = halves(kF16, 24, 12, 4);
  const char* ops[] = {"eq",  "ne",  "lt",  "le",  "gt",  "ge",  "equ",
                       "neu", "ltu", "leu", "gtu", "geu", "num", "nan"};
  auto cmp = [](const std::string& op, double x, double y) {
    bool un = std::isnan(x) || std::isnan(y);
    if (op == "num") return !un;
    if (op == "nan") return un;
    bool u = op.size() == 3;
    std::string base = op.substr(0, 2);
    bool r = base == "eq"   ? x == y
             : base == "ne" ? x != y
             : base == "lt" ? x < y
             : base == "le" ? x <= y
             : base == "gt" ? x > y
                            : x >= y;
    return un ? u : r;
  };
  for (const char* op : ops) {
    std::string o = op;
    // Both halves: p (lower) in bit 0 and q (upper) in bit 1.
    checkPairs("setp." + o +
                   ".f16x2 %p1|%p2, %a32, %b32; selp.u32 %r1, 1, 0, %p1;"
                   " selp.u32 %r2, 0x10000, 0, %p2; or.b32 %o32, %r1, %r2;",
               vals, [&](uint16_t a, uint16_t b, uint16_t) {
                 return uint16_t(cmp(o, value(kF16, a), value(kF16, b)));
               });
    checkScalar(
        scalar("mov.b16", 1) + " setp." + o + ".bf16 %p1, %h1, %h2; selp.u32 %o32, 1, 0, %p1;",
        halves(kBF16, 16, 13, 3), [&](uint16_t a, uint16_t b, uint16_t) {
          return uint16_t(cmp(o, value(kBF16, a), value(kBF16, b)));
        });
    // set writes 1.0 in a floating-point result type and all ones in an integer one; with
    // packed operands, in each half (nvcc's cuda_fp16 math functions use these forms).
    checkPairs("set." + o + ".f16x2.f16x2 %o32, %a32, %b32;", vals,
               [&](uint16_t a, uint16_t b, uint16_t) {
                 return uint16_t(cmp(o, value(kF16, a), value(kF16, b)) ? 0x3c00 : 0);
               });
    checkPairs("set." + o + ".u32.bf16x2 %o32, %a32, %b32;", halves(kBF16, 16, 13, 3),
               [&](uint16_t a, uint16_t b, uint16_t) {
                 return uint16_t(cmp(o, value(kBF16, a), value(kBF16, b)) ? 0xffff : 0);
               });
    // Combined with a true predicate: .and keeps each half's result, .xor inverts it.
    checkPairs("mov.u32 %r3, 1; setp.ne.u32 %p3, %r3, 0; set." + o +
                   ".xor.bf16x2.bf16x2 %o32, %a32, %b32, %p3;",
               halves(kBF16, 16, 13, 3), [&](uint16_t a, uint16_t b, uint16_t) {
                 return uint16_t(cmp(o, value(kBF16, a), value(kBF16, b)) ? 0 : 0x3f80);
               });
    checkPairs("mov.u32 %r3, 1; setp.ne.u32 %p3, %r3, 0; set." + o +
                   ".and.f16x2.f16x2 %o32, %a32, %b32, %p3;",
               vals, [&](uint16_t a, uint16_t b, uint16_t) {
                 return uint16_t(cmp(o, value(kF16, a), value(kF16, b)) ? 0x3c00 : 0);
               });
    checkScalar(scalar("set." + o + ".f16.f16", 2), vals, [&](uint16_t a, uint16_t b, uint16_t) {
      return uint16_t(cmp(o, value(kF16, a), value(kF16, b)) ? 0x3c00 : 0);
    });
    checkScalar(scalar("set." + o + ".s16.bf16", 2), halves(kBF16, 16, 13, 3),
                [&](uint16_t a, uint16_t b, uint16_t) {
                  return uint16_t(cmp(o, value(kBF16, a), value(kBF16, b)) ? 0xffff : 0);
                });
  }
  // set with an f16 source writes all ones or 1.0f.
  EXPECT_EQ(eval1("cvt.u16.u32 %h1, %a32; cvt.u16.u32 %h2, %b32; set.lt.u32.f16 %o32, %h1, %h2;",
                  0xbc00, 0x3c00)
                .o32,
            0xffffffffu);
  EXPECT_EQ(eval1("cvt.u16.u32 %h1, %a32; cvt.u16.u32 %h2, %b32; set.gt.f32.f16 %fo, %h1, %h2;",
                  0xbc00, 0x3c00)
                .fo,
            0.0f);
}

// ---- conversions -------------------------------------------------------------------------------

uint16_t refFromFloat(const Fmt& f, uint32_t x, Rnd r) {
  bool neg = x >> 31;
  int e = (x >> 23) & 0xff;
  uint32_t m = x & 0x7fffff;
  if (e == 0xff) return m ? 0x7fff : uint16_t((neg ? 0x8000 : 0) | (((1 << f.exp) - 1) << f.man));
  I128 mag = e ? (m | 0x800000) : m;
  return refRound(f, neg, mag, (e ? e : 1) - 150, r);
}

// Widening a 16-bit NaN gives the canonical NaN, whatever its sign, payload or quietness (a
// signalling f16 NaN must not stay signalling); other values widen exactly.
TEST(HalfPrecision, WideningANaNGivesTheCanonicalNaN) {
  for (uint32_t h : {0x7fffu, 0xfe00u, 0x7c01u, 0x7e00u}) {
    const std::string load = "cvt.u16.u32 %h0, %a32; ";
    EXPECT_EQ(eval1(load + "cvt.f32.f16 %fo, %h0; mov.b32 %o32, %fo;", h).o32, 0x7fffffffu)
        << std::hex << h;
    EXPECT_EQ(eval1(load + "cvt.f64.f16 %do, %h0; mov.b64 %o, %do;", h).o, 0x7fffffffffffffffull)
        << std::hex << h;
  }
  for (uint32_t b : {0x7f81u, 0xffc1u}) {
    EXPECT_EQ(eval1("cvt.u16.u32 %h0, %a32; cvt.f32.bf16 %fo, %h0; mov.b32 %o32, %fo;", b).o32,
              0x7fffffffu)
        << std::hex << b;
  }
  EXPECT_EQ(eval1("cvt.u16.u32 %h0, %a32; cvt.f32.f16 %fo, %h0; mov.b32 %o32, %fo;", 0xfc00u).o32,
            0xff800000u);  // -inf stays -inf
  EXPECT_EQ(eval1("cvt.u16.u32 %h0, %a32; cvt.f32.f16 %fo, %h0; mov.b32 %o32, %fo;", 0x0001u).o32,
            0x33800000u);  // the smallest subnormal, 2^-24
}

TEST(HalfPrecision, CvtFromF32InEveryRoundingMode) {
  std::vector<uint32_t> fs = {0u,          0x80000000u, 0x3f800000u, 0x3f800001u, 0x3f801000u,
                              0x3f802000u, 0x3f803000u, 0x477fe000u, 0x477ff000u, 0x47800000u,
                              0x7f7fffffu, 0x7f800000u, 0xff800000u, 0x7fc00000u, 0x33800000u,
                              0x33000000u, 0x33000001u, 0x387fc000u, 0x00000001u, 0x80000001u};
  std::mt19937 rng(41);
  for (int i = 0; i < 200; ++i) fs.push_back(rng());
  for (int i = 0; i < 200; ++i) fs.push_back((rng() & 0x8fffffffu) | 0x30000000u);  // near range
  Rows rows;
  for (uint32_t f : fs) rows.push_back({f, 0, 0});
  const char* names[] = {"rn", "rz", "rm", "rp"};
  for (int m = 0; m < 4; ++m) {
    auto outH =
        eval(std::string("cvt.") + names[m] + ".f16.f32 %h0, %fa; cvt.u32.u16 %o32, %h0;", rows);
    auto outB =
        eval(std::string("cvt.") + names[m] + ".bf16.f32 %h0, %fa; cvt.u32.u16 %o32, %h0;", rows);
    for (size_t i = 0; i < rows.size(); ++i) {
      EXPECT_EQ(outH[i].o32, refFromFloat(kF16, fs[i], Rnd(m)))
          << names[m] << std::hex << " " << fs[i];
      EXPECT_EQ(outB[i].o32, refFromFloat(kBF16, fs[i], Rnd(m)))
          << names[m] << std::hex << " " << fs[i];
    }
  }
  // Pack two floats: a goes to the upper half, b to the lower; .relu and .satfinite.
  EXPECT_EQ(eval1("cvt.rn.f16x2.f32 %o32, %fa, %fb;", 0x3f800000u, 0xc0000000u).o32, 0x3c00c000u);
  EXPECT_EQ(eval1("cvt.rn.relu.f16x2.f32 %o32, %fa, %fb;", 0x3f800000u, 0xc0000000u).o32,
            0x3c000000u);
  EXPECT_EQ(eval1("cvt.rn.satfinite.f16x2.f32 %o32, %fa, %fb;", 0x7f800000u, 0xc8000000u).o32,
            0x7bfffbffu);
  EXPECT_EQ(eval1("cvt.rn.bf16x2.f32 %o32, %fa, %fb;", 0x3f808000u, 0x7fc00000u).o32,
            0x3f807fffu);  // a tie rounds to even; NaN is canonical
  // From f64 and integers, with directed rounding: 2049 is between two f16 values.
  EXPECT_EQ(eval1("cvt.rz.f16.f64 %h0, %da; cvt.u32.u16 %o32, %h0;", bits(2049.0)).o32, 0x6800u);
  EXPECT_EQ(eval1("cvt.rp.f16.f64 %h0, %da; cvt.u32.u16 %o32, %h0;", bits(2049.0)).o32, 0x6801u);
  EXPECT_EQ(eval1("cvt.rn.f16.s32 %h0, %a32; cvt.u32.u16 %o32, %h0;", uint32_t(-2049)).o32,
            0xe800u);
  EXPECT_EQ(eval1("cvt.rm.f16.s32 %h0, %a32; cvt.u32.u16 %o32, %h0;", uint32_t(-2049)).o32,
            0xe801u);
  EXPECT_EQ(eval1("cvt.rn.bf16.u64 %h0, %a64; cvt.u32.u16 %o32, %h0;", (1ull << 63) + 1).o32,
            0x5f00u);
  EXPECT_EQ(eval1("cvt.rz.f16.u32 %h0, %a32; cvt.u32.u16 %o32, %h0;", 100000).o32, 0x7bffu);
}

TEST(HalfPrecision, CvtOneValueWithReluAndSatfinite) {
  std::vector<uint32_t> xs = {0u,          0x80000000u, 0x7f800000u, 0xff800000u, 0x7fc00000u,
                              0x477fe000u, 0x477ff000u, 0xc7800000u, 0x7f7fffffu, 0xff7fffffu,
                              0x3f800000u, 0xbf800000u, 0x33800000u, 0xb3800001u};
  std::mt19937 rng(181);
  while (xs.size() < 300) xs.push_back(rng());
  Rows rows;
  for (uint32_t x : xs) rows.push_back({x, 0, 0});
  for (const Fmt* f : {&kF16, &kBF16})
    for (const char* rnd : {"rn", "rz"})
      for (int mode = 1; mode < 4; ++mode) {  // 1 relu, 2 satfinite, 3 both
        const bool relu = mode & 1, sat = mode & 2;
        const std::string body = std::string("cvt.") + rnd + (relu ? ".relu" : "") +
                                 (sat ? ".satfinite" : "") + (f == &kF16 ? ".f16" : ".bf16") +
                                 ".f32 %h1, %fa;\ncvt.u32.u16 %o32, %h1;";
        auto out = eval(body, rows);
        const uint16_t inf = uint16_t(((1 << f->exp) - 1) << f->man);
        for (size_t i = 0; i < rows.size(); ++i) {
          uint16_t h = refFromFloat(*f, uint32_t(rows[i][0]), rnd[1] == 'n' ? Rnd::Rn : Rnd::Rz);
          if (sat && (h & 0x7fffu) == inf) h = uint16_t((h & 0x8000u) | (inf - 1));
          if (relu && isNan(*f, h)) h = 0x7fff;
          if (relu && !isNan(*f, h) && (h & 0x8000u)) h = 0;
          if (isNan(*f, h)) h = 0x7fff;
          EXPECT_EQ(out[i].o32, h) << body << " 0x" << std::hex << rows[i][0];
        }
      }
}

TEST(HalfPrecision, ApproximateEx2AndTanh) {
  // Points where the exact result is representable.
  EXPECT_EQ(eval1("ex2.approx.f16x2 %o32, %a32;", 0x3c000000u).o32, 0x40003c00u);  // 2^1, 2^0
  EXPECT_EQ(eval1("ex2.approx.f16x2 %o32, %a32;", 0xfc00bc00u).o32, 0x00003800u);  // 2^-inf, 2^-1
  EXPECT_EQ(eval1("ex2.approx.f16x2 %o32, %a32;", 0x4c007fffu).o32, 0x7c007fffu);  // 2^16, NaN
  EXPECT_EQ(eval1("ex2.approx.ftz.bf16x2 %o32, %a32;", 0x40400000u).o32, 0x41003f80u);  // 2^3
  EXPECT_EQ(eval1("tanh.approx.f16x2 %o32, %a32;", 0x80004900u).o32, 0x80003c00u);  // -0, tanh(10)
  EXPECT_EQ(eval1("tanh.approx.bf16x2 %o32, %a32;", 0xc1200000u).o32, 0xbf800000u);
  // Within the format's rounding of the true value elsewhere.
  auto out = eval1("ex2.approx.f16x2 %o32, %a32;", 0x3800u);  // 2^0.5
  EXPECT_NEAR(value(kF16, uint16_t(out.o32)), std::sqrt(2.0), 1e-3);
}

// ---- atomics on f16/bf16 -----------------------------------------------------------------------

// 32 lanes apply `op` to one shared word holding `init`, in lane order (docs/ptx-support.md);
// checks each lane's old value and the final word against a sequential reference.
void checkHalfAtomics(const std::string& op, const Fmt& f, uint16_t (*ref)(uint16_t, uint16_t),
                      uint32_t seed) {
  auto vals = halves(f, 64, seed, 3);
  Rows rows;
  const uint32_t init = 0x3c003c00u & (f.exp == 5 ? 0xffffffffu : 0u);
  for (int l = 0; l < 32; ++l)
    rows.push_back({uint32_t(vals[20 + l]) | uint32_t(vals[(l * 5) % 64]) << 16, 0, init});
  auto out = eval("{\n.shared .align 4 .b32 acc;\nst.shared.b32 [acc], %c32;\nbar.sync 0;\n" + op +
                      " %o32, [acc], %a32;\nbar.sync 0;\nld.shared.b32 %r1, [acc];\n"
                      "cvt.u64.u32 %o, %r1;\n}",
                  rows);
  uint32_t acc = init;
  for (int l = 0; l < 32; ++l) {
    EXPECT_EQ(out[l].o32, acc) << op << " lane " << l;
    uint32_t a = uint32_t(rows[l][0]);
    acc = uint32_t(ref(uint16_t(acc), uint16_t(a))) |
          uint32_t(ref(uint16_t(acc >> 16), uint16_t(a >> 16))) << 16;
  }
  EXPECT_EQ(out[0].o, acc) << op;
}

TEST(HalfPrecision, AtomicAddMinMaxOnPairs) {
  checkHalfAtomics(
      "atom.shared.add.noftz.f16x2", kF16,
      [](uint16_t a, uint16_t b) { return refArith(kF16, HOp::Add, a, b, 0, Rnd::Rn); }, 51);
  checkHalfAtomics(
      "atom.shared.add.noftz.bf16x2", kBF16,
      [](uint16_t a, uint16_t b) { return refArith(kBF16, HOp::Add, a, b, 0, Rnd::Rn); }, 52);
  checkHalfAtomics(
      "atom.shared.min.bf16x2", kBF16,
      [](uint16_t a, uint16_t b) { return refMinMax(kBF16, a, b, true, false, false); }, 53);
  checkHalfAtomics(
      "atom.shared.max.f16x2", kF16,
      [](uint16_t a, uint16_t b) { return refMinMax(kF16, a, b, false, false, false); }, 54);
}

TEST(AddressSpaces, IsspacepClassifiesGenericAddresses) {
  // A global pointer (the input row), and generic addresses made from a shared and a local
  // variable: each belongs to exactly one space.
  auto out = eval1(
      "{\n.shared .b32 sv;\n.local .b32 lv;\n.reg .b64 %g<3>;\nmov.u64 %g0, %addr;\n"
      "mov.u64 %g1, sv;\ncvta.shared.u64 %g1, %g1;\nmov.u64 %g2, lv;\ncvta.local.u64 %g2, %g2;\n"
      "isspacep.global %p1, %g0; isspacep.shared %p2, %g0; selp.u32 %r1, 1, 0, %p1; "
      "selp.u32 %r2, 2, 0, %p2;\n"
      "isspacep.shared %p1, %g1; isspacep.global %p2, %g1; selp.u32 %r3, 4, 0, %p1; "
      "selp.u32 %r4, 8, 0, %p2;\n"
      "isspacep.local %p1, %g2; isspacep.shared::cta %p2, %g2; selp.u32 %r5, 16, 0, %p1; "
      "selp.u32 %r6, 32, 0, %p2;\n"
      "or.b32 %o32, %r1, %r2; or.b32 %o32, %o32, %r3; or.b32 %o32, %o32, %r4; "
      "or.b32 %o32, %o32, %r5; or.b32 %o32, %o32, %r6;\n}",
      0);
  EXPECT_EQ(out.o32, 1u | 4u | 16u);
}

// ---- cp.async ----------------------------------------------------------------------------------

TEST(AsyncCopy, CpAsyncCopiesAndZeroFills) {
  const std::string body =
      "{\n.shared .align 16 .b8 buf[8192];\nmov.u32 %r1, buf;\nmad.lo.u32 %r2, %t, 8, %r1;\n"
      "cvt.u64.u32 %rd1, %r2;\n"
      "cp.async.ca.shared.global [%rd1], [%addr+8], 8, %c32;\n"
      "cp.async.commit_group;\ncp.async.wait_group 0;\nbar.sync 0;\n"
      "ld.shared.u64 %o, [%rd1];\n}";
  Rows rows;
  std::mt19937_64 rng(77);
  for (uint64_t n = 0; n < 40; ++n) rows.push_back({0, rng(), n % 10});
  for (ExecMode mode : {ExecMode::Functional, ExecMode::Timing}) {
    auto out = eval(body, rows, mode);
    for (size_t i = 0; i < rows.size(); ++i) {
      uint64_t n = std::min<uint64_t>(rows[i][2], 8);
      uint64_t want = n == 8 ? rows[i][1] : rows[i][1] & ((1ull << (8 * n)) - 1);
      EXPECT_EQ(out[i].o, want) << i;
    }
  }
  // 16-byte copies (.cg) need 16-byte aligned addresses.
  EXPECT_THROW(eval1("{\n.shared .align 16 .b8 b[64];\nmov.u64 %rd1, b;\n"
                     "cp.async.cg.shared.global [%rd1], [%addr+8], 16;\n}",
                     0),
               KernelFault);
  // A wait for a negative number of groups is malformed PTX, named at its line.
  try {
    eval1("{\ncp.async.wait_group -1;\n}", 0);
    ADD_FAILURE() << "wait_group -1 was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("group count"), std::string::npos) << e.what();
  }
}

TEST(Barriers, NumberAndThreadCountInRegisters) {
  // Each thread publishes its value, waits at the barrier, and reads the thread 32 lanes away
  // (in the other warp). The barrier's number (and count) come from registers, as nvcc -G and
  // cooperative groups write them; without a barrier the first warp would read zeros.
  const std::string exchange =
      "{\n.shared .align 8 .b8 buf[512];\nmov.u32 %r1, buf;\nmad.lo.u32 %r2, %t, 8, %r1;\n"
      "st.shared.u64 [%r2], %a64;\nWAIT\nxor.b32 %r3, %t, 32;\nmad.lo.u32 %r4, %r3, 8, %r1;\n"
      "ld.shared.u64 %o, [%r4];\n}";
  Rows rows;
  for (uint64_t t = 0; t < 64; ++t) rows.push_back({0x1000 + t, 64, 7});
  for (const char* wait : {"barrier.sync %c32;", "bar.sync %c32, %b32;", "barrier.sync 7, %b32;"})
    for (ExecMode mode : {ExecMode::Functional, ExecMode::Timing}) {
      std::string body = exchange;
      body.replace(body.find("WAIT"), 4, wait);
      auto out = eval(body, rows, mode);
      for (size_t t = 0; t < rows.size(); ++t) EXPECT_EQ(out[t].o, 0x1000 + (t ^ 32)) << wait;
    }
  // A number outside 0..15, or a count that is not a multiple of 32, faults when executed.
  EXPECT_THROW(eval1("barrier.sync %a32;", 16), KernelFault);
  EXPECT_THROW(eval1("barrier.sync 1, %a32;", 48), KernelFault);
}

// ---- device printf -----------------------------------------------------------------------------

TEST(DevicePrintf, VprintfFormatsEachThreadInOrder) {
  Device dev(platform());
  Module& m = dev.loadModuleFile(std::string(GPUSC_SOURCE_DIR) + "/tests/data/printf.ptx");
  DevPtr out = dev.malloc(16);
  dev.launch(m.kernel("k"), {1}, {3}, 0, KernelArgs().ptr(out));
  EXPECT_EQ(dev.printfOutput(),
            "thread 0 of 3:  0.00 ok\nthread 1 of 3:  1.50 ok\nthread 2 of 3:  3.00 ok\n");
  auto counts = dev.download<uint32_t>(out, 3);
  for (uint32_t n : counts) EXPECT_EQ(n, 4u);  // vprintf returns the number of arguments
  dev.launch(m.kernel("k"), {1}, {1}, 0, KernelArgs().ptr(out));  // appends
  EXPECT_EQ(dev.printfOutput().substr(dev.printfOutput().size() - 24), "thread 0 of 1:  0.00 ok\n");
}

// ---- device assert and warpSize ----------------------------------------------------------------

// nvcc's assert() calls the runtime's __assertfail: a passing assert costs nothing, a failing one
// prints CUDA's line (thread and block of the first failing lane) and faults the launch (the CUDA
// runtime's cudaErrorAssert), in both modes.
TEST(DeviceAssert, AFailingAssertPrintsCudasLineAndFaults) {
  for (ExecMode mode : {ExecMode::Functional, ExecMode::Timing}) {
    Device dev(platform(), mode);
    Module& m = dev.loadModuleFile(std::string(GPUSC_SOURCE_DIR) + "/tests/data/device_assert.ptx");
    std::vector<int32_t> v(300);
    for (int i = 0; i < 300; ++i) v[i] = i;
    const DevPtr dv = dev.upload(v);
    dev.launch(m.kernel("check_below"), {3}, {128}, 0, KernelArgs().ptr(dv).i32(300).i32(300));
    EXPECT_EQ(dev.printfOutput(), "");
    try {
      dev.launch(m.kernel("check_below"), {3}, {128}, 0, KernelArgs().ptr(dv).i32(300).i32(200));
      ADD_FAILURE() << "the assert did not fail";
    } catch (const KernelFault& e) {
      EXPECT_EQ(std::string(e.what()).rfind("assertion `v[i] < limit` failed (", 0), 0u)
          << e.what();
    }
    // Functional mode runs the blocks in order: element 200, thread 72 of block 1, fails first.
    // In timing mode the first to fail is whichever failing warp an SM reaches first.
    const std::string line =
        mode == ExecMode::Functional
            ? "block: [1,0,0], thread: [72,0,0] Assertion `v[i] < limit` failed.\n"
            : "Assertion `v[i] < limit` failed.\n";
    EXPECT_NE(dev.printfOutput().find(line), std::string::npos) << dev.printfOutput();
  }
}

// CUDA's warpSize is PTX's predefined constant WARP_SZ.
TEST(DeviceAssert, WarpSzIsTheWarpSize) {
  Device dev(platform());
  Module& m = dev.loadModuleFile(std::string(GPUSC_SOURCE_DIR) + "/tests/data/device_assert.ptx");
  const DevPtr out = dev.malloc(64 * 4);
  dev.launch(m.kernel("warp_size"), {1}, {64}, 0, KernelArgs().ptr(out));
  const auto got = dev.download<int32_t>(out, 64);
  for (int i = 0; i < 64; ++i) EXPECT_EQ(got[i], 32000 + i % 32) << i;
}

// ---- warp matrix instructions ------------------------------------------------------------------

// Runs `body` in one warp. Thread l starts with in[l][0..15] in %i0..%i15 (.b32) and the body
// leaves %o0..%o3, which are returned per thread.
std::vector<std::array<uint32_t, 4>> runWarp(const std::string& body,
                                             const std::vector<std::array<uint32_t, 16>>& in,
                                             ExecMode mode = ExecMode::Functional) {
  const std::string text = module(R"(
.visible .entry w(.param .u64 pin, .param .u64 pout)
{
  .reg .b32 %i<16>, %o<4>, %t, %v<8>;
  .reg .b64 %rd<6>;
  mov.u32 %t, %tid.x;
  ld.param.u64 %rd1, [pin];
  mul.wide.u32 %rd2, %t, 64;
  add.s64 %rd1, %rd1, %rd2;
  ld.global.v4.b32 {%i0, %i1, %i2, %i3}, [%rd1];
  ld.global.v4.b32 {%i4, %i5, %i6, %i7}, [%rd1+16];
  ld.global.v4.b32 {%i8, %i9, %i10, %i11}, [%rd1+32];
  ld.global.v4.b32 {%i12, %i13, %i14, %i15}, [%rd1+48];
)" + body + R"(
  ld.param.u64 %rd3, [pout];
  mul.wide.u32 %rd2, %t, 16;
  add.s64 %rd3, %rd3, %rd2;
  st.global.v4.b32 [%rd3], {%o0, %o1, %o2, %o3};
  ret;
}
)");
  Device dev(platform(), mode);
  Module& m = dev.loadModule(text, "warp.ptx");
  std::vector<uint32_t> flat;
  for (const auto& r : in) flat.insert(flat.end(), r.begin(), r.end());
  DevPtr din = dev.upload(flat);
  DevPtr dout = dev.malloc(32 * 16);
  dev.launch(m.kernel("w"), {1}, {32}, 0, KernelArgs().ptr(din).ptr(dout));
  auto raw = dev.download<uint32_t>(dout, 128);
  std::vector<std::array<uint32_t, 4>> out(32);
  for (int l = 0; l < 32; ++l)
    for (int i = 0; i < 4; ++i) out[l][i] = raw[l * 4 + i];
  return out;
}

enum class In { F16, BF16, TF32, S8 };

// The PTX ISA's fragment layouts (section "Matrix Fragments for mma.m16n8k*"), written out as
// the document states them.
struct Layout {
  int k;
  In type;
  // A: row and column of element i of thread `lane`.
  void a(int lane, int i, int& row, int& col) const {
    const int g = lane >> 2, t = lane % 4;
    if (type == In::TF32) {  // m16n8k8 .tf32
      row = (i == 0 || i == 2) ? g : g + 8;
      col = (i == 0 || i == 1) ? t : t + 4;
    } else if (type == In::S8) {  // m16n8k32 .s8
      row = (i < 4 || (i >= 8 && i < 12)) ? g : g + 8;
      col = i < 8 ? t * 4 + (i & 0x3) : t * 4 + (i & 0x3) + 16;
    } else if (k == 8) {  // m16n8k8 .f16/.bf16
      row = i < 2 ? g : g + 8;
      col = t * 2 + (i & 0x1);
    } else {  // m16n8k16 .f16/.bf16
      row = (i < 2 || (i >= 4 && i < 6)) ? g : g + 8;
      col = i < 4 ? t * 2 + (i & 0x1) : t * 2 + (i & 0x1) + 8;
    }
  }
  void b(int lane, int i, int& row, int& col) const {
    const int g = lane >> 2, t = lane % 4;
    col = g;
    if (type == In::TF32)
      row = i == 0 ? t : t + 4;
    else if (type == In::S8)
      row = i < 4 ? t * 4 + (i & 0x3) : t * 4 + (i & 0x3) + 16;
    else if (k == 8)
      row = t * 2 + (i & 0x1);
    else
      row = i < 2 ? t * 2 + (i & 0x1) : t * 2 + (i & 0x1) + 8;
  }
  static void c(int lane, int i, int& row, int& col) {
    row = i < 2 ? (lane >> 2) : (lane >> 2) + 8;
    col = (lane % 4) * 2 + (i & 0x1);
  }
  int perReg() const { return type == In::TF32 ? 1 : type == In::S8 ? 4 : 2; }
};

uint32_t encode(In t, int v) {  // a small integer in the input format
  switch (t) {
    case In::F16:
      return refRound(kF16, v < 0, v < 0 ? -v : v, 0, Rnd::Rn);
    case In::BF16:
      return refRound(kBF16, v < 0, v < 0 ? -v : v, 0, Rnd::Rn);
    case In::TF32:
      return bits(float(v)) | 0x00000fffu;  // tf32 ignores the low 13 bits
    case In::S8:
      return uint8_t(int8_t(v));
  }
  return 0;
}

// dHalf / cHalf: f16 accumulators (D in %o0, %o1; C in %i8, %i9), element i in half i % 2 of
// register i / 2.
void checkMma(const std::string& instr, const Layout& L, ExecMode mode = ExecMode::Functional,
              bool dHalf = false, bool cHalf = false) {
  int A[16][32], B[32][8], C[16][8];
  for (int r = 0; r < 16; ++r)
    for (int c = 0; c < L.k; ++c) A[r][c] = (r * 7 + c * 3) % 9 - 4;
  for (int r = 0; r < L.k; ++r)
    for (int c = 0; c < 8; ++c) B[r][c] = (r * 5 + c * 11) % 7 - 3;
  for (int r = 0; r < 16; ++r)
    for (int c = 0; c < 8; ++c) C[r][c] = r * 8 - c * 13;
  const bool isInt = L.type == In::S8;
  const int na = 16 * L.k / 32, nb = 8 * L.k / 32, per = L.perReg();
  const int width = 32 / per;
  const uint32_t fieldMask = width == 32 ? ~0u : (1u << width) - 1;
  std::vector<std::array<uint32_t, 16>> in(32);
  for (int l = 0; l < 32; ++l) {
    in[l].fill(0);
    for (int i = 0; i < na; ++i) {
      int r, c;
      L.a(l, i, r, c);
      in[l][i / per] |= (encode(L.type, A[r][c]) & fieldMask) << (width * (i % per));
    }
    for (int i = 0; i < nb; ++i) {
      int r, c;
      L.b(l, i, r, c);
      in[l][4 + i / per] |= (encode(L.type, B[r][c]) & fieldMask) << (width * (i % per));
    }
    for (int i = 0; i < 4; ++i) {
      int r, c;
      Layout::c(l, i, r, c);
      if (cHalf)
        in[l][8 + i / 2] |= uint32_t(encode(In::F16, C[r][c])) << (16 * (i % 2));
      else
        in[l][8 + i] = isInt ? uint32_t(C[r][c]) : bits(float(C[r][c]));
    }
  }
  auto out = runWarp(instr, in, mode);
  for (int l = 0; l < 32; ++l)
    for (int i = 0; i < 4; ++i) {
      int r, c;
      Layout::c(l, i, r, c);
      int want = C[r][c];
      for (int x = 0; x < L.k; ++x) want += A[r][x] * B[x][c];
      if (dHalf)
        EXPECT_EQ((out[l][i / 2] >> (16 * (i % 2))) & 0xffffu, encode(In::F16, want))
            << instr << " lane " << l << " element " << i;
      else
        EXPECT_EQ(out[l][i], isInt ? uint32_t(want) : bits(float(want)))
            << instr << " lane " << l << " element " << i;
    }
}

std::string regs(const char* prefix, int first, int n) {
  std::string s = "{";
  for (int i = 0; i < n; ++i)
    s += (i ? ", %" : "%") + std::string(prefix) + std::to_string(first + i);
  return s + "}";
}

TEST(WarpMatrix, MmaSyncFragmentsFollowThePtxLayouts) {
  auto mma = [](const std::string& shape, const std::string& types, int na, int nb) {
    return "mma.sync.aligned." + shape + ".row.col." + types + " " + regs("o", 0, 4) + ", " +
           regs("i", 0, na) + ", " + regs("i", 4, nb) + ", " + regs("i", 8, 4) + ";";
  };
  checkMma(mma("m16n8k16", "f32.f16.f16.f32", 4, 2), {16, In::F16});
  checkMma(mma("m16n8k16", "f32.bf16.bf16.f32", 4, 2), {16, In::BF16});
  checkMma(mma("m16n8k8", "f32.f16.f16.f32", 2, 1), {8, In::F16});
  checkMma(mma("m16n8k8", "f32.tf32.tf32.f32", 4, 2), {8, In::TF32});
  checkMma(mma("m16n8k32", "s32.s8.s8.s32", 4, 2), {32, In::S8});
  checkMma(mma("m16n8k16", "f32.f16.f16.f32", 4, 2), {16, In::F16}, ExecMode::Timing);
  // f16 accumulators: D, C or both.
  auto mmaH = [](const std::string& shape, const std::string& types, int na, int nb, int nd,
                 int nc) {
    return "mma.sync.aligned." + shape + ".row.col." + types + " " + regs("o", 0, nd) + ", " +
           regs("i", 0, na) + ", " + regs("i", 4, nb) + ", " + regs("i", 8, nc) + ";";
  };
  checkMma(mmaH("m16n8k16", "f16.f16.f16.f16", 4, 2, 2, 2), {16, In::F16}, ExecMode::Functional,
           true, true);
  checkMma(mmaH("m16n8k8", "f32.f16.f16.f16", 2, 1, 4, 2), {8, In::F16}, ExecMode::Functional,
           false, true);
  checkMma(mmaH("m16n8k16", "f16.f16.f16.f32", 4, 2, 2, 4), {16, In::F16}, ExecMode::Timing, true,
           false);
}

TEST(WarpMatrix, MmaSyncIntegerSaturation) {
  // Every product 127 * 127 and C = INT32_MAX - 5: wraps without .satfinite, clamps with it.
  std::vector<std::array<uint32_t, 16>> in(32);
  for (auto& r : in) {
    r.fill(0x7f7f7f7fu);
    for (int i = 8; i < 12; ++i) r[i] = 0x7ffffffau;
  }
  const std::string ops = " {%o0, %o1, %o2, %o3}, {%i0, %i1}, {%i4}, {%i8, %i9, %i10, %i11};";
  auto wrap = runWarp("mma.sync.aligned.m16n8k16.row.col.s32.s8.s8.s32" + ops, in);
  auto sat = runWarp("mma.sync.aligned.m16n8k16.row.col.satfinite.s32.s8.s8.s32" + ops, in);
  const int64_t sum = int64_t(0x7ffffffa) + 16 * 127 * 127;
  EXPECT_EQ(wrap[5][2], uint32_t(uint64_t(sum)));
  EXPECT_EQ(sat[5][2], 0x7fffffffu);
}

// ---- more mma shapes and types, movmatrix ------------------------------------------------------

// Like runWarp, with 32 input words per thread (%i0..%i31) and 8 output words (%o0..%o7).
std::vector<std::array<uint32_t, 8>> runWarpWide(const std::string& body,
                                                 const std::vector<std::array<uint32_t, 32>>& in,
                                                 ExecMode mode = ExecMode::Functional) {
  std::string loads;
  for (int i = 0; i < 8; ++i)
    loads +=
        "  ld.global.v4.b32 " + regs("i", 4 * i, 4) + ", [%rd1+" + std::to_string(16 * i) + "];\n";
  const std::string text = module(R"(
.visible .entry w(.param .u64 pin, .param .u64 pout)
{
  .reg .b32 %i<32>, %o<8>, %t;
  .reg .f64 %x<48>;
  .reg .b64 %rd<6>;
  mov.u32 %t, %tid.x;
  ld.param.u64 %rd1, [pin];
  mul.wide.u32 %rd2, %t, 128;
  add.s64 %rd1, %rd1, %rd2;
)" + loads + body + R"(
  ld.param.u64 %rd3, [pout];
  mul.wide.u32 %rd2, %t, 32;
  add.s64 %rd3, %rd3, %rd2;
  st.global.v4.b32 [%rd3], {%o0, %o1, %o2, %o3};
  st.global.v4.b32 [%rd3+16], {%o4, %o5, %o6, %o7};
  ret;
}
)");
  Device dev(platform(), mode);
  Module& m = dev.loadModule(text, "warp.ptx");
  std::vector<uint32_t> flat;
  for (const auto& r : in) flat.insert(flat.end(), r.begin(), r.end());
  DevPtr din = dev.upload(flat);
  DevPtr dout = dev.malloc(32 * 32);
  dev.launch(m.kernel("w"), {1}, {32}, 0, KernelArgs().ptr(din).ptr(dout));
  auto raw = dev.download<uint32_t>(dout, 256);
  std::vector<std::array<uint32_t, 8>> out(32);
  for (int l = 0; l < 32; ++l)
    for (int i = 0; i < 8; ++i) out[l][i] = raw[l * 8 + i];
  return out;
}

// An element type of the new mma forms: its width and how a small integer is encoded.
struct MmaElem {
  std::string name;  // e4m3 e5m2 s4 u4 b1 s8 u8 f64 tf32
  int bits() const {
    if (name == "s4" || name == "u4") return 4;
    if (name == "b1") return 1;
    if (name == "f64") return 64;
    if (name == "tf32") return 32;
    return 8;
  }
  int lo() const { return name[0] == 'u' ? 0 : name == "b1" ? 0 : -4; }
  int hi() const { return name == "b1" ? 1 : name == "u4" ? 9 : 4; }
  uint64_t encode(int v) const {
    if (name == "f64") return gpusc::test::bits(double(v));
    if (name == "tf32")
      return gpusc::test::bits(float(v)) | 0xfffu;  // tf32 ignores the low 13 bits
    if (name == "e4m3" || name == "e5m2") {
      const int mb = name == "e4m3" ? 3 : 2, bias = name == "e4m3" ? 7 : 15;
      if (v == 0) return 0;
      const int a = v < 0 ? -v : v;
      int e = 0;
      while ((a >> (e + 1)) != 0) ++e;  // a = 2^e * (1 + f)
      const int frac = ((a << mb) >> e) & ((1 << mb) - 1);
      return (v < 0 ? 0x80u : 0u) | uint32_t((e + bias) << mb) | uint32_t(frac);
    }
    return uint64_t(uint32_t(v)) & ((1ull << bits()) - 1);  // two's complement field
  }
};

// The PTX ISA's fragment layouts for these shapes, case by case as its figures give them
// (g = %laneid >> 2, t = %laneid % 4; e = elements per 32-bit register).
struct MmaForm {
  std::string shape, types;  // "m16n8k32", "f32.e4m3.e4m3.f32"
  int m, k;
  MmaElem a, b;
  std::string acc;  // f32, f16, s32, f64
  std::string b1op;
  void aPos(int lane, int i, int& row, int& col) const {
    const int g = lane >> 2, t = lane % 4, e = 32 / std::min(32, a.bits());
    if (a.name == "f64" || a.name == "tf32") {
      if (m == 8) {  // m8n8k4 .f64
        row = g;
        col = t;
      } else {  // m16n8k4: a0 row g, a1 row g+8; m16n8k8/k16: a0..: rows g, g+8, columns +4
        row = i % 2 ? g + 8 : g;
        col = t + 4 * (i / 2);
      }
      return;
    }
    if (m == 8) {
      row = g;
      col = t * e + i;
    } else if (k == 4 * e) {  // two registers: the first for row g, the second for row g+8
      row = i < e ? g : g + 8;
      col = t * e + i % e;
    } else {  // four registers: rows g, g+8, g, g+8; the last two 4e columns further
      row = (i / e) % 2 ? g + 8 : g;
      col = t * e + i % e + (i >= 2 * e ? 4 * e : 0);
    }
  }
  void bPos(int lane, int i, int& row, int& col) const {
    const int g = lane >> 2, t = lane % 4, e = 32 / std::min(32, b.bits());
    col = g;
    if (b.name == "f64" || b.name == "tf32")
      row = t + 4 * i;
    else
      row = t * e + i % e + (i >= e ? 4 * e : 0);
  }
  void cPos(int lane, int i, int& row, int& col) const {
    row = (lane >> 2) + (i >= 2 ? 8 : 0);
    col = (lane % 4) * 2 + i % 2;
  }
};

void checkMmaForm(const MmaForm& f, ExecMode mode = ExecMode::Functional) {
  const int na = f.m * f.k / 32, nb = 8 * f.k / 32, nc = f.m * 8 / 32;
  // Words per register and elements per register of A/B (f64: two words, one element).
  const int aPer = f.a.bits() >= 32 ? 1 : 32 / f.a.bits(),
            bPer = f.b.bits() >= 32 ? 1 : 32 / f.b.bits();
  const int wide = f.a.name == "f64" ? 2 : 1;
  const int ra = na / aPer, rb = nb / bPer;
  const bool accHalf = f.acc == "f16", accF64 = f.acc == "f64";
  const int rc = accHalf ? nc / 2 : nc, cWords = accF64 ? 2 : 1;
  std::vector<std::vector<int>> A(f.m, std::vector<int>(f.k)), B(f.k, std::vector<int>(8));
  int C[16][8];
  for (int r = 0; r < f.m; ++r)
    for (int c = 0; c < f.k; ++c) A[r][c] = f.a.lo() + (r * 7 + c * 3) % (f.a.hi() - f.a.lo() + 1);
  for (int r = 0; r < f.k; ++r)
    for (int c = 0; c < 8; ++c) B[r][c] = f.b.lo() + (r * 5 + c * 11) % (f.b.hi() - f.b.lo() + 1);
  for (int r = 0; r < 16; ++r)
    for (int c = 0; c < 8; ++c) C[r][c] = accHalf ? r - c : r * 8 - c * 13;
  // Words: A at 0, B after it, C after B.
  const int bAt = ra * wide, cAt = bAt + rb * wide;
  std::vector<std::array<uint32_t, 32>> in(32);
  for (int l = 0; l < 32; ++l) {
    in[l].fill(0);
    auto put = [&](int word0, int per, const MmaElem& el, int i, int v) {
      const uint64_t code = el.encode(v);
      if (el.bits() == 64) {
        in[l][word0 + 2 * i] = uint32_t(code);
        in[l][word0 + 2 * i + 1] = uint32_t(code >> 32);
      } else {
        in[l][word0 + i / per] |= uint32_t(code << (el.bits() * (i % per)));
      }
    };
    for (int i = 0; i < na; ++i) {
      int r, c;
      f.aPos(l, i, r, c);
      put(0, aPer, f.a, i, A[r][c]);
    }
    for (int i = 0; i < nb; ++i) {
      int r, c;
      f.bPos(l, i, r, c);
      put(bAt, bPer, f.b, i, B[r][c]);
    }
    for (int i = 0; i < nc; ++i) {
      int r, c;
      f.cPos(l, i, r, c);
      if (accHalf) {
        in[l][cAt + i / 2] |= uint32_t(refRound(kF16, C[r][c] < 0, std::abs(C[r][c]), 0, Rnd::Rn))
                              << (16 * (i % 2));
      } else if (accF64) {
        const uint64_t v = bits(double(C[r][c]));
        in[l][cAt + 2 * i] = uint32_t(v);
        in[l][cAt + 2 * i + 1] = uint32_t(v >> 32);
      } else {
        in[l][cAt + i] = f.acc == "s32" ? uint32_t(C[r][c]) : bits(float(C[r][c]));
      }
    }
  }
  // The instruction, with f64 registers assembled from word pairs.
  std::string pre, post, dRegs, aRegs, bRegs, cRegs;
  const int rd = accHalf ? nc / 2 : nc;
  if (f.a.name == "f64") {
    auto f64regs = [&](int first, int n, int word0, std::string& list) {
      std::vector<std::string> names;
      for (int j = 0; j < n; ++j) {
        const std::string x = "%x" + std::to_string(first + j);
        names.push_back(x);
        if (word0 >= 0)
          pre += "mov.b64 " + x + ", {%i" + std::to_string(word0 + 2 * j) + ", %i" +
                 std::to_string(word0 + 2 * j + 1) + "};\n";
      }
      list = "{";
      for (size_t j = 0; j < names.size(); ++j) list += (j ? ", " : "") + names[j];
      list += "}";
    };
    f64regs(0, ra, 0, aRegs);
    f64regs(10, rb, bAt, bRegs);
    f64regs(20, rc, cAt, cRegs);
    f64regs(30, rd, -1, dRegs);
    for (int j = 0; j < rd; ++j)
      post += "mov.b64 {%o" + std::to_string(2 * j) + ", %o" + std::to_string(2 * j + 1) + "}, %x" +
              std::to_string(30 + j) + ";\n";
  } else {
    aRegs = regs("i", 0, ra);
    bRegs = regs("i", bAt, rb);
    cRegs = regs("i", cAt, rc);
    dRegs = regs("o", 0, rd);
  }
  const std::string instr = "mma.sync.aligned." + f.shape + ".row.col" +
                            (f.b1op.empty() ? "" : "." + f.b1op + ".popc") + "." + f.types + " " +
                            dRegs + ", " + aRegs + ", " + bRegs + ", " + cRegs + ";\n";
  auto out = runWarpWide(pre + instr + post, in, mode);
  for (int l = 0; l < 32; ++l)
    for (int i = 0; i < nc; ++i) {
      int r, c;
      f.cPos(l, i, r, c);
      int64_t want = C[r][c];
      for (int x = 0; x < f.k; ++x) {
        const int u = A[r][x], v = B[x][c];
        want += f.b1op == "xor" ? (u ^ v) : f.b1op == "and" ? (u & v) : u * v;
      }
      uint64_t got, expect;
      if (accHalf) {
        got = (out[l][i / 2] >> (16 * (i % 2))) & 0xffffu;
        expect = refRound(kF16, want < 0, want < 0 ? -want : want, 0, Rnd::Rn);
      } else if (accF64) {
        got = out[l][2 * i] | uint64_t(out[l][2 * i + 1]) << 32;
        expect = bits(double(want));
      } else {
        got = out[l][i];
        expect = f.acc == "s32" ? uint32_t(want) : bits(float(want));
      }
      EXPECT_EQ(got, expect) << instr << " lane " << l << " element " << i;
    }
  (void)cWords;
}

TEST(WarpMatrix, Fp8SubByteAndSingleBitMma) {
  const MmaElem e4{"e4m3"}, e5{"e5m2"}, s4{"s4"}, u4{"u4"}, s8{"s8"}, u8{"u8"}, b1{"b1"};
  checkMmaForm({"m16n8k32", "f32.e4m3.e4m3.f32", 16, 32, e4, e4, "f32", ""});
  checkMmaForm({"m16n8k32", "f32.e5m2.e4m3.f32", 16, 32, e5, e4, "f32", ""});
  checkMmaForm({"m16n8k32", "f16.e4m3.e5m2.f16", 16, 32, e4, e5, "f16", ""});
  checkMmaForm({"m16n8k32", "s32.s4.s4.s32", 16, 32, s4, s4, "s32", ""});
  checkMmaForm({"m16n8k64", "s32.u4.s4.s32", 16, 64, u4, s4, "s32", ""});
  checkMmaForm({"m8n8k32", "s32.s4.u4.s32", 8, 32, s4, u4, "s32", ""});
  checkMmaForm({"m8n8k16", "s32.s8.u8.s32", 8, 16, s8, u8, "s32", ""});
  checkMmaForm({"m16n8k128", "s32.b1.b1.s32", 16, 128, b1, b1, "s32", "xor"});
  checkMmaForm({"m16n8k256", "s32.b1.b1.s32", 16, 256, b1, b1, "s32", "and"});
  checkMmaForm({"m8n8k128", "s32.b1.b1.s32", 8, 128, b1, b1, "s32", "xor"});
  checkMmaForm({"m16n8k64", "s32.s4.s4.s32", 16, 64, s4, s4, "s32", ""}, ExecMode::Timing);
  // The ISA's restrictions: b1 needs its popc operation; fp8 has no m8n8 or k16 shapes here.
  auto bad = [](const std::string& instr) {
    try {
      runWarpWide(instr, std::vector<std::array<uint32_t, 32>>(32));
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  EXPECT_NE(bad("mma.sync.aligned.m8n8k128.row.col.s32.b1.b1.s32 {%o0, %o1}, {%i0}, {%i1}, "
                "{%i2, %i3};")
                .find(".xor.popc or .and.popc"),
            std::string::npos);
  EXPECT_NE(bad("mma.sync.aligned.m16n8k16.row.col.f32.e4m3.e4m3.f32 {%o0, %o1, %o2, %o3}, "
                "{%i0, %i1}, {%i2}, {%i4, %i5, %i6, %i7};")
                .find("unsupported PTX at warp.ptx:"),
            std::string::npos);
}

TEST(WarpMatrix, Float64AndTf32K4Mma) {
  const MmaElem f64{"f64"}, tf32{"tf32"};
  checkMmaForm({"m8n8k4", "f64.f64.f64.f64", 8, 4, f64, f64, "f64", ""});
  checkMmaForm({"m16n8k4", "f64.f64.f64.f64", 16, 4, f64, f64, "f64", ""});
  checkMmaForm({"m16n8k8", "f64.f64.f64.f64", 16, 8, f64, f64, "f64", ""});
  checkMmaForm({"m16n8k16", "f64.f64.f64.f64", 16, 16, f64, f64, "f64", ""});
  checkMmaForm({"m16n8k4", "f32.tf32.tf32.f32", 16, 4, tf32, tf32, "f32", ""});
  checkMmaForm({"m8n8k4", "f64.f64.f64.f64", 8, 4, f64, f64, "f64", ""}, ExecMode::Timing);
}

// mma.m8n8k4 with .f16 inputs: four independent 8x8x4 products, one per quad-pair, in the
// layouts of the PTX ISA's section "Matrix Fragments for mma.m8n8k4 with .f16 floating point
// type", written out here as it states them.
struct QuadPairLayout {
  bool aCol, bCol;
  // Which product lane l takes part in: lanes 0-3 and 16-19 in the first, 4-7 and 20-23 in the
  // second, 8-11 and 24-27 in the third, 12-15 and 28-31 in the fourth.
  static int product(int lane) { return (lane % 16) / 4; }
  void a(int lane, int i, int& row, int& col) const {
    if (!aCol) {  // row = %laneid % 4 (+ 4 from lane 16 on), col = i
      row = lane < 16 ? lane % 4 : lane % 4 + 4;
      col = i;
    } else {  // row = i % 4 (+ 4 from lane 16 on), col = %laneid % 4
      row = lane < 16 ? i % 4 : i % 4 + 4;
      col = lane % 4;
    }
  }
  void b(int lane, int i, int& row, int& col) const {
    if (!bCol) {  // row = %laneid % 4, col = i (+ 4 from lane 16 on)
      row = lane % 4;
      col = lane < 16 ? i : i + 4;
    } else {  // row = i, col = %laneid % 4 (+ 4 from lane 16 on)
      row = i;
      col = lane < 16 ? lane % 4 : lane % 4 + 4;
    }
  }
  static void c(bool half, int lane, int i, int& row, int& col) {
    if (half) {  // row = %laneid % 4 (+ 4 from lane 16 on), col = i
      row = lane < 16 ? lane % 4 : lane % 4 + 4;
      col = i;
    } else {  // X = (%laneid & 0b1) + (i & 0b10); col = (i & 0b100) + (%laneid & 0b10) + (i & 0b1)
      const int x = (lane & 1) + (i & 2);
      row = lane < 16 ? x : x + 4;
      col = (i & 4) + (lane & 2) + (i & 1);
    }
  }
};

// D = A * B + C for every quad-pair with small integers (exact in f16; the f16 results above
// 2048 round to nearest even); A in %i0, %i1, B in %i2, %i3, C from %i4, D from %o0.
void checkQuadPairMma(bool aCol, bool bCol, bool dHalf, bool cHalf, ExecMode mode) {
  const QuadPairLayout L{aCol, bCol};
  int A[4][8][4], B[4][4][8], C[4][8][8];
  for (int q = 0; q < 4; ++q) {
    for (int r = 0; r < 8; ++r)
      for (int k = 0; k < 4; ++k) A[q][r][k] = (r * 7 + k * 3 + q * 5) % 9 - 4;
    for (int k = 0; k < 4; ++k)
      for (int c = 0; c < 8; ++c) B[q][k][c] = (k * 5 + c * 11 + q * 3) % 7 - 3;
    for (int r = 0; r < 8; ++r)
      for (int c = 0; c < 8; ++c) C[q][r][c] = 2 * (q * 350 + r * 30 - c * 15 - 75);
  }
  std::vector<std::array<uint32_t, 32>> in(32);
  for (int l = 0; l < 32; ++l) {
    const int q = QuadPairLayout::product(l);
    in[l].fill(0);
    for (int i = 0; i < 4; ++i) {
      int r, c;
      L.a(l, i, r, c);
      in[l][i / 2] |= encode(In::F16, A[q][r][c]) << (16 * (i % 2));
      L.b(l, i, r, c);
      in[l][2 + i / 2] |= encode(In::F16, B[q][r][c]) << (16 * (i % 2));
    }
    for (int i = 0; i < 8; ++i) {
      int r, c;
      QuadPairLayout::c(cHalf, l, i, r, c);
      if (cHalf)
        in[l][4 + i / 2] |= encode(In::F16, C[q][r][c]) << (16 * (i % 2));
      else
        in[l][4 + i] = bits(float(C[q][r][c]));
    }
  }
  const int nd = dHalf ? 4 : 8, nc = cHalf ? 4 : 8;
  const std::string instr =
      std::string("mma.sync.aligned.m8n8k4.") + (aCol ? "col" : "row") + (bCol ? ".col" : ".row") +
      (dHalf ? ".f16" : ".f32") + ".f16.f16" + (cHalf ? ".f16 " : ".f32 ") + regs("o", 0, nd) +
      ", " + regs("i", 0, 2) + ", " + regs("i", 2, 2) + ", " + regs("i", 4, nc) + ";\n";
  auto out = runWarpWide(instr, in, mode);
  for (int l = 0; l < 32; ++l) {
    const int q = QuadPairLayout::product(l);
    for (int i = 0; i < 8; ++i) {
      int r, c;
      QuadPairLayout::c(dHalf, l, i, r, c);
      int want = C[q][r][c];
      for (int k = 0; k < 4; ++k) want += A[q][r][k] * B[q][k][c];
      if (dHalf)
        EXPECT_EQ((out[l][i / 2] >> (16 * (i % 2))) & 0xffffu, encode(In::F16, want))
            << instr << " lane " << l << " element " << i;
      else
        EXPECT_EQ(out[l][i], bits(float(want))) << instr << " lane " << l << " element " << i;
    }
  }
}

TEST(WarpMatrix, QuadPairM8n8k4F16Mma) {
  for (ExecMode mode : {ExecMode::Functional, ExecMode::Timing})
    for (int layouts = 0; layouts < 4; ++layouts)
      for (int acc = 0; acc < 4; ++acc)
        checkQuadPairMma(layouts & 1, layouts & 2, acc & 1, acc & 2, mode);
  // A malformed variant is an input error at its position; the other shapes keep .row.col.
  auto bad = [](const std::string& instr) {
    try {
      runWarpWide(instr, std::vector<std::array<uint32_t, 32>>(32));
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  const std::string wrongCount =
      bad("mma.sync.aligned.m8n8k4.col.row.f32.f16.f16.f32 {%o0, %o1, %o2, %o3}, {%i0, %i1}, "
          "{%i2, %i3}, {%i4, %i5, %i6, %i7, %i8, %i9, %i10, %i11};");
  EXPECT_NE(wrongCount.find("warp.ptx:"), std::string::npos) << wrongCount;
  EXPECT_NE(wrongCount.find("this mma takes {8}, {2}, {2} and {8} registers"), std::string::npos)
      << wrongCount;
  const std::string wrongA =
      bad("mma.sync.aligned.m8n8k4.row.row.f16.f16.f16.f16 {%o0, %o1, %o2, %o3}, {%i0}, {%i2, "
          "%i3}, {%i4, %i5, %i6, %i7};");
  EXPECT_NE(wrongA.find("warp.ptx:"), std::string::npos) << wrongA;
  EXPECT_NE(wrongA.find("this mma takes {4}, {2}, {2} and {4} registers"), std::string::npos)
      << wrongA;
  EXPECT_NE(bad("mma.sync.aligned.m16n8k8.col.col.f32.f16.f16.f32 {%o0, %o1, %o2, %o3}, {%i0, "
                "%i1}, {%i2}, {%i4, %i5, %i6, %i7};")
                .find(".row.col layout"),
            std::string::npos);
  EXPECT_NE(bad("mma.sync.aligned.m8n8k4.row.col.f32.bf16.bf16.f32 {%o0, %o1, %o2, %o3, %o4, "
                "%o5, %o6, %o7}, {%i0, %i1}, {%i2, %i3}, {%i4, %i5, %i6, %i7, %i8, %i9, %i10, "
                "%i11};")
                .find("unsupported PTX at warp.ptx:"),
            std::string::npos);
}

TEST(WarpMatrix, MovmatrixTransposesAnEightByEightTile) {
  std::vector<std::array<uint32_t, 16>> in(32);
  std::mt19937 rng(161);
  for (auto& r : in) {
    r.fill(0);
    r[0] = rng();
  }
  for (ExecMode mode : {ExecMode::Functional, ExecMode::Timing}) {
    auto out = runWarp("movmatrix.sync.aligned.m8n8.trans.b16 %o0, %i0;", in, mode);
    // Element (row, col) of the tile is half col % 2 of lane 4 row + col / 2.
    auto at = [&](int row, int col) {
      return (in[size_t(4 * row + col / 2)][0] >> (16 * (col % 2))) & 0xffffu;
    };
    for (int l = 0; l < 32; ++l) {
      const int row = l / 4, col = 2 * (l % 4);  // this lane's elements of the transpose
      EXPECT_EQ(out[size_t(l)][0], at(col, row) | at(col + 1, row) << 16) << l;
    }
  }
}

TEST(WarpMatrix, LdmatrixAndStmatrixMoveEightByEightTiles) {
  // Four 8x8 tiles of b16, element (j, r, c) = 64j + 8r + c: thread l writes row l (tile l/8,
  // row l%8) and supplies that row's address.
  const std::string body = R"(
  {
  .shared .align 16 .b16 src[256];
  .shared .align 16 .b16 dstm[256];
  .reg .b32 %w<4>, %base, %a, %b;
  mul.lo.u32 %v0, %t, 8;
  add.u32 %v1, %v0, 1; shl.b32 %v1, %v1, 16; or.b32 %w0, %v0, %v1;
  add.u32 %w1, %w0, 0x00020002; add.u32 %w2, %w0, 0x00040004; add.u32 %w3, %w0, 0x00060006;
  mov.u32 %base, src;
  mad.lo.u32 %a, %t, 16, %base;
  st.shared.v4.b32 [%a], {%w0, %w1, %w2, %w3};
  bar.sync 0;
  ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%o0, %o1, %o2, %o3}, [%a];
  ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%v4, %v5, %v6, %v7}, [%a];
  mov.u32 %base, dstm;
  mad.lo.u32 %b, %t, 16, %base;
  stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%b], {%o0, %o1, %o2, %o3};
  bar.sync 0;
  ld.shared.v4.b32 {%i0, %i1, %i2, %i3}, [%b];
  }
)";
  auto val = [](int j, int r, int c) { return uint32_t(64 * j + 8 * r + c); };
  std::vector<std::array<uint32_t, 16>> in(32);
  auto load = runWarp(body, in);
  auto timed = runWarp(body, in, ExecMode::Timing);
  for (int l = 0; l < 32; ++l) EXPECT_EQ(load[l], timed[l]) << l;
  auto trans =
      runWarp(body + "mov.b32 %o0, %v4; mov.b32 %o1, %v5; mov.b32 %o2, %v6; mov.b32 %o3, %v7;", in);
  auto stored =
      runWarp(body + "mov.b32 %o0, %i0; mov.b32 %o1, %i1; mov.b32 %o2, %i2; mov.b32 %o3, %i3;", in);
  for (int l = 0; l < 32; ++l) {
    const int g = l >> 2, t = l % 4;
    for (int j = 0; j < 4; ++j) {
      EXPECT_EQ(load[l][j], val(j, g, 2 * t) | val(j, g, 2 * t + 1) << 16) << l << " " << j;
      EXPECT_EQ(trans[l][j], val(j, 2 * t, g) | val(j, 2 * t + 1, g) << 16) << l << " " << j;
    }
    // stmatrix.trans of the plain fragments writes each tile transposed: row l%8 of tile l/8
    // holds column l%8 of the source tile.
    for (int w = 0; w < 4; ++w)
      EXPECT_EQ(stored[l][w], val(l / 8, 2 * w, l % 8) | val(l / 8, 2 * w + 1, l % 8) << 16)
          << l << " " << w;
  }
}

// wmma .m16n16k16: load A, B and C from memory in the given layouts and strides, multiply,
// store D; compared with the product computed here. The fragment layout is gpusc's own, so only
// the memory-to-memory result is defined.
void checkWmma(bool bf16, bool aCol, bool bCol, unsigned stride, ExecMode mode) {
  const std::string t = bf16 ? "bf16" : "f16";
  const std::string lay[2] = {"row", "col"};
  // f16 A and B fragments have eight registers, bf16 ones four (8 elements per thread).
  auto frag = [bf16](const char* p) {
    const int n = bf16 && (p[0] == 'a' || p[0] == 'b') ? 4 : 8;
    std::string s = "{";
    for (int i = 0; i < n; ++i) s += (i ? ", %" : "%") + std::string(p) + std::to_string(i);
    return s + "}";
  };
  const std::string st = std::to_string(stride);
  const std::string text = module(
      ".visible .entry w(.param .u64 pa, .param .u64 pb, .param .u64 pc, .param .u64 pd)\n{\n"
      "  .reg .b32 %a<8>, %b<8>;\n  .reg .f32 %c<8>, %d<8>;\n  .reg .b64 %rd<5>;\n"
      "  ld.param.u64 %rd1, [pa];\n  ld.param.u64 %rd2, [pb];\n  ld.param.u64 %rd3, [pc];\n"
      "  ld.param.u64 %rd4, [pd];\n"
      "  wmma.load.a.sync.aligned." +
      lay[aCol] + ".m16n16k16.global." + t + " " + frag("a") + ", [%rd1], " + st +
      ";\n  wmma.load.b.sync.aligned." + lay[bCol] + ".m16n16k16.global." + t + " " + frag("b") +
      ", [%rd2], " + st + ";\n  wmma.load.c.sync.aligned.row.m16n16k16.global.f32 " + frag("c") +
      ", [%rd3], " + st + ";\n  wmma.mma.sync.aligned." + lay[aCol] + "." + lay[bCol] +
      ".m16n16k16." + (bf16 ? "f32.bf16.bf16.f32 " : "f32.f32 ") + frag("d") + ", " + frag("a") +
      ", " + frag("b") + ", " + frag("c") +
      ";\n  wmma.store.d.sync.aligned.row.m16n16k16.global.f32 [%rd4], " + frag("d") + ", " + st +
      ";\n  ret;\n}\n");
  int A[16][16], B[16][16], C[16][16];
  for (int r = 0; r < 16; ++r)
    for (int c = 0; c < 16; ++c) {
      A[r][c] = (r * 5 + c * 3) % 11 - 5;
      B[r][c] = (r * 7 + c) % 9 - 4;
      C[r][c] = r - 2 * c;
    }
  const Fmt& f = bf16 ? kBF16 : kF16;
  std::vector<uint16_t> a(16 * stride, 0), b(16 * stride, 0);
  std::vector<float> cm(16 * stride, 0.0f);
  for (int r = 0; r < 16; ++r)
    for (int c = 0; c < 16; ++c) {
      a[aCol ? c * stride + r : r * stride + c] =
          refRound(f, A[r][c] < 0, std::abs(A[r][c]), 0, Rnd::Rn);
      b[bCol ? c * stride + r : r * stride + c] =
          refRound(f, B[r][c] < 0, std::abs(B[r][c]), 0, Rnd::Rn);
      cm[r * stride + c] = float(C[r][c]);
    }
  Device dev(platform(), mode);
  Module& m = dev.loadModule(text, "wmma.ptx");
  DevPtr pa = dev.upload(a), pb = dev.upload(b), pc = dev.upload(cm),
         pd = dev.malloc(16 * stride * 4);
  dev.launch(m.kernel("w"), {1}, {32}, 0, KernelArgs().ptr(pa).ptr(pb).ptr(pc).ptr(pd));
  auto d = dev.download<float>(pd, 16 * stride);
  for (int r = 0; r < 16; ++r)
    for (int c = 0; c < 16; ++c) {
      int want = C[r][c];
      for (int k = 0; k < 16; ++k) want += A[r][k] * B[k][c];
      EXPECT_EQ(d[r * stride + c], float(want)) << t << " " << r << "," << c;
    }
}

// nvcc's wmma kernels in the other shapes (tests/data/wmma_shapes.cu) against C++ products of
// small integers (exact in every format) and tf32-rounded inputs.
uint16_t f16Of(double v) {  // v is an integer that f16 holds exactly
  return refRound(kF16, v < 0, I128(std::fabs(v)), 0, Rnd::Rn);
}
uint16_t bf16Of(double v) { return refRound(kBF16, v < 0, I128(std::fabs(v)), 0, Rnd::Rn); }
// cvt.rna.tf32.f32 of a positive normal float, written with frexp: 11 significant bits, ties
// away from zero.
double tf32Rna(double v) {
  int e;
  const double m = std::frexp(v, &e);  // v = m * 2^e, m in [0.5, 1)
  return std::ldexp(std::floor(std::ldexp(m, 11) + 0.5), e - 11);
}
// What a tensor core reads of an f32 that was not converted: its 11 leading significant bits.
double tf32Trunc(double v) {
  int e;
  const double m = std::frexp(v, &e);
  return std::ldexp(std::floor(std::ldexp(m, 11)), e - 11);
}

void checkNvccWmma(ExecMode mode) {
  Device dev(platform(), mode);
  Module& m = dev.loadModuleFile(std::string(GPUSC_SOURCE_DIR) + "/tests/data/wmma_shapes.ptx");
  auto val = [](int r, int c, int s) { return double((r * 3 + c * 5 + s) % 7 - 3); };
  {  // m32n8k16, f16 accumulators: d (row-major, ld 8) = a (row-major) * b (col-major) + c
    std::vector<uint16_t> a(32 * 16), b(8 * 16), c(32 * 8);
    for (int r = 0; r < 32; ++r)
      for (int k = 0; k < 16; ++k) a[r * 16 + k] = f16Of(val(r, k, 0));
    for (int k = 0; k < 16; ++k)
      for (int n = 0; n < 8; ++n) b[n * 16 + k] = f16Of(val(k, n, 1));
    for (int r = 0; r < 32; ++r)
      for (int n = 0; n < 8; ++n) c[r * 8 + n] = f16Of(val(r, n, 2) * 10);
    DevPtr pa = dev.upload(a), pb = dev.upload(b), pc = dev.upload(c), pd = dev.malloc(32 * 8 * 2);
    dev.launch(m.kernel("h32x8"), {1}, {32}, 0, KernelArgs().ptr(pa).ptr(pb).ptr(pc).ptr(pd));
    auto d = dev.download<uint16_t>(pd, 32 * 8);
    for (int r = 0; r < 32; ++r)
      for (int n = 0; n < 8; ++n) {
        double want = val(r, n, 2) * 10;
        for (int k = 0; k < 16; ++k) want += val(r, k, 0) * val(k, n, 1);
        EXPECT_EQ(d[r * 8 + n], f16Of(want)) << "m32n8k16 " << r << "," << n;
      }
  }
  {  // m8n32k16 bf16, f32 accumulators in column-major memory (ld 32)
    std::vector<uint16_t> a(8 * 16), b(16 * 32);
    std::vector<float> c(32 * 32, 0.0f);
    for (int r = 0; r < 8; ++r)
      for (int k = 0; k < 16; ++k) a[r * 16 + k] = bf16Of(val(r, k, 3));
    for (int k = 0; k < 16; ++k)
      for (int n = 0; n < 32; ++n) b[k * 32 + n] = bf16Of(val(k, n, 4));
    for (int r = 0; r < 8; ++r)
      for (int n = 0; n < 32; ++n) c[n * 32 + r] = float(val(r, n, 5) * 100);
    DevPtr pa = dev.upload(a), pb = dev.upload(b), pc = dev.upload(c), pd = dev.malloc(32 * 32 * 4);
    dev.launch(m.kernel("b8x32"), {1}, {32}, 0, KernelArgs().ptr(pa).ptr(pb).ptr(pc).ptr(pd));
    auto d = dev.download<float>(pd, 32 * 32);
    for (int r = 0; r < 8; ++r)
      for (int n = 0; n < 32; ++n) {
        double want = val(r, n, 5) * 100;
        for (int k = 0; k < 16; ++k) want += val(r, k, 3) * val(k, n, 4);
        EXPECT_EQ(d[n * 32 + r], float(want)) << "m8n32k16 " << r << "," << n;
      }
  }
  {  // m16n16k8 tf32: inputs with bits below tf32's precision, rounded by cvt.rna.tf32.f32
    auto in = [&](int r, int c, int s) {
      return float(val(r, c, s) + 4 + ((r + c) % 3) * std::ldexp(1.0, -11));
    };
    std::vector<float> a(16 * 8), b(8 * 16), c(16 * 16);
    for (int r = 0; r < 16; ++r)
      for (int k = 0; k < 8; ++k) a[r * 8 + k] = in(r, k, 6);
    for (int k = 0; k < 8; ++k)
      for (int n = 0; n < 16; ++n) b[n * 8 + k] = in(k, n, 7);
    for (int r = 0; r < 16; ++r)
      for (int n = 0; n < 16; ++n) c[r * 16 + n] = float(val(r, n, 8));
    DevPtr pa = dev.upload(a), pb = dev.upload(b), pc = dev.upload(c), pd = dev.malloc(16 * 16 * 4);
    dev.launch(m.kernel("t16"), {1}, {32}, 0, KernelArgs().ptr(pa).ptr(pb).ptr(pc).ptr(pd));
    auto d = dev.download<float>(pd, 16 * 16);
    for (int r = 0; r < 16; ++r)
      for (int n = 0; n < 16; ++n) {
        double want = val(r, n, 8);
        // The kernel rounds A (cvt.rna); B is loaded as is and tf32 ignores its low 13 bits.
        for (int k = 0; k < 8; ++k) want += tf32Rna(in(r, k, 6)) * tf32Trunc(in(k, n, 7));
        EXPECT_EQ(d[r * 16 + n], float(want)) << "m16n16k8 " << r << "," << n;
      }
  }
  {  // m16n16k16, an f16 accumulator plus an f32 fragment element by element
    std::vector<uint16_t> a(16 * 16), b(16 * 16);
    std::vector<float> c(16 * 16);
    for (int r = 0; r < 16; ++r)
      for (int k = 0; k < 16; ++k) {
        a[k * 16 + r] = f16Of(val(r, k, 9));  // column-major
        b[r * 16 + k] = f16Of(val(r, k, 10));
        c[r * 16 + k] = float(val(r, k, 11) * 7);
      }
    DevPtr pa = dev.upload(a), pb = dev.upload(b), pc = dev.upload(c), pd = dev.malloc(16 * 16 * 2);
    dev.launch(m.kernel("h16mix"), {1}, {32}, 0, KernelArgs().ptr(pa).ptr(pb).ptr(pc).ptr(pd));
    auto d = dev.download<uint16_t>(pd, 16 * 16);
    for (int r = 0; r < 16; ++r)
      for (int n = 0; n < 16; ++n) {
        double want = val(r, n, 11) * 7;
        for (int k = 0; k < 16; ++k) want += val(r, k, 9) * val(k, n, 10);
        EXPECT_EQ(d[r * 16 + n], f16Of(want)) << "m16n16k16 f16 " << r << "," << n;
      }
  }
}

TEST(WarpMatrix, NvccWmmaShapes) {
  checkNvccWmma(ExecMode::Functional);
  checkNvccWmma(ExecMode::Timing);
}

// An f16 mma adds each element's products to its accumulator in k order, in double, and rounds
// once to f32. Each element's last two products are +2^30 and -2^30 and the others below 2^-17,
// more than a double's 53 bits apart: in k order the small ones are rounded to 2^-22 where the
// large one joins them; summed backwards they are kept whole. So the order shows in the results.
TEST(WarpMatrix, F16MmaAddsEachElementsProductsInKOrder) {
  auto frag = [](const char* p) {
    std::string s = "{";
    for (int i = 0; i < 8; ++i) s += (i ? ", %" : "%") + std::string(p) + std::to_string(i);
    return s + "}";
  };
  const std::string text = module(
      ".visible .entry w(.param .u64 pa, .param .u64 pb, .param .u64 pc, .param .u64 pd)\n{\n"
      "  .reg .b32 %a<8>, %b<8>;\n  .reg .f32 %c<8>, %d<8>;\n  .reg .b64 %rd<5>;\n"
      "  ld.param.u64 %rd1, [pa];\n  ld.param.u64 %rd2, [pb];\n  ld.param.u64 %rd3, [pc];\n"
      "  ld.param.u64 %rd4, [pd];\n"
      "  wmma.load.a.sync.aligned.row.m16n16k16.global.f16 " +
      frag("a") + ", [%rd1], 16;\n  wmma.load.b.sync.aligned.row.m16n16k16.global.f16 " +
      frag("b") + ", [%rd2], 16;\n  wmma.load.c.sync.aligned.row.m16n16k16.global.f32 " +
      frag("c") + ", [%rd3], 16;\n  wmma.mma.sync.aligned.row.row.m16n16k16.f32.f32 " + frag("d") +
      ", " + frag("a") + ", " + frag("b") + ", " + frag("c") +
      ";\n  wmma.store.d.sync.aligned.row.m16n16k16.global.f32 [%rd4], " + frag("d") +
      ", 16;\n  ret;\n}\n");
  uint64_t state = 2024;
  auto next = [&] {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<uint32_t>(state >> 33);
  };
  // A normal f16: its bits, and its value.
  std::vector<uint16_t> a(256), b(256);
  std::vector<double> av(256), bv(256);
  for (int i = 0; i < 256; ++i)
    for (auto [bits, value] : {std::pair{&a[i], &av[i]}, std::pair{&b[i], &bv[i]}}) {
      const uint32_t sign = next() & 1, exp = next() % 6 + 1, frac = next() % 1024;  // < 2^-8
      *bits = static_cast<uint16_t>(sign << 15 | exp << 10 | frac);
      *value = (sign ? -1.0 : 1.0) * std::ldexp(1.0 + frac / 1024.0, int(exp) - 15);
    }
  for (int i = 0; i < 16; ++i) {  // A[i][14] = 2^15, A[i][15] = -2^15, B[14][i] = B[15][i] = 2^15
    a[i * 16 + 14] = 0x7800, a[i * 16 + 15] = 0xf800, b[14 * 16 + i] = b[15 * 16 + i] = 0x7800;
    av[i * 16 + 14] = bv[14 * 16 + i] = bv[15 * 16 + i] = 32768.0, av[i * 16 + 15] = -32768.0;
  }
  std::vector<float> cm(256);
  for (auto& v : cm) v = std::ldexp(float(next() % 2048) - 1024.0f, -30);
  for (ExecMode mode : {ExecMode::Functional, ExecMode::Timing}) {
    Device dev(platform(), mode);
    Module& m = dev.loadModule(text, "wmma.ptx");
    DevPtr pa = dev.upload(a), pb = dev.upload(b), pc = dev.upload(cm), pd = dev.malloc(256 * 4);
    dev.launch(m.kernel("w"), {1}, {32}, 0, KernelArgs().ptr(pa).ptr(pb).ptr(pc).ptr(pd));
    const auto d = dev.download<float>(pd, 256);
    int orderMatters = 0;
    for (int r = 0; r < 16; ++r)
      for (int c = 0; c < 16; ++c) {
        double want = cm[r * 16 + c], backwards = want;
        for (int k = 0; k < 16; ++k) want += av[r * 16 + k] * bv[k * 16 + c];
        for (int k = 15; k >= 0; --k) backwards += av[r * 16 + k] * bv[k * 16 + c];
        orderMatters += float(want) != float(backwards);
        ASSERT_EQ(d[r * 16 + c], float(want)) << r << "," << c << " mode " << int(mode);
      }
    EXPECT_GT(orderMatters, 0);  // the inputs tell the orders apart
  }
}

TEST(WarpMatrix, WmmaLoadMmaStore) {
  checkWmma(false, false, true, 16, ExecMode::Functional);
  checkWmma(true, true, false, 24, ExecMode::Functional);
  checkWmma(false, false, false, 20, ExecMode::Timing);
}

// Integer wmma (m16n16k16, m32n8k16, m8n32k16; s8/u8 inputs, s32 accumulators): load, mma, store
// against a plain matrix product; .satfinite clamps to the s32 range.
void checkIntWmma(const std::string& shape, int M, int N, bool aSigned, bool bSigned, bool aCol,
                  bool bCol, bool sat, ExecMode mode) {
  const int K = 16;
  const std::string lay[2] = {"row", "col"};
  const std::string at = aSigned ? "s8" : "u8", bt = bSigned ? "s8" : "u8";
  auto frag = [](const char* p, int n) {
    std::string s = "{";
    for (int i = 0; i < n; ++i) s += (i ? ", %" : "%") + std::string(p) + std::to_string(i);
    return s + "}";
  };
  const int na = M * K / 32 / 4, nb = K * N / 32 / 4;  // four 8-bit elements per register
  const std::string text = module(
      ".visible .entry w(.param .u64 pa, .param .u64 pb, .param .u64 pc, .param .u64 pd)\n{\n"
      "  .reg .b32 %a<4>, %b<4>, %c<8>, %d<8>;\n  .reg .b64 %rd<5>;\n"
      "  ld.param.u64 %rd1, [pa];\n  ld.param.u64 %rd2, [pb];\n  ld.param.u64 %rd3, [pc];\n"
      "  ld.param.u64 %rd4, [pd];\n"
      "  wmma.load.a.sync.aligned." +
      lay[aCol] + "." + shape + ".global." + at + " " + frag("a", na) +
      ", [%rd1];\n  wmma.load.b.sync.aligned." + lay[bCol] + "." + shape + "." + bt + " " +
      frag("b", nb) + ", [%rd2];\n  wmma.load.c.sync.aligned.row." + shape + ".global.s32 " +
      frag("c", 8) + ", [%rd3];\n  wmma.mma.sync.aligned." + lay[aCol] + "." + lay[bCol] + "." +
      shape + ".s32." + at + "." + bt + ".s32" + (sat ? ".satfinite " : " ") + frag("d", 8) + ", " +
      frag("a", na) + ", " + frag("b", nb) + ", " + frag("c", 8) +
      ";\n  wmma.store.d.sync.aligned.row." + shape + ".global.s32 [%rd4], " + frag("d", 8) +
      ";\n  ret;\n}\n");
  std::vector<int> A(M * K), B(K * N);
  std::vector<int32_t> C(M * N);
  for (int r = 0; r < M; ++r)
    for (int c = 0; c < K; ++c)
      A[r * K + c] = aSigned ? (r * 37 + c * 11) % 256 - 128 : (r * 37 + c * 11) % 256;
  for (int r = 0; r < K; ++r)
    for (int c = 0; c < N; ++c)
      B[r * N + c] = bSigned ? (r * 13 + c * 29) % 256 - 128 : (r * 13 + c * 29) % 256;
  for (int r = 0; r < M; ++r)
    for (int c = 0; c < N; ++c)
      C[r * N + c] = sat ? (r % 2 ? INT32_MAX - 1000 : INT32_MIN + 1000) : r * 1000 - c * 77;
  std::vector<uint8_t> a(M * K), b(K * N);
  for (int r = 0; r < M; ++r)
    for (int c = 0; c < K; ++c) a[aCol ? c * M + r : r * K + c] = uint8_t(A[r * K + c]);
  for (int r = 0; r < K; ++r)
    for (int c = 0; c < N; ++c) b[bCol ? c * K + r : r * N + c] = uint8_t(B[r * N + c]);
  Device dev(platform(), mode);
  Module& m = dev.loadModule(text, "wmma.ptx");
  DevPtr pa = dev.upload(a), pb = dev.upload(b), pc = dev.upload(C), pd = dev.malloc(M * N * 4);
  dev.launch(m.kernel("w"), {1}, {32}, 0, KernelArgs().ptr(pa).ptr(pb).ptr(pc).ptr(pd));
  auto d = dev.download<int32_t>(pd, size_t(M * N));
  for (int r = 0; r < M; ++r)
    for (int c = 0; c < N; ++c) {
      int64_t want = C[r * N + c];
      for (int k = 0; k < K; ++k) want += int64_t(A[r * K + k]) * B[k * N + c];
      if (sat) want = std::min<int64_t>(std::max<int64_t>(want, INT32_MIN), INT32_MAX);
      EXPECT_EQ(d[r * N + c], int32_t(uint32_t(uint64_t(want)))) << shape << " " << r << "," << c;
    }
}

TEST(WarpMatrix, IntegerWmma) {
  checkIntWmma("m16n16k16", 16, 16, true, true, false, true, false, ExecMode::Functional);
  checkIntWmma("m16n16k16", 16, 16, false, true, true, false, true, ExecMode::Functional);
  checkIntWmma("m32n8k16", 32, 8, true, false, false, false, false, ExecMode::Functional);
  checkIntWmma("m8n32k16", 8, 32, false, false, true, true, true, ExecMode::Timing);
}

// wmma in the 8x8 shapes: m8n8k4 .f64, m8n8k32 .s4/.u4 and m8n8k128 .b1 (.xor.popc, .and.popc)
// against a plain matrix product. Sub-byte elements are packed from the least significant bits
// of each byte, A row-major and B column-major.
void checkSmallWmma(const std::string& a, const std::string& b, const std::string& popc, bool aCol,
                    bool bCol, ExecMode mode) {
  const bool f64 = a == "f64", b1 = a == "b1";
  const int K = f64 ? 4 : b1 ? 128 : 32, ebits = f64 ? 64 : b1 ? 1 : 4;
  const std::string shape = f64 ? "m8n8k4" : b1 ? "m8n8k128" : "m8n8k32";
  const std::string acc = f64 ? "f64" : "s32", lay[2] = {"row", "col"};
  const std::string r = f64 ? "%f" : "%r";
  const std::string text = module(
      ".visible .entry w(.param .u64 pa, .param .u64 pb, .param .u64 pc, .param .u64 pd)\n{\n"
      "  .reg .b32 %ra, %rb, %rc<2>, %rd<2>;\n  .reg .f64 %fa, %fb, %fc<2>, %fd<2>;\n"
      "  .reg .b64 %p<5>;\n  ld.param.u64 %p1, [pa];\n  ld.param.u64 %p2, [pb];\n"
      "  ld.param.u64 %p3, [pc];\n  ld.param.u64 %p4, [pd];\n"
      "  wmma.load.a.sync.aligned." +
      lay[aCol] + "." + shape + ".global." + a + " {" + r + "a}, [%p1];\n" +
      "  wmma.load.b.sync.aligned." + lay[bCol] + "." + shape + ".global." + b + " {" + r +
      "b}, [%p2];\n  wmma.load.c.sync.aligned.row." + shape + ".global." + acc + " {" + r + "c0, " +
      r + "c1}, [%p3];\n  wmma.mma" + popc + ".sync.aligned." + lay[aCol] + "." + lay[bCol] + "." +
      shape + "." + acc + "." + a + "." + b + "." + acc + " {" + r + "d0, " + r + "d1}, {" + r +
      "a}, {" + r + "b}, {" + r + "c0, " + r + "c1};\n  wmma.store.d.sync.aligned.row." + shape +
      ".global." + acc + " [%p4], {" + r + "d0, " + r + "d1};\n  ret;\n}\n");
  auto range = [&](const std::string& t, int i) {
    if (t == "b1") return i % 2;
    if (t == "u4") return i % 16;
    return i % 16 - 8;  // s4, f64
  };
  std::vector<int> A(8 * K), B(K * 8), C(64);
  for (int i = 0; i < 8; ++i)
    for (int j = 0; j < K; ++j) A[i * K + j] = range(a, i * 7 + j * 3 + j / 5);
  for (int i = 0; i < K; ++i)
    for (int j = 0; j < 8; ++j) B[i * 8 + j] = range(b, i * 5 + j * 11 + i / 3);
  for (int i = 0; i < 64; ++i) C[i] = i * 37 - 1000;
  // Memory images: f64 elements, or sub-byte fields packed from bit 0 of each byte.
  auto image = [&](const std::vector<int>& m, int rows, int cols, bool col) {
    std::vector<uint8_t> bytes(size_t(rows * cols * ebits / 8), 0);
    for (int i = 0; i < rows; ++i)
      for (int j = 0; j < cols; ++j) {
        const int at = col ? j * rows + i : i * cols + j;
        if (f64) {
          const uint64_t v = bits(double(m[i * cols + j]));
          std::memcpy(&bytes[size_t(at) * 8], &v, 8);
        } else {
          const uint32_t field = uint32_t(m[i * cols + j]) & ((1u << ebits) - 1);
          bytes[size_t(at * ebits / 8)] |= uint8_t(field << (at * ebits % 8));
        }
      }
    return bytes;
  };
  Device dev(platform(), mode);
  Module& mod = dev.loadModule(text, "wmma.ptx");
  DevPtr pa = dev.upload(image(A, 8, K, aCol)), pb = dev.upload(image(B, K, 8, bCol));
  std::vector<uint8_t> cimg(64 * (f64 ? 8 : 4));
  for (int i = 0; i < 64; ++i) {
    if (f64) {
      const uint64_t v = bits(double(C[i]));
      std::memcpy(&cimg[size_t(i) * 8], &v, 8);
    } else {
      std::memcpy(&cimg[size_t(i) * 4], &C[size_t(i)], 4);
    }
  }
  DevPtr pc = dev.upload(cimg), pd = dev.malloc(cimg.size());
  dev.launch(mod.kernel("w"), {1}, {32}, 0, KernelArgs().ptr(pa).ptr(pb).ptr(pc).ptr(pd));
  auto d = dev.download<uint8_t>(pd, cimg.size());
  for (int i = 0; i < 8; ++i)
    for (int j = 0; j < 8; ++j) {
      int64_t want = C[i * 8 + j];
      for (int x = 0; x < K; ++x) {
        const int u = A[i * K + x], v = B[x * 8 + j];
        want += popc == ".xor.popc" ? (u ^ v) : popc == ".and.popc" ? (u & v) : u * v;
      }
      if (f64) {
        uint64_t got;
        std::memcpy(&got, &d[size_t(i * 8 + j) * 8], 8);
        EXPECT_EQ(got, bits(double(want))) << shape << " " << i << "," << j;
      } else {
        int32_t got;
        std::memcpy(&got, &d[size_t(i * 8 + j) * 4], 4);
        EXPECT_EQ(got, int32_t(want))
            << shape << " " << a << "." << b << popc << " " << i << "," << j;
      }
    }
}

TEST(WarpMatrix, Float64SubByteAndSingleBitWmma) {
  checkSmallWmma("f64", "f64", "", false, true, ExecMode::Functional);
  checkSmallWmma("f64", "f64", "", true, false, ExecMode::Timing);
  checkSmallWmma("s4", "s4", "", false, true, ExecMode::Functional);
  checkSmallWmma("u4", "s4", "", false, true, ExecMode::Timing);
  checkSmallWmma("b1", "b1", ".xor.popc", false, true, ExecMode::Functional);
  checkSmallWmma("b1", "b1", ".and.popc", false, true, ExecMode::Functional);
  // Sub-byte A fragments are row-major and B column-major; b1 needs its popc operation.
  auto bad = [](const std::string& instr) {
    try {
      eval1("{\n.reg .b32 %x<4>;\n" + instr + "\n}", 0);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  EXPECT_NE(bad("wmma.load.a.sync.aligned.col.m8n8k32.global.s4 {%x0}, [%addr];")
                .find("A is .row and B is .col"),
            std::string::npos);
  EXPECT_NE(bad("wmma.mma.sync.aligned.row.col.m8n8k128.s32.b1.b1.s32 {%x0, %x1}, {%x2}, {%x3}, "
                "{%x0, %x1};")
                .find(".xor.popc or .and.popc"),
            std::string::npos);
}

// ---- indirect calls ----------------------------------------------------------------------------

// nvcc's code for calls through a table of function pointers, a pointer picked by a condition,
// and virtual functions (tests/data/indirect_call.cu), against the same formulas in C++.
void checkNvccIndirectCalls(ExecMode mode) {
  Device dev(platform(), mode);
  Module& m = dev.loadModuleFile(std::string(GPUSC_SOURCE_DIR) + "/tests/data/indirect_call.ptx");
  const int n = 83;  // three warps, the last one partial
  std::mt19937 rng(7);
  std::vector<int32_t> sel(n), a(n), b(n);
  for (int i = 0; i < n; ++i) {
    sel[i] = int32_t(rng() % 16);
    a[i] = int32_t(rng() % 2001) - 1000;
    b[i] = int32_t(rng() % 2001) - 1000;
  }
  DevPtr dsel = dev.upload(sel), da = dev.upload(a), db = dev.upload(b), dout = dev.malloc(4 * n);
  dev.launch(m.kernel("apply"), {3}, {32}, 0,
             KernelArgs().ptr(dsel).ptr(da).ptr(db).ptr(dout).i32(n));
  auto out = dev.download<int32_t>(dout, n);
  for (int i = 0; i < n; ++i) {
    const int x = a[i], y = b[i];
    const int want = std::array<int, 4>{x + y, x * y, 2 * x - y, std::max(x, y)}[sel[i] & 3];
    EXPECT_EQ(out[i], want) << "apply, thread " << i << " table entry " << (sel[i] & 3);
  }
  dev.launch(m.kernel("choose"), {3}, {32}, 0, KernelArgs().ptr(da).ptr(db).ptr(dout).i32(n));
  out = dev.download<int32_t>(dout, n);
  for (int i = 0; i < n; ++i)
    EXPECT_EQ(out[i], (a[i] < b[i] ? a[i] + b[i] : a[i] * b[i]) + 1) << "choose, thread " << i;
  dev.launch(m.kernel("shapes"), {3}, {32}, 0, KernelArgs().ptr(dout).i32(n));
  out = dev.download<int32_t>(dout, n);
  for (int i = 0; i < n; ++i)
    EXPECT_EQ(out[i], (i & 1) ? i * i * 10 + 4 : i * i / 2 * 10 + 3) << "shapes, thread " << i;
}

TEST(IndirectCall, NvccFunctionPointersAndVirtualFunctions) {
  checkNvccIndirectCalls(ExecMode::Functional);
}

TEST(IndirectCall, NvccFunctionPointersInTheTimingModel) {
  checkNvccIndirectCalls(ExecMode::Timing);
}

// Hand-written forms: `.calltargets`, a guard, a call with no result, nested indirect calls,
// `.alias`. Each thread t of one block writes out[t].
std::vector<uint32_t> runCalls(const std::string& text, uint32_t threads,
                               ExecMode mode = ExecMode::Functional) {
  Device dev(platform(), mode);
  Module& m = dev.loadModule(module(text), "calls.ptx");
  DevPtr out = dev.malloc(4 * threads);
  dev.launch(m.kernel("k"), {1}, {threads}, 0, KernelArgs().ptr(out));
  return dev.download<uint32_t>(out, threads);
}

// Functions f0..f3: fi(x) = x * (i + 2) + i; `sink` stores its argument's square through a
// pointer and returns nothing.
const char* kCallees = R"(
.func (.param .b32 r) f0(.param .b32 x) { .reg .b32 %v; ld.param.b32 %v, [x]; mul.lo.s32 %v, %v, 2; st.param.b32 [r], %v; ret; }
.func (.param .b32 r) f1(.param .b32 x) { .reg .b32 %v; ld.param.b32 %v, [x]; mad.lo.s32 %v, %v, 3, 1; st.param.b32 [r], %v; ret; }
.func (.param .b32 r) f2(.param .b32 x) { .reg .b32 %v; ld.param.b32 %v, [x]; mad.lo.s32 %v, %v, 4, 2; st.param.b32 [r], %v; ret; }
.func (.param .b32 r) f3(.param .b32 x) { .reg .b32 %v; ld.param.b32 %v, [x]; mad.lo.s32 %v, %v, 5, 3; st.param.b32 [r], %v; ret; }
.func sink(.param .b64 p, .param .b32 x) { .reg .b32 %v; .reg .b64 %a; ld.param.b64 %a, [p]; ld.param.b32 %v, [x]; mul.lo.s32 %v, %v, %v; st.global.b32 [%a], %v; ret; }
.global .align 8 .u64 ftab[4] = {f0, f1, f2, f3};
)";

// The kernel prologue: %t = %tid.x, %out = &out[%t].
const char* kProlog = R"(
.visible .entry k(.param .u64 pout)
{
  .reg .b32 %t, %x, %y, %z;
  .reg .b64 %out, %fp, %a, %g;
  .reg .pred %p;
  mov.u32 %t, %tid.x;
  ld.param.u64 %out, [pout];
  mul.wide.u32 %a, %t, 4;
  add.s64 %out, %out, %a;
)";

uint32_t fRef(uint32_t i, uint32_t x) { return x * (i + 2) + i; }

TEST(IndirectCall, CallTargetsGuardsAndCallsWithoutResults) {
  // Lanes pick f[t % 3] from a .calltargets list; lanes with t % 5 == 0 skip the call.
  const std::string text = std::string(kCallees) + kProlog + R"(
  rem.u32 %x, %t, 3;
  mul.wide.u32 %a, %x, 8;
  mov.u64 %g, ftab;
  add.s64 %g, %g, %a;
  ld.global.u64 %fp, [%g];
  rem.u32 %x, %t, 5;
  setp.ne.u32 %p, %x, 0;
  mov.u32 %y, 1000;
  {
    .param .b32 arg;
    .param .b32 res;
    st.param.b32 [arg], %t;
    st.param.b32 [res], 1000;
    targets: .calltargets f0, f1, f2;
    @%p call (res), %fp, (arg), targets;
    @%p ld.param.b32 %y, [res];
  }
  mov.u64 %fp, sink;
  add.u32 %z, %t, 7;
  {
    .param .b64 pa;
    .param .b32 pb;
    st.param.b64 [pa], %out;
    st.param.b32 [pb], %z;
    proto: .callprototype _ (.param .b64 _, .param .b32 _);
    call %fp, (pa, pb), proto;
  }
  ld.global.u32 %z, [%out];
  add.u32 %y, %y, %z;
  st.global.u32 [%out], %y;
  ret;
}
)";
  for (ExecMode mode : {ExecMode::Functional, ExecMode::Timing}) {
    auto out = runCalls(text, 70, mode);
    for (uint32_t t = 0; t < 70; ++t) {
      const uint32_t called = t % 5 ? fRef(t % 3, t) : 1000;
      EXPECT_EQ(out[t], called + (t + 7) * (t + 7)) << "thread " << t;
    }
  }
}

TEST(IndirectCall, NestedIndirectCallsAndAliases) {
  // outer(x) calls ftab[x % 4] through a pointer; the kernel calls outer through an alias.
  const std::string text = std::string(kCallees) + R"(
.func (.param .b32 r) outer(.param .b32 x)
{
  .reg .b32 %v, %i;
  .reg .b64 %a, %fp;
  ld.param.b32 %v, [x];
  and.b32 %i, %v, 3;
  mul.wide.u32 %a, %i, 8;
  mov.u64 %fp, ftab;
  add.s64 %a, %fp, %a;
  ld.global.u64 %fp, [%a];
  {
    .param .b32 in;
    .param .b32 res;
    st.param.b32 [in], %v;
    proto: .callprototype (.param .b32 _) _ (.param .b32 _);
    call (res), %fp, (in), proto;
    ld.param.b32 %v, [res];
  }
  add.u32 %v, %v, 100;
  st.param.b32 [r], %v;
  ret;
}
.func (.param .b32 r) outerAlias(.param .b32 x);
.alias outerAlias, outer;
)" + kProlog + R"(
  mov.u64 %fp, outerAlias;
  {
    .param .b32 arg;
    .param .b32 res;
    st.param.b32 [arg], %t;
    targets: .calltargets outer;
    call (res), %fp, (arg), targets;
    ld.param.b32 %y, [res];
  }
  {
    .param .b32 arg2;
    .param .b32 res2;
    st.param.b32 [arg2], %y;
    call (res2), outerAlias, (arg2);
    ld.param.b32 %z, [res2];
  }
  st.global.u32 [%out], %z;
  ret;
}
)";
  for (ExecMode mode : {ExecMode::Functional, ExecMode::Timing}) {
    auto out = runCalls(text, 40, mode);
    for (uint32_t t = 0; t < 40; ++t) {
      const uint32_t once = fRef(t % 4, t) + 100;
      EXPECT_EQ(out[t], fRef(once % 4, once) + 100) << "thread " << t;
    }
  }
}

TEST(IndirectCall, BadTargetsAreKernelFaultsAndBadCallsInputErrors) {
  auto call = [](const std::string& pointer, const std::string& table) {
    return std::string(kCallees) + kProlog + pointer + R"(
  {
    .param .b32 arg;
    .param .b32 res;
    st.param.b32 [arg], %t;
    targets: .calltargets f0, f1;
    proto: .callprototype (.param .b32 _) _ (.param .b32 _);
    call (res), %fp, (arg), )" +
           table + R"(;
    ld.param.b32 %y, [res];
  }
  st.global.u32 [%out], %y;
  ret;
}
)";
  };
  // f2 is not in the list; a null pointer; a pointer to data.
  EXPECT_THROW(runCalls(call("mov.u64 %fp, f2;", "targets"), 4), KernelFault);
  EXPECT_THROW(runCalls(call("mov.u64 %fp, 0;", "proto"), 4), KernelFault);
  EXPECT_THROW(runCalls(call("mov.u64 %fp, ftab;", "proto"), 4), KernelFault);
  EXPECT_EQ(runCalls(call("mov.u64 %fp, f2;", "proto"), 4)[3], fRef(2, 3));
  // No such label; a prototype that does not match the call's variables.
  EXPECT_THROW(runCalls(call("mov.u64 %fp, f0;", "nolabel"), 4), InputError);
  const std::string wrong = R"(.func (.param .b32 r) g(.param .b32 x) { ret; }
.visible .entry k(.param .u64 pout)
{
  .reg .b64 %fp;
  mov.u64 %fp, g;
  {
    .param .b64 arg;
    .param .b32 res;
    proto: .callprototype (.param .b32 _) _ (.param .b32 _);
    call (res), %fp, (arg), proto;
  }
  ret;
}
)";
  EXPECT_THROW(runCalls(wrong, 1), InputError);
}

TEST(Recursion, AFunctionCallingItselfThroughAPointer) {
  // self(n) = n + self(n - 1), its %v live across the call, so each activation needs its own;
  // lanes recurse to 40 depths.
  const std::string recursive = R"(.func (.param .b32 r) self(.param .b32 x)
{
  .reg .b32 %v, %w;
  .reg .b64 %fp;
  .reg .pred %p;
  ld.param.b32 %v, [x];
  setp.eq.u32 %p, %v, 0;
  @%p bra DONE;
  sub.u32 %w, %v, 1;
  mov.u64 %fp, self;
  {
    .param .b32 a;
    .param .b32 b;
    st.param.b32 [a], %w;
    proto: .callprototype (.param .b32 _) _ (.param .b32 _);
    call (b), %fp, (a), proto;
    ld.param.b32 %w, [b];
  }
  add.u32 %v, %v, %w;
DONE:
  st.param.b32 [r], %v;
  ret;
}
)" + std::string(kProlog) + R"(
  mov.u64 %fp, self;
  {
    .param .b32 arg;
    .param .b32 res;
    st.param.b32 [arg], %t;
    proto: .callprototype (.param .b32 _) _ (.param .b32 _);
    call (res), %fp, (arg), proto;
    ld.param.b32 %y, [res];
  }
  st.global.u32 [%out], %y;
  ret;
}
)";
  for (ExecMode mode : {ExecMode::Functional, ExecMode::Timing}) {
    const auto out = runCalls(recursive, 40, mode);
    for (uint32_t t = 0; t < 40; ++t)
      ASSERT_EQ(out[t], t * (t + 1) / 2) << "thread " << t << " mode " << int(mode);
  }
}

// ---- recursion -----------------------------------------------------------------------------

// Three functions on one cycle of calls: R calls Y (which calls R back) before it calls X, which
// reaches the cycle only through Y. Each keeps a register and a predicate live across its call,
// so an activation that shared them with the next one would change the result.
const char* kMutual = R"(
.func (.param .b32 r) X(.param .b32 n);
.func (.param .b32 r) Y(.param .b32 n);
.func (.param .b32 r) R(.param .b32 n)
{
  .reg .b32 %n, %m, %r;
  .reg .pred %zero, %odd;
  ld.param.b32 %n, [n];
  setp.eq.u32 %zero, %n, 0;
  mov.u32 %r, 2;
  @%zero bra DONE;
  sub.u32 %m, %n, 1;
  and.b32 %r, %n, 1;
  setp.ne.u32 %odd, %r, 0;
  @%odd bra ODD;
  {
    .param .b32 a;
    .param .b32 b;
    st.param.b32 [a], %m;
    call.uni (b), Y, (a);
    ld.param.b32 %r, [b];
  }
  bra.uni JOIN;
ODD:
  {
    .param .b32 a;
    .param .b32 b;
    st.param.b32 [a], %m;
    call.uni (b), X, (a);
    ld.param.b32 %r, [b];
  }
JOIN:
  selp.b32 %m, 5, 1, %odd;
  mad.lo.s32 %r, %r, 2, %n;
  add.s32 %r, %r, %m;
DONE:
  st.param.b32 [r], %r;
  ret;
}
.func (.param .b32 r) Y(.param .b32 n)
{
  .reg .b32 %n, %v, %r;
  .reg .pred %zero;
  ld.param.b32 %n, [n];
  setp.eq.u32 %zero, %n, 0;
  mov.u32 %r, 1;
  @%zero bra DONE;
  mul.lo.s32 %v, %n, 3;
  sub.u32 %n, %n, 1;
  {
    .param .b32 a;
    .param .b32 b;
    st.param.b32 [a], %n;
    call.uni (b), R, (a);
    ld.param.b32 %r, [b];
  }
  add.s32 %r, %r, %v;
DONE:
  st.param.b32 [r], %r;
  ret;
}
.func (.param .b32 r) X(.param .b32 n)
{
  .reg .b32 %n, %v, %r;
  .reg .pred %zero;
  ld.param.b32 %n, [n];
  setp.eq.u32 %zero, %n, 0;
  mov.u32 %r, 3;
  @%zero bra DONE;
  add.s32 %v, %n, 7;
  sub.u32 %n, %n, 1;
  {
    .param .b32 a;
    .param .b32 b;
    st.param.b32 [a], %n;
    call.uni (b), Y, (a);
    ld.param.b32 %r, [b];
  }
  xor.b32 %r, %r, %v;
DONE:
  st.param.b32 [r], %r;
  ret;
}
)";

uint32_t mutualY(uint32_t n);
uint32_t mutualX(uint32_t n);
uint32_t mutualR(uint32_t n) {
  if (n == 0) return 2;
  const bool odd = n & 1;
  return (odd ? mutualX(n - 1) : mutualY(n - 1)) * 2 + n + (odd ? 5 : 1);
}
uint32_t mutualY(uint32_t n) { return n == 0 ? 1 : mutualR(n - 1) + 3 * n; }
uint32_t mutualX(uint32_t n) { return n == 0 ? 3 : mutualY(n - 1) ^ (n + 7); }

TEST(Recursion, FunctionsOnACycleOfCallsKeepEachActivationsValues) {
  // Each lane recurses to its own depth (tid % 23), so the warp's lanes return at different times.
  const std::string text = std::string(kMutual) + kProlog + R"(
  rem.u32 %x, %t, 23;
  {
    .param .b32 a;
    .param .b32 b;
    st.param.b32 [a], %x;
    call.uni (b), R, (a);
    ld.param.b32 %y, [b];
  }
  st.global.u32 [%out], %y;
  ret;
}
)";
  for (ExecMode mode : {ExecMode::Functional, ExecMode::Timing}) {
    const auto out = runCalls(text, 64, mode);
    for (uint32_t t = 0; t < 64; ++t)
      ASSERT_EQ(out[t], mutualR(t % 23)) << "thread " << t << " mode " << int(mode);
  }
}

// A recursive function's .local array is its activation's own: each activation passes its
// array's address to the next, which writes into it. d(n, p): a[0] = n; a[1] = d(n - 1, &a[1])
// writes through p: *p = a[0] * 10 + a[1] (the deepest writes 7).
const char* kFrames = R"(
.func d(.param .b32 n, .param .b64 p)
{
  .local .align 8 .b8 depot[16];
  .reg .b32 %n, %v, %w;
  .reg .b64 %p, %a, %b;
  .reg .pred %zero;
  ld.param.b32 %n, [n];
  ld.param.b64 %p, [p];
  setp.eq.u32 %zero, %n, 0;
  mov.u32 %v, 7;
  @%zero bra DONE;
  st.local.u32 [depot], %n;
  mov.u64 %a, depot;
  add.u64 %b, %a, 4;
  cvta.local.u64 %b, %b;
  sub.u32 %w, %n, 1;
  {
    .param .b32 x;
    .param .b64 y;
    st.param.b32 [x], %w;
    st.param.b64 [y], %b;
    call.uni d, (x, y);
  }
  ld.local.u32 %v, [depot];
  ld.local.u32 %w, [depot+4];
  mad.lo.s32 %v, %v, 10, %w;
DONE:
  st.u32 [%p], %v;
  ret;
}
)";

TEST(Recursion, EachActivationHasItsOwnLocalVariables) {
  const std::string text = std::string(kFrames) + kProlog + R"(
  rem.u32 %x, %t, 6;
  cvta.global.u64 %g, %out;
  {
    .param .b32 x;
    .param .b64 y;
    st.param.b32 [x], %x;
    st.param.b64 [y], %g;
    call.uni d, (x, y);
  }
  ret;
}
)";
  for (ExecMode mode : {ExecMode::Functional, ExecMode::Timing}) {
    const auto out = runCalls(text, 40, mode);
    for (uint32_t t = 0; t < 40; ++t) {
      uint32_t v = 7;  // d(0)
      for (uint32_t n = 1; n <= t % 6; ++n) v = n * 10 + v;
      ASSERT_EQ(out[t], v) << "thread " << t << " mode " << int(mode);
    }
  }
}

TEST(Recursion, TooDeepARecursionIsAKernelFault) {
  // d's frame takes 32 bytes (16 of locals, 16 of return address and link): 1 KiB holds 32.
  const std::string text = std::string(kFrames) + kProlog + R"(
  ld.param.u64 %g, [pout];
  cvta.global.u64 %g, %g;
  {
    .param .b32 x;
    .param .b64 y;
    st.param.b32 [x], 40;
    st.param.b64 [y], %g;
    call.uni d, (x, y);
  }
  ret;
}
)";
  try {
    runCalls(text, 1);
    ADD_FAILURE() << "a recursion 40 deep fit a 1 KiB stack";
  } catch (const KernelFault& e) {
    EXPECT_NE(std::string(e.what()).find("the call to d is 33 recursive calls deep and overflows "
                                         "the 1024-byte stack of the thread"),
              std::string::npos)
        << e.what();
  }
  // 32 calls fit: the kernel's call of d(31) and d's 31 calls of itself.
  std::string fits = text;
  fits.replace(fits.find("[x], 40"), 7, "[x], 31");
  uint32_t v = 7;
  for (uint32_t n = 1; n <= 31; ++n) v = n * 10 + v;
  EXPECT_EQ(runCalls(fits, 1)[0], v);
}

// ---- mbarrier and bulk asynchronous copies ----------------------------------------------------

// nvcc's producer/consumer pipeline (tests/data/mbarrier_pipeline.cu) against its formula.
void checkPipeline(ExecMode mode, int chunks, int blocks) {
  Device dev(platform(), mode);
  Module& m =
      dev.loadModuleFile(std::string(GPUSC_SOURCE_DIR) + "/tests/data/mbarrier_pipeline.ptx");
  std::mt19937 rng{uint32_t(chunks)};
  std::vector<int32_t> in(size_t(chunks) * 128 * 4);
  for (auto& v : in) v = int32_t(rng() % 1000) - 500;
  DevPtr din = dev.upload(in), dout = dev.malloc(uint64_t(blocks) * 128 * 16);
  dev.launch(m.kernel("pipeline"), {uint32_t(blocks)}, {128}, 0,
             KernelArgs().ptr(din).ptr(dout).i32(chunks));
  auto out = dev.download<int32_t>(dout, size_t(blocks) * 128 * 4);
  for (int b = 0; b < blocks; ++b)
    for (int t = 0; t < 128; ++t)
      for (int e = 0; e < 4; ++e) {
        int32_t want = 0;
        for (int c = 0; c < chunks; ++c) want += in[(size_t(c) * 128 + t) * 4 + e] * (c + 1) + t;
        ASSERT_EQ(out[(size_t(b) * 128 + t) * 4 + e], want)
            << "block " << b << " thread " << t << " element " << e << " of " << chunks;
      }
}

TEST(Mbarrier, NvccBulkCopyPipeline) {
  checkPipeline(ExecMode::Functional, 7, 2);
  checkPipeline(ExecMode::Functional, 1, 1);
}

TEST(Mbarrier, NvccBulkCopyPipelineInTheTimingModel) { checkPipeline(ExecMode::Timing, 6, 3); }

// One warp; %t = %tid.x; the body leaves %o32 per thread, stored to out[%t].
std::vector<uint32_t> runMbar(const std::string& body, uint32_t threads,
                              ExecMode mode = ExecMode::Functional) {
  return runCalls(R"(
.visible .entry k(.param .u64 pout)
{
  .shared .align 8 .b64 bar[4];
  .shared .align 16 .b8 buf[256];
  .reg .b32 %t, %o32, %r<8>, %a;
  .reg .b64 %out, %s<4>, %g;
  .reg .pred %p<4>;
  mov.u32 %t, %tid.x;
  ld.param.u64 %out, [pout];
  mul.wide.u32 %g, %t, 4;
  add.s64 %out, %out, %g;
  mov.u32 %a, bar;
  mov.u32 %o32, 0;
)" + body + R"(
  st.global.u32 [%out], %o32;
  ret;
}
)",
                  threads, mode);
}

TEST(Mbarrier, ArrivalsTransactionsAndPhases) {
  // Thread 0 initialises bar[0] for 3 arrivals; threads 0-2 arrive one after another (lane
  // order), so the third arrival completes the phase; pending_count of each state counts the
  // arrivals pending before it.
  auto out = runMbar(R"(
  setp.eq.u32 %p0, %t, 0;
  @%p0 mbarrier.init.shared.b64 [bar], 3;
  bar.sync 0;
  setp.lt.u32 %p1, %t, 3;
  @%p1 mbarrier.arrive.shared.b64 %s0, [bar];
  @%p1 mbarrier.pending_count.b64 %r0, %s0;
  @%p1 mbarrier.test_wait.shared.b64 %p2, [bar], %s0;
  selp.u32 %r1, 1, 0, %p2;
  @%p1 shl.b32 %o32, %r0, 4;
  @%p1 or.b32 %o32, %o32, %r1;
  // bar[1]: expect 64 bytes, two arrivals with arrive_drop (the expected count drops to 1), then
  // complete_tx in two halves; then a second phase needs one arrival only.
  @%p0 mbarrier.init.shared.b64 [bar+8], 2;
  @%p0 mbarrier.expect_tx.shared.b64 [bar+8], 64;
  @%p0 mbarrier.arrive_drop.shared.b64 %s1, [bar+8];
  @%p0 mbarrier.arrive.shared.b64 %s1, [bar+8];
  @%p0 mbarrier.test_wait.parity.shared.b64 %p3, [bar+8], 0;
  @%p0 selp.u32 %r2, 1, 0, %p3;
  @%p0 mbarrier.complete_tx.shared.b64 [bar+8], 32;
  @%p0 mbarrier.test_wait.parity.shared.b64 %p3, [bar+8], 0;
  @%p0 selp.u32 %r3, 2, 0, %p3;
  @%p0 mbarrier.complete_tx.shared.b64 [bar+8], 32;
  @%p0 mbarrier.try_wait.parity.shared.b64 %p3, [bar+8], 0;
  @%p0 selp.u32 %r4, 4, 0, %p3;
  @%p0 mbarrier.arrive.shared.b64 %s2, [bar+8];
  @%p0 mbarrier.test_wait.parity.shared.b64 %p3, [bar+8], 1;
  @%p0 selp.u32 %r5, 8, 0, %p3;
  @%p0 or.b32 %r2, %r2, %r3;
  @%p0 or.b32 %r2, %r2, %r4;
  @%p0 or.b32 %r2, %r2, %r5;
  @%p0 shl.b32 %r2, %r2, 8;
  @%p0 or.b32 %o32, %o32, %r2;
)",
                     32);
  // Every state's phase is complete once the instruction's three arrivals are done; bar[1]:
  // incomplete (tx pending), incomplete, complete, second phase complete after one arrival.
  EXPECT_EQ(out[0], (3u << 4 | 1u) | ((0u | 0u | 4u | 8u) << 8));
  EXPECT_EQ(out[1], 2u << 4 | 1u);
  EXPECT_EQ(out[2], 1u << 4 | 1u);
  for (int t = 3; t < 32; ++t) EXPECT_EQ(out[t], 0u) << t;
}

TEST(Mbarrier, WaitingWarpsSleepUntilThePhaseCompletes) {
  // Four warps: warps 1-3 wait for bar[0]'s phase 0, which warp 0 completes only after a long
  // loop; then everyone reads what warp 0 wrote. A woken warp retries its try_wait.
  const std::string body = R"(
  setp.eq.u32 %p0, %t, 0;
  @%p0 mbarrier.init.shared.b64 [bar], 32;
  bar.sync 0;
  setp.lt.u32 %p1, %t, 32;
  @!%p1 bra WAIT;
  mov.u32 %r0, 0;
SPIN:
  add.u32 %r0, %r0, 1;
  setp.lt.u32 %p2, %r0, 200;
  @%p2 bra SPIN;
  mov.u32 %r1, buf;
  shl.b32 %r2, %t, 2;
  add.u32 %r1, %r1, %r2;
  add.u32 %r3, %t, 1000;
  st.shared.u32 [%r1], %r3;
  mbarrier.arrive.release.cta.shared::cta.b64 _, [bar];
WAIT:
  mbarrier.try_wait.parity.acquire.cta.shared::cta.b64 %p3, [bar], 0, 1000;
  @!%p3 bra WAIT;
  and.b32 %r4, %t, 31;
  shl.b32 %r4, %r4, 2;
  mov.u32 %r1, buf;
  add.u32 %r1, %r1, %r4;
  ld.shared.u32 %o32, [%r1];
)";
  for (ExecMode mode : {ExecMode::Functional, ExecMode::Timing}) {
    auto out = runMbar(body, 128, mode);
    for (uint32_t t = 0; t < 128; ++t) EXPECT_EQ(out[t], 1000 + t % 32) << t;
  }
}

TEST(Mbarrier, MisuseIsAKernelFault) {
  auto fault = [](const std::string& body, const char* what) {
    try {
      runMbar(body, 32);
      ADD_FAILURE() << "no fault for " << what;
    } catch (const KernelFault& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  };
  fault("mbarrier.arrive.shared.b64 %s0, [bar];", "used before mbarrier.init");
  fault("mbarrier.init.shared.b64 [bar], 0;", "count 0 is outside");
  // 32 single arrivals on a 4-arrival barrier complete 8 phases; 5 at once are too many.
  EXPECT_EQ(runMbar("mbarrier.init.shared.b64 [bar], 4; mbarrier.arrive.shared.b64 %s0, [bar];"
                    "mbarrier.test_wait.parity.shared.b64 %p0, [bar], 0; selp.u32 %o32, 1, 2, %p0;",
                    32)[5],
            2u);  // parity back at 0 after 8 phases: phase "0" is the current one again
  fault("mbarrier.init.shared.b64 [bar], 4; mbarrier.arrive.shared.b64 %s0, [bar], 5;",
        "5 arrivals with 4 pending");
  fault(
      "mbarrier.init.shared.b64 [bar], 32; mbarrier.inval.shared.b64 [bar];"
      "mbarrier.test_wait.shared.b64 %p0, [bar], %s0;",
      "after mbarrier.inval");
  fault("mbarrier.init.shared.b64 [bar], 32; mbarrier.arrive.noComplete.shared.b64 %s0, [bar], 1;",
        "noComplete completed");
  fault("mov.u32 %r0, buf; mbarrier.init.shared.b64 [%r0+4], 1;", "misaligned");
  // Every warp waits for a phase nobody completes: a deadlock, in both modes.
  for (ExecMode mode : {ExecMode::Functional, ExecMode::Timing}) {
    try {
      runMbar(
          "setp.eq.u32 %p0, %t, 0; @%p0 mbarrier.init.shared.b64 [bar], 64; bar.sync 0;"
          "W: mbarrier.try_wait.parity.shared.b64 %p1, [bar], 0; @!%p1 bra W;",
          64, mode);
      ADD_FAILURE() << "no deadlock";
    } catch (const KernelFault& e) {
      EXPECT_NE(std::string(e.what()).find("deadlock"), std::string::npos) << e.what();
    }
  }
}

TEST(Mbarrier, BulkCopiesCheckTheirOperands) {
  // Shared -> shared copy of 32 bytes completing on bar[2]; a size that is no multiple of 16
  // faults.
  auto out = runMbar(R"(
  setp.eq.u32 %p0, %t, 0;
  mov.u32 %r0, buf;
  shl.b32 %r1, %t, 2;
  add.u32 %r1, %r0, %r1;
  mul.lo.u32 %r2, %t, 7;
  st.shared.u32 [%r1], %r2;
  @%p0 mbarrier.init.shared.b64 [bar+16], 1;
  bar.sync 0;
  @%p0 mbarrier.arrive.expect_tx.shared.b64 _, [bar+16], 32;
  add.u32 %r3, %r0, 128;
  @%p0 cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes [%r3], [%r0], 32, [bar+16];
W:
  mbarrier.try_wait.parity.shared.b64 %p1, [bar+16], 0;
  @!%p1 bra W;
  and.b32 %r4, %t, 7;
  shl.b32 %r4, %r4, 2;
  add.u32 %r4, %r4, %r3;
  ld.shared.u32 %o32, [%r4];
)",
                     32);
  for (uint32_t t = 0; t < 32; ++t) EXPECT_EQ(out[t], (t % 8) * 7) << t;
  EXPECT_THROW(runMbar("mbarrier.init.shared.b64 [bar], 32; mov.u32 %r0, buf;"
                       "cp.async.bulk.shared::cta.global.mbarrier::complete_tx::bytes [%r0], "
                       "[%out], 24, [bar];",
                       1),
               KernelFault);
}

// ---- launches from device code (dynamic parallelism)
// ---------------------------------------------

TEST(DeviceLaunches, ChildrenRunAfterTheirParentWithItsWrites) {
  for (ExecMode mode : {ExecMode::Functional, ExecMode::Timing}) {
    Device dev(platform(), mode);
    Module& m =
        dev.loadModuleFile(std::string(GPUSC_SOURCE_DIR) + "/tests/data/device_launches.ptx");
    DevPtr out = dev.malloc(4 * 96), scales = dev.malloc(4 * 3);
    dev.launch(m.kernel("parent"), {3}, {32}, 0, KernelArgs().ptr(out).ptr(scales));
    const auto got = dev.download<int32_t>(out, 96);
    for (int t = 0; t < 96; ++t) EXPECT_EQ(got[t], (t / 32 + 2) * t) << "thread " << t;
    // One record per launch, the children after their parent, each naming it.
    ASSERT_EQ(dev.launches().size(), 4u);
    EXPECT_EQ(dev.launches()[0].kernel, "parent");
    EXPECT_FALSE(dev.launches()[0].launchedBy);
    for (size_t i = 1; i < 4; ++i) {
      EXPECT_EQ(dev.launches()[i].kernel, "child");
      EXPECT_EQ(dev.launches()[i].launchedBy, std::optional<size_t>(0));
      EXPECT_EQ(dev.launches()[i].stats.warpInsts, dev.launches()[1].stats.warpInsts);
      if (mode == ExecMode::Timing) {
        EXPECT_GT(dev.launches()[i].timing->cycles, 0u);
      }
    }
  }
}

TEST(DeviceLaunches, LaunchesNestTwentyFourDeep) {
  Device dev(platform());
  Module& m = dev.loadModuleFile(std::string(GPUSC_SOURCE_DIR) + "/tests/data/device_launches.ptx");
  DevPtr levels = dev.malloc(4 * 32);
  dev.memset(levels, 0, 4 * 32);
  dev.launch(m.kernel("chain"), {1}, {1}, 0, KernelArgs().ptr(levels).i32(0).i32(30));
  const auto got = dev.download<int32_t>(levels, 32);
  // The host's launch and 24 levels below it; the 25th launch is refused.
  for (int l = 0; l < 32; ++l) EXPECT_EQ(got[l], l <= int(kMaxLaunchDepth) ? l + 1 : 0) << l;
  ASSERT_EQ(dev.launches().size(), size_t(kMaxLaunchDepth) + 1);
  for (size_t i = 1; i < dev.launches().size(); ++i)
    EXPECT_EQ(dev.launches()[i].launchedBy, std::optional<size_t>(i - 1));
}

TEST(DeviceLaunches, RefusedLaunchesAreTheThreadsLastError) {
  Device dev(platform());
  Module& m = dev.loadModuleFile(std::string(GPUSC_SOURCE_DIR) + "/tests/data/device_launches.ptx");
  DevPtr errors = dev.malloc(4 * 32);
  // A block of 4,096 threads: cudaErrorInvalidConfiguration (9) for every thread that asked.
  dev.launch(m.kernel("refused"), {1}, {32}, 0, KernelArgs().ptr(errors));
  for (int32_t e : dev.download<int32_t>(errors, 32)) EXPECT_EQ(e, 9);
  EXPECT_EQ(dev.launches().size(), 1u);
  // Over the pending-launch limit: cudaErrorLaunchPendingCountExceeded (69) for the rest.
  dev.setPendingLaunchLimit(40);
  DevPtr out = dev.malloc(4 * 64), scales = dev.malloc(4 * 64);
  dev.launch(m.kernel("parent"), {64}, {1}, 0, KernelArgs().ptr(out).ptr(scales));
  EXPECT_EQ(dev.launches().size(), 1u + 1u + 40u);
  const auto got = dev.download<int32_t>(out, 64);
  for (int b = 0; b < 64; ++b) EXPECT_EQ(got[b], b < 40 ? (b + 2) * b : 0) << "block " << b;
}

TEST(DeviceLaunches, OtherDeviceRuntimeCallsAreNamedWhenTheKernelLoads) {
  Device dev(platform());
  Module& m = dev.loadModuleFile(std::string(GPUSC_SOURCE_DIR) + "/tests/data/device_launches.ptx");
  try {
    m.kernel("allocates");
    FAIL() << "cudaMalloc in device code was accepted";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("the device runtime's 'Malloc'"), std::string::npos) << what;
    EXPECT_NE(what.find("device_launches.ptx:"), std::string::npos) << what;
  }
}

// ---- device malloc/free ------------------------------------------------------------------------

TEST(DeviceMalloc, NewAndDeleteBuildAndFreeLists) {
  for (ExecMode mode : {ExecMode::Functional, ExecMode::Timing}) {
    Device dev(platform(), mode);
    Module& m = dev.loadModuleFile(std::string(GPUSC_SOURCE_DIR) + "/tests/data/device_malloc.ptx");
    DevPtr sums = dev.malloc(4 * 96);
    dev.launch(m.kernel("lists"), {3}, {32}, 0, KernelArgs().ptr(sums));
    auto out = dev.download<int32_t>(sums, 96);
    for (int t = 0; t < 96; ++t) {
      int want = 0;
      for (int i = 0; i < t % 8 + 1; ++i) want += t + i;
      EXPECT_EQ(out[t], want) << "thread " << t;
    }
  }
}

TEST(DeviceMalloc, TheHeapHasThePlatformsSizeAndOutlivesLaunches) {
  PlatformConfig cfg = platform();
  cfg.memory.device_heap_bytes = 1 << 20;  // 1 MiB
  Device dev(cfg);
  Module& m = dev.loadModuleFile(std::string(GPUSC_SOURCE_DIR) + "/tests/data/device_malloc.ptx");
  const uint64_t bytes = 96 << 10;  // ten blocks fit in 1 MiB, the eleventh does not
  const uint64_t fit = cfg.memory.device_heap_bytes / bytes;
  DevPtr blocks = dev.malloc(8 * 32), checks = dev.malloc(4 * 32);
  dev.launch(m.kernel("hog"), {1}, {32}, 0, KernelArgs().ptr(blocks).u64(bytes));
  auto got = dev.download<uint64_t>(blocks, 32);
  std::vector<uint64_t> seen;
  for (uint64_t t = 0; t < 32; ++t) {
    if (t < fit) {
      EXPECT_NE(got[t], 0u) << t;
      EXPECT_EQ(got[t] % 16, 0u) << t;
      for (uint64_t o : seen)  // blocks do not overlap
        EXPECT_TRUE(got[t] >= o + bytes || got[t] + bytes <= o) << t;
      seen.push_back(got[t]);
    } else {
      EXPECT_EQ(got[t], 0u) << "thread " << t << " got a block past the heap's size";
    }
  }
  // The blocks and their contents survive into the next launch, which frees them.
  dev.launch(m.kernel("release"), {1}, {32}, 0, KernelArgs().ptr(blocks).u64(bytes).ptr(checks));
  auto sums = dev.download<int32_t>(checks, 32);
  for (int t = 0; t < 32; ++t) EXPECT_EQ(sums[t], uint64_t(t) < fit ? 2 * t : -1) << t;
  // Freed: the same requests fit again; freeing twice is a fault.
  dev.launch(m.kernel("hog"), {1}, {32}, 0, KernelArgs().ptr(blocks).u64(bytes));
  auto again = dev.download<uint64_t>(blocks, 32);
  EXPECT_EQ(std::count(again.begin(), again.end(), 0u), int64_t(32 - fit));
  dev.launch(m.kernel("release"), {1}, {32}, 0, KernelArgs().ptr(blocks).u64(bytes).ptr(checks));
  EXPECT_THROW(dev.launch(m.kernel("release"), {1}, {32}, 0,
                          KernelArgs().ptr(blocks).u64(bytes).ptr(checks)),
               KernelFault);
}

// ---- video instructions ------------------------------------------------------------------------

// The error message `body` makes the decoder report.
std::string decodeErrorOf(const std::string& body) {
  try {
    eval1(body, 1);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

// A selected byte (".b0".."b3"), half-word (".h0", ".h1") or the word (""), extended.
int64_t videoPart(uint32_t v, const std::string& sel, bool isSigned) {
  uint32_t bitsWide = 32, pos = 0;
  if (!sel.empty()) {
    bitsWide = sel[1] == 'b' ? 8 : 16;
    pos = uint32_t(sel[2] - '0') * bitsWide;
  }
  const uint64_t raw = (uint64_t(v) >> pos) & ((1ull << bitsWide) - 1);
  if (isSigned && (raw >> (bitsWide - 1))) return int64_t(raw) - int64_t(1ll << bitsWide);
  return int64_t(raw);
}

int64_t clampRange(int64_t x, unsigned w, bool isSigned) {
  const int64_t lo = isSigned ? -(1ll << (w - 1)) : 0;
  const int64_t hi = isSigned ? (1ll << (w - 1)) - 1 : (1ll << w) - 1;
  return std::min(std::max(x, lo), hi);
}

struct ScalarVideo {
  std::string op;  // vadd vsub vabsdiff vmin vmax vshl vshr vset
  bool dS, aS, bS, sat;
  std::string op2;   // "", "add", "min", "max"; or a comparison for vset
  std::string cmp;   // vset
  std::string mode;  // vshl/vshr: clamp or wrap
  std::string dsel, asel, bsel;

  std::string ptx() const {
    auto ty = [](bool s) { return s ? ".s32" : ".u32"; };
    std::string s = op;
    if (op != "vset") s += ty(dS);
    s += ty(aS);
    s += (op == "vshl" || op == "vshr") ? ".u32" : ty(bS);
    if (!cmp.empty()) s += "." + cmp;
    if (sat) s += ".sat";
    if (!mode.empty()) s += "." + mode;
    if (!op2.empty()) s += "." + op2;
    s += " %o32" + dsel + ", %a32" + asel + ", %b32" + bsel;
    if (!op2.empty() || !dsel.empty()) s += ", %c32";
    return s + ";";
  }

  uint32_t ref(uint32_t a, uint32_t b, uint32_t c) const {
    __extension__ typedef __int128 I;  // exact: a shifted 33-bit value needs 65 bits
    const bool shift = op == "vshl" || op == "vshr";
    const I ta = videoPart(a, asel, aS), tb = videoPart(b, bsel, shift ? false : bS);
    I t = 0;
    if (op == "vadd") t = ta + tb;
    if (op == "vsub") t = ta - tb;
    if (op == "vabsdiff") t = ta > tb ? ta - tb : tb - ta;
    if (op == "vmin") t = std::min(ta, tb);
    if (op == "vmax") t = std::max(ta, tb);
    if (shift) {
      const int n = int(mode == "clamp" ? std::min<I>(tb, 32) : tb % 32);
      I p = 1;
      for (int i = 0; i < n; ++i) p *= 2;
      // Shifting right floors (an arithmetic shift).
      t = op == "vshl" ? ta * p : (ta >= 0 ? ta / p : -((-ta + p - 1) / p));
    }
    if (op == "vset") {
      if (cmp == "eq") t = ta == tb;
      if (cmp == "ne") t = ta != tb;
      if (cmp == "lt") t = ta < tb;
      if (cmp == "le") t = ta <= tb;
      if (cmp == "gt") t = ta > tb;
      if (cmp == "ge") t = ta >= tb;
    }
    if (sat) {
      const unsigned w = dsel.empty() ? 32 : dsel[1] == 'b' ? 8 : 16;
      const I lo = dS ? -(I(1) << (w - 1)) : I(0);
      const I hi = dS ? (I(1) << (w - 1)) - 1 : (I(1) << w) - 1;
      t = t < lo ? lo : t > hi ? hi : t;
    }
    const I tc = (op != "vset" && dS) ? I(int32_t(c)) : I(c);
    if (op2 == "add") t += tc;
    if (op2 == "min") t = std::min(t, tc);
    if (op2 == "max") t = std::max(t, tc);
    const uint32_t r = uint32_t(uint64_t(t));
    if (dsel.empty()) return r;
    const uint32_t w = dsel[1] == 'b' ? 8 : 16, pos = uint32_t(dsel[2] - '0') * w;
    const uint32_t m = (w == 8 ? 0xffu : 0xffffu) << pos;
    return ((r << pos) & m) | (c & ~m);
  }
};

TEST(VideoInstructions, ScalarOpsWithSelectorsSaturationAndSecondaryOps) {
  const Rows rows = grid(words(10, 71), words(8, 72), {0u, 0x7ffffff0u, 0x80000005u, 0xdeadbeefu});
  const std::vector<std::string> sels = {"", ".b0", ".b1", ".b2", ".b3", ".h0", ".h1"};
  const std::vector<std::string> op2s = {"", "add", "min", "max"};
  const std::vector<std::string> ops = {"vadd", "vsub", "vabsdiff", "vmin", "vmax"};
  std::mt19937 rng(73);
  int n = 0;
  for (const auto& op : ops)
    for (int k = 0; k < 10; ++k) {
      ScalarVideo v{
          op, bool(rng() & 1), bool(rng() & 1), bool(rng() & 1), bool(rng() & 1), "", "", "",
          "", sels[rng() % 7], sels[rng() % 7]};
      if (k % 3 == 2)
        v.dsel = sels[1 + rng() % 6];  // merge into c
      else
        v.op2 = op2s[rng() % 4];
      if (k == 0) v = {op, true, true, true, true, "", "", "", "", "", ""};  // plain .s32 .sat
      if (k == 1) v = {op, false, true, false, true, "", "", "", ".b2", ".h1", ".b3"};
      checkRows32(v.ptx(), rows,
                  [&](uint32_t a, uint32_t b, uint32_t c) { return v.ref(a, b, c); });
      ++n;
    }
  EXPECT_EQ(n, 50);
  // The ISA's own examples.
  EXPECT_EQ(eval1("vadd.s32.u32.s32.sat %o32, %a32.b0, %b32.h0;", 0xff, 0x8000).o32,
            uint32_t(255 - 32768));
  EXPECT_EQ(eval1("vadd.u32.u32.u32.sat %o32, %a32, %b32;", 0xfffffff0u, 0x20).o32, 0xffffffffu);
  EXPECT_EQ(eval1("vsub.s32.s32.u32.sat %o32.h1, %a32, %b32.b1, %c32;", 5, 0xff00, 0x1234abcd).o32,
            0xff06abcdu);  // 5 - 255 = -250 = 0xff06 in the high half-word
}

TEST(VideoInstructions, ShiftsClampOrWrapTheAmount) {
  Rows rows = grid(words(12, 81), {0u, 1u, 7u, 31u, 32u, 33u, 40u, 0x1fu + 0x100u}, {0u, 9u});
  std::mt19937 rng(82);
  const std::vector<std::string> sels = {"", ".b0", ".b3", ".h0", ".h1"};
  for (const char* op : {"vshl", "vshr"})
    for (const char* mode : {"clamp", "wrap"})
      for (int k = 0; k < 4; ++k) {
        ScalarVideo v{op, bool(k & 1),     bool(k & 2),        false, k == 3, "", "", mode,
                      "", sels[rng() % 5], k == 2 ? ".b0" : ""};
        if (k == 2) v.op2 = "max";
        checkRows32(v.ptx(), rows,
                    [&](uint32_t a, uint32_t b, uint32_t c) { return v.ref(a, b, c); });
      }
}

TEST(VideoInstructions, VsetComparesSelectedParts) {
  const Rows rows = grid(words(12, 91), words(12, 92), {0u, 0xabcdef01u});
  std::mt19937 rng(93);
  const std::vector<std::string> sels = {"", ".b0", ".b1", ".b2", ".b3", ".h0", ".h1"};
  for (const char* cmp : {"eq", "ne", "lt", "le", "gt", "ge"})
    for (int k = 0; k < 3; ++k) {
      ScalarVideo v{"vset", false, bool(rng() & 1), bool(rng() & 1), false, "", cmp,
                    "",     "",    sels[rng() % 7], sels[rng() % 7]};
      if (k == 1) v.op2 = "add";
      if (k == 2) v.dsel = ".b1";
      checkRows32(v.ptx(), rows,
                  [&](uint32_t a, uint32_t b, uint32_t c) { return v.ref(a, b, c); });
    }
  EXPECT_EQ(eval1("vset.u32.s32.lt %o32, %a32.b0, %b32.b0;", 0x80, 0x80).o32, 0u);  // 128 < -128
  EXPECT_EQ(eval1("vset.s32.u32.lt %o32, %a32.b0, %b32.b0;", 0x80, 0x80).o32, 1u);  // -128 < 128
}

// vmad from the ISA's description: (a*b) (negated when exactly one of a, b is), plus c (or
// minus c), plus one with .po; shifted right by 7 or 15; clamped to 32 bits with .sat.
uint32_t refVmad(uint32_t a, uint32_t b, uint32_t c, bool aS, bool bS, bool negA, bool negB,
                 bool negC, bool po, int shr, bool sat) {
  __extension__ typedef __int128 I;
  const I ta = videoPart(a, "", aS), tb = videoPart(b, "", bS);
  const bool negP = negA != negB;
  const bool signedFinal = aS || bS || negP || negC;
  I prod = negP ? -(ta * tb) : ta * tb;
  // c: sign-extended when the result is signed; "-c" is the complement of c's 32 bits plus one.
  I tc = signedFinal ? I(int32_t(negC ? ~c : c)) : I(c);
  if (negC) tc += 1;
  I r = prod + tc + (po ? 1 : 0);
  if (shr) r = r >= 0 ? r / (I(1) << shr) : -((-r + (I(1) << shr) - 1) / (I(1) << shr));
  r = signedFinal ? I(int64_t(uint64_t(r))) : I(uint64_t(r));
  if (sat) {
    const I lo = signedFinal ? I(INT32_MIN) : I(0), hi = signedFinal ? I(INT32_MAX) : I(UINT32_MAX);
    r = r < lo ? lo : r > hi ? hi : r;
  }
  return uint32_t(uint64_t(r));
}

TEST(VideoInstructions, VmadNegatesScalesAndSaturates) {
  const Rows rows = grid(words(12, 101), words(10, 102), {0u, 1u, 0x7fffffffu, 0x80000000u, 77u});
  struct Case {
    bool aS, bS, negA, negB, negC, po;
    int shr;
    bool sat;
  };
  const std::vector<Case> cases = {
      {false, false, false, false, false, false, 0, false},
      {false, false, false, false, false, false, 0, true},
      {true, true, false, false, false, false, 0, true},
      {false, true, true, false, false, false, 7, false},
      {false, false, true, false, false, false, 0, true},
      {false, false, false, false, true, false, 15, false},
      {true, false, false, false, true, false, 0, true},
      {false, false, false, false, false, true, 7, true},
      {true, true, true, true, false, false, 15, true},
      {true, false, false, true, false, false, 0, false},
  };
  for (const auto& k : cases) {
    std::string s = std::string("vmad.s32") + (k.aS ? ".s32" : ".u32") + (k.bS ? ".s32" : ".u32");
    if (k.po) s += ".po";
    if (k.sat) s += ".sat";
    if (k.shr) s += ".shr" + std::to_string(k.shr);
    s += std::string(" %o32, ") + (k.negA ? "-" : "") + "%a32, " + (k.negB ? "-" : "") + "%b32, " +
         (k.negC ? "-" : "") + "%c32;";
    checkRows32(s, rows, [&](uint32_t a, uint32_t b, uint32_t c) {
      return refVmad(a, b, c, k.aS, k.bS, k.negA, k.negB, k.negC, k.po, k.shr, k.sat);
    });
  }
  EXPECT_EQ(eval1("vmad.u32.u32.u32.po %o32, %a32, %b32, %c32;", 3, 4, 5).o32, 18u);
  EXPECT_EQ(eval1("vmad.s32.u32.u32 %o32, %a32, %b32, -%c32;", 3, 4, 5).o32, 7u);
  EXPECT_EQ(eval1("vmad.s32.u32.u32 %o32, -%a32, %b32, %c32;", 3, 4, 5).o32, uint32_t(-7));
}

// SIMD forms: lane i of a takes element asel[i] of the 64-bit {b, a} (half-words or bytes).
struct SimdVideo {
  std::string op;  // vadd vsub vavrg vabsdiff vmin vmax vset
  int lanes;
  bool dS, aS, bS, sat, add;
  std::string cmp;
  std::vector<int> asel, bsel;  // per lane; empty: the defaults
  std::vector<int> mask;        // lanes written (descending); empty: all

  static std::string digits(const std::vector<int>& v) {
    std::string s;
    for (size_t i = v.size(); i-- > 0;) s += char('0' + v[i]);
    return s;
  }
  std::string ptx() const {
    auto ty = [](bool s) { return s ? ".s32" : ".u32"; };
    const char* letter = lanes == 2 ? ".h" : ".b";
    std::string s = op + std::to_string(lanes);
    if (op != "vset") s += ty(dS);
    s += ty(aS);
    s += ty(bS);
    if (!cmp.empty()) s += "." + cmp;
    if (sat) s += ".sat";
    if (add) s += ".add";
    s += " %o32";
    if (!mask.empty()) {
      s += letter;
      for (int m : mask) s += char('0' + m);
    }
    s += ", %a32";
    if (!asel.empty()) s += letter + digits(asel);
    s += ", %b32";
    if (!bsel.empty()) s += letter + digits(bsel);
    return s + ", %c32;";
  }
  uint32_t ref(uint32_t a, uint32_t b, uint32_t c) const {
    const unsigned w = 32 / lanes;
    const uint64_t ab = uint64_t(b) << 32 | a;
    auto elem = [&](int k, bool sgn) {
      const uint64_t raw = (ab >> (k * w)) & ((1ull << w) - 1);
      return (sgn && (raw >> (w - 1))) ? int64_t(raw) - int64_t(1ll << w) : int64_t(raw);
    };
    uint32_t d = add ? c : 0;
    for (int i = 0; i < lanes; ++i) {
      const int ka = asel.empty() ? i : asel[i], kb = bsel.empty() ? lanes + i : bsel[i];
      const int64_t x = elem(ka, aS), y = elem(kb, bS);
      int64_t t = 0;
      if (op == "vadd") t = x + y;
      if (op == "vsub") t = x - y;
      if (op == "vavrg") t = (x + y >= 0) ? (x + y + 1) / 2 : -((-(x + y) + 1) / 2);
      if (op == "vabsdiff") t = std::llabs(x - y);
      if (op == "vmin") t = std::min(x, y);
      if (op == "vmax") t = std::max(x, y);
      if (op == "vset")
        t = cmp == "eq"   ? x == y
            : cmp == "ne" ? x != y
            : cmp == "lt" ? x < y
            : cmp == "le" ? x <= y
            : cmp == "gt" ? x > y
                          : x >= y;
      if (sat) t = clampRange(t, w, dS);
      const bool on = mask.empty() || std::find(mask.begin(), mask.end(), i) != mask.end();
      const uint32_t m = uint32_t((1ull << w) - 1) << (w * i);
      if (add)
        d += on ? uint32_t(t) : 0;
      else
        d |= on ? (uint32_t(t) << (w * i)) & m : c & m;
    }
    return d;
  }
};

TEST(VideoInstructions, SimdHalfWordAndByteFormsWithSelectorsMasksAndAccumulate) {
  const Rows rows = grid(words(10, 111), words(10, 112), {0u, 0x01020304u, 0xfffefdfcu});
  std::mt19937 rng(113);
  const std::vector<std::vector<int>> masks2 = {{}, {0}, {1}, {1, 0}};
  const std::vector<std::vector<int>> masks4 = {{}, {0}, {2}, {3, 1}, {3, 2, 0}, {2, 1, 0}};
  int n = 0;
  for (int lanes : {2, 4})
    for (const char* op : {"vadd", "vsub", "vavrg", "vabsdiff", "vmin", "vmax", "vset"})
      for (int k = 0; k < 4; ++k) {
        SimdVideo v{
            op, lanes, bool(rng() & 1), bool(rng() & 1), bool(rng() & 1), false, false, "", {},
            {}, {}};
        if (std::string(op) == "vset") {
          const char* cmps[] = {"eq", "ne", "lt", "le", "gt", "ge"};
          v.cmp = cmps[rng() % 6];
        } else if (k == 1 || k == 3) {
          v.sat = true;
        }
        if (k == 2) v.add = true;
        if (k >= 1) {
          for (int i = 0; i < lanes; ++i) {
            v.asel.push_back(int(rng() % (2 * lanes)));
            v.bsel.push_back(int(rng() % (2 * lanes)));
          }
          const auto& ms = lanes == 2 ? masks2 : masks4;
          v.mask = ms[rng() % ms.size()];
        }
        checkRows32(v.ptx(), rows,
                    [&](uint32_t a, uint32_t b, uint32_t c) { return v.ref(a, b, c); });
        ++n;
      }
  EXPECT_EQ(n, 56);
  // By hand: bytes 0x7f + 0x01 saturate to 0x7f as s8; u8 0xff + 0x01 wraps without .sat.
  EXPECT_EQ(eval1("vadd4.s32.s32.s32.sat %o32, %a32, %b32, %c32;", 0x7f7f0102, 0x0181ff01, 0).o32,
            0x7f000003u);
  EXPECT_EQ(eval1("vadd4.u32.u32.u32 %o32, %a32, %b32, %c32;", 0xff, 0x01, 0).o32, 0u);
  EXPECT_EQ(eval1("vavrg2.u32.u32.u32 %o32, %a32, %b32, %c32;", 0x00030001, 0x00040002, 0).o32,
            0x00040002u);  // (3+4+1)/2 = 4, (1+2+1)/2 = 2
  EXPECT_EQ(
      eval1("vabsdiff4.u32.u32.u32.add %o32, %a32, %b32, %c32;", 0x0a000005, 0x000a0001, 100).o32,
      100u + 10 + 10 + 0 + 4);  // a sum of absolute differences
}

TEST(VideoInstructions, MalformedVideoOperandsAreErrorsWithTheirPosition) {
  auto expectError = [](const std::string& body, const std::string& what) {
    const std::string e = decodeErrorOf(body);
    EXPECT_NE(e.find(what), std::string::npos) << body << "\n" << e;
    EXPECT_NE(e.find(".ptx:"), std::string::npos) << e;  // file:line:col
  };
  expectError("add.u32 %o32, %a32.b0, %b32;", "only valid in video instructions");
  expectError("sub.u32 %o32, -%a32, %b32;", "only valid in vmad");
  expectError("vadd.u32.u32.u32 %o32, %a32.h2, %b32;", "is not a selector of vadd");
  expectError("vadd2.u32.u32.u32 %o32, %a32.h14, %b32, %c32;", "is not a source selector");
  expectError("vadd4.u32.u32.u32 %o32.b0123, %a32, %b32, %c32;", "is not a destination mask");
  expectError("vadd2.u32.u32.u32.sat.add %o32, %a32, %b32, %c32;", "saturation cannot");
  expectError("vadd.u32.u32.u32 %o32, %a32, %b32, %c32;", "needs a secondary operation");
  expectError("vadd.u32.u32.u32.add %o32.b1, %a32, %b32, %c32;", "exclude each other");
  expectError("vmad.s32.u32.u32 %o32, -%a32, %b32, -%c32;", "not both");
  expectError("vmad.u32.u32.u32.po %o32, -%a32, %b32, %c32;", "no negated operand");
  expectError("vshl.u32.u32.s32.wrap %o32, %a32, %b32;", ".u32 shift amount");
  expectError("vshl.u32.u32.u32 %o32, %a32, %b32;", "needs .clamp or .wrap");
  expectError("vset.u32.u32 %o32, %a32, %b32;", "needs a comparison");
  expectError("vadd.u32.u32 %o32, %a32, %b32;", "needs .dtype.atype.btype");
  EXPECT_NE(decodeErrorOf("vadd.u64.u32.u32 %o32, %a32, %b32;").find("unsupported PTX at"),
            std::string::npos);
}

// ---- newer warp, cache-policy, cluster and stack instructions ----------------------------------

TEST(NewerInstructions, ElectSyncPicksTheLowestActiveMember) {
  for (uint32_t members : {0xffffffffu, 0xf0f0f0f0u, 0x00000100u}) {
    const uint32_t from = 5;  // threads below this one do not execute elect.sync
    Rows rows;
    for (uint32_t t = 0; t < 64; ++t) rows.push_back({from, members, 0});
    auto out = eval(
        "setp.ge.u32 %p1, %t, %a32;\n@%p1 elect.sync %r1|%p2, %b32;\n"
        "selp.u32 %r2, 256, 0, %p2;\nor.b32 %o32, %r1, %r2;",
        rows);
    for (uint32_t t = 0; t < 64; ++t) {
      uint32_t active = 0;
      for (uint32_t l = 0; l < 32; ++l)
        if ((t / 32) * 32 + l >= from) active |= 1u << l;
      const uint32_t m = active & members;
      uint32_t want = 0;
      if (t >= from && m != 0) {
        uint32_t leader = 0;
        while (!((m >> leader) & 1u)) ++leader;
        want = leader | ((t % 32) == leader ? 256u : 0u);
      }
      EXPECT_EQ(out[t].o32, want) << "thread " << t << " members 0x" << std::hex << members;
    }
  }
}

TEST(NewerInstructions, CachePoliciesAreHintsOnLoadsStoresAndAtomics) {
  const std::string body =
      "createpolicy.fractional.L2::evict_last.b64 %rd1, 0f3F000000;\n"
      "createpolicy.fractional.L2::evict_first.L2::evict_unchanged.b64 %rd2;\n"
      "createpolicy.range.global.L2::evict_last.L2::evict_first.b64 %rd3, [%addr], 8, 24;\n"
      "createpolicy.cvt.L2.b64 %rd4, %a64;\n"
      "ld.global.L2::cache_hint.u64 %rd5, [%addr+8], %rd1;\n"
      "st.global.L2::cache_hint.u64 [%addr+16], %rd5, %rd2;\n"
      "atom.global.add.L2::cache_hint.u64 %rd6, [%addr+16], 1, %rd3;\n"
      "red.global.add.L2::cache_hint.u64 [%addr+16], 2, %rd3;\n"
      "applypriority.global.L2::evict_normal [%addr], 128;\n"
      "discard.global.L2 [%addr+128], 128;\n"
      "prefetch.global.L2::evict_last [%addr];\nprefetchu.L1 [%addr];\n"
      "ld.global.u64 %rd7, [%addr+16];\nxor.b64 %o, %rd7, %rd4;\n"
      "setp.ne.u64 %p1, %rd1, %rd2;\nsetp.ne.u64 %p2, %rd6, %rd5;\nselp.u32 %o32, 1, 0, %p1;\n"
      "@%p2 add.u32 %o32, %o32, 2;";
  Rows rows;
  std::mt19937_64 rng(121);
  for (int i = 0; i < 40; ++i) rows.push_back({rng(), rng(), rng()});
  for (ExecMode mode : {ExecMode::Functional, ExecMode::Timing}) {
    auto out = eval(body, rows, mode);
    for (size_t i = 0; i < rows.size(); ++i) {
      EXPECT_EQ(out[i].o, (rows[i][1] + 3) ^ rows[i][0]) << i;  // b + 1 + 2; cvt keeps a
      EXPECT_EQ(out[i].o32, 1u) << i;  // distinct policies; the atomic saw b
    }
  }
  EXPECT_NE(decodeErrorOf("ld.global.L2::cache_hint.u64 %o, [%addr];").find("takes 3 operands"),
            std::string::npos);
  EXPECT_NE(decodeErrorOf("createpolicy.fractional.L2::evict_last.b64 %rd1, 0f3FC00000;")
                .find("the fraction must be in (0, 1]"),
            std::string::npos);
  EXPECT_NE(decodeErrorOf("discard.global.L2 [%addr], 64;").find("its size must be 128"),
            std::string::npos);
}

TEST(NewerInstructions, AllocaStacksaveAndStackrestore) {
  const std::string body =
      "{\n.local .align 8 .b8 lbuf[40];\nmov.u64 %rd9, lbuf;\nst.local.u64 [%rd9+32], %c64;\n"
      "alloca.u64 %rd1, 24, 16;\ncvta.local.u64 %rd2, %rd1;\n"
      "st.u64 [%rd2], %a64;\nst.local.u64 [%rd1+8], %b64;\n"
      "stacksave.u64 %rd3;\nand.b64 %rd10, %c64, 63;\nalloca.u64 %rd4, %rd10;\n"
      "st.local.u8 [%rd4], %c32;\nstackrestore.u64 %rd3;\nalloca.u64 %rd5, 8;\n"
      "alloca.u32 %r1, 4, 4;\n"
      "ld.local.u64 %rd6, [%rd1];\nld.u64 %rd7, [%rd2+8];\nld.local.u64 %rd8, [lbuf+32];\n"
      "add.u64 %o, %rd6, %rd7;\nxor.b64 %o, %o, %rd8;\n"
      // 1: restore reuses the space; 2: 16-aligned; 4: after the local variables;
      // 8: the u32 allocation follows the u64 one.
      "setp.eq.u64 %p1, %rd5, %rd4;\nselp.u32 %o32, 1, 0, %p1;\n"
      "and.b64 %rd11, %rd1, 15;\nsetp.eq.u64 %p2, %rd11, 0;\n@%p2 add.u32 %o32, %o32, 2;\n"
      "add.u64 %rd12, %rd9, 40;\nsetp.ge.u64 %p3, %rd1, %rd12;\n@%p3 add.u32 %o32, %o32, 4;\n"
      "cvt.u32.u64 %r2, %rd5;\nadd.u32 %r2, %r2, 8;\nsetp.eq.u32 %p4, %r1, %r2;\n"
      "@%p4 add.u32 %o32, %o32, 8;\n}";
  Rows rows;
  std::mt19937_64 rng(131);
  for (int i = 0; i < 40; ++i) rows.push_back({rng(), rng(), rng()});
  for (ExecMode mode : {ExecMode::Functional, ExecMode::Timing}) {
    auto out = eval(body, rows, mode);
    for (size_t i = 0; i < rows.size(); ++i) {
      EXPECT_EQ(out[i].o, (rows[i][0] + rows[i][1]) ^ rows[i][2]) << i;
      EXPECT_EQ(out[i].o32, 15u) << i;
    }
  }
  // CUDA's default stack is 1 KiB per thread.
  EXPECT_THROW(eval1("alloca.u64 %rd1, 1000; alloca.u64 %rd2, 100;", 0), KernelFault);
  EXPECT_THROW(eval1("stackrestore.u64 %a64;", 1u << 20), KernelFault);
  EXPECT_NE(decodeErrorOf("alloca.u64 %rd1, 8, 3;").find("power of two"), std::string::npos);
}

TEST(NewerInstructions, ClusterOfOneGridControlAndRegisterHints) {
  const std::string body =
      "{\n.shared .align 8 .b8 sbuf[64];\nmov.u64 %rd1, sbuf;\nadd.u64 %rd1, %rd1, %a64;\n"
      "mapa.shared::cluster.u64 %rd2, %rd1, 0;\ngetctarank.shared::cluster.u32 %r1, %rd1;\n"
      "cvta.shared.u64 %rd3, %rd1;\nmapa.u64 %rd4, %rd3, 0;\ngetctarank.u64 %r2, %rd3;\n"
      "griddepcontrol.wait;\ngriddepcontrol.launch_dependents;\n"
      "setmaxnreg.inc.sync.aligned.u32 240;\nsetmaxnreg.dec.sync.aligned.u32 24;\n"
      "sub.u64 %o, %rd2, %rd1;\nsub.u64 %rd5, %rd4, %rd3;\nor.b64 %o, %o, %rd5;\n"
      "add.u32 %o32, %r1, %r2;\nadd.u32 %o32, %o32, 7;\n"
      // Special registers of a cluster of one block.
      "mov.u32 %r3, %cluster_ctarank;\nmov.u32 %r4, %cluster_nctarank;\n"
      "mov.u32 %r5, %clusterid.x;\nmov.u32 %r6, %ctaid.x;\nmov.u32 %r7, %cluster_nctaid.y;\n"
      "mov.u32 %r8, %cluster_ctaid.z;\nmov.u32 %r9, %is_explicit_cluster;\n"
      "mov.u32 %r10, %nclusterid.x;\nmov.u32 %r11, %nctaid.x;\n"
      "add.u32 %o32, %o32, %r3;\nadd.u32 %o32, %o32, %r8;\nadd.u32 %o32, %o32, %r9;\n"
      "sub.u32 %r5, %r5, %r6;\nsub.u32 %r10, %r10, %r11;\nadd.u32 %o32, %o32, %r5;\n"
      "add.u32 %o32, %o32, %r10;\nmul.lo.u32 %o32, %o32, %r4;\nmul.lo.u32 %o32, %o32, %r7;\n"
      // .shared::cluster addresses and spaces are the block's own shared memory.
      "st.shared::cluster.u32 [%rd2], 5;\nld.shared::cluster.u32 %r12, [%rd1];\n"
      "atom.shared::cluster.add.u32 %r13, [%rd2+4], 0;\n"
      "cvta.shared::cluster.u64 %rd6, %rd1;\nsub.u64 %rd6, %rd6, %rd3;\nor.b64 %o, %o, %rd6;\n"
      "isspacep.shared::cluster %p1, %rd3;\nselp.u32 %r14, 0, 100, %p1;\n"
      "add.u32 %o32, %o32, %r14;\nsub.u32 %r12, %r12, 5;\nadd.u32 %o32, %o32, %r12;\n"
      "prefetch.global.L2::evict_normal [%rd3];\n"
      "fence.acq_rel.sync_restrict::shared::cluster.cluster;\n"
      "fence.proxy.async::generic.release.sync_restrict::shared::cta.cluster;\n}";
  Rows rows;
  for (uint64_t i = 0; i < 40; ++i) rows.push_back({i % 8 * 8, 0, 0});
  for (ExecMode mode : {ExecMode::Functional, ExecMode::Timing}) {
    auto out = eval(body, rows, mode);
    for (size_t i = 0; i < rows.size(); ++i) {
      EXPECT_EQ(out[i].o, 0u) << i;
      EXPECT_EQ(out[i].o32, 7u) << i;
    }
  }
  EXPECT_THROW(eval1("mapa.u64 %o, %a64, %b32;", 0, 1), KernelFault);  // no block of rank 1
  // A kernel may ask for clusters of one block, not more.
  auto clusterKernel = [](const std::string& directive) {
    Device dev(platform());
    return std::string(
        dev.loadModule(module(".visible .entry k() " + directive + "\n{\n  ret;\n}\n"),
                       "cluster.ptx")
            .kernel("k")
            .name);
  };
  EXPECT_EQ(clusterKernel(".reqnctapercluster 1, 1, 1 .explicitcluster .maxclusterrank 1"), "k");
  try {
    clusterKernel(".reqnctapercluster 2, 1, 1");
    ADD_FAILURE() << "a cluster of two blocks was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("clusters are not modelled"), std::string::npos)
        << e.what();
  }
  EXPECT_NE(decodeErrorOf("setmaxnreg.inc.sync.aligned.u32 250;").find("multiple of 8"),
            std::string::npos);
}

TEST(NewerInstructions, CpAsyncMbarrierArrive) {
  // Copies complete at once: .noinc is one arrival; without it, the raised count and the
  // arrival cancel. The state mbarrier.arrive returns has the count before its own arrival.
  for (bool noinc : {true, false}) {
    const std::string body = std::string(
                                 "{\n.shared .align 8 .b64 bar;\nmbarrier.init.shared.b64 [bar], "
                                 "3;\ncp.async.mbarrier.arrive") +
                             (noinc ? ".noinc" : "") +
                             ".shared.b64 [bar];\nmbarrier.arrive.shared.b64 %rd1, [bar];\n"
                             "mbarrier.pending_count.b64 %o32, %rd1;\n}";
    for (ExecMode mode : {ExecMode::Functional, ExecMode::Timing}) {
      auto out = eval(body, Rows(1, {0, 0, 0}), mode);
      EXPECT_EQ(out[0].o32, noinc ? 2u : 3u) << body;
    }
  }
  // A block's own mbarrier through a .shared::cluster address (a cluster of one block).
  auto out = eval1(
      "{\n.shared .align 8 .b64 bar;\nmbarrier.init.shared.b64 [bar], 2;\n"
      "mbarrier.arrive.release.cluster.shared::cluster.b64 _, [bar];\n"
      "mbarrier.arrive.shared.b64 %rd1, [bar];\nmbarrier.pending_count.b64 %o32, %rd1;\n}",
      0);
  EXPECT_EQ(out.o32, 1u);
}

TEST(NewerInstructions, BulkReductionsIntoGlobalAndSharedMemory) {
  // 16 bytes: the destination holds (a, b), the source (b, c); each element of the destination
  // becomes dst op src.
  struct Case {
    const char* op;  // redOp.type
    std::function<void(uint8_t*, const uint8_t*)> ref;
  };
  auto ints = [](auto f, auto tag) {
    using T = decltype(tag);
    return [f](uint8_t* d, const uint8_t* s) {
      for (int i = 0; i < 16; i += int(sizeof(T))) {
        T x, y;
        std::memcpy(&x, d + i, sizeof(T));
        std::memcpy(&y, s + i, sizeof(T));
        x = f(x, y);
        std::memcpy(d + i, &x, sizeof(T));
      }
    };
  };
  const std::vector<Case> cases = {
      {"add.u32", ints([](uint32_t x, uint32_t y) { return x + y; }, uint32_t())},
      {"min.s32", ints([](int32_t x, int32_t y) { return std::min(x, y); }, int32_t())},
      {"max.u64", ints([](uint64_t x, uint64_t y) { return std::max(x, y); }, uint64_t())},
      {"min.s64", ints([](int64_t x, int64_t y) { return std::min(x, y); }, int64_t())},
      {"and.b64", ints([](uint64_t x, uint64_t y) { return x & y; }, uint64_t())},
      {"xor.b32", ints([](uint32_t x, uint32_t y) { return x ^ y; }, uint32_t())},
      {"inc.u32", ints([](uint32_t x, uint32_t y) { return x >= y ? 0u : x + 1; }, uint32_t())},
      {"dec.u32",
       ints([](uint32_t x, uint32_t y) { return (x == 0 || x > y) ? y : x - 1; }, uint32_t())},
      {"add.f32", ints(
                      [](uint32_t x, uint32_t y) {
                        const float r = asFloat(x) + asFloat(y);
                        return r != r ? 0x7fffffffu : bits(r);
                      },
                      uint32_t())},
      {"add.f64", ints(
                      [](uint64_t x, uint64_t y) {
                        const double r = asDouble(x) + asDouble(y);
                        return r != r ? 0x7fffffffffffffffull : bits(r);
                      },
                      uint64_t())},
      {"add.noftz.f16", ints(
                            [](uint16_t x, uint16_t y) {
                              const double r = value(kF16, x) + value(kF16, y);
                              if (r != r) return uint16_t(0x7fff);
                              // Exact sums of two f16 values fit a double; round once.
                              I128 m = 0;
                              int e = 0;
                              const double f = std::frexp(std::fabs(r), &e);
                              m = I128(std::ldexp(f, 60));
                              return refRound(kF16, r < 0, m, e - 60, Rnd::Rn);
                            },
                            uint16_t())},
  };
  std::mt19937_64 rng(171);
  for (const auto& k : cases) {
    const bool intOnly = std::string(k.op).find('f') == std::string::npos;
    for (int trial = 0; trial < 6; ++trial) {
      uint64_t a = rng(), b = rng(), c = rng();
      if (trial == 0) a = b;  // equal elements (inc/dec edge)
      if (trial == 1) a = 0;
      if (std::string(k.op).find("f16") != std::string::npos) {  // finite halves, some NaN
        a &= 0x3fff3fff3fff3fffull;
        b &= 0xbbffbbffbbffbbffull;
        if (trial == 2) c = 0x7e0000007e000000ull;
      }
      if (std::string(k.op).find("f32") != std::string::npos) {
        a &= 0x3fffffff3fffffffull;
        b &= 0xbfffffffbfffffffull;
      }
      if (std::string(k.op).find("f64") != std::string::npos) {
        a &= 0x3fffffffffffffffull;
        b &= 0xbfffffffffffffffull;
      }
      uint8_t want[16], src[16];
      std::memcpy(want, &a, 8);
      std::memcpy(want + 8, &b, 8);
      std::memcpy(src, &b, 8);
      std::memcpy(src + 8, &c, 8);
      k.ref(want, src);
      uint64_t w0, w1;
      std::memcpy(&w0, want, 8);
      std::memcpy(&w1, want + 8, 8);
      const std::string toGlobal =
          std::string(
              "{\n.shared .align 16 .b8 sbuf[16];\nst.shared.v2.u64 [sbuf], {%b64, "
              "%c64};\ncp.reduce.async.bulk.global.shared::cta.bulk_group.") +
          k.op +
          " [%addr], [sbuf], 16;\ncp.async.bulk.commit_group;\ncp.async.bulk.wait_group 0;\n"
          "ld.global.u64 %o, [%addr];\nld.global.u64 %rd5, [%addr+8];\nmov.b64 %do, %rd5;\n}";
      for (ExecMode mode : {ExecMode::Functional, ExecMode::Timing}) {
        auto out = eval(toGlobal, Rows(1, {a, b, c}), mode);
        EXPECT_EQ(out[0].o, w0) << k.op << " trial " << trial;
        EXPECT_EQ(bits(out[0].dfo), w1) << k.op << " trial " << trial;
      }
      if (!intOnly) continue;
      const std::string toShared =
          std::string(
              "{\n.shared .align 16 .b8 sbuf[16];\n.shared .align 16 .b8 sdst[16];\n"
              ".shared .align 8 .b64 bar;\nmbarrier.init.shared.b64 [bar], 1;\n"
              "st.shared.v2.u64 [sdst], {%a64, %b64};\nst.shared.v2.u64 [sbuf], {%b64, %c64};\n"
              "mbarrier.arrive.expect_tx.shared.b64 %rd1, [bar], 16;\n"
              "cp.reduce.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes.") +
          k.op +
          " [sdst], [sbuf], 16, [bar];\nWAIT:\nmbarrier.try_wait.shared.b64 %p1, [bar], %rd1;\n"
          "@!%p1 bra WAIT;\nld.shared.u64 %o, [sdst];\nld.shared.u64 %rd5, [sdst+8];\n"
          "mov.b64 %do, %rd5;\n}";
      auto out = eval(toShared, Rows(1, {a, b, c}));
      EXPECT_EQ(out[0].o, w0) << k.op << " trial " << trial << " (shared)";
      EXPECT_EQ(bits(out[0].dfo), w1) << k.op << " trial " << trial << " (shared)";
    }
  }
  EXPECT_NE(decodeErrorOf("{\n.shared .align 16 .b8 s[16];\ncp.reduce.async.bulk.global.shared::"
                          "cta.bulk_group.and.u32 [%addr], [s], 16;\n}")
                .find("unsupported PTX at eval.ptx:"),
            std::string::npos);
  EXPECT_THROW(eval1("{\n.shared .align 16 .b8 s[32];\ncp.reduce.async.bulk.global.shared::cta."
                     "bulk_group.add.u32 [%addr], [s], 24;\n}",
                     0),
               KernelFault);
}

TEST(NewerInstructions, MalformedFormsAreInputErrors) {
  for (const char* body : {
           "createpolicy.fractional.L2::evict_last.b64;",
           "createpolicy.range.L2::evict_last.b64 %rd1, [%addr], 8;",
           "alloca.u64;",
           "alloca.u64 %rd1;",
           "alloca.b32 %r1, 8;",
           "stacksave.u64;",
           "stackrestore.u64 %rd1, %rd2;",
           "elect.sync %r1;",
           "elect.sync %r1, 0xffffffff;",
           "movmatrix.sync.aligned.m8n8.trans.b16 %r1;",
           "movmatrix.sync.aligned.m8n8.b16 %r1, %r2;",
           "vadd.u32.u32.u32 %o32;",
           "vadd.u32.u32.u32 %o32, %a32, %b32, %c32, %a32;",
           "vmad.s32.s32.s32 %o32, %a32, %b32;",
           "vset2.u32.u32.eq %o32, %a32, %b32;",
           "vadd2.u32.u32.u32.min %o32, %a32, %b32, %c32;",
           "cvt.rn.satfinite.e4m3x2.f32 %h1, %fa;",
           "cvt.rn.satfinite.e2m1x2.f16x2 %h1, %a32;",
           "cvt.rz.satfinite.e4m3x2.f32 %h1, %fa, %fb;",
           "cvt.pack.sat.u8.s32.b32 %o32, %a32;",
           "cvt.pack.u8.s32.b32 %o32, %a32, %b32, %c32;",
           "cvt.rn.f32.b32 %fo, %a32;",
           "mapa.u64 %rd1, %rd2;",
           "getctarank.u32 %r1;",
           "applypriority.global.L2::evict_normal [%addr];",
           "discard.global.L2 [%addr], %r1;",
           "griddepcontrol.wait %r1;",
           "griddepcontrol;",
           "setmaxnreg.inc.sync.aligned.u32 %r1;",
           "setmaxnreg.sync.aligned.u32 32;",
           "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 {%f1}, {%r1}, {%r2}, {%f2};",
           "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.s8.f32 {%f1, %f2, %f3, %f4}, {%r1, %r2, "
           "%r3, %r4}, {%r5, %r6}, {%f5, %f6, %f7, %f8};",
           "mma.sync.aligned.m8n8k4.row.col.f32.f64.f64.f32 {%f1, %f2}, {%fd1}, {%fd2}, {%f3, "
           "%f4};",
           "cp.async.mbarrier.arrive.b64 [%addr], 1;",
           "cp.async.mbarrier.noinc.shared.b64 [%addr];",
           "prefetch.global.L2;",
           "prefetchu.L1 %r1;",
       }) {
    const std::string e = decodeErrorOf(body);
    EXPECT_TRUE(e.find("eval.ptx:") != std::string::npos) << body << "\n" << e;
  }
}

TEST(NewerInstructions, LeftOutFamiliesNameTheirReason) {
  struct Case {
    const char* body;
    const char* why;
  };
  const Case cases[] = {
      {"wgmma.fence.sync.aligned;", "warpgroup"},
      {"wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%f1, %f2, %f3, %f4}, %rd1, %rd2, 1, "
       "1, 1, 0, 0;",
       "sm_90a"},
      {"tcgen05.fence::before_thread_sync;", "tensor memory"},
      {"multimem.ld_reduce.relaxed.sys.global.add.u32 %r1, [%rd1];", "multimem"},
      {"cp.async.bulk.tensor.1d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%rd1], "
       "[%rd2, {%r1}], [%rd3];",
       "tensor maps"},
      {"tensormap.replace.tile.global_address.global.b1024.b64 [%rd1], %rd2;", "tensor maps"},
      {"prefetch.tensormap [%rd1];", "tensor maps"},
      {"barrier.cluster.arrive;", "clusters are not modelled"},
      {"st.async.shared::cluster.mbarrier::complete_tx::bytes.u32 [%rd1], %r1, [%rd2];",
       "clusters are not modelled"},
      {"tex.cube.v4.f32.f32 {%f1, %f2, %f3, %f4}, [%rd1, {%f5, %f6, %f6, %f6}];", "no cube"},
      {"tex.level.2d.v4.f32.f32 {%f1, %f2, %f3, %f4}, [%rd1, {%f5, %f6}], %f6;", "tex.level"},
      {"suld.p.2d.v4.b32.trap {%r1, %r2, %r3, %r4}, [%rd1, {%r5, %r6}];", "formatted .p"},
      {"sured.b.add.2d.u32.trap [%rd1, {%r1, %r2}], %r3;", "surface reductions"},
      {"ld.global.v8.f32 {%f1, %f2, %f3, %f4, %f5, %f6, %f7, %f8}, [%rd1];", ".v8"},
      {"st.bulk.weak.shared::cta [%rd1], 64, 0;", "st.bulk"},
      {"add.rn.f32x2 %rd1, %rd2, %rd3;", "f32x2"},
      {"fma.rn.oob.f16 %h1, %h2, %h3, %h4;", "fma.oob"},
      {"cvt.rs.satfinite.e4m3x4.f32 %r1, {%fa, %fb, %fc, %fa}, %r2;", "stochastic rounding"},
      {"mma.sp.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%f1, %f2, %f3, %f4}, {%r1, %r2}, "
       "{%r3, %r4}, {%f5, %f6, %f7, %f8}, %r5, 0x0;",
       "sparse mma"},
  };
  for (const auto& k : cases) {
    const std::string e = decodeErrorOf(k.body);
    EXPECT_NE(e.find("unsupported PTX at eval.ptx:"), std::string::npos) << k.body << "\n" << e;
    EXPECT_NE(e.find(k.why), std::string::npos) << k.body << "\n" << e;
  }
}

// ---- fp8, fp6 and fp4 conversions; cvt.pack.sat ------------------------------------------------

// A narrow format as a list of its finite values by code (from its exponent and mantissa fields).
struct Narrow {
  const char* name;
  int ebits, mbits, bias;
  bool e4m3, e5m2;  // 0x7f NaN (e4m3); IEEE infinities and NaNs at exponent 31 (e5m2)
  bool finite(uint32_t mag) const {
    if (e4m3) return mag != 0x7f;
    if (e5m2) return (mag >> 2) != 0x1f;
    return true;
  }
  // Magnitude of a code without its sign, as an integer M times 2^scale.
  void parts(uint32_t mag, int64_t& m, int& scale) const {
    const uint32_t e = mag >> mbits, f = mag & ((1u << mbits) - 1);
    m = e == 0 ? f : (f | (1u << mbits));
    scale = (e == 0 ? 1 : int(e)) - bias - mbits;
  }
  double value(uint32_t mag) const {
    int64_t m;
    int s;
    parts(mag, m, s);
    return std::ldexp(double(m), s);
  }
  uint32_t bitsWide() const { return uint32_t(1 + ebits + mbits); }
  // The nearest finite value, ties to the even code; beyond the largest value, the largest
  // (.satfinite); NaN: 0x7f, or the largest positive value for formats without NaN.
  uint32_t nearest(double x, bool relu) const {
    const uint32_t signBit = 1u << (ebits + mbits);
    uint32_t best = 0;
    for (uint32_t c = 0; c < signBit; ++c)
      if (finite(c)) best = std::max(best, c);  // the largest finite code (codes grow)
    const uint32_t maxCode = best;
    if (std::isnan(x)) return (e4m3 || e5m2) ? 0x7fu : maxCode;
    if (relu && std::signbit(x)) return 0;
    const double a = std::fabs(x);
    best = 0;
    for (uint32_t c = 0; c <= maxCode; ++c) {
      const double d = std::fabs(a - value(c)), bd = std::fabs(a - value(best));
      if (d < bd || (d == bd && (c % 2) == 0 && (best % 2) == 1)) best = c;
    }
    if (a > value(maxCode)) best = maxCode;
    return (std::signbit(x) ? signBit : 0) | best;
  }
};
const Narrow kNarrows[] = {{"e4m3x2", 4, 3, 7, true, false},
                           {"e5m2x2", 5, 2, 15, false, true},
                           {"e2m3x2", 2, 3, 1, false, false},
                           {"e3m2x2", 3, 2, 3, false, false},
                           {"e2m1x2", 2, 1, 1, false, false}};

// f32 inputs around a format's values: its midpoints (the ties), random values over its
// exponent range, and the special values.
std::vector<float> narrowInputs(const Narrow& n, uint32_t seed) {
  std::vector<float> v = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, 1e30f, -1e30f, 1e-30f, -1e-30f};
  const uint32_t top = 1u << (n.ebits + n.mbits);
  for (uint32_t c = 0; c + 1 < top; ++c)
    if (n.finite(c) && n.finite(c + 1)) {
      const float mid = float((n.value(c) + n.value(c + 1)) / 2);
      v.push_back(mid);
      v.push_back(-mid);
      v.push_back(std::nextafter(mid, 0.0f));
      v.push_back(std::nextafter(mid, 1e30f));
      v.push_back(float(n.value(c)));
    }
  std::mt19937 rng(seed);
  const int lo = 1 - n.bias - n.mbits - 2, hi = (1 << n.ebits) - n.bias + 1;
  while (v.size() < 900) {
    const float m = 1.0f + float(rng() % 4096) / 4096.0f;
    const float x = std::ldexp(m, lo + int(rng() % uint32_t(hi - lo + 1)));
    v.push_back(rng() % 2 ? -x : x);
  }
  return v;
}

TEST(NarrowFloat, F32PairsRoundToNearestEvenAndSaturate) {
  for (const Narrow& n : kNarrows) {
    const bool fp4 = std::string(n.name) == "e2m1x2";
    const std::vector<float> in = narrowInputs(n, 141);
    for (bool relu : {false, true}) {
      const std::string op = std::string("cvt.rn.satfinite") + (relu ? ".relu." : ".") + n.name +
                             ".f32 %q, %fa, %fb;\n";
      const std::string body = fp4 ? "{\n.reg .b8 %q;\n" + op + "cvt.u32.u8 %o32, %q;\n}"
                                   : "{\n.reg .b16 %q;\n" + op + "cvt.u32.u16 %o32, %q;\n}";
      Rows rows;
      for (size_t i = 0; i < in.size(); ++i)
        rows.push_back({bits(in[i]), bits(in[(i * 7 + 3) % in.size()]), 0});
      for (size_t at = 0; at < rows.size(); at += 1024) {
        const Rows part(rows.begin() + long(at),
                        rows.begin() + long(std::min(rows.size(), at + 1024)));
        auto out = eval(body, part);
        for (size_t i = 0; i < part.size(); ++i) {
          const float a = asFloat(uint32_t(part[i][0])), b = asFloat(uint32_t(part[i][1]));
          const uint32_t w = fp4 ? 4 : 8;
          const uint32_t want = n.nearest(a, relu) << w | n.nearest(b, relu);
          EXPECT_EQ(out[i].o32, want) << n.name << (relu ? " relu " : " ") << a << ", " << b;
        }
      }
    }
  }
}

TEST(NarrowFloat, F16PairsToFp8) {
  for (const Narrow& n : {kNarrows[0], kNarrows[1]}) {
    Rows rows;
    std::mt19937 rng(151);
    for (uint32_t h : {0x0000u, 0x8000u, 0x7c00u, 0xfc00u, 0x7e00u, 0x7bffu, 0x0001u, 0x5f00u,
                       0x5f80u, 0x5fc0u, 0x3c00u, 0x3c40u})
      rows.push_back({h << 16 | (h ^ 0x8000u), 0, 0});
    while (rows.size() < 800) rows.push_back({rng(), 0, 0});
    for (bool relu : {false, true}) {
      auto out = eval(std::string("cvt.rn.satfinite") + (relu ? ".relu." : ".") + n.name +
                          ".f16x2 %h1, %a32;\ncvt.u32.u16 %o32, %h1;",
                      rows);
      for (size_t i = 0; i < rows.size(); ++i) {
        const uint32_t a = uint32_t(rows[i][0]);
        const uint32_t want = n.nearest(value(kF16, uint16_t(a >> 16)), relu) << 8 |
                              n.nearest(value(kF16, uint16_t(a)), relu);
        EXPECT_EQ(out[i].o32, want) << n.name << " 0x" << std::hex << a;
      }
    }
  }
}

TEST(NarrowFloat, EveryCodePairToF16x2) {
  for (const Narrow& n : kNarrows) {
    const bool fp4 = std::string(n.name) == "e2m1x2";
    const uint32_t w = fp4 ? 4 : 8, top = 1u << n.bitsWide();
    // The f16 bits of a code: exact (every narrow value is an f16 value); NaN is 0x7fff.
    auto half = [&](uint32_t code, bool relu) -> uint32_t {
      const uint32_t signBit = top >> 1, mag = code & (signBit - 1);
      const bool neg = code & signBit;
      if (!n.finite(mag)) {
        if (n.e5m2 && mag == 0x7c) return relu && neg ? 0u : neg ? 0xfc00u : 0x7c00u;
        return 0x7fffu;
      }
      if (relu && neg) return 0;
      int64_t m;
      int s;
      n.parts(mag, m, s);
      return refRound(kF16, neg, m, s, Rnd::Rn);
    };
    Rows rows;
    for (uint32_t hi = 0; hi < top; ++hi)
      for (uint32_t lo = 0; lo < top; lo += (fp4 ? 1 : 3)) rows.push_back({hi << w | lo, 0, 0});
    for (bool relu : {false, true}) {
      const std::string op =
          std::string("cvt.rn") + (relu ? ".relu" : "") + ".f16x2." + n.name + " %o32, %q;\n}";
      const std::string body = fp4 ? "{\n.reg .b8 %q;\ncvt.u8.u32 %q, %a32;\n" + op
                                   : "{\n.reg .b16 %q;\ncvt.u16.u32 %q, %a32;\n" + op;
      for (size_t at = 0; at < rows.size(); at += 1024) {
        const Rows part(rows.begin() + long(at),
                        rows.begin() + long(std::min(rows.size(), at + 1024)));
        auto out = eval(body, part);
        for (size_t i = 0; i < part.size(); ++i) {
          const uint32_t a = uint32_t(part[i][0]);
          const uint32_t want = half(a >> w, relu) << 16 | half(a & (top - 1), relu);
          EXPECT_EQ(out[i].o32, want) << n.name << " 0x" << std::hex << a;
        }
      }
    }
  }
}

TEST(NarrowFloat, CvtPackSatClampsAndPacks) {
  const Rows rows =
      grid({0u,          1u,          2u,          3u,          7u,          8u,
            127u,        128u,        255u,        256u,        32767u,      40000u,
            65535u,      70000u,      0xffffffffu, 0xfffffffeu, 0xfffffff8u, 0xffffff80u,
            0xffffff7fu, 0xffff8000u, 0x80000000u, 0x7fffffffu},
           {0u, 5u, 0xfffffffdu, 300u, 0xfffff000u}, {0u, 0x12345678u, 0xffffffffu});
  auto sat = [](uint32_t v, unsigned w, bool sgn) {
    const int64_t x = int32_t(v);
    const int64_t lo = sgn ? -(int64_t(1) << (w - 1)) : 0;
    const int64_t hi = sgn ? (int64_t(1) << (w - 1)) - 1 : (int64_t(1) << w) - 1;
    return uint32_t(std::min(std::max(x, lo), hi)) & ((1u << w) - 1);
  };
  for (const char* t : {"u16", "s16"}) {
    const bool sgn = t[0] == 's';
    checkRows32(
        std::string("cvt.pack.sat.") + t + ".s32 %o32, %a32, %b32;", rows,
        [&](uint32_t a, uint32_t b, uint32_t) { return sat(a, 16, sgn) << 16 | sat(b, 16, sgn); });
  }
  for (const char* t : {"u8", "s8", "u4", "s4", "u2", "s2"}) {
    const bool sgn = t[0] == 's';
    const unsigned w = unsigned(std::atoi(t + 1));
    checkRows32(std::string("cvt.pack.sat.") + t + ".s32.b32 %o32, %a32, %b32, %c32;", rows,
                [&](uint32_t a, uint32_t b, uint32_t c) {
                  return uint32_t(uint64_t(c) << (2 * w)) | sat(a, w, sgn) << w | sat(b, w, sgn);
                });
  }
  EXPECT_NE(decodeErrorOf("cvt.pack.sat.u8.s32 %o32, %a32, %b32;").find("cvt.pack is"),
            std::string::npos);
  EXPECT_NE(decodeErrorOf("cvt.rn.e4m3x2.f32 %h1, %fa, %fb;").find("need .satfinite"),
            std::string::npos);
}

// ---- timing mode -------------------------------------------------------------------------------

TEST(PtxIsaTiming, NewInstructionsRunInTheTimingModel) {
  const std::string body =
      "bfind.shiftamt.u32 %r1, %a32; fns.b32 %r2, %a32, 0, 1; szext.wrap.s32 %r3, %a32, 8;\n"
      "bmsk.clamp.b32 %r4, %b32, 4; prmt.b32.f4e %r5, %a32, %b32, %c32;\n"
      "dp4a.s32.u32 %r6, %a32, %b32, %r1; dp2a.hi.u32.s32 %r7, %a32, %b32, %r6;\n"
      "redux.sync.max.s32 %r8, %r7, 0xffffffff; min.relu.s16x2 %r9, %r8, %a32;\n"
      "fma.rn.f16x2 %r10, %a32, %b32, %c32; ex2.approx.f16x2 %r11, %r10;\n"
      "cvt.rn.bf16x2.f32 %r12, %fa, %fb; mul.rn.bf16x2 %r13, %r12, %r11;\n"
      "add.u32 %r14, %r1, %r2; add.u32 %r14, %r14, %r3; add.u32 %r14, %r14, %r4;\n"
      "xor.b32 %r14, %r14, %r5; xor.b32 %r14, %r14, %r9; xor.b32 %o32, %r14, %r13;\n"
      "cvt.u64.u32 %o, %r10;\n"
      "min.NaN.abs.f32 %f1, %fa, %fb, %fc; mov.b32 %r1, %f1; max.xorsign.abs.bf16x2 %r2, %a32, "
      "%b32; xor.b32 %o32, %o32, %r1; xor.b32 %o32, %o32, %r2;";
  Rows rows;
  std::mt19937 rng(5);
  for (int i = 0; i < 64; ++i) rows.push_back({rng(), rng(), rng()});
  auto f = eval(body, rows);
  auto t = eval(body, rows, ExecMode::Timing);
  for (size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(f[i].o32, t[i].o32) << i;
    EXPECT_EQ(f[i].o, t[i].o) << i;
  }
}

TEST(PtxIsaTiming, VideoConversionAndNewerInstructionsRunInTheTimingModel) {
  const std::string body =
      "vadd.s32.u32.s32.sat.add %r1, %a32.b1, %b32.h1, %c32;\n"
      "vmad.s32.s32.u32.shr7 %r2, -%a32, %b32, %r1; vshl.u32.u32.u32.clamp %r3, %r2, %b32.b0;\n"
      "vset2.s32.u32.gt.add %r4, %a32.h21, %r3, %r2; vavrg4.u32.u32.s32.sat %r5.b31, %r4, "
      "%b32.b0516, %c32;\n"
      "vabsdiff4.u32.u32.u32.add %r6, %r5, %a32, %r4; xor.b32 %o32, %r6, %r3;\n"
      "cvt.rn.satfinite.e4m3x2.f32 %h1, %fa, %fb; cvt.rn.f16x2.e4m3x2 %r7, %h1;\n"
      "cvt.pack.sat.s8.s32.b32 %r8, %r7, %r6, %r5; elect.sync %r9|%p1, 0xffffffff;\n"
      "createpolicy.fractional.L2::evict_last.b64 %rd1; alloca.u32 %r10, 16;\n"
      "add.u32 %o32, %o32, %r7; xor.b32 %o32, %o32, %r8; add.u32 %o32, %o32, %r9;";
  Rows rows;
  std::mt19937 rng(6);
  for (int i = 0; i < 64; ++i) rows.push_back({rng(), rng(), rng()});
  auto f = eval(body, rows);
  auto t = eval(body, rows, ExecMode::Timing);
  for (size_t i = 0; i < rows.size(); ++i) EXPECT_EQ(f[i].o32, t[i].o32) << i;
}

// ---- cooperative launches: cooperative groups' grid sync ---------------------------------------

// nvcc's grid.sync() (tests/data/grid_sync.cu): `rounds` of reading the right neighbour, a grid
// sync, writing it plus one, a grid sync; checked against a[i] = a0[(i + rounds) % n] + rounds.
// Returns the launch's cycles (timing mode), on `hostThreads` host threads.
uint64_t checkGridSync(ExecMode mode, uint32_t blocks, uint32_t threads, int n, int rounds,
                       unsigned hostThreads = 1) {
  Device dev(platform(), mode);
  dev.setHostThreads(hostThreads, ThreadPolicy::Fixed);
  Module& m = dev.loadModuleFile(std::string(GPUSC_SOURCE_DIR) + "/tests/data/grid_sync.ptx");
  std::vector<int32_t> a0(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) a0[size_t(i)] = i * 7 % 1000;
  DevPtr a = dev.upload(a0);
  LaunchOptions cooperative;
  cooperative.cooperative = true;
  dev.launch(m.kernel("rotate"), {blocks}, {threads}, 0, KernelArgs().ptr(a).i32(n).i32(rounds),
             cooperative);
  const auto out = dev.download<int32_t>(a, size_t(n));
  for (int i = 0; i < n; ++i)
    EXPECT_EQ(out[size_t(i)], a0[size_t((i + rounds) % n)] + rounds) << "element " << i;
  EXPECT_TRUE(dev.launches().back().cooperative);
  return dev.launches().back().timing ? dev.launches().back().timing->cycles : 0;
}

TEST(GridSync, EveryBlockWaitsForTheWholeGrid) {
  Device probe(platform(), ExecMode::Functional);
  Module& m = probe.loadModuleFile(std::string(GPUSC_SOURCE_DIR) + "/tests/data/grid_sync.ptx");
  // The largest grid the platform holds at once, and a small one.
  const uint32_t full = probe.ctasPerSm(m.kernel("rotate"), {128}, 0) * platform().gpu.num_sms;
  checkGridSync(ExecMode::Functional, full, 128, int(full) * 128 - 50, 3);
  checkGridSync(ExecMode::Functional, 3, 64, 190, 5);
}

TEST(GridSync, EveryBlockWaitsForTheWholeGridInTheTimingModel) {
  // Blocks on different SMs spin on one word: two host threads give the same cycles as one.
  const uint64_t one = checkGridSync(ExecMode::Timing, 40, 128, 5000, 2);
  EXPECT_GT(one, 0u);
  EXPECT_EQ(checkGridSync(ExecMode::Timing, 40, 128, 5000, 2, 2), one);
}

TEST(GridSync, AGridLargerThanTheGpuHoldsIsRefused) {
  Device dev(platform(), ExecMode::Functional);
  Module& m = dev.loadModuleFile(std::string(GPUSC_SOURCE_DIR) + "/tests/data/grid_sync.ptx");
  const uint32_t perSm = dev.ctasPerSm(m.kernel("rotate"), {256}, 0);
  const uint32_t full = perSm * platform().gpu.num_sms;
  DevPtr a = dev.malloc(4);
  LaunchOptions cooperative;
  cooperative.cooperative = true;
  try {
    dev.launch(m.kernel("rotate"), {full + 1}, {256}, 0, KernelArgs().ptr(a).i32(1).i32(1),
               cooperative);
    ADD_FAILURE() << "a cooperative grid of " << full + 1 << " blocks ran";
  } catch (const InputError& e) {
    EXPECT_NE(
        std::string(e.what()).find(fmt::format("holds {} of them at once ({} per SM", full, perSm)),
        std::string::npos)
        << e.what();
  }
  EXPECT_TRUE(dev.launches().empty());
  // Congestion-aware placement may stop using SMs while blocks wait: refused in both modes.
  PlatformConfig congestion = platform();
  congestion.gpu.cta_placement = "congestion-aware";
  for (ExecMode mode : {ExecMode::Functional, ExecMode::Timing}) {
    Device c(congestion, mode);
    Module& cm = c.loadModuleFile(std::string(GPUSC_SOURCE_DIR) + "/tests/data/grid_sync.ptx");
    DevPtr ca = c.malloc(4);
    try {
      c.launch(cm.kernel("rotate"), {2}, {256}, 0, KernelArgs().ptr(ca).i32(1).i32(1), cooperative);
      ADD_FAILURE() << "a cooperative launch ran with congestion-aware placement";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("gpu.cta_placement congestion-aware"), std::string::npos)
          << e.what();
    }
  }
}

TEST(GridSync, AGridSyncOutsideACooperativeLaunchTraps) {
  for (ExecMode mode : {ExecMode::Functional, ExecMode::Timing}) {
    Device dev(platform(), mode);
    Module& m = dev.loadModuleFile(std::string(GPUSC_SOURCE_DIR) + "/tests/data/grid_sync.ptx");
    DevPtr a = dev.malloc(4 * 64);
    try {
      dev.launch(m.kernel("rotate"), {2}, {32}, 0, KernelArgs().ptr(a).i32(64).i32(1));
      ADD_FAILURE() << "grid.sync() ran in a launch that is not cooperative";
    } catch (const KernelFault& e) {
      EXPECT_NE(std::string(e.what()).find("trap instruction executed"), std::string::npos)
          << e.what();
    }
  }
}

// ---- textures: fetches through texture objects (tests/data/textures.cu) -------------------------

// The CUDA C++ Programming Guide's texture fetch (appendix "Texture Fetching"), written out for
// one-channel float texels T(i, j): addressing on texel indices, point sampling at floor(x),
// linear filtering with weights in 9-bit fixed point (8 fractional bits).
struct RefTexture {
  int w = 1, h = 1, d = 1;    // d > 1: a 3D texture
  std::vector<float> texels;  // w x h x d, x fastest
  func::TexAddress mode = func::TexAddress::Clamp;
  bool linear = false, normalized = false;
  float border = 0;

  float at(long i, long j, long k = 0) const {
    auto fix = [&](long c, long n, bool& out) {
      switch (mode) {
        case func::TexAddress::Wrap:
          return ((c % n) + n) % n;
        case func::TexAddress::Mirror: {
          long m = ((c % (2 * n)) + 2 * n) % (2 * n);
          return m < n ? m : 2 * n - 1 - m;
        }
        case func::TexAddress::Border:
          out = out || c < 0 || c >= n;
          return c;
        default:
          return std::min(std::max(c, 0L), n - 1);
      }
    };
    bool out = false;
    const long x = fix(i, w, out), y = fix(j, h, out), z = fix(k, d, out);
    return out ? border : texels[size_t((z * h + y) * w + x)];
  }
  float fetch(float x, float y, float z = 0) const {
    double c[3] = {x, y, z};
    const int n[3] = {w, h, d};
    const int dims = d > 1 ? 3 : 2;
    if (normalized) {
      for (int a = 0; a < dims; ++a) {
        if (mode == func::TexAddress::Wrap) c[a] -= std::floor(c[a]);
        if (mode == func::TexAddress::Mirror)
          c[a] = long(std::floor(c[a])) % 2 == 0 ? c[a] - std::floor(c[a])
                                                 : 1 - (c[a] - std::floor(c[a]));
        c[a] *= n[a];
      }
    }
    if (!linear) return at(long(std::floor(c[0])), long(std::floor(c[1])), long(std::floor(c[2])));
    long i[3] = {0, 0, 0};
    double f[3] = {0, 0, 0};
    for (int a = 0; a < dims; ++a) {
      const double b = c[a] - 0.5;
      i[a] = long(std::floor(b));
      f[a] = std::round((b - i[a]) * 256) / 256;
    }
    double sum = 0;
    for (int k = 0; k < (dims == 3 ? 2 : 1); ++k)
      for (int j = 0; j < 2; ++j)
        for (int q = 0; q < 2; ++q)
          sum += (q ? f[0] : 1 - f[0]) * (j ? f[1] : 1 - f[1]) *
                 (dims == 3 ? (k ? f[2] : 1 - f[2]) : 1.0) * at(i[0] + q, i[1] + j, i[2] + k);
    return float(sum);
  }
};

struct Float4 {
  float x, y, z, w;
};

// A 5 x 4 texture of distinct values, 32 bytes a row (three texels of padding), fetched by 16 x 12
// threads across and beyond it; every value checked against RefTexture.
void checkFloatTexture(ExecMode mode, func::TexAddress address, bool linear, bool normalized) {
  SCOPED_TRACE(fmt::format("address mode {}, {} filtering, {} coordinates, {}", int(address),
                           linear ? "linear" : "point", normalized ? "normalized" : "texel",
                           mode == ExecMode::Timing ? "timing" : "functional"));
  RefTexture ref;
  ref.w = 5;
  ref.h = 4;
  ref.mode = address;
  ref.linear = linear;
  ref.normalized = normalized;
  ref.border = 7.5f;
  for (int j = 0; j < ref.h; ++j)
    for (int i = 0; i < ref.w; ++i) ref.texels.push_back(1.0f + i * 10.0f + j * 100.0f + i * j);
  RefTexture alpha = ref;  // the w channel: 1 in every texel
  std::fill(alpha.texels.begin(), alpha.texels.end(), 1.0f);
  Device dev(platform(), mode);
  Module& m = dev.loadModuleFile(std::string(GPUSC_SOURCE_DIR) + "/tests/data/textures.ptx");
  std::vector<float> rows(size_t(8 * ref.h), -1.0f);
  for (int j = 0; j < ref.h; ++j)
    for (int i = 0; i < ref.w; ++i) rows[size_t(j * 8 + i)] = ref.texels[size_t(j * ref.w + i)];
  DevPtr texels = dev.upload(rows);
  func::TextureDescriptor d;
  d.dims = 2;
  d.base = texels;
  d.width = uint64_t(ref.w);
  d.height = uint64_t(ref.h);
  d.pitch = 32;
  d.address[0] = d.address[1] = uint8_t(address);
  d.linearFilter = linear;
  d.normalizedCoords = normalized;
  d.border[0] = ref.border;
  d.border[3] = ref.border;
  DevPtr t = dev.createTexture(d);
  const int cols = 16, n = 16 * 12;
  const float x0 = normalized ? -0.35f : -1.7f, dx = normalized ? 0.117f : 0.53f;
  const float y0 = normalized ? -0.42f : -1.3f, dy = normalized ? 0.171f : 0.61f;
  DevPtr out = dev.malloc(uint64_t(n) * sizeof(Float4));
  dev.launch(m.kernel("fetch2d"), {3}, {64}, 0,
             KernelArgs().u64(t).ptr(out).i32(n).i32(cols).f32(x0).f32(y0).f32(dx).f32(dy));
  const auto got = dev.download<Float4>(out, size_t(n));
  for (int k = 0; k < n; ++k) {
    const float x = x0 + float(k % cols) * dx, y = y0 + float(k / cols) * dy;
    const float want = ref.fetch(x, y);
    EXPECT_NEAR(got[size_t(k)].x, want, 1e-4f * std::max(1.0f, std::fabs(want)))
        << "at (" << x << ", " << y << ")";
    // Missing channels read 0 (y, z) and 1 (w), where the border colour's (0, 0, 7.5) blends in.
    EXPECT_EQ(got[size_t(k)].y, 0.0f);
    EXPECT_EQ(got[size_t(k)].z, 0.0f);
    EXPECT_NEAR(got[size_t(k)].w, alpha.fetch(x, y), 1e-5f) << "at (" << x << ", " << y << ")";
  }
}

TEST(Textures, PointAndLinearFetchesFollowTheProgrammingGuide) {
  using func::TexAddress;
  for (bool linear : {false, true}) {
    checkFloatTexture(ExecMode::Functional, TexAddress::Clamp, linear, false);
    checkFloatTexture(ExecMode::Functional, TexAddress::Border, linear, false);
    checkFloatTexture(ExecMode::Functional, TexAddress::Clamp, linear, true);
    checkFloatTexture(ExecMode::Functional, TexAddress::Wrap, linear, true);
    checkFloatTexture(ExecMode::Functional, TexAddress::Mirror, linear, true);
  }
}

TEST(Textures, TheTimingModelFetchesTheSameValues) {
  checkFloatTexture(ExecMode::Timing, func::TexAddress::Wrap, true, true);
  checkFloatTexture(ExecMode::Timing, func::TexAddress::Border, false, false);
}

TEST(Textures, IntegerTexelsReadAsIntegersOrNormalizedFloats) {
  for (ExecMode mode : {ExecMode::Functional, ExecMode::Timing}) {
    Device dev(platform(), mode);
    Module& m = dev.loadModuleFile(std::string(GPUSC_SOURCE_DIR) + "/tests/data/textures.ptx");
    // uchar4 texels read as normalized floats (v / 255), 1D, texel coordinates.
    std::vector<uint8_t> bytes;
    for (int i = 0; i < 40; ++i)
      for (int c = 0; c < 4; ++c) bytes.push_back(uint8_t(i * 6 + c * 50));
    func::TextureDescriptor u8;
    u8.channels = 4;
    u8.channelBits = 8;
    u8.kind = uint8_t(func::TexKind::Unsigned);
    u8.normalizedRead = 1;
    u8.base = dev.upload(bytes);
    u8.width = 40;
    u8.pitch = 160;
    DevPtr out = dev.malloc(64 * sizeof(Float4));
    dev.launch(m.kernel("fetch1d"), {1}, {64}, 0,
               KernelArgs().u64(dev.createTexture(u8)).ptr(out).i32(40).f32(0.5f).f32(1.0f));
    const auto f = dev.download<Float4>(out, 40);
    for (int i = 0; i < 40; ++i) {
      const float* v = &f[size_t(i)].x;
      for (int c = 0; c < 4; ++c)
        EXPECT_FLOAT_EQ(v[c], float(uint8_t(i * 6 + c * 50)) / 255.0f) << i << "." << c;
    }
    // Signed 16-bit pairs read as integers (sign-extended), fetched with integer coordinates
    // from linear memory: the four texels before and after it read 0.
    std::vector<int16_t> pairs;
    for (int i = 0; i < 24; ++i) {
      pairs.push_back(int16_t(i * 1000 - 9000));
      pairs.push_back(int16_t(-i));
    }
    func::TextureDescriptor s16;
    s16.channels = 2;
    s16.channelBits = 16;
    s16.kind = uint8_t(func::TexKind::Signed);
    s16.linearMemory = 1;
    s16.address[0] = uint8_t(func::TexAddress::Border);
    s16.base = dev.upload(pairs);
    s16.width = 24;
    DevPtr iout = dev.malloc(32 * 16);
    dev.launch(m.kernel("fetch1dInt"), {1}, {32}, 0,
               KernelArgs().u64(dev.createTexture(s16)).ptr(iout).i32(32).i32(-4));
    const auto q = dev.download<int32_t>(iout, 32 * 4);
    for (int k = 0; k < 32; ++k) {
      const int i = k - 4;
      const bool in = i >= 0 && i < 24;
      EXPECT_EQ(q[size_t(k) * 4], in ? i * 1000 - 9000 : 0) << "texel " << i;
      EXPECT_EQ(q[size_t(k) * 4 + 1], in ? -i : 0) << "texel " << i;
    }
    // Every lane outside: no memory is read, and every value is 0.
    dev.launch(m.kernel("fetch1dInt"), {1}, {32}, 0,
               KernelArgs().u64(dev.createTexture(s16)).ptr(iout).i32(32).i32(1000));
    for (int32_t v : dev.download<int32_t>(iout, 32 * 4)) EXPECT_EQ(v, 0);
  }
}

TEST(Textures, BadTextureObjectsAreRefusedOrFault) {
  Device dev(platform(), ExecMode::Functional);
  Module& m = dev.loadModuleFile(std::string(GPUSC_SOURCE_DIR) + "/tests/data/textures.ptx");
  DevPtr ints = dev.upload(std::vector<int32_t>(64, 3));
  func::TextureDescriptor d;
  d.kind = uint8_t(func::TexKind::Signed);
  d.base = ints;
  d.width = 64;
  d.linearFilter = 1;  // CUDA refuses linear filtering of what reads as integers
  EXPECT_THROW(dev.createTexture(d), InputError);
  d.linearFilter = 0;
  d.width = 65;  // one texel beyond the allocation
  EXPECT_THROW(dev.createTexture(d), InputError);
  // Sizes whose end does not fit 64 bits: refused, never wrapped around into an allocation.
  func::TextureDescriptor huge = d;
  huge.width = 16;
  huge.dims = 2;
  huge.height = 3;
  huge.pitch = uint64_t(1) << 63;
  EXPECT_THROW(dev.createTexture(huge), InputError);
  std::vector<uint8_t> src(16);
  EXPECT_THROW(dev.copyToDevice(ints + 8, src.data(), ~uint64_t(0) - 4), InputError);
  // A handle that names no texture object faults, naming it.
  DevPtr out = dev.malloc(32 * 16);
  try {
    dev.launch(m.kernel("fetch1dInt"), {1}, {32}, 0,
               KernelArgs().u64(ints).ptr(out).i32(32).i32(0));
    ADD_FAILURE() << "a fetch through a plain allocation ran";
  } catch (const KernelFault& e) {
    EXPECT_NE(std::string(e.what()).find(fmt::format("texture object 0x{:x}", ints)),
              std::string::npos)
        << e.what();
  }
  // Cube fetches are refused with their position.
  const std::string ptx =
      ".version 8.0\n.target sm_75\n.address_size 64\n.visible .entry k(.param .u64 t)\n{\n"
      ".reg .b64 %rd<2>;\n.reg .f32 %f<8>;\n.reg .b32 %r<2>;\nld.param.u64 %rd1, [t];\n"
      "tex.cube.v4.f32.f32 {%f1, %f2, %f3, %f4}, [%rd1, {%f5, %f6, %f7, %f7}];\nret;\n}\n";
  try {
    Module& m3 = dev.loadModule(ptx, "cube.ptx");
    dev.launch(m3.kernel("k"), {1}, {32}, 0, KernelArgs().u64(ints));
    ADD_FAILURE() << "tex.cube ran";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("cube.ptx:10"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("no cube"), std::string::npos) << e.what();
  }
}

// A 5 x 4 x 3 texture (rows of 8 floats, slices of 40) fetched by 6 x 5 x 4 threads across and
// beyond it, trilinear or point, against RefTexture.
void checkVolumeTexture(ExecMode mode, func::TexAddress address, bool linear, bool normalized) {
  SCOPED_TRACE(fmt::format("3D, address mode {}, {} filtering, {} coordinates", int(address),
                           linear ? "linear" : "point", normalized ? "normalized" : "texel"));
  RefTexture ref;
  ref.w = 5;
  ref.h = 4;
  ref.d = 3;
  ref.mode = address;
  ref.linear = linear;
  ref.normalized = normalized;
  ref.border = -2.5f;
  for (int k = 0; k < ref.d; ++k)
    for (int j = 0; j < ref.h; ++j)
      for (int i = 0; i < ref.w; ++i) ref.texels.push_back(float(i + 10 * j + 100 * k + i * j * k));
  Device dev(platform(), mode);
  Module& m = dev.loadModuleFile(std::string(GPUSC_SOURCE_DIR) + "/tests/data/textures.ptx");
  std::vector<float> mem(size_t(40 * ref.d), 99.0f);
  for (int k = 0; k < ref.d; ++k)
    for (int j = 0; j < ref.h; ++j)
      for (int i = 0; i < ref.w; ++i)
        mem[size_t(k * 40 + j * 8 + i)] = ref.texels[size_t((k * ref.h + j) * ref.w + i)];
  func::TextureDescriptor d;
  d.dims = 3;
  d.base = dev.upload(mem);
  d.width = 5;
  d.height = 4;
  d.depth = 3;
  d.pitch = 32;
  d.slicePitch = 160;
  d.address[0] = d.address[1] = d.address[2] = uint8_t(address);
  d.linearFilter = linear;
  d.normalizedCoords = normalized;
  d.border[0] = ref.border;
  const DevPtr t = dev.createTexture(d);
  const int n = 6 * 5 * 4;
  const float c0 = normalized ? -0.3f : -1.4f, step = normalized ? 0.27f : 1.13f;
  DevPtr out = dev.malloc(uint64_t(n) * sizeof(Float4));
  dev.launch(m.kernel("fetch3d"), {2}, {64}, 0,
             KernelArgs().u64(t).ptr(out).i32(n).f32(c0).f32(step));
  const auto got = dev.download<Float4>(out, size_t(n));
  for (int q = 0; q < n; ++q) {
    const float x = c0 + float(q % 6) * step, y = c0 + float(q / 6 % 5) * step,
                z = c0 + float(q / 30) * step;
    const float want = ref.fetch(x, y, z);
    EXPECT_NEAR(got[size_t(q)].x, want, 1e-4f * std::max(1.0f, std::fabs(want)))
        << "at (" << x << ", " << y << ", " << z << ")";
  }
}

TEST(Textures, VolumeFetchesFilterTrilinearly) {
  using func::TexAddress;
  for (bool linear : {false, true}) {
    checkVolumeTexture(ExecMode::Functional, TexAddress::Clamp, linear, false);
    checkVolumeTexture(ExecMode::Functional, TexAddress::Border, linear, false);
    checkVolumeTexture(ExecMode::Functional, TexAddress::Wrap, linear, true);
    checkVolumeTexture(ExecMode::Functional, TexAddress::Mirror, linear, true);
  }
  checkVolumeTexture(ExecMode::Timing, TexAddress::Wrap, true, true);
}

// Three layers of a 5 x 4 texture (rows of 8 floats, layers of 40), fetched bilinearly in each
// layer (and at layers -1 and 3, which clamp to the first and the last), against RefTexture.
TEST(Textures, LayeredFetchesFilterWithinTheirLayer) {
  for (ExecMode mode : {ExecMode::Functional, ExecMode::Timing}) {
    SCOPED_TRACE(mode == ExecMode::Timing ? "timing" : "functional");
    std::vector<RefTexture> layers(3);
    std::vector<float> mem(120, 55.0f);
    for (int l = 0; l < 3; ++l) {
      RefTexture& r = layers[size_t(l)];
      r.w = 5;
      r.h = 4;
      r.linear = true;
      r.mode = func::TexAddress::Border;
      for (int j = 0; j < 4; ++j)
        for (int i = 0; i < 5; ++i) {
          r.texels.push_back(float(i + 10 * j + 1000 * l));
          mem[size_t(l * 40 + j * 8 + i)] = r.texels.back();
        }
    }
    Device dev(platform(), mode);
    Module& m = dev.loadModuleFile(std::string(GPUSC_SOURCE_DIR) + "/tests/data/textures.ptx");
    func::TextureDescriptor d;
    d.dims = 2;
    d.layered = 1;
    d.base = dev.upload(mem);
    d.width = 5;
    d.height = 4;
    d.depth = 3;
    d.pitch = 32;
    d.slicePitch = 160;
    d.address[0] = d.address[1] = uint8_t(func::TexAddress::Border);
    d.linearFilter = 1;
    const DevPtr t = dev.createTexture(d);
    const int n = 5 * 64;  // layers -1 to 3
    DevPtr out = dev.malloc(uint64_t(n) * sizeof(Float4));
    dev.launch(m.kernel("fetchLayered"), {5}, {64}, 0,
               KernelArgs().u64(t).ptr(out).i32(n).f32(-0.6f).f32(0.77f).i32(-1));
    const auto got = dev.download<Float4>(out, size_t(n));
    for (int i = 0; i < n; ++i) {
      const float x = -0.6f + float(i % 8) * 0.77f, y = -0.6f + float(i / 8 % 8) * 0.77f;
      const int layer = std::min(std::max(-1 + i / 64, 0), 2);
      const float want = layers[size_t(layer)].fetch(x, y);
      EXPECT_NEAR(got[size_t(i)].x, want, 1e-4f * std::max(1.0f, std::fabs(want)))
          << "layer " << -1 + i / 64 << " at (" << x << ", " << y << ")";
    }
    // A layered texture is fetched with layered fetches only.
    DevPtr iout = dev.malloc(32 * 16);
    EXPECT_THROW(
        dev.launch(m.kernel("fetch2d"), {1}, {32}, 0,
                   KernelArgs().u64(t).ptr(iout).i32(32).i32(8).f32(0).f32(0).f32(1).f32(1)),
        KernelFault);
  }
}

// ---- surfaces: raw reads and writes through surface objects (tests/data/textures.cu) -----------

TEST(Surfaces, ReadsAndWritesFollowTheirBoundaryModes) {
  for (ExecMode mode : {ExecMode::Functional, ExecMode::Timing}) {
    SCOPED_TRACE(mode == ExecMode::Timing ? "timing" : "functional");
    Device dev(platform(), mode);
    Module& m = dev.loadModuleFile(std::string(GPUSC_SOURCE_DIR) + "/tests/data/textures.ptx");
    // 6 x 3 floats in rows of 8 (32 bytes): v(x, y) = x + 10 y.
    const int w = 6, h = 3;
    std::vector<float> rows(8 * h, -5.0f);
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x) rows[size_t(y * 8 + x)] = float(x + 10 * y);
    func::TextureDescriptor d;
    d.dims = 2;
    d.base = dev.upload(rows);
    d.width = w;
    d.height = h;
    d.pitch = 32;
    const DevPtr s = dev.createSurface(d);
    DevPtr out = dev.malloc(w * h * 8);
    dev.launch(m.kernel("surfaceStep"), {uint32_t(h)}, {32}, 0,
               KernelArgs().u64(s).ptr(out).i32(w).i32(h));
    const auto pairs = dev.download<float>(out, size_t(w * h * 2));
    const auto after = dev.download<float>(d.base, rows.size());
    for (int y = 0; y < h; ++y) {
      for (int x = 0; x < w; ++x) {
        const size_t k = size_t(y * w + x);
        // Beyond the right edge: .zero reads 0, .clamp the last float of the row.
        EXPECT_EQ(pairs[2 * k], x + 1 < w ? float(x + 1 + 10 * y) : 0.0f) << x << ", " << y;
        EXPECT_EQ(pairs[2 * k + 1], float(std::min(x + 1, w - 1) + 10 * y)) << x << ", " << y;
        EXPECT_EQ(after[size_t(y * 8 + x)], 2.0f * float(x + 10 * y) + 1) << x << ", " << y;
      }
      for (int x = w; x < 8; ++x) EXPECT_EQ(after[size_t(y * 8 + x)], -5.0f) << "padding";
    }
    // uchar4 texels of a 1D surface, reversed in place (v4.b8 loads and stores).
    std::vector<uint8_t> bytes;
    for (int i = 0; i < 20 * 4; ++i) bytes.push_back(uint8_t(i * 3 + 1));
    func::TextureDescriptor b;
    b.channels = 4;
    b.channelBits = 8;
    b.kind = uint8_t(func::TexKind::Unsigned);
    b.base = dev.upload(bytes);
    b.width = 20;
    dev.launch(m.kernel("surfaceBytes"), {1}, {32}, 0,
               KernelArgs().u64(dev.createSurface(b)).i32(20));
    const auto rev = dev.download<uint8_t>(b.base, bytes.size());
    for (int i = 0; i < 20; ++i)
      for (int c = 0; c < 4; ++c)
        EXPECT_EQ(rev[size_t(i * 4 + c)], bytes[size_t(i * 4 + 3 - c)]) << i << "." << c;
  }
}

TEST(Surfaces, VolumeSurfacesAddressSlices) {
  for (ExecMode mode : {ExecMode::Functional, ExecMode::Timing}) {
    Device dev(platform(), mode);
    Module& m = dev.loadModuleFile(std::string(GPUSC_SOURCE_DIR) + "/tests/data/textures.ptx");
    // 4 x 3 x 5 ints, rows of 16 bytes, slices of 48: b(x, y, z) = a(x, y, z) + a(x, y, z + 1),
    // the last slice clamped to itself.
    std::vector<int32_t> v(60);
    for (int k = 0; k < 60; ++k) v[size_t(k)] = k * 7 - 100;
    func::TextureDescriptor d;
    d.dims = 3;
    d.kind = uint8_t(func::TexKind::Signed);
    d.base = dev.upload(v);
    d.width = 4;
    d.height = 3;
    d.depth = 5;
    d.pitch = 16;
    d.slicePitch = 48;
    func::TextureDescriptor e = d;
    e.base = dev.malloc(60 * 4);
    dev.launch(m.kernel("surfaceVolume"), {5}, {12}, 0,
               KernelArgs().u64(dev.createSurface(d)).u64(dev.createSurface(e)));
    const auto after = dev.download<int32_t>(e.base, 60);
    for (int z = 0; z < 5; ++z)
      for (int k = 0; k < 12; ++k)
        EXPECT_EQ(after[size_t(z * 12 + k)],
                  v[size_t(z * 12 + k)] + v[size_t(std::min(z + 1, 4) * 12 + k)])
            << "slice " << z << ", element " << k;
  }
}

TEST(Surfaces, LayeredSurfacesAddressLayers) {
  for (ExecMode mode : {ExecMode::Functional, ExecMode::Timing}) {
    Device dev(platform(), mode);
    Module& m = dev.loadModuleFile(std::string(GPUSC_SOURCE_DIR) + "/tests/data/textures.ptx");
    // Four layers of 6 ints, layers 32 bytes apart (two ints of padding each).
    std::vector<int32_t> v(32, -7);
    for (int l = 0; l < 4; ++l)
      for (int x = 0; x < 6; ++x) v[size_t(l * 8 + x)] = x * 3 + l;
    func::TextureDescriptor d;
    d.layered = 1;
    d.kind = uint8_t(func::TexKind::Signed);
    d.base = dev.upload(v);
    d.width = 6;
    d.depth = 4;
    d.slicePitch = 32;
    dev.launch(m.kernel("surfaceLayers"), {4}, {32}, 0,
               KernelArgs().u64(dev.createSurface(d)).i32(6));
    const auto after = dev.download<int32_t>(d.base, 32);
    for (int l = 0; l < 4; ++l)
      for (int x = 0; x < 8; ++x)
        EXPECT_EQ(after[size_t(l * 8 + x)], x < 6 ? x * 3 + l + 100 * l : -7) << l << ", " << x;
  }
}

TEST(Surfaces, AStoreOutsideTheSurfaceTrapsAndATextureIsNoSurface) {
  Device dev(platform(), ExecMode::Functional);
  Module& m = dev.loadModuleFile(std::string(GPUSC_SOURCE_DIR) + "/tests/data/textures.ptx");
  func::TextureDescriptor d;
  d.base = dev.upload(std::vector<float>(16, 0.0f));
  d.width = 16;
  const DevPtr s = dev.createSurface(d);
  dev.launch(m.kernel("surfaceStore"), {1}, {1}, 0, KernelArgs().u64(s).i32(60));
  EXPECT_EQ(dev.download<float>(d.base, 16)[15], 1.0f);
  auto faults = [&](uint64_t handle, int x, const std::string& what) {
    try {
      dev.launch(m.kernel("surfaceStore"), {1}, {1}, 0, KernelArgs().u64(handle).i32(x));
      ADD_FAILURE() << "the store at byte " << x << " ran";
    } catch (const KernelFault& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  };
  faults(s, 64, "outside the 64 x 1 x 1 surface (.trap)");
  faults(s, 6, "not aligned");
  faults(dev.createTexture(d), 0, "it is a texture object, not a surface object");
}

}  // namespace
