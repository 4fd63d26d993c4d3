// Video instructions: scalar vadd vsub vabsdiff vmin vmax vshl vshr vmad vset (sub-word selection,
// saturation, secondary operation or merge) and the SIMD vop2 (half-word) and vop4 (byte) forms
// with their element selectors and masks, as the PTX ISA defines them. Intermediate values are
// computed exactly (128-bit) and only the final result is truncated to 32 bits.
#include <algorithm>

#include "func/handlers.hpp"
#include "func/lanes.hpp"

namespace gpusc::func::handlers {

uint64_t VideoParams::encode() const {
  uint64_t b = 0;
  b |= uint64_t(op) & 0xf;
  b |= (uint64_t(lanes) & 0x7) << 4;
  b |= uint64_t(aSigned) << 7;
  b |= uint64_t(bSigned) << 8;
  b |= uint64_t(dSigned) << 9;
  b |= uint64_t(sat) << 10;
  b |= (uint64_t(op2) & 0x3) << 11;
  b |= (uint64_t(cmp) & 0x7) << 13;
  b |= uint64_t(clamp) << 16;
  b |= (uint64_t(scale) & 0x1f) << 17;
  b |= uint64_t(po) << 22;
  b |= uint64_t(negProduct) << 23;
  b |= uint64_t(negC) << 24;
  b |= (uint64_t(asel) & 0xfff) << 25;
  b |= (uint64_t(bsel) & 0xfff) << 37;
  b |= (uint64_t(dsel) & 0xf) << 49;
  return b;
}

VideoParams VideoParams::decode(uint64_t b) {
  VideoParams v;
  v.op = static_cast<VideoOp>(b & 0xf);
  v.lanes = static_cast<uint8_t>((b >> 4) & 0x7);
  v.aSigned = (b >> 7) & 1;
  v.bSigned = (b >> 8) & 1;
  v.dSigned = (b >> 9) & 1;
  v.sat = (b >> 10) & 1;
  v.op2 = static_cast<uint8_t>((b >> 11) & 0x3);
  v.cmp = static_cast<uint8_t>((b >> 13) & 0x7);
  v.clamp = (b >> 16) & 1;
  v.scale = static_cast<uint8_t>((b >> 17) & 0x1f);
  v.po = (b >> 22) & 1;
  v.negProduct = (b >> 23) & 1;
  v.negC = (b >> 24) & 1;
  v.asel = static_cast<uint16_t>((b >> 25) & 0xfff);
  v.bsel = static_cast<uint16_t>((b >> 37) & 0xfff);
  v.dsel = static_cast<uint8_t>((b >> 49) & 0xf);
  return v;
}

namespace {

// The `bits`-wide field of `v` at bit `pos`, sign- or zero-extended.
Int128 field(uint64_t v, unsigned pos, unsigned bits, bool isSigned) {
  const uint64_t m = bits >= 64 ? ~0ull : (1ull << bits) - 1;
  const uint64_t x = (v >> pos) & m;
  if (isSigned && bits < 64 && ((x >> (bits - 1)) & 1)) return Int128(x) - (Int128(1) << bits);
  return Int128(x);
}

// Scalar operand selection: 0 the word, 1..4 a byte, 5..6 a half-word.
Int128 scalarPart(uint32_t v, uint8_t sel, bool isSigned) {
  if (sel == 0) return field(v, 0, 32, isSigned);
  if (sel <= 4) return field(v, 8u * (sel - 1u), 8, isSigned);
  return field(v, 16u * (sel - 5u), 16, isSigned);
}

// x >> n as an arithmetic shift (floor(x / 2^n)).
Int128 shiftRight(Int128 x, unsigned n) {
  const Int128 d = Int128(1) << n;
  return x >= 0 ? x / d : -((-x + d - 1) / d);
}

Int128 clampTo(Int128 x, Int128 lo, Int128 hi) { return x < lo ? lo : x > hi ? hi : x; }

// The destination range of a saturating result of `bits` bits.
Int128 saturate(Int128 x, unsigned bits, bool isSigned) {
  if (isSigned) return clampTo(x, -(Int128(1) << (bits - 1)), (Int128(1) << (bits - 1)) - 1);
  return clampTo(x, 0, (Int128(1) << bits) - 1);
}

bool compare(uint8_t cmp, Int128 a, Int128 b) {
  switch (static_cast<Cmp>(cmp)) {
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
    default:
      return a >= b;
  }
}

Int128 arith(const VideoParams& v, Int128 a, Int128 b) {
  switch (v.op) {
    case VideoOp::Add:
      return a + b;
    case VideoOp::Sub:
      return a - b;
    case VideoOp::AbsDiff:
      return a > b ? a - b : b - a;
    case VideoOp::Min:
      return std::min(a, b);
    case VideoOp::Max:
      return std::max(a, b);
    case VideoOp::Avrg: {  // (s + 1) >> 1 when s >= 0, else s >> 1
      const Int128 s = a + b;
      return s >= 0 ? shiftRight(s + 1, 1) : shiftRight(s, 1);
    }
    case VideoOp::Set:
      return compare(v.cmp, a, b) ? 1 : 0;
    default:
      return 0;
  }
}

uint32_t low32(Int128 x) { return static_cast<uint32_t>(static_cast<UInt128>(x)); }

uint32_t scalarMad(const VideoParams& v, uint32_t a, uint32_t b, uint32_t c) {
  const Int128 ta = scalarPart(a, static_cast<uint8_t>(v.asel), v.aSigned);
  const Int128 tb = scalarPart(b, static_cast<uint8_t>(v.bsel), v.bSigned);
  const bool signedFinal = v.aSigned || v.bSigned || v.negProduct || v.negC;
  Int128 tmp = ta * tb;
  int lsb = 0;
  if (v.po) {
    lsb = 1;
  } else if (v.negProduct) {
    tmp = ~tmp;
    lsb = 1;
  } else if (v.negC) {
    c = ~c;
    lsb = 1;
  }
  const Int128 c128 = signedFinal ? Int128(static_cast<int32_t>(c)) : Int128(c);
  tmp = tmp + c128 + lsb;
  tmp = shiftRight(tmp, v.scale);
  const uint64_t result = static_cast<uint64_t>(static_cast<UInt128>(tmp));
  if (!v.sat) return static_cast<uint32_t>(result);
  if (signedFinal) return low32(saturate(Int128(static_cast<int64_t>(result)), 32, true));
  return low32(saturate(Int128(result), 32, false));
}

uint32_t scalarOp(const VideoParams& v, uint32_t a, uint32_t b, uint32_t c) {
  if (v.op == VideoOp::Mad) return scalarMad(v, a, b, c);
  const Int128 ta = scalarPart(a, static_cast<uint8_t>(v.asel), v.aSigned);
  Int128 tmp;
  if (v.op == VideoOp::Shl || v.op == VideoOp::Shr) {
    Int128 tb = scalarPart(b, static_cast<uint8_t>(v.bsel), false);
    tb = v.clamp ? std::min<Int128>(tb, 32) : (tb & 0x1f);
    const unsigned n = static_cast<unsigned>(tb);
    tmp = v.op == VideoOp::Shl ? ta * (Int128(1) << n) : shiftRight(ta, n);
  } else {
    tmp = arith(v, ta, scalarPart(b, static_cast<uint8_t>(v.bsel), v.bSigned));
  }
  if (v.sat && v.op != VideoOp::Set) {
    const unsigned bits = v.dsel == 0 ? 32 : v.dsel <= 4 ? 8 : 16;
    tmp = saturate(tmp, bits, v.dSigned);
  }
  // Secondary operation with c (of the destination's signedness; vset's result is unsigned).
  const bool cSigned = v.op != VideoOp::Set && v.dSigned;
  const Int128 tc = cSigned ? Int128(static_cast<int32_t>(c)) : Int128(c);
  switch (v.op2) {
    case 1:
      tmp = tmp + tc;
      break;
    case 2:
      tmp = std::min(tmp, tc);
      break;
    case 3:
      tmp = std::max(tmp, tc);
      break;
    default:
      break;
  }
  const uint32_t t = low32(tmp);
  if (v.dsel == 0) return t;
  if (v.dsel <= 4) {  // merge a byte into c
    const unsigned sh = 8u * (v.dsel - 1u);
    return ((t & 0xffu) << sh) | (c & ~(0xffu << sh));
  }
  const unsigned sh = 16u * (v.dsel - 5u);
  return ((t & 0xffffu) << sh) | (c & ~(0xffffu << sh));
}

uint32_t simdOp(const VideoParams& v, uint32_t a, uint32_t b, uint32_t c) {
  const unsigned w = 32u / v.lanes;  // element width
  const uint64_t ab = (uint64_t(b) << 32) | a;
  const uint32_t m = w == 16 ? 0xffffu : 0xffu;
  uint32_t d = v.op2 ? c : 0;
  for (unsigned i = 0; i < v.lanes; ++i) {
    const unsigned ka = (v.asel >> (3 * i)) & 7u, kb = (v.bsel >> (3 * i)) & 7u;
    const Int128 va = field(ab, ka * w, w, v.aSigned);
    const Int128 vb = field(ab, kb * w, w, v.bSigned);
    Int128 t = arith(v, va, vb);
    if (v.sat && v.op != VideoOp::Set) t = saturate(t, w, v.dSigned);
    const bool on = (v.dsel >> i) & 1u;
    if (v.op2) {
      if (on) d += low32(t);
    } else {
      d |= on ? (low32(t) & m) << (w * i) : c & (m << (w * i));
    }
  }
  return d;
}

void videoHandler(ExecCtx& c, const Inst& in, uint32_t mask) {
  const VideoParams v = VideoParams::decode(static_cast<uint64_t>(in.imm));
  uint64_t* d = slot(c, in.dst[0]);
  const uint64_t* a = slot(c, in.src[0]);
  const uint64_t* b = slot(c, in.src[1]);
  const uint64_t* e = slot(c, in.src[2]);
  forEachLane(mask, [&](int l) {
    const uint32_t x = get<uint32_t>(a, l), y = get<uint32_t>(b, l), z = get<uint32_t>(e, l);
    put<uint32_t>(d, l, v.lanes == 1 ? scalarOp(v, x, y, z) : simdOp(v, x, y, z));
  });
}

}  // namespace

Handler video() { return &videoHandler; }

}  // namespace gpusc::func::handlers
