// Warp-collective matrix instructions: mma.sync (m16n8k8, m16n8k16 and m16n8k32 with f16, bf16,
// tf32, s8 and u8 inputs and f32 or s32 accumulators, and the others below; the quad-pair form
// m8n8k4 .f16 has its own handler) and ldmatrix / stmatrix (m8n8 .b16).
//
// The fragment layouts are the PTX ISA's: with g = %laneid >> 2 and t = %laneid % 4, each
// thread's i-th element of A, B and C/D sits at the row and column the functions below give.
// Products of the 16-bit and tf32 inputs are exact in double precision; the k products and C
// are summed in double and the sum is rounded once to f32 (the hardware's internal order and
// precision may differ in the last bit). Integer forms are exact, wrapping or (.satfinite)
// clamping to the s32 range.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "func/handlers.hpp"
#include "func/lanes.hpp"

namespace gpusc::func::handlers {

namespace {

// Element i of lane l's D fragment from its floating-point sum s, rounded once: two f16 to a
// register (`dHalf`), or one f32 with NaN canonical.
template <size_t N>
void putSum(uint64_t (&out)[N][kWarpSize], int i, int l, double s, bool dHalf) {
  if (dHalf) {
    out[i / 2][l] |= uint64_t(roundToHalf(s, Round::Rn)) << (16 * (i % 2));
  } else {
    const float f = static_cast<float>(s);
    uint32_t b;
    std::memcpy(&b, &f, 4);
    out[i][l] = f != f ? 0x7fffffffu : b;
  }
}

struct Pos {
  int row, col;
};

int elementsPerReg(MmaType t) {
  switch (t) {
    case MmaType::TF32:
    case MmaType::F64:
      return 1;
    case MmaType::F16:
    case MmaType::BF16:
      return 2;
    case MmaType::S4:
    case MmaType::U4:
      return 8;
    case MmaType::B1:
      return 32;
    default:  // s8 u8 e4m3 e5m2
      return 4;
  }
}

int mOf(MmaShape s) {
  switch (s) {
    case MmaShape::M8N8K16Int:
    case MmaShape::M8N8K4F64:
      return 8;
    default:
      return 16;
  }
}

// Where element i of a thread's A fragment sits; e: A elements per 32-bit register.
Pos aPos(MmaShape s, int lane, int i, int e) {
  const int g = lane >> 2, t = lane & 3;
  switch (s) {
    case MmaShape::M16N8K8Half:
      return {g + 8 * (i >> 1), t * 2 + (i & 1)};
    case MmaShape::M16N8K16Half:
      return {g + 8 * ((i >> 1) & 1), t * 2 + (i & 1) + 8 * (i >> 2)};
    case MmaShape::M16N8K8Tf32:  // also m16n8k8 and m16n8k16 .f64
    case MmaShape::M16N8K8F64:
    case MmaShape::M16N8K16F64:
      return {g + 8 * (i & 1), t + 4 * (i >> 1)};
    case MmaShape::M16N8K4Tf32:  // also m16n8k4 .f64
    case MmaShape::M16N8K4F64:
      return {g + 8 * i, t};
    case MmaShape::M16N8K16Int:  // one register per row half (s8 k16, s4 k32, b1 k128)
      return {g + 8 * (i / e), t * e + i % e};
    case MmaShape::M16N8K32Int:  // two (s8 k32, s4 k64, b1 k256, e4m3/e5m2 k32)
      return {g + 8 * ((i / e) & 1), t * e + i % e + 4 * e * (i / (2 * e))};
    case MmaShape::M8N8K16Int:  // s8 k16, s4 k32, b1 k128
      return {g, t * e + i};
    case MmaShape::M8N8K4F64:
      return {g, t};
  }
  return {0, 0};
}

Pos bPos(MmaShape s, int lane, int i, int e) {
  const int g = lane >> 2, t = lane & 3;
  switch (s) {
    case MmaShape::M16N8K8Half:
      return {t * 2 + i, g};
    case MmaShape::M16N8K16Half:
      return {t * 2 + (i & 1) + 8 * (i >> 1), g};
    case MmaShape::M16N8K8Tf32:
    case MmaShape::M16N8K8F64:
    case MmaShape::M16N8K16F64:
      return {t + 4 * i, g};
    case MmaShape::M16N8K4Tf32:
    case MmaShape::M16N8K4F64:
    case MmaShape::M8N8K4F64:
      return {t, g};
    case MmaShape::M16N8K16Int:
    case MmaShape::M8N8K16Int:
      return {t * e + i, g};
    case MmaShape::M16N8K32Int:
      return {t * e + i % e + 4 * e * (i / e), g};
  }
  return {0, 0};
}

// C and D: four elements per thread for 16-row shapes, two for 8-row ones.
Pos cPos(int lane, int i) { return {(lane >> 2) + 8 * (i >> 1), (lane & 3) * 2 + (i & 1)}; }

double fp8Value(uint32_t b, bool e5m2) {
  const bool neg = b & 0x80;
  const int eb = e5m2 ? 5 : 4, mb = e5m2 ? 2 : 3, bias = e5m2 ? 15 : 7;
  const uint32_t e = (b >> mb) & ((1u << eb) - 1), m = b & ((1u << mb) - 1);
  double v;
  if (!e5m2 && (b & 0x7f) == 0x7f) return std::nan("");
  if (e5m2 && e == 31) {
    if (m) return std::nan("");
    v = INFINITY;
  } else if (e == 0) {
    v = std::ldexp(double(m), 1 - bias - mb);
  } else {
    v = std::ldexp(double((1u << mb) | m), int(e) - bias - mb);
  }
  return neg ? -v : v;
}

double element(MmaType t, uint64_t reg, int j) {
  switch (t) {
    case MmaType::F16:
      return halfToFloat(uint16_t(reg >> (16 * j)));
    case MmaType::BF16:
      return bhalfToFloat(uint16_t(reg >> (16 * j)));
    case MmaType::TF32: {
      uint32_t b = uint32_t(reg) & 0xffffe000u;  // tf32 keeps 10 mantissa bits
      float f;
      std::memcpy(&f, &b, 4);
      return f;
    }
    case MmaType::S8:
      return double(int8_t(uint8_t(reg >> (8 * j))));
    case MmaType::U8:
      return double(uint8_t(reg >> (8 * j)));
    case MmaType::S4:
      return double(int((reg >> (4 * j)) & 0xf) - (((reg >> (4 * j)) & 0x8) ? 16 : 0));
    case MmaType::U4:
      return double((reg >> (4 * j)) & 0xf);
    case MmaType::B1:
      return double((reg >> j) & 1);
    case MmaType::E4M3:
      return fp8Value(uint32_t(reg >> (8 * j)) & 0xff, false);
    case MmaType::E5M2:
      return fp8Value(uint32_t(reg >> (8 * j)) & 0xff, true);
    case MmaType::F64: {
      double d;
      std::memcpy(&d, &reg, 8);
      return d;
    }
  }
  return 0;
}

// Operand list: D (rd slots), A, B, C (rc slots). mode: shape; aux2 (imm): k; mode2: atype |
// btype << 4; flags: 1 integer accumulators, 2 .satfinite, 4 D f16, 8 C f16 (element i of an
// f16 accumulator is half i % 2 of its register i / 2), 16 b1 .xor.popc, 32 b1 .and.popc, 64
// f64 accumulators.
void mmaHandler(ExecCtx& c, const Inst& in, uint32_t mask) {
  if (mask != kFullMask)
    c.fault(__builtin_ctz(mask | 0x80000000u), "mma.sync needs all 32 threads of the warp");
  const auto& ops = c.L->prog->operandLists[in.aux];
  const MmaShape shape = static_cast<MmaShape>(in.mode);
  const MmaType at = static_cast<MmaType>(in.mode2 & 0xf), bt = static_cast<MmaType>(in.mode2 >> 4);
  const int k = static_cast<int>(in.imm), m = mOf(shape);
  const int na = m * k / 32, nb = 8 * k / 32;  // elements per thread
  const int pa = elementsPerReg(at), pb = elementsPerReg(bt);
  const int ra = (na + pa - 1) / pa, rb = (nb + pb - 1) / pb;
  const bool integer = in.flags & 1, dHalf = in.flags & 4, cHalf = in.flags & 8;
  const bool b1Xor = in.flags & 16, b1And = in.flags & 32, f64 = in.flags & 64;
  const int nc = m * 8 / 32;  // C/D elements per thread
  const int rd = dHalf ? nc / 2 : nc;
  std::vector<double> A(size_t(m) * k), B(size_t(k) * 8);
  double C[16][8] = {};
  for (int l = 0; l < kWarpSize; ++l) {
    for (int i = 0; i < na; ++i) {
      const uint64_t reg = slot(c, ops[rd + i / pa])[l];
      Pos p = aPos(shape, l, i, pa);
      A[size_t(p.row) * k + p.col] = element(at, reg, i % pa);
    }
    for (int i = 0; i < nb; ++i) {
      const uint64_t reg = slot(c, ops[rd + ra + i / pb])[l];
      Pos p = bPos(shape, l, i, pb);
      B[size_t(p.row) * 8 + p.col] = element(bt, reg, i % pb);
    }
    for (int i = 0; i < nc; ++i) {
      uint64_t v = slot(c, ops[rd + ra + rb + (cHalf ? i / 2 : i)])[l];
      Pos p = cPos(l, i);
      C[p.row][p.col] = integer ? double(int32_t(uint32_t(v)))
                        : f64   ? element(MmaType::F64, v, 0)
                        : cHalf ? double(halfToFloat(uint16_t(v >> (16 * (i % 2)))))
                                : double(get<float>(&v, 0));
    }
  }
  uint64_t out[4][kWarpSize] = {};
  for (int l = 0; l < kWarpSize; ++l)
    for (int i = 0; i < nc; ++i) {
      Pos p = cPos(l, i);
      const double* arow = &A[size_t(p.row) * k];
      if (integer) {
        int64_t s = int64_t(C[p.row][p.col]);
        for (int x = 0; x < k; ++x) {
          const int64_t u = int64_t(arow[x]), v = int64_t(B[size_t(x) * 8 + p.col]);
          s += b1Xor ? (u ^ v) : b1And ? (u & v) : u * v;
        }
        if (in.flags & 2) s = std::min<int64_t>(std::max<int64_t>(s, INT32_MIN), INT32_MAX);
        out[i][l] = uint32_t(uint64_t(s));
      } else if (f64) {  // fused multiply-adds in k order
        double s = C[p.row][p.col];
        for (int x = 0; x < k; ++x) s = std::fma(arow[x], B[size_t(x) * 8 + p.col], s);
        if (s != s) s = std::nan("");
        std::memcpy(&out[i][l], &s, 8);
        if (s != s) out[i][l] = 0x7fffffffffffffffull;
      } else {
        double s = C[p.row][p.col];
        for (int x = 0; x < k; ++x) s += arow[x] * B[size_t(x) * 8 + p.col];
        putSum(out, i, l, s, dHalf);
      }
    }
  for (int i = 0; i < rd; ++i) {
    uint64_t* d = slot(c, ops[i]);
    for (int l = 0; l < kWarpSize; ++l) d[l] = out[i][l];
  }
}

// mma.sync.aligned.m8n8k4.{row,col}.{row,col}.{f16,f32}.f16.f16.{f16,f32}: the warp computes four
// independent products D = A * B + C (A 8x4, B 4x8, C and D 8x8), product q by the quad-pair of
// lanes 4q..4q+3 (the low group) and 4q+16..4q+19 (the high group). With t = %laneid % 4 and
// h = 4 in the high group (0 in the low one), element i of a thread's fragment sits at (row, col):
//   A .row: (t + h, i)    A .col: (i + h, t)    (i = 0..3; two f16x2 registers)
//   B .row: (t, i + h)    B .col: (i, t + h)    (i = 0..3; two f16x2 registers)
//   C/D .f16: (t + h, i)  (i = 0..7; four f16x2 registers)
//   C/D .f32: ((%laneid & 1) + (i & 2) + h, (i & 4) + (%laneid & 2) + (i & 1))  (eight registers)
// Element i of an f16x2 fragment is half i % 2 of register i / 2. The arithmetic is that of the
// other f16 forms: exact products, summed with C in double precision in k order and rounded once
// (to f32, or to f16 to nearest even).
// Operand list: D (4 or 8 slots), A (2), B (2), C (4 or 8). flags: 4 D f16, 8 C f16, 16 A .col,
// 32 B .col.
Pos quadPairA(int lane, int i, bool col) {
  const int t = lane & 3, h = lane >= 16 ? 4 : 0;
  return col ? Pos{i + h, t} : Pos{t + h, i};
}
Pos quadPairB(int lane, int i, bool col) {
  const int t = lane & 3, h = lane >= 16 ? 4 : 0;
  return col ? Pos{i, t + h} : Pos{t, i + h};
}
Pos quadPairC(int lane, int i, bool half) {
  const int h = lane >= 16 ? 4 : 0;
  if (half) return {(lane & 3) + h, i};
  return {(lane & 1) + (i & 2) + h, (i & 4) + (lane & 2) + (i & 1)};
}

void mmaQuadPairHandler(ExecCtx& c, const Inst& in, uint32_t mask) {
  if (mask != kFullMask)
    c.fault(__builtin_ctz(mask | 0x80000000u), "mma.sync needs all 32 threads of the warp");
  const auto& ops = c.L->prog->operandLists[in.aux];
  const bool dHalf = in.flags & 4, cHalf = in.flags & 8, aCol = in.flags & 16, bCol = in.flags & 32;
  const size_t rd = dHalf ? 4 : 8, aAt = rd, bAt = rd + 2, cAt = rd + 4;
  // The four products' matrices, indexed by quad-pair ((%laneid >> 2) & 3).
  double A[4][8][4], B[4][4][8], C[4][8][8];
  for (int l = 0; l < kWarpSize; ++l) {
    const int q = (l >> 2) & 3;
    for (int i = 0; i < 4; ++i) {
      const Pos pa = quadPairA(l, i, aCol), pb = quadPairB(l, i, bCol);
      A[q][pa.row][pa.col] = element(MmaType::F16, slot(c, ops[aAt + size_t(i / 2)])[l], i % 2);
      B[q][pb.row][pb.col] = element(MmaType::F16, slot(c, ops[bAt + size_t(i / 2)])[l], i % 2);
    }
    for (int i = 0; i < 8; ++i) {
      const Pos p = quadPairC(l, i, cHalf);
      const uint64_t v = slot(c, ops[cAt + size_t(cHalf ? i / 2 : i)])[l];
      C[q][p.row][p.col] = cHalf ? element(MmaType::F16, v, i % 2) : double(get<float>(&v, 0));
    }
  }
  uint64_t out[8][kWarpSize] = {};
  for (int l = 0; l < kWarpSize; ++l) {
    const int q = (l >> 2) & 3;
    for (int i = 0; i < 8; ++i) {
      const Pos p = quadPairC(l, i, dHalf);
      double s = C[q][p.row][p.col];
      for (int x = 0; x < 4; ++x) s += A[q][p.row][x] * B[q][x][p.col];
      putSum(out, i, l, s, dHalf);
    }
  }
  for (size_t i = 0; i < rd; ++i) {
    uint64_t* d = slot(c, ops[i]);
    for (int l = 0; l < kWarpSize; ++l) d[l] = out[i][l];
  }
}

// ldmatrix / stmatrix .m8n8.xN{.trans}.b16: threads 8j..8j+7 give the row addresses of matrix j
// (16 bytes each); register j of thread l holds row l/4, columns 2(l%4) and 2(l%4)+1 of matrix j
// (.trans: column l/4, rows 2(l%4) and 2(l%4)+1). Operand list: the N data registers, then the
// address register; imm: the address offset; mode: N; flags: 1 .trans, 2 store.
void matrixHandler(ExecCtx& c, const Inst& in, uint32_t mask) {
  if (mask != kFullMask)
    c.fault(__builtin_ctz(mask | 0x80000000u), "ldmatrix/stmatrix need all 32 threads of the warp");
  const auto& ops = c.L->prog->operandLists[in.aux];
  const int n = in.mode;
  const bool trans = in.flags & 1, store = in.flags & 2;
  const uint64_t* addr = slot(c, ops[n]);
  uint16_t m[4][8][8];
  if (c.rec) c.rec->mask = 0;
  if (store) {
    for (int j = 0; j < n; ++j)
      for (int l = 0; l < kWarpSize; ++l) {
        uint32_t v = uint32_t(slot(c, ops[j])[l]);
        const int g = l >> 2, t = l & 3;
        for (int e = 0; e < 2; ++e) {
          uint16_t h = uint16_t(v >> (16 * e));
          if (trans)
            m[j][2 * t + e][g] = h;
          else
            m[j][g][2 * t + e] = h;
        }
      }
  }
  for (int j = 0; j < n; ++j)
    for (int r = 0; r < 8; ++r) {
      const int l = 8 * j + r;
      uint64_t a = addr[l] + static_cast<uint64_t>(in.imm);
      uint8_t* p = memoryPointer(c, in.space, a, 16, l, store, c.rec);
      if (store)
        std::memcpy(p, m[j][r], 16);
      else
        std::memcpy(m[j][r], p, 16);
    }
  if (store) return;
  for (int j = 0; j < n; ++j) {
    uint64_t* d = slot(c, ops[j]);
    for (int l = 0; l < kWarpSize; ++l) {
      const int g = l >> 2, t = l & 3;
      uint32_t v = 0;
      for (int e = 0; e < 2; ++e)
        v |= uint32_t(trans ? m[j][2 * t + e][g] : m[j][g][2 * t + e]) << (16 * e);
      d[l] = v;
    }
  }
}

// wmma: the PTX ISA leaves the fragment layouts unspecified, so gpusc chooses one. For a
// fragment of an R x C matrix, e = R * C / 32 elements per thread: thread l holds the logical
// elements e*l .. e*l+e-1 (row-major order of their (row, column)). Registers: f16 A and B
// fragments have eight f16x2 registers (16 halves: the e elements repeated 16 / e times), bf16
// ones e / 2 registers, tf32 ones e; f32 accumulators eight registers, f16 accumulators four
// f16x2 registers. Programs see fragments only through wmma.load, wmma.mma and wmma.store (and
// element-wise operations), so any consistent layout is correct.
//
// Operand list: the fragment registers, then (load and store) the address register and the
// stride (in elements); for mma D, A, B and C. mode: 0 load, 1 store, 2 mma. Load/store: mode2 the
// element kind (WmmaKind), flags bit 0 column-major, bits 1-2 the matrix (0 A, 1 B, 2 C/D), bits
// 3-4 the shape (WmmaShape). mma: mode2 the input kind, flags bits 3-4 the shape, bit 5 D f16,
// bit 6 C f16.
struct Dims {
  int m, n, k;
};
// Shapes 0-3: m16n16k16, m32n8k16, m8n32k16, m16n16k8; 4-6: m8n8k4 (f64), m8n8k32 (s4, u4),
// m8n8k128 (b1).
Dims wmmaDims(int shape) {
  static const Dims d[] = {{16, 16, 16}, {32, 8, 16}, {8, 32, 16}, {16, 16, 8},
                           {8, 8, 4},    {8, 8, 32},  {8, 8, 128}};
  return d[shape >= 0 && shape < 7 ? shape : 0];
}

// Bits of one element of a fragment of `kind` in memory and in its register.
unsigned wmmaBits(WmmaKind kind) {
  switch (kind) {
    case WmmaKind::F32:
    case WmmaKind::TF32:
    case WmmaKind::S32:
      return 32;
    case WmmaKind::F64:
      return 64;
    case WmmaKind::S8:
    case WmmaKind::U8:
      return 8;
    case WmmaKind::S4:
    case WmmaKind::U4:
      return 4;
    case WmmaKind::B1:
      return 1;
    default:
      return 16;
  }
}

// The register and position (in elements of wmmaBits, -1: the whole register) of element j.
struct Where {
  int reg, half;
};
Where wmmaSlot(WmmaKind kind, int j) {
  const unsigned bits = wmmaBits(kind);
  if (bits >= 32) return {j, -1};
  const int per = int(32 / bits);
  return {j / per, j % per};
}

// Element j of lane l of the fragment whose registers' rows start at rows[first].
double wmmaRead(const uint64_t* const* rows, size_t first, WmmaKind kind, int l, int j) {
  const Where w = wmmaSlot(kind, j);
  const uint64_t v = rows[first + size_t(w.reg)][l];
  const unsigned bits = wmmaBits(kind);
  const uint32_t field =
      bits >= 32 ? 0 : uint32_t(v >> (bits * unsigned(w.half))) & ((1u << bits) - 1);
  switch (kind) {
    case WmmaKind::F16:
    case WmmaKind::F16Acc:
      return halfToFloat(uint16_t(field));
    case WmmaKind::BF16:
      return bhalfToFloat(uint16_t(field));
    case WmmaKind::TF32:
      return element(MmaType::TF32, uint32_t(v), 0);
    case WmmaKind::F32:
      return get<float>(&v, 0);
    case WmmaKind::S8:
      return double(int8_t(uint8_t(field)));
    case WmmaKind::U8:
    case WmmaKind::U4:
    case WmmaKind::B1:
      return double(field);
    case WmmaKind::S4:
      return double(int(field) - (field & 8 ? 16 : 0));
    case WmmaKind::S32:
      return double(int32_t(uint32_t(v)));
    case WmmaKind::F64:
      return element(MmaType::F64, v, 0);
  }
  return 0;
}

// wmma.load / wmma.store / wmma.mma. Operand list: the fragment registers, then (load/store) the
// address and stride slots. mode: 0 load, 1 store, 2 mma. Load/store: mode2 the kind; flags 1
// .col, 2-4 which matrix (a, b, c/d), bits 3-4 the shape, 32: shape + 4. mma: mode2 A kind | B
// kind << 4; flags bits 3-4 the shape (the f64, s4/u4 and b1 kinds imply theirs), 32 D f16, 64
// C f16, 128 .satfinite; imm: 1 .xor.popc, 2 .and.popc.
int wmmaShapeOf(const Inst& in) {
  if (in.mode == 2) {
    switch (static_cast<WmmaKind>(in.mode2 & 0xf)) {
      case WmmaKind::F64:
        return 4;
      case WmmaKind::S4:
      case WmmaKind::U4:
        return 5;
      case WmmaKind::B1:
        return 6;
      default:
        return (in.flags >> 3) & 3;
    }
  }
  return ((in.flags >> 3) & 3) + ((in.flags & 32) ? 4 : 0);
}

void wmmaHandler(ExecCtx& c, const Inst& in, uint32_t mask) {
  if (mask != kFullMask)
    c.fault(__builtin_ctz(mask | 0x80000000u), "wmma needs all 32 threads of the warp");
  const auto& ops = c.L->prog->operandLists[in.aux];
  const Dims dm = wmmaDims(wmmaShapeOf(in));
  if (in.mode == 2) {  // mma: D = A * B + C
    const WmmaKind ik = static_cast<WmmaKind>(in.mode2 & 0xf);
    const WmmaKind bk = static_cast<WmmaKind>(in.mode2 >> 4);
    const bool dHalf = in.flags & 32, cHalf = in.flags & 64;
    const bool f64 = ik == WmmaKind::F64;
    const bool integer = !f64 && (ik == WmmaKind::S8 || ik == WmmaKind::U8 || ik == WmmaKind::S4 ||
                                  ik == WmmaKind::U4 || ik == WmmaKind::B1);
    const WmmaKind ck = f64       ? WmmaKind::F64
                        : integer ? WmmaKind::S32
                        : cHalf   ? WmmaKind::F16Acc
                                  : WmmaKind::F32;
    const int ea = dm.m * dm.k / 32, eb = dm.k * dm.n / 32, ec = dm.m * dm.n / 32;
    const size_t nd = dHalf ? size_t(ec / 2) : size_t(ec);
    const size_t na = wmmaRegs(ik, ea), nb = wmmaRegs(bk, eb);
    std::vector<double> A(size_t(dm.m) * dm.k), B(size_t(dm.k) * dm.n), C(size_t(dm.m) * dm.n);
    std::vector<const uint64_t*> rows(ops.size());
    for (size_t i = 0; i < ops.size(); ++i) rows[i] = slot(c, ops[i]);
    for (int l = 0; l < kWarpSize; ++l) {
      for (int j = 0; j < ea; ++j) {
        const int e = ea * l + j;
        A[size_t(e)] = wmmaRead(rows.data(), nd, ik, l, j);
      }
      for (int j = 0; j < eb; ++j) {
        const int e = eb * l + j;
        B[size_t(e)] = wmmaRead(rows.data(), nd + na, bk, l, j);
      }
      for (int j = 0; j < ec; ++j) {
        const int e = ec * l + j;
        C[size_t(e)] = wmmaRead(rows.data(), nd + na + nb, ck, l, j);
      }
    }
    // Floating-point products: D = C + A B in double, each element's products added in k order
    // (as the loop below did element by element), a row of D at a time so that the row's
    // columns are summed side by side: the compiler vectorizes across them, and every sum
    // keeps its order.
    const bool floating = !f64 && !integer;
    if (floating) {
      for (int r = 0; r < dm.m; ++r) {
        double* drow = C.data() + size_t(r) * dm.n;
        for (int x = 0; x < dm.k; ++x) {
          const double a = A[size_t(r * dm.k + x)];
          const double* brow = B.data() + size_t(x) * dm.n;
          for (int col = 0; col < dm.n; ++col) drow[col] += a * brow[col];
        }
      }
    }
    uint64_t out[8][kWarpSize] = {};
    for (int l = 0; l < kWarpSize; ++l)
      for (int j = 0; j < ec; ++j) {
        const int e = ec * l + j;
        double sum = C[size_t(e)];  // (floating: already C + A B)
        if (floating) {
          putSum(out, j, l, sum, dHalf);
          continue;
        }
        const int r = e / dm.n, col = e % dm.n;
        if (f64) {  // fused multiply-adds in k order
          for (int x = 0; x < dm.k; ++x)
            sum = std::fma(A[size_t(r * dm.k + x)], B[size_t(x * dm.n + col)], sum);
          uint64_t b;
          std::memcpy(&b, &sum, 8);
          out[j][l] = sum != sum ? 0x7fffffffffffffffull : b;
        } else {  // integer
          int64_t s = int64_t(sum);
          for (int x = 0; x < dm.k; ++x) {
            const int64_t u = int64_t(A[size_t(r * dm.k + x)]);
            const int64_t v = int64_t(B[size_t(x * dm.n + col)]);
            s += in.imm == 1 ? (u ^ v) : in.imm == 2 ? (u & v) : u * v;
          }
          if (in.flags & 128) s = std::min<int64_t>(std::max<int64_t>(s, INT32_MIN), INT32_MAX);
          out[j][l] = uint32_t(uint64_t(s));
        }
      }
    for (size_t j = 0; j < nd; ++j) {
      uint64_t* d = slot(c, ops[j]);
      for (int l = 0; l < kWarpSize; ++l) d[l] = out[j][l];
    }
    return;
  }
  const bool store = in.mode == 1, colMajor = in.flags & 1;
  const int matrix = (in.flags >> 1) & 3;
  const WmmaKind kind = static_cast<WmmaKind>(in.mode2);
  const int rows = matrix == 1 ? dm.k : dm.m, cols = matrix == 0 ? dm.k : dm.n;
  const int e = rows * cols / 32;
  const size_t nregs = wmmaRegs(kind, e);
  const unsigned ebits = wmmaBits(kind);
  const uint64_t base = slot(c, ops[nregs])[0] + static_cast<uint64_t>(in.imm);
  const uint64_t stride = uint32_t(slot(c, ops[nregs + 1])[0]);
  if (c.rec) c.rec->mask = 0;
  uint64_t regs[8][kWarpSize] = {};
  for (int l = 0; l < kWarpSize; ++l)
    for (int j = 0; j < e; ++j) {
      const int idx = e * l + j, r = idx / cols, col = idx % cols;
      const uint64_t at = colMajor ? uint64_t(col) * stride + r : uint64_t(r) * stride + col;
      const Where w = wmmaSlot(kind, j);
      if (ebits < 8) {  // s4, u4, b1: the element's bits in its byte (never stored: D is s32)
        const uint64_t bit = at * ebits;
        const uint8_t* p =
            memoryPointer(c, in.space, base + bit / 8, 1, l, false, j == 0 ? c.rec : nullptr);
        const uint32_t v = (uint32_t(*p) >> (bit % 8)) & ((1u << ebits) - 1);
        regs[w.reg][l] |= uint64_t(v) << (ebits * unsigned(w.half));
        continue;
      }
      const unsigned esize = ebits / 8;
      uint8_t* p =
          memoryPointer(c, in.space, base + at * esize, esize, l, store, j == 0 ? c.rec : nullptr);
      if (store) {
        const uint64_t v = slot(c, ops[size_t(w.reg)])[l];
        if (esize >= 4) {
          std::memcpy(p, &v, esize);
        } else if (esize == 1) {
          *p = uint8_t(v >> (8 * w.half));
        } else {
          const uint16_t h = uint16_t(v >> (16 * w.half));
          std::memcpy(p, &h, 2);
        }
      } else if (esize >= 4) {
        std::memcpy(&regs[w.reg][l], p, esize);
      } else if (esize == 1) {
        regs[w.reg][l] |= uint64_t(*p) << (8 * w.half);
      } else {
        uint16_t h;
        std::memcpy(&h, p, 2);
        // f16 inputs repeat their e elements over the 16 halves of the eight registers.
        const int copies = kind == WmmaKind::F16 ? 16 / e : 1;
        for (int k = 0; k < copies; ++k) {
          const Where d = wmmaSlot(kind, j + k * e);
          regs[d.reg][l] |= uint64_t(h) << (16 * d.half);
        }
      }
    }
  if (store) return;
  for (size_t j = 0; j < nregs; ++j) {
    uint64_t* d = slot(c, ops[j]);
    for (int l = 0; l < kWarpSize; ++l) d[l] = regs[j][l];
  }
}

// movmatrix.sync.aligned.m8n8.trans.b16 d, a: a holds an 8x8 matrix in the ldmatrix fragment
// layout (thread l: row l/4, columns 2(l%4) and 2(l%4)+1); d gets its transpose in that layout.
void movmatrixHandler(ExecCtx& c, const Inst& in, uint32_t mask) {
  if (mask != kFullMask)
    c.fault(__builtin_ctz(mask | 0x80000000u), "movmatrix needs all 32 threads of the warp");
  const uint64_t* a = slot(c, in.src[0]);
  uint16_t m[8][8];
  for (int l = 0; l < kWarpSize; ++l) {
    const uint32_t v = uint32_t(a[l]);
    m[l >> 2][2 * (l & 3)] = uint16_t(v);
    m[l >> 2][2 * (l & 3) + 1] = uint16_t(v >> 16);
  }
  uint64_t* d = slot(c, in.dst[0]);
  for (int l = 0; l < kWarpSize; ++l) {
    const int g = l >> 2, t = l & 3;
    d[l] = uint32_t(m[2 * t][g]) | uint32_t(m[2 * t + 1][g]) << 16;
  }
}

}  // namespace

Handler movmatrix() { return &movmatrixHandler; }
Handler mma() { return &mmaHandler; }
Handler mmaQuadPair() { return &mmaQuadPairHandler; }
Handler matrixLoadStore() { return &matrixHandler; }
Handler wmma() { return &wmmaHandler; }

size_t wmmaRegs(WmmaKind kind, int elements) {
  switch (kind) {
    case WmmaKind::F16:
    case WmmaKind::F32:
      return 8;
    case WmmaKind::F16Acc:
      return 4;
    case WmmaKind::BF16:
      return size_t(elements / 2);
    case WmmaKind::TF32:
    case WmmaKind::S32:
    case WmmaKind::F64:
      return size_t(elements);
    case WmmaKind::S8:
    case WmmaKind::U8:
      return size_t(elements / 4);
    case WmmaKind::S4:
    case WmmaKind::U4:
      return size_t(std::max(1, elements / 8));
    case WmmaKind::B1:
      return size_t(std::max(1, elements / 32));
  }
  return 0;
}

}  // namespace gpusc::func::handlers
