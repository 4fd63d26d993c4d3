// Instruction semantics, including the edge cases the PTX ISA defines (or leaves to us, in
// which case docs/ptx-support.md states our choice): division by zero, shift counts at and
// beyond the width, NaN and signed zeros in min/max, cvt rounding and saturation.
#include <cmath>
#include <limits>

#include <gtest/gtest.h>

#include "support/ptx_harness.hpp"

using namespace gpusc::test;

namespace {

constexpr uint32_t kNaN32 = 0x7fffffffu;  // canonical NaN results
constexpr uint64_t kNaN64 = 0x7fffffffffffffffull;

uint64_t u(int64_t v) { return static_cast<uint64_t>(v); }
uint32_t u32(int32_t v) { return static_cast<uint32_t>(v); }

// ---- integer arithmetic ------------------------------------------------------------------------

TEST(IntegerArithmetic, AddSubWrapAround) {
  EXPECT_EQ(eval1("add.s32 %o32, %a32, %b32;", 0x7fffffff, 1).o32, 0x80000000u);
  EXPECT_EQ(eval1("sub.u32 %o32, %a32, %b32;", 0, 1).o32, 0xffffffffu);
  EXPECT_EQ(eval1("add.s64 %o, %a64, %b64;", u(INT64_MAX), 1).o, u(INT64_MIN));
  EXPECT_EQ(eval1("add.u16 %h0, 65535, 2; cvt.u32.u16 %o32, %h0;", 0).o32, 1u);
}

TEST(IntegerArithmetic, SaturatingAdd) {
  EXPECT_EQ(eval1("add.sat.s32 %o32, %a32, %b32;", 0x7fffffff, 5).o32, 0x7fffffffu);
  EXPECT_EQ(eval1("sub.sat.s32 %o32, %a32, %b32;", u32(INT32_MIN), 1).o32, 0x80000000u);
}

TEST(IntegerArithmetic, MultiplyHighLowWide) {
  EXPECT_EQ(eval1("mul.lo.s32 %o32, %a32, %b32;", 0x10000, 0x10000).o32, 0u);
  EXPECT_EQ(eval1("mul.hi.u32 %o32, %a32, %b32;", 0x10000, 0x10000).o32, 1u);
  EXPECT_EQ(eval1("mul.hi.s32 %o32, %a32, %b32;", u32(-2), 0x40000000).o32, 0xffffffffu);
  EXPECT_EQ(eval1("mul.wide.s32 %o, %a32, %b32;", u32(-3), 7).o, u(-21));
  EXPECT_EQ(eval1("mul.wide.u32 %o, %a32, %b32;", 0xffffffff, 2).o, 0x1fffffffeull);
  EXPECT_EQ(eval1("mul.hi.u64 %o, %a64, %b64;", ~0ull, ~0ull).o, ~0ull - 1);
  EXPECT_EQ(eval1("mul24.lo.u32 %o32, %a32, %b32;", 0x1000001, 3).o32, 3u);  // bit 24 is ignored
}

TEST(IntegerArithmetic, MultiplyAdd) {
  EXPECT_EQ(eval1("mad.lo.s32 %o32, %a32, %b32, %c32;", 6, 7, u32(-2)).o32, 40u);
  EXPECT_EQ(eval1("mad.wide.s32 %o, %a32, %b32, %c64;", u32(-4), 5, 100).o, 80u);
  EXPECT_EQ(eval1("mad.hi.u32 %o32, %a32, %b32, %c32;", 0x80000000, 4, 1).o32, 3u);
  EXPECT_EQ(eval1("sad.u32 %o32, %a32, %b32, %c32;", 3, 10, 100).o32, 107u);
  // .sat on mad.hi.s32 and mad24.hi.s32: the sum clamped to the s32 range.
  const char* madHiSat = "mad.hi.sat.s32 %o32, %a32, %b32, %c32;";
  EXPECT_EQ(eval1(madHiSat, 0x7fffffff, 0x7fffffff, 0x7fffffff).o32, 0x7fffffffu);
  EXPECT_EQ(eval1(madHiSat, 0x80000000, 0x7fffffff, 0x80000000).o32, 0x80000000u);
  EXPECT_EQ(eval1(madHiSat, 0x7fffffff, 0x7fffffff, 5).o32, 0x3fffffffu + 5);
  EXPECT_EQ(eval1("mad.hi.s32 %o32, %a32, %b32, %c32;", 0x7fffffff, 0x7fffffff, 0x7fffffff).o32,
            0xbffffffeu);  // without .sat it wraps
  EXPECT_EQ(eval1("mad24.hi.sat.s32 %o32, %a32, %b32, %c32;", 0x7fffff, 0x7fffff, 0x7fffffff).o32,
            0x7fffffffu);
}

TEST(IntegerArithmetic, DivisionRoundsTowardZero) {
  EXPECT_EQ(eval1("div.s32 %o32, %a32, %b32;", u32(-7), 2).o32, u32(-3));
  EXPECT_EQ(eval1("rem.s32 %o32, %a32, %b32;", u32(-7), 2).o32, u32(-1));
  EXPECT_EQ(eval1("div.u64 %o, %a64, %b64;", 1000000000000ull, 7).o, 142857142857ull);
}

TEST(IntegerArithmetic, DivisionByZero) {
  // Unspecified by PTX; we return what NVIDIA's division sequence returns (docs/ptx-support.md).
  EXPECT_EQ(eval1("div.u32 %o32, %a32, %b32;", 42, 0).o32, 0xffffffffu);
  EXPECT_EQ(eval1("div.s32 %o32, %a32, %b32;", 42, 0).o32, u32(-1));
  EXPECT_EQ(eval1("div.s32 %o32, %a32, %b32;", u32(-42), 0).o32, 1u);
  EXPECT_EQ(eval1("rem.u32 %o32, %a32, %b32;", 42, 0).o32, 42u);
  EXPECT_EQ(eval1("div.u64 %o, %a64, %b64;", 5, 0).o, ~0ull);
}

TEST(IntegerArithmetic, MinimumDividedByMinusOne) {
  EXPECT_EQ(eval1("div.s32 %o32, %a32, %b32;", u32(INT32_MIN), u32(-1)).o32, 0x80000000u);
  EXPECT_EQ(eval1("rem.s32 %o32, %a32, %b32;", u32(INT32_MIN), u32(-1)).o32, 0u);
  EXPECT_EQ(eval1("div.s64 %o, %a64, %b64;", u(INT64_MIN), u(-1)).o, u(INT64_MIN));
}

TEST(IntegerArithmetic, MinMaxAbsNegRespectSignedness) {
  EXPECT_EQ(eval1("min.s32 %o32, %a32, %b32;", u32(-1), 1).o32, u32(-1));
  EXPECT_EQ(eval1("min.u32 %o32, %a32, %b32;", u32(-1), 1).o32, 1u);
  EXPECT_EQ(eval1("max.s64 %o, %a64, %b64;", u(-5), u(-9)).o, u(-5));
  EXPECT_EQ(eval1("abs.s32 %o32, %a32;", u32(-17)).o32, 17u);
  EXPECT_EQ(eval1("abs.s32 %o32, %a32;", u32(INT32_MIN)).o32, 0x80000000u);
  EXPECT_EQ(eval1("neg.s32 %o32, %a32;", 5).o32, u32(-5));
}

TEST(IntegerArithmetic, CarryChains) {
  // 64-bit addition from 32-bit halves: 0x00000001_ffffffff + 0x00000000_00000001.
  const char* add = R"(
    add.cc.u32 %r0, %a32, %b32;
    addc.u32 %r1, %c32, 0;
    mov.b64 %o, {%r0, %r1};)";
  EXPECT_EQ(eval1(add, 0xffffffff, 1, 1).o, 0x200000000ull);
  const char* sub = R"(
    sub.cc.u32 %r0, %a32, %b32;
    subc.u32 %r1, %c32, 0;
    mov.b64 %o, {%r0, %r1};)";
  EXPECT_EQ(eval1(sub, 0, 1, 5).o, 0x4ffffffffull);  // borrow propagates
  // One flag for both: a subtraction is x + ~y + 1 and leaves its carry out, set when nothing
  // was borrowed, which addc reads as a carry (the CUDA headers' 128-bit division does so);
  // subc after add.cc adds the carry in place of the 1.
  const char* subThenAddc = "sub.cc.u32 %r0, %a32, %b32; addc.u32 %o32, 0, 0;";
  EXPECT_EQ(eval1(subThenAddc, 5, 3).o32, 1u);
  EXPECT_EQ(eval1(subThenAddc, 3, 5).o32, 0u);
  EXPECT_EQ(eval1(subThenAddc, 7, 0).o32, 1u);
  EXPECT_EQ(eval1(subThenAddc, 7, 7).o32, 1u);
  const char* addThenSubc = "add.cc.u32 %r0, %a32, %b32; subc.u32 %o32, 0, 0;";
  EXPECT_EQ(eval1(addThenSubc, 0xffffffff, 1).o32, 0u);  // carry: 0 + ~0 + 1
  EXPECT_EQ(eval1(addThenSubc, 1, 1).o32, 0xffffffffu);  // no carry: 0 + ~0 + 0
  EXPECT_EQ(eval1("sub.cc.u64 %rd1, %a64, %b64; addc.u64 %o, 0, 0;", 0, 1).o, 0u);
}

TEST(Atomics, SixteenBitCompareAndSwap) {
  // atom.cas.b16 (sm_70; nvcc's atomicCAS on unsigned short and bf16 atomicAdd before sm_90)
  // swaps bytes 2-3 of the thread's own input row only when they hold the compared value.
  const char* cas =
      "cvt.u16.u32 %h1, %b32; cvt.u16.u32 %h2, %c32;"
      "atom.global.cas.b16 %h0, [%addr+2], %h1, %h2;"
      "ld.global.u64 %o, [%addr]; cvt.u32.u16 %o32, %h0;";
  const Lane hit = eval1(cas, 0x1111222233334444ull, 0x3333, 0xabcd);
  EXPECT_EQ(hit.o, 0x11112222abcd4444ull);
  EXPECT_EQ(hit.o32, 0x3333u);
  const Lane miss = eval1(cas, 0x1111222233334444ull, 0x3334, 0xabcd);
  EXPECT_EQ(miss.o, 0x1111222233334444ull);
  EXPECT_EQ(miss.o32, 0x3333u);
}

TEST(Atomics, GlobalF32AddFlushesSubnormals) {
  // The PTX ISA: atom.add.f32 without .noftz flushes subnormal inputs and results to zero of
  // their sign on global memory (and keeps them on shared memory).
  const float denorm = std::ldexp(1.0f, -140);
  const char* add = "atom.global.add.f32 %f0, [%addr], %fb; ld.global.f32 %fo, [%addr];";
  EXPECT_EQ(bits(eval1(add, bits(0.0f), bits(denorm)).fo), bits(0.0f));
  EXPECT_EQ(bits(eval1(add, bits(denorm), bits(0.0f)).fo), bits(0.0f));
  const float a = -1.5f * std::ldexp(1.0f, -126), b = std::ldexp(1.0f, -126);  // -2^-127
  EXPECT_EQ(bits(eval1(add, bits(a), bits(b)).fo), bits(-0.0f));
  const char* noftz = "atom.global.add.noftz.f32 %f0, [%addr], %fb; ld.global.f32 %fo, [%addr];";
  EXPECT_EQ(eval1(noftz, bits(0.0f), bits(denorm)).fo, denorm);
  const char* red = "red.global.add.f32 [%addr], %fb; ld.global.f32 %fo, [%addr];";
  EXPECT_EQ(bits(eval1(red, bits(1.0f), bits(denorm)).fo), bits(1.0f));
}

// ---- shifts and bit manipulation ---------------------------------------------------------------

TEST(Bits, ShiftCountsAtAndBeyondTheWidth) {
  EXPECT_EQ(eval1("shl.b32 %o32, %a32, %b32;", 1, 31).o32, 0x80000000u);
  EXPECT_EQ(eval1("shl.b32 %o32, %a32, %b32;", 1, 32).o32, 0u);
  EXPECT_EQ(eval1("shl.b32 %o32, %a32, %b32;", 1, 1000).o32, 0u);
  EXPECT_EQ(eval1("shr.u32 %o32, %a32, %b32;", 0x80000000, 32).o32, 0u);
  EXPECT_EQ(eval1("shr.s32 %o32, %a32, %b32;", u32(-8), 1).o32, u32(-4));
  EXPECT_EQ(eval1("shr.s32 %o32, %a32, %b32;", u32(-8), 40).o32, u32(-1));
  EXPECT_EQ(eval1("shr.s32 %o32, %a32, %b32;", 8, 40).o32, 0u);
  EXPECT_EQ(eval1("shl.b64 %o, %a64, %b32;", 1, 63).o, 1ull << 63);
  EXPECT_EQ(eval1("shl.b64 %o, %a64, %b32;", 1, 64).o, 0u);
  EXPECT_EQ(eval1("shr.s64 %o, %a64, %b32;", u(INT64_MIN), 64).o, ~0ull);
}

TEST(Bits, CountsAndReversal) {
  EXPECT_EQ(eval1("popc.b32 %o32, %a32;", 0xf0f0f0f1).o32, 17u);
  EXPECT_EQ(eval1("popc.b64 %o32, %a64;", ~0ull).o32, 64u);
  EXPECT_EQ(eval1("clz.b32 %o32, %a32;", 0).o32, 32u);
  EXPECT_EQ(eval1("clz.b32 %o32, %a32;", 1).o32, 31u);
  EXPECT_EQ(eval1("clz.b64 %o32, %a64;", 1).o32, 63u);
  EXPECT_EQ(eval1("brev.b32 %o32, %a32;", 1).o32, 0x80000000u);
  EXPECT_EQ(eval1("brev.b32 %o32, %a32;", 0x12345678).o32, 0x1e6a2c48u);
  EXPECT_EQ(eval1("brev.b64 %o, %a64;", 1).o, 1ull << 63);
}

TEST(Bits, BitFieldExtractAndInsert) {
  EXPECT_EQ(eval1("bfe.u32 %o32, %a32, 8, 8;", 0x12345678).o32, 0x56u);
  EXPECT_EQ(eval1("bfe.s32 %o32, %a32, 4, 4;", 0x000000f0).o32, u32(-1));  // sign of the field
  EXPECT_EQ(eval1("bfe.u32 %o32, %a32, 4, 0;", 0xffffffff).o32, 0u);
  EXPECT_EQ(eval1("bfe.u32 %o32, %a32, 28, 8;", 0xf0000000).o32, 0xfu);  // field runs off the end
  EXPECT_EQ(eval1("bfe.s32 %o32, %a32, 28, 8;", 0xf0000000).o32, u32(-1));
  EXPECT_EQ(eval1("bfi.b32 %o32, %a32, %b32, 8, 8;", 0xab, 0x11111111).o32, 0x1111ab11u);
  EXPECT_EQ(eval1("bfi.b32 %o32, %a32, %b32, 30, 8;", 0xff, 0).o32, 0xc0000000u);
}

TEST(Bits, PermuteLop3Funnel) {
  EXPECT_EQ(eval1("prmt.b32 %o32, %a32, %b32, 0x3210;", 0x44332211, 0x88776655).o32, 0x44332211u);
  EXPECT_EQ(eval1("prmt.b32 %o32, %a32, %b32, 0x7654;", 0x44332211, 0x88776655).o32, 0x88776655u);
  EXPECT_EQ(eval1("prmt.b32 %o32, %a32, %b32, 0x0123;", 0x44332211, 0).o32, 0x11223344u);
  EXPECT_EQ(eval1("prmt.b32 %o32, %a32, %b32, 0x8880;", 0x00000080, 0).o32,
            0xffffff80u);  // sign replicate
  EXPECT_EQ(eval1("prmt.b32 %o32, %a32, %b32, 0x0008;", 0x00000080, 0).o32, 0x808080ffu);
  // lop3 0x96 is a ^ b ^ c; 0xe8 is the majority function.
  EXPECT_EQ(eval1("lop3.b32 %o32, %a32, %b32, %c32, 0x96;", 0xff00ff00, 0x0ff00ff0, 0x00ff00ff).o32,
            0xff00ff00u ^ 0x0ff00ff0u ^ 0x00ff00ffu);
  EXPECT_EQ(eval1("lop3.b32 %o32, %a32, %b32, %c32, 0xe8;", 0b1100, 0b1010, 0b0110).o32, 0b1110u);
  EXPECT_EQ(eval1("shf.l.wrap.b32 %o32, %a32, %b32, 4;", 0xf0000000, 0x00000001).o32, 0x0000001fu);
  EXPECT_EQ(eval1("shf.r.clamp.b32 %o32, %a32, %b32, 40;", 0x1, 0x12345678).o32, 0x12345678u);
  EXPECT_EQ(eval1("shf.r.wrap.b32 %o32, %a32, %b32, 36;", 0x000000f0, 0x1).o32, 0x1000000fu);
}

TEST(Bits, LogicOnPredicates) {
  const char* body = R"(
    setp.ne.u32 %p0, %a32, 0;
    setp.ne.u32 %p1, %b32, 0;
    and.pred %p2, %p0, %p1;
    or.pred %p3, %p0, %p1;
    xor.pred %p4, %p0, %p1;
    not.pred %p5, %p0;
    selp.u32 %r0, 1, 0, %p2;
    selp.u32 %r1, 2, 0, %p3;
    selp.u32 %r2, 4, 0, %p4;
    selp.u32 %r3, 8, 0, %p5;
    or.b32 %r0, %r0, %r1;
    or.b32 %r2, %r2, %r3;
    or.b32 %o32, %r0, %r2;)";
  auto r = eval(body, {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {1, 1, 0}});
  EXPECT_EQ(r[0].o32, 8u);
  EXPECT_EQ(r[1].o32, 2u | 4u);
  EXPECT_EQ(r[2].o32, 2u | 4u | 8u);
  EXPECT_EQ(r[3].o32, 1u | 2u);
}

// ---- comparison and selection ------------------------------------------------------------------

TEST(Compare, SignedUnsignedAndFloatOrdering) {
  const char* body = R"(
    setp.lt.s32 %p0, %a32, %b32;
    setp.lo.u32 %p1, %a32, %b32;
    selp.u32 %r0, 1, 0, %p0;
    selp.u32 %r1, 2, 0, %p1;
    or.b32 %o32, %r0, %r1;)";
  EXPECT_EQ(eval1(body, u32(-1), 1).o32, 1u);  // -1 < 1 signed, not unsigned
  EXPECT_EQ(eval1(body, 1, u32(-1)).o32, 2u);
  const char* f = R"(
    setp.lt.f32 %p0, %fa, %fb;
    setp.ltu.f32 %p1, %fa, %fb;
    setp.nan.f32 %p2, %fa, %fb;
    selp.u32 %r0, 1, 0, %p0;
    selp.u32 %r1, 2, 0, %p1;
    selp.u32 %r2, 4, 0, %p2;
    or.b32 %r0, %r0, %r1;
    or.b32 %o32, %r0, %r2;)";
  EXPECT_EQ(eval1(f, bits(1.0f), bits(2.0f)).o32, 3u);
  EXPECT_EQ(eval1(f, bits(NAN), bits(2.0f)).o32, 6u);  // unordered: only ltu and nan
}

TEST(Compare, SetpWithCombinerAndTwoResults) {
  const char* body = R"(
    setp.ne.u32 %p0, %c32, 0;
    setp.gt.and.s32 %p1|%p2, %a32, %b32, %p0;
    selp.u32 %r0, 1, 0, %p1;
    selp.u32 %r1, 2, 0, %p2;
    or.b32 %o32, %r0, %r1;)";
  EXPECT_EQ(eval1(body, 5, 3, 1).o32, 1u);
  EXPECT_EQ(eval1(body, 2, 3, 1).o32, 2u);  // q = !(a > b) and c
  EXPECT_EQ(eval1(body, 5, 3, 0).o32, 0u);
}

TEST(Compare, SetAndSlct) {
  EXPECT_EQ(eval1("set.gt.u32.s32 %o32, %a32, %b32;", 3, 2).o32, 0xffffffffu);
  EXPECT_EQ(eval1("set.gt.f32.s32 %fo, %a32, %b32;", 3, 2).fo, 1.0f);
  EXPECT_EQ(eval1("slct.u32.s32 %o32, 10, 20, %a32;", 0).o32, 10u);
  EXPECT_EQ(eval1("slct.u32.s32 %o32, 10, 20, %a32;", u32(-1)).o32, 20u);
}

TEST(Compare, FtzFlushesSubnormalOperands) {
  // setp, set and slct with .ftz compare a subnormal f32 as zero of its sign.
  const float denorm = std::ldexp(1.0f, -140);
  EXPECT_EQ(eval1("setp.eq.f32 %p1, %fa, %fb; selp.u32 %o32, 1, 0, %p1;", bits(denorm), 0).o32, 0u);
  EXPECT_EQ(eval1("setp.eq.ftz.f32 %p1, %fa, %fb; selp.u32 %o32, 1, 0, %p1;", bits(denorm), 0).o32,
            1u);
  EXPECT_EQ(eval1("setp.lt.ftz.f32 %p1, %fb, %fa; selp.u32 %o32, 1, 0, %p1;", bits(denorm), 0).o32,
            0u);
  EXPECT_EQ(eval1("set.eq.ftz.u32.f32 %o32, %fa, %fb;", bits(denorm), 0).o32, 0xffffffffu);
  EXPECT_EQ(eval1("slct.f32.f32 %fo, 0f3F800000, 0f40000000, %fa;", bits(-denorm)).fo, 2.0f);
  EXPECT_EQ(eval1("slct.ftz.f32.f32 %fo, 0f3F800000, 0f40000000, %fa;", bits(-denorm)).fo, 1.0f);
}

// ---- floating point ----------------------------------------------------------------------------

TEST(Float, DivApproxBeyondTwoToThe126) {
  // div.approx.f32 is a * (1/b): for 2^126 < |b| < 2^128 the PTX ISA gives 0, or NaN for an
  // infinite a; div.full.f32 scales its operands and keeps the quotient.
  const float big = std::ldexp(1.0f, 127);
  EXPECT_EQ(bits(eval1("div.approx.f32 %fo, %fa, %fb;", bits(1.0f), bits(big)).fo), bits(0.0f));
  EXPECT_EQ(bits(eval1("div.approx.f32 %fo, %fa, %fb;", bits(-1.0f), bits(big)).fo), bits(-0.0f));
  EXPECT_TRUE(std::isnan(eval1("div.approx.f32 %fo, %fa, %fb;", bits(INFINITY), bits(big)).fo));
  EXPECT_EQ(eval1("div.full.f32 %fo, %fa, %fb;", bits(1.0f), bits(big)).fo, std::ldexp(1.0f, -127));
  EXPECT_EQ(eval1("div.approx.f32 %fo, %fa, %fb;", bits(1.0f), bits(4.0f)).fo, 0.25f);
}

TEST(Float, ReciprocalSquareRootF64RoundsOnce) {
  // 1 / sqrt(x) with two roundings is 1.33 ulp off here; rsqrt.approx.f64 (CUDA's rsqrt(double),
  // 1 ulp) gives the nearest double.
  const double x = 0x1.279edde0febb3p-56;
  EXPECT_EQ(bits(eval1("rsqrt.approx.f64 %do, %da;", bits(x)).dfo), 0x41adc74af2ee855eull);
}

TEST(Float, MinMaxWithNaNAndSignedZeros) {
  EXPECT_EQ(eval1("min.f32 %fo, %fa, %fb;", bits(NAN), bits(1.0f)).fo, 1.0f);
  EXPECT_EQ(eval1("max.f32 %fo, %fa, %fb;", bits(2.0f), bits(NAN)).fo, 2.0f);
  EXPECT_EQ(bits(eval1("min.f32 %fo, %fa, %fb;", bits(NAN), bits(NAN)).fo), kNaN32);
  EXPECT_EQ(bits(eval1("min.f32 %fo, %fa, %fb;", bits(0.0f), bits(-0.0f)).fo), bits(-0.0f));
  EXPECT_EQ(bits(eval1("max.f32 %fo, %fa, %fb;", bits(-0.0f), bits(0.0f)).fo), bits(0.0f));
  EXPECT_EQ(bits(eval1("min.NaN.f32 %fo, %fa, %fb;", bits(NAN), bits(1.0f)).fo), kNaN32);
  EXPECT_EQ(eval1("min.f64 %do, %da, %db;", bits(double(NAN)), bits(-3.0)).dfo, -3.0);
}

TEST(Float, InfinitiesAndCanonicalNaN) {
  EXPECT_EQ(bits(eval1("add.f32 %fo, %fa, %fb;", bits(INFINITY), bits(-INFINITY)).fo), kNaN32);
  EXPECT_EQ(bits(eval1("mul.f64 %do, %da, %db;", bits(0.0), bits(double(INFINITY))).dfo), kNaN64);
  EXPECT_EQ(eval1("div.rn.f32 %fo, %fa, %fb;", bits(1.0f), bits(0.0f)).fo, INFINITY);
  EXPECT_EQ(eval1("div.rn.f32 %fo, %fa, %fb;", bits(-1.0f), bits(0.0f)).fo, -INFINITY);
  EXPECT_EQ(bits(eval1("div.rn.f32 %fo, %fa, %fb;", bits(0.0f), bits(0.0f)).fo), kNaN32);
  EXPECT_EQ(bits(eval1("sqrt.rn.f32 %fo, %fa;", bits(-1.0f)).fo), kNaN32);
  EXPECT_EQ(eval1("rcp.rn.f64 %do, %da;", bits(0.0)).dfo, double(INFINITY));
}

TEST(Float, FmaRoundsOnce) {
  // (1 + 2^-23)(1 - 2^-23) - 1 = -2^-46 exactly; a separate multiply would round it to 0.
  const float a = 1.0f + std::ldexp(1.0f, -23), b = 1.0f - std::ldexp(1.0f, -23);
  EXPECT_EQ(eval1("fma.rn.f32 %fo, %fa, %fb, %fc;", bits(a), bits(b), bits(-1.0f)).fo,
            -std::ldexp(1.0f, -46));
  EXPECT_EQ(
      eval1("mul.rn.f32 %f0, %fa, %fb; add.rn.f32 %fo, %f0, %fc;", bits(a), bits(b), bits(-1.0f))
          .fo,
      0.0f);
  const double da = 1.0 + std::ldexp(1.0, -52), db = 1.0 - std::ldexp(1.0, -52);
  EXPECT_EQ(eval1("fma.rn.f64 %do, %da, %db, %dc;", bits(da), bits(db), bits(-1.0)).dfo,
            -std::ldexp(1.0, -104));
}

TEST(Float, DirectedRounding) {
  const float x = 1.0f, y = std::ldexp(1.0f, -24);  // 1 + 2^-24 is a tie in float
  EXPECT_EQ(eval1("add.rn.f32 %fo, %fa, %fb;", bits(x), bits(y)).fo, 1.0f);
  EXPECT_EQ(eval1("add.rz.f32 %fo, %fa, %fb;", bits(x), bits(y)).fo, 1.0f);
  EXPECT_EQ(eval1("add.rp.f32 %fo, %fa, %fb;", bits(x), bits(y)).fo, 1.0f + std::ldexp(1.0f, -23));
  EXPECT_EQ(eval1("add.rm.f32 %fo, %fa, %fb;", bits(-x), bits(-y)).fo,
            -1.0f - std::ldexp(1.0f, -23));
  // The directed rounding does not leak into later instructions.
  EXPECT_EQ(eval1("add.rp.f32 %f0, %fa, %fb; add.f32 %fo, %fa, %fb;", bits(x), bits(y)).fo, 1.0f);
}

// A full warp's f32 and f64 arithmetic runs several lanes at a time where the host can
// (handlers_float.cpp); it must give every lane the bits the lane-by-lane path gives. Each
// operation runs once on the full warp (%fo / %do) and once as two predicated halves, whose
// partial masks take the lane-by-lane path (%o32 / %o), over operands that reach every special
// case: zeros of both signs, subnormals, the extremes, infinities, NaNs with payloads, ties.
TEST(Float, FullWarpsGiveTheLaneByLaneResults) {
  const float f32[] = {0.0f,
                       -0.0f,
                       1.0f,
                       -1.0f,
                       1.0f + std::ldexp(1.0f, -23),
                       std::ldexp(1.0f, -24),
                       std::ldexp(1.0f, -140),
                       -std::ldexp(1.0f, -149),
                       std::numeric_limits<float>::min(),
                       std::numeric_limits<float>::max(),
                       -std::numeric_limits<float>::max(),
                       INFINITY,
                       -INFINITY,
                       3.0f,
                       1.0f / 3,
                       std::ldexp(1.0f, -126) * 0.75f};
  const double f64[] = {0.0,
                        -0.0,
                        1.0,
                        -1.0,
                        1.0 + std::ldexp(1.0, -52),
                        std::ldexp(1.0, -53),
                        std::ldexp(1.0, -1060),
                        -std::ldexp(1.0, -1074),
                        std::numeric_limits<double>::min(),
                        std::numeric_limits<double>::max(),
                        -std::numeric_limits<double>::max(),
                        INFINITY,
                        -INFINITY,
                        3.0,
                        1.0 / 3,
                        std::ldexp(1.0, -1022) * 0.75};
  const uint32_t nan32[] = {0x7fc00000u, 0xffc00001u, 0x7f800001u};
  const uint64_t nan64[] = {0x7ff8000000000000ull, 0xfff0000000000001ull, 0x7ff0000000000001ull};
  // Rows of (a, b, c): f32 operands in the low half, f64 operands whole (each its own column
  // of the kernel's registers), chosen by a fixed sequence so that every value meets the others.
  uint64_t state = 12345;
  auto pick = [&] {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<unsigned>(state >> 33);
  };
  std::vector<std::array<uint64_t, 3>> rows32, rows64;
  for (int batch = 0; batch < 8; ++batch)
    for (int l = 0; l < 32; ++l) {
      std::array<uint64_t, 3> r32{}, r64{};
      for (int k = 0; k < 3; ++k) {
        const unsigned i = pick() % 19;
        r32[k] = i < 16 ? bits(f32[i]) : nan32[i - 16];
        r64[k] = i < 16 ? bits(f64[i]) : nan64[i - 16];
      }
      rows32.push_back(r32);
      rows64.push_back(r64);
    }
  // `instr` with `args` on the full warp into `full`, and as two predicated halves into `half`,
  // which `move` copies to an integer output.
  auto body = [](const std::string& instr, const std::string& args, const char* full,
                 const char* half, const char* move) {
    const std::string both = " " + args + "; ";
    return "mov.u32 %r0, %laneid; and.b32 %r0, %r0, 1; setp.eq.u32 %p0, %r0, 0; " + instr + " " +
           full + "," + both + "@%p0 " + instr + " " + half + "," + both + "@!%p0 " + instr + " " +
           half + "," + both + move;
  };
  for (const char* round : {"rn", "rz", "rm", "rp"}) {
    for (const std::string op : {"add", "sub", "mul", "div", "fma"}) {
      const bool fma = op == "fma";
      for (const std::string& mod : {std::string(".") + round, std::string(".") + round + ".ftz"}) {
        const std::string f32op = op + mod + ".f32";
        const auto got = eval(
            body(f32op, fma ? "%fa, %fb, %fc" : "%fa, %fb", "%fo", "%f1", "mov.b32 %o32, %f1;"),
            rows32);
        for (size_t i = 0; i < rows32.size(); ++i)
          ASSERT_EQ(bits(got[i].fo), got[i].o32)
              << f32op << " row " << i << ": " << std::hex << rows32[i][0] << " " << rows32[i][1]
              << " " << rows32[i][2];
      }
      const std::string f64op = op + "." + round + ".f64";
      const auto got =
          eval(body(f64op, fma ? "%da, %db, %dc" : "%da, %db", "%do", "%fd1", "mov.b64 %o, %fd1;"),
               rows64);
      for (size_t i = 0; i < rows64.size(); ++i)
        ASSERT_EQ(bits(got[i].dfo), got[i].o)
            << f64op << " row " << i << ": " << std::hex << rows64[i][0] << " " << rows64[i][1]
            << " " << rows64[i][2];
    }
  }
}

// Each lane's local memory is its own: an access at one address for all lanes (a local variable,
// a spill slot) takes a shortcut past the lane-by-lane checks, and must give each lane its own
// bytes, for full and partial warps, scalar and vector accesses, and beside a lane-dependent
// address.
TEST(Memory, LocalVariablesAreEachLanesOwn) {
  const std::string body = R"(
  {
    .local .align 16 .b8 buf[32];
    st.local.u32 [buf+4], %a32;
    st.local.v2.u32 [buf+8], {%b32, %c32};
    and.b32 %r4, %a32, 1;
    setp.eq.u32 %p0, %r4, 1;
    @%p0 st.local.u32 [buf+16], %c32;
    @!%p0 st.local.u32 [buf+16], %b32;
    ld.local.u32 %r1, [buf+4];
    ld.local.v2.u32 {%r2, %r3}, [buf+8];
    ld.local.u32 %r5, [buf+16];
    mad.lo.u32 %o32, %r2, 3, %r1;
    mad.lo.u32 %o32, %r3, 5, %o32;
    mad.lo.u32 %o32, %r5, 7, %o32;
    mov.u32 %r6, %laneid;
    and.b32 %r6, %r6, 3;
    mul.wide.u32 %rd1, %r6, 4;
    mov.u64 %rd2, buf;
    add.u64 %rd2, %rd2, %rd1;
    st.local.u32 [%rd2+16], %a32;
    ld.local.u32 %r7, [buf+16];
    cvt.u64.u32 %o, %r7;
  }
)";
  std::vector<std::array<uint64_t, 3>> rows;
  for (uint64_t t = 0; t < 40; ++t) rows.push_back({t * 7919 + 1, t * 104729 + 2, t * 1299709 + 3});
  for (gpusc::ExecMode mode : {gpusc::ExecMode::Functional, gpusc::ExecMode::Timing}) {
    const auto got = eval(body, rows, mode);
    for (uint32_t t = 0; t < rows.size(); ++t) {
      const uint32_t a = static_cast<uint32_t>(rows[t][0]), b = static_cast<uint32_t>(rows[t][1]),
                     c = static_cast<uint32_t>(rows[t][2]);
      const uint32_t odd = (a & 1) ? c : b;
      ASSERT_EQ(got[t].o32, a + 3 * b + 5 * c + 7 * odd) << "thread " << t;
      // Lanes 0, 4, 8, ... wrote a at buf+16; the others wrote it further on.
      ASSERT_EQ(got[t].o, t % 4 == 0 ? a : odd) << "thread " << t;
    }
  }
}

TEST(Float, FlushToZeroAndSaturate) {
  const float denorm = std::ldexp(1.0f, -140);
  EXPECT_EQ(eval1("add.f32 %fo, %fa, %fb;", bits(denorm), bits(0.0f)).fo, denorm);
  EXPECT_EQ(eval1("add.ftz.f32 %fo, %fa, %fb;", bits(denorm), bits(0.0f)).fo, 0.0f);
  EXPECT_EQ(
      eval1("mul.ftz.f32 %fo, %fa, %fb;", bits(std::ldexp(1.0f, -100)), bits(std::ldexp(1.0f, -30)))
          .fo,
      0.0f);
  EXPECT_EQ(eval1("add.sat.f32 %fo, %fa, %fb;", bits(0.75f), bits(0.5f)).fo, 1.0f);
  EXPECT_EQ(eval1("add.sat.f32 %fo, %fa, %fb;", bits(-0.75f), bits(0.5f)).fo, 0.0f);
  EXPECT_EQ(eval1("add.sat.f32 %fo, %fa, %fb;", bits(NAN), bits(0.5f)).fo, 0.0f);
}

TEST(Float, SpecialFunctions) {
  EXPECT_FLOAT_EQ(eval1("ex2.approx.f32 %fo, %fa;", bits(3.0f)).fo, 8.0f);
  EXPECT_FLOAT_EQ(eval1("lg2.approx.f32 %fo, %fa;", bits(1024.0f)).fo, 10.0f);
  EXPECT_NEAR(eval1("sin.approx.f32 %fo, %fa;", bits(0.5f)).fo, std::sin(0.5f), 1e-6);
  EXPECT_NEAR(eval1("cos.approx.f32 %fo, %fa;", bits(0.5f)).fo, std::cos(0.5f), 1e-6);
  EXPECT_FLOAT_EQ(eval1("rsqrt.approx.f32 %fo, %fa;", bits(4.0f)).fo, 0.5f);
  EXPECT_FLOAT_EQ(eval1("rcp.approx.f32 %fo, %fa;", bits(4.0f)).fo, 0.25f);
  EXPECT_EQ(eval1("sqrt.rn.f64 %do, %da;", bits(2.0)).dfo, std::sqrt(2.0));
  EXPECT_EQ(eval1("div.rn.f64 %do, %da, %db;", bits(1.0), bits(3.0)).dfo, 1.0 / 3.0);
  EXPECT_EQ(eval1("copysign.f32 %fo, %fa, %fb;", bits(-1.0f), bits(2.5f)).fo, -2.5f);
}

TEST(Float, Testp) {
  const char* body = R"(
    testp.finite.f32 %p0, %fa;
    testp.notanumber.f32 %p1, %fa;
    testp.subnormal.f32 %p2, %fa;
    selp.u32 %r0, 1, 0, %p0;
    selp.u32 %r1, 2, 0, %p1;
    selp.u32 %r2, 4, 0, %p2;
    or.b32 %r0, %r0, %r1;
    or.b32 %o32, %r0, %r2;)";
  EXPECT_EQ(eval1(body, bits(1.0f)).o32, 1u);
  EXPECT_EQ(eval1(body, bits(NAN)).o32, 2u);
  EXPECT_EQ(eval1(body, bits(INFINITY)).o32, 0u);
  EXPECT_EQ(eval1(body, bits(std::ldexp(1.0f, -140))).o32, 5u);
}

// ---- conversions -------------------------------------------------------------------------------

TEST(Convert, FloatToIntegerRoundingModes) {
  auto cvt = [](const char* mode, float v) {
    return static_cast<int32_t>(
        eval1(std::string("cvt.") + mode + ".s32.f32 %o32, %fa;", bits(v)).o32);
  };
  EXPECT_EQ(cvt("rzi", 3.7f), 3);
  EXPECT_EQ(cvt("rzi", -3.7f), -3);
  EXPECT_EQ(cvt("rni", 2.5f), 2);  // ties to even
  EXPECT_EQ(cvt("rni", 3.5f), 4);
  EXPECT_EQ(cvt("rmi", -0.5f), -1);
  EXPECT_EQ(cvt("rpi", 0.25f), 1);
}

TEST(Convert, FloatToIntegerSaturates) {
  EXPECT_EQ(eval1("cvt.rzi.s32.f32 %o32, %fa;", bits(1e10f)).o32, 0x7fffffffu);
  EXPECT_EQ(eval1("cvt.rzi.s32.f32 %o32, %fa;", bits(-1e10f)).o32, 0x80000000u);
  EXPECT_EQ(eval1("cvt.rzi.s32.f32 %o32, %fa;", bits(NAN)).o32, 0u);
  EXPECT_EQ(eval1("cvt.rzi.u32.f32 %o32, %fa;", bits(-5.0f)).o32, 0u);
  EXPECT_EQ(eval1("cvt.rzi.u8.f32 %o32, %fa;", bits(300.0f)).o32, 255u);
  EXPECT_EQ(eval1("cvt.rni.s64.f64 %o, %da;", bits(-1e300)).o, u(INT64_MIN));
}

// NaN (PTX ISA 9.0, cvt): 0 from f16, bf16 or f32 to a destination narrower than 64 bits, else
// 1 << (width - 1).
TEST(Convert, NaNToIntegerDependsOnTheWidths) {
  EXPECT_EQ(eval1("cvt.rzi.u32.f32 %o32, %fa;", bits(NAN)).o32, 0u);
  EXPECT_EQ(eval1("cvt.rzi.s64.f32 %o, %fa;", bits(NAN)).o, 0x8000000000000000ull);
  EXPECT_EQ(eval1("cvt.rni.u64.f32 %o, %fa;", bits(NAN)).o, 0x8000000000000000ull);
  EXPECT_EQ(eval1("cvt.rzi.s32.f64 %o32, %da;", bits(double(NAN))).o32, 0x80000000u);
  EXPECT_EQ(eval1("cvt.rni.u32.f64 %o32, %da;", bits(double(NAN))).o32, 0x80000000u);
  EXPECT_EQ(eval1("cvt.rmi.s64.f64 %o, %da;", bits(double(NAN))).o, 0x8000000000000000ull);
  EXPECT_EQ(eval1("cvt.rzi.s16.f64 %o32, %da;", bits(double(NAN))).o32 & 0xffff, 0x8000u);
  EXPECT_EQ(eval1("cvt.rzi.u8.f32 %o32, %fa;", bits(NAN)).o32, 0u);
}

TEST(Convert, IntegerToFloatRounding) {
  EXPECT_EQ(eval1("cvt.rn.f32.s32 %fo, %a32;", 16777217).fo, 16777216.0f);
  EXPECT_EQ(eval1("cvt.rp.f32.s32 %fo, %a32;", 16777217).fo, 16777218.0f);
  EXPECT_EQ(eval1("cvt.rz.f32.u32 %fo, %a32;", 0xffffffff).fo, 4294967040.0f);
  EXPECT_EQ(eval1("cvt.rn.f32.u32 %fo, %a32;", 0xffffffff).fo, 4294967296.0f);
  EXPECT_EQ(eval1("cvt.rn.f64.s64 %do, %a64;", u(-3)).dfo, -3.0);
}

TEST(Convert, FloatToFloat) {
  EXPECT_EQ(eval1("cvt.f64.f32 %do, %fa;", bits(0.1f)).dfo, static_cast<double>(0.1f));
  EXPECT_EQ(eval1("cvt.rn.f32.f64 %fo, %da;", bits(0.1)).fo, 0.1f);
  EXPECT_EQ(eval1("cvt.rz.f32.f64 %fo, %da;", bits(1.0 + std::ldexp(1.0, -30))).fo, 1.0f);
  EXPECT_EQ(eval1("cvt.rp.f32.f64 %fo, %da;", bits(1.0 + std::ldexp(1.0, -30))).fo,
            1.0f + std::ldexp(1.0f, -23));
  EXPECT_EQ(eval1("cvt.rni.f32.f32 %fo, %fa;", bits(2.5f)).fo, 2.0f);
  EXPECT_EQ(eval1("cvt.rmi.f32.f32 %fo, %fa;", bits(-2.5f)).fo, -3.0f);
  EXPECT_EQ(eval1("cvt.sat.f32.f32 %fo, %fa;", bits(7.0f)).fo, 1.0f);
}

TEST(Convert, IntegerWidthsSignExtensionAndSaturation) {
  EXPECT_EQ(eval1("cvt.s32.s8 %o32, %a32;", 0xff).o32, u32(-1));
  EXPECT_EQ(eval1("cvt.u32.u8 %o32, %a32;", 0x1ff).o32, 0xffu);
  EXPECT_EQ(eval1("cvt.u64.s32 %o, %a32;", u32(-1)).o, ~0ull);
  EXPECT_EQ(eval1("cvt.u64.u32 %o, %a32;", u32(-1)).o, 0xffffffffull);
  EXPECT_EQ(eval1("cvt.u32.u64 %o32, %a64;", 0x123456789ull).o32, 0x23456789u);
  EXPECT_EQ(eval1("cvt.sat.s8.s32 %o32, %a32;", 300).o32, 127u);
  // A signed result in a wider register is sign-extended to it, an unsigned one zero-extended
  // (PTX ISA, "Operand Size Exceeding Instruction-Type Size").
  EXPECT_EQ(eval1("cvt.sat.s8.s32 %o32, %a32;", u32(-300)).o32, u32(-128));
  EXPECT_EQ(eval1("cvt.s8.s32 %o32, %a32;", 200).o32, u32(-56));
  EXPECT_EQ(eval1("cvt.s16.s32 %o, %a32;", 0x18000).o, u(-32768));
  EXPECT_EQ(eval1("cvt.rni.sat.s8.f32 %o32, %fa;", bits(-56.3f)).o32, u32(-56));
  EXPECT_EQ(eval1("cvt.rzi.sat.s16.f32 %o32, %fa;", bits(-56300.0f)).o32, u32(-32768));
  EXPECT_EQ(eval1("cvt.u8.s32 %o32, %a32;", u32(-1)).o32, 0xffu);
  EXPECT_EQ(eval1("cvt.sat.u16.s32 %o32, %a32;", u32(-5)).o32, 0u);
  EXPECT_EQ(eval1("cvt.sat.u32.s64 %o32, %a64;", 1ull << 40).o32, 0xffffffffu);
}

// setp and set with .ftz on f16 and f16x2 compare subnormal halves as zero of their sign.
TEST(Compare, HalfPrecisionFlushesSubnormalsWithFtz) {
  // 0x0001 is the smallest f16 subnormal, 0x8001 its negative.
  const char* eqZero =
      "mov.b32 {%h0, %h1}, %a32; setp.eq.ftz.f16 %p0, %h0, %h1; selp.u32 %o32, 1, 0, %p0;";
  EXPECT_EQ(eval1(eqZero, 0x80010001).o32, 1u);
  EXPECT_EQ(eval1("mov.b32 {%h0, %h1}, %a32; setp.eq.f16 %p0, %h0, %h1; selp.u32 %o32, 1, 0, %p0;",
                  0x80010001)
                .o32,
            0u);
  const char* pairs =
      "setp.gt.ftz.f16x2 %p0|%p1, %a32, %b32; selp.u32 %r0, 1, 0, %p0; selp.u32 %r1, 2, 0, %p1;"
      "or.b32 %o32, %r0, %r1;";
  EXPECT_EQ(eval1(pairs, 0x3c000001, 0x00000000).o32, 2u);  // low: subnormal > 0 is false
  EXPECT_EQ(eval1("set.ge.ftz.f16x2.f16x2 %o32, %a32, %b32;", 0x80010001, 0).o32, 0x3c003c00u);
}

TEST(Convert, HalfPrecision) {
  const char* toHalf = "cvt.rn.f16.f32 %h0, %fa; cvt.u32.u16 %o32, %h0;";
  EXPECT_EQ(eval1(toHalf, bits(1.0f)).o32, 0x3c00u);
  EXPECT_EQ(eval1(toHalf, bits(-2.0f)).o32, 0xc000u);
  EXPECT_EQ(eval1(toHalf, bits(65520.0f)).o32, 0x7c00u);                      // rounds to infinity
  EXPECT_EQ(eval1(toHalf, bits(std::ldexp(1.0f, -24))).o32, 0x0001u);         // smallest subnormal
  EXPECT_EQ(eval1(toHalf, bits(1.0f + std::ldexp(1.0f, -11))).o32, 0x3c00u);  // tie to even
  EXPECT_EQ(eval1("cvt.u16.u32 %h0, %a32; cvt.f32.f16 %fo, %h0;", 0x3555).fo, 0.333251953125f);
  EXPECT_EQ(eval1("cvt.u16.u32 %h0, %a32; cvt.f32.f16 %fo, %h0;", 0x0001).fo,
            std::ldexp(1.0f, -24));
}

TEST(Move, PackUnpackAndImmediates) {
  EXPECT_EQ(eval1("mov.b64 %o, {%a32, %b32};", 0x11111111, 0x22222222).o, 0x2222222211111111ull);
  EXPECT_EQ(eval1("mov.b64 {%r0, %r1}, %a64; add.u32 %o32, %r0, %r1;", 0x0000000500000007ull).o32,
            12u);
  EXPECT_EQ(eval1("mov.b64 {_, %o32}, %a64;", 0xabcdef0012345678ull).o32, 0xabcdef00u);
  EXPECT_EQ(eval1("mov.b32 %o32, {%h0, %h1};", 0).o32, 0u);
  EXPECT_EQ(eval1("mov.f32 %fo, 0f3FC00000;", 0).fo, 1.5f);
  EXPECT_EQ(eval1("mov.f64 %do, 0d4004000000000000;", 0).dfo, 2.5);
  EXPECT_EQ(eval1("mov.u32 %o32, -1;", 0).o32, 0xffffffffu);
  EXPECT_EQ(eval1("add.f32 %fo, %fa, 0fBF800000;", bits(3.0f)).fo, 2.0f);
}

TEST(SpecialRegisters, ThreadAndLaneIds) {
  const char* body = R"(
    mov.u32 %r0, %laneid;
    mov.u32 %r1, %lanemask_lt;
    popc.b32 %r2, %r1;
    sub.u32 %o32, %r0, %r2;
    mov.u32 %r3, %ntid.x;
    cvt.u64.u32 %o, %r3;)";
  std::vector<std::array<uint64_t, 3>> rows(40, {0, 0, 0});
  auto r = eval(body, rows);
  for (size_t i = 0; i < r.size(); ++i) {
    EXPECT_EQ(r[i].o32, 0u) << "lane " << i;  // %laneid equals popc(%lanemask_lt)
    EXPECT_EQ(r[i].o, 40u);
  }
}

}  // namespace
