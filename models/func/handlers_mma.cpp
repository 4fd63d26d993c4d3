// Warp-collective matrix instructions: mma.sync (m16n8k8, m16n8k16 and m16n8k32 with f16, bf16,
// tf32, s8 and u8 inputs and f32 or s32 accumulators) and ldmatrix / stmatrix (m8n8 .b16).
//
// The fragment layouts are the PTX ISA's: with g = %laneid >> 2 and t = %laneid % 4, each
// thread's i-th element of A, B and C/D sits at the row and column the functions below give.
// Products of the 16-bit and tf32 inputs are exact in double precision; the k products and C
// are summed in double and the sum is rounded once to f32 (the hardware's internal order and
// precision may differ in the last bit). Integer forms are exact, wrapping or (.satfinite)
// clamping to the s32 range.
#include <cmath>
#include <cstring>

#include "func/handlers.hpp"
#include "func/lanes.hpp"

namespace gpusc::func::handlers {

namespace {

struct Pos {
  int row, col;
};

int elementsPerReg(MmaType t) {
  return t == MmaType::TF32 ? 1 : (t == MmaType::S8 || t == MmaType::U8) ? 4 : 2;
}

Pos aPos(MmaShape s, int lane, int i) {
  const int g = lane >> 2, t = lane & 3;
  switch (s) {
    case MmaShape::M16N8K8Half:
      return {g + 8 * (i >> 1), t * 2 + (i & 1)};
    case MmaShape::M16N8K16Half:
      return {g + 8 * ((i >> 1) & 1), t * 2 + (i & 1) + 8 * (i >> 2)};
    case MmaShape::M16N8K8Tf32:
      return {g + 8 * (i & 1), t + 4 * (i >> 1)};
    case MmaShape::M16N8K16Int:
      return {g + 8 * (i >> 2), t * 4 + (i & 3)};
    case MmaShape::M16N8K32Int:
      return {g + 8 * ((i >> 2) & 1), t * 4 + (i & 3) + 16 * (i >> 3)};
  }
  return {0, 0};
}

Pos bPos(MmaShape s, int lane, int i) {
  const int g = lane >> 2, t = lane & 3;
  switch (s) {
    case MmaShape::M16N8K8Half:
      return {t * 2 + i, g};
    case MmaShape::M16N8K16Half:
      return {t * 2 + (i & 1) + 8 * (i >> 1), g};
    case MmaShape::M16N8K8Tf32:
      return {t + 4 * i, g};
    case MmaShape::M16N8K16Int:
      return {t * 4 + i, g};
    case MmaShape::M16N8K32Int:
      return {t * 4 + (i & 3) + 16 * (i >> 2), g};
  }
  return {0, 0};
}

Pos cPos(int lane, int i) { return {(lane >> 2) + 8 * (i >> 1), (lane & 3) * 2 + (i & 1)}; }

int kOf(MmaShape s) {
  switch (s) {
    case MmaShape::M16N8K8Half:
    case MmaShape::M16N8K8Tf32:
      return 8;
    case MmaShape::M16N8K16Half:
    case MmaShape::M16N8K16Int:
      return 16;
    case MmaShape::M16N8K32Int:
      return 32;
  }
  return 0;
}

double element(MmaType t, uint32_t reg, int j) {
  switch (t) {
    case MmaType::F16:
      return halfToFloat(uint16_t(reg >> (16 * j)));
    case MmaType::BF16:
      return bhalfToFloat(uint16_t(reg >> (16 * j)));
    case MmaType::TF32: {
      uint32_t b = reg & 0xffffe000u;  // tf32 keeps 10 mantissa bits
      float f;
      std::memcpy(&f, &b, 4);
      return f;
    }
    case MmaType::S8:
      return double(int8_t(uint8_t(reg >> (8 * j))));
    case MmaType::U8:
      return double(uint8_t(reg >> (8 * j)));
  }
  return 0;
}

// Operand list: D (4 slots), A (na), B (nb), C (4). mode: shape, mode2: atype | btype << 4,
// flags: 1 integer accumulators, 2 .satfinite.
void mmaHandler(ExecCtx& c, const Inst& in, uint32_t mask) {
  if (mask != kFullMask)
    c.fault(__builtin_ctz(mask | 0x80000000u), "mma.sync needs all 32 threads of the warp");
  const auto& ops = c.L->prog->operandLists[in.aux];
  const MmaShape shape = static_cast<MmaShape>(in.mode);
  const MmaType at = static_cast<MmaType>(in.mode2 & 0xf), bt = static_cast<MmaType>(in.mode2 >> 4);
  const int k = kOf(shape);
  const int na = 16 * k / 32, nb = 8 * k / 32;  // elements per thread
  const int ra = na / elementsPerReg(at), rb = nb / elementsPerReg(bt);
  const bool integer = in.flags & 1;
  double A[16][32] = {}, B[32][8] = {}, C[16][8] = {};
  for (int l = 0; l < kWarpSize; ++l) {
    for (int i = 0; i < na; ++i) {
      const int per = elementsPerReg(at);
      uint32_t reg = uint32_t(slot(c, ops[4 + i / per])[l]);
      Pos p = aPos(shape, l, i);
      A[p.row][p.col] = element(at, reg, i % per);
    }
    for (int i = 0; i < nb; ++i) {
      const int per = elementsPerReg(bt);
      uint32_t reg = uint32_t(slot(c, ops[4 + ra + i / per])[l]);
      Pos p = bPos(shape, l, i);
      B[p.row][p.col] = element(bt, reg, i % per);
    }
    for (int i = 0; i < 4; ++i) {
      uint64_t v = slot(c, ops[4 + ra + rb + i])[l];
      Pos p = cPos(l, i);
      C[p.row][p.col] = integer ? double(int32_t(uint32_t(v))) : double(get<float>(&v, 0));
    }
  }
  uint32_t out[4][kWarpSize];
  for (int l = 0; l < kWarpSize; ++l)
    for (int i = 0; i < 4; ++i) {
      Pos p = cPos(l, i);
      if (integer) {
        int64_t s = int64_t(C[p.row][p.col]);
        for (int x = 0; x < k; ++x) s += int64_t(A[p.row][x]) * int64_t(B[x][p.col]);
        if (in.flags & 2) s = std::min<int64_t>(std::max<int64_t>(s, INT32_MIN), INT32_MAX);
        out[i][l] = uint32_t(uint64_t(s));
      } else {
        double s = C[p.row][p.col];
        for (int x = 0; x < k; ++x) s += A[p.row][x] * B[x][p.col];
        float f = static_cast<float>(s);
        if (f != f) f = std::nanf("");
        uint32_t b;
        std::memcpy(&b, &f, 4);
        out[i][l] = f != f ? 0x7fffffffu : b;
      }
    }
  for (int i = 0; i < 4; ++i) {
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

// wmma .m16n16k16: the PTX ISA leaves the fragment layout unspecified, so gpusc chooses one:
// thread l holds the logical elements 8l..8l+7 of the 16x16 matrix (row-major order of its
// (row, column)), in A and B fragments (eight f16x2/bf16x2 registers) twice, in C and D
// fragments (eight f32 registers) once. Programs see fragments only through wmma.load,
// wmma.mma and wmma.store (and element-wise operations), so any consistent layout is correct.
//
// Operand list: the 8 fragment registers, then the address register and the stride (load and
// store; stride in elements). mode: 0 load, 1 store, 2 mma; mode2: element type (MmaType, or
// 15 for f32); flags: 1 column-major (load/store), for mma 1 A column-major, 2 B column-major.
void wmmaHandler(ExecCtx& c, const Inst& in, uint32_t mask) {
  if (mask != kFullMask)
    c.fault(__builtin_ctz(mask | 0x80000000u), "wmma needs all 32 threads of the warp");
  const auto& ops = c.L->prog->operandLists[in.aux];
  const bool isF32 = in.mode2 == 15;
  const MmaType et = static_cast<MmaType>(in.mode2 & 0xf);
  if (in.mode == 2) {  // mma: D = A * B + C
    double A[16][16], B[16][16], C[16][16];
    for (int l = 0; l < kWarpSize; ++l)
      for (int j = 0; j < 8; ++j) {
        const int e = 8 * l + j, r = e / 16, col = e % 16;
        uint32_t a = uint32_t(slot(c, ops[8 + j / 2])[l]),
                 b = uint32_t(slot(c, ops[16 + j / 2])[l]);
        A[r][col] = element(et, a, j % 2);
        B[r][col] = element(et, b, j % 2);
        uint64_t cv = slot(c, ops[24 + j])[l];
        C[r][col] = get<float>(&cv, 0);
      }
    uint32_t out[8][kWarpSize];
    for (int l = 0; l < kWarpSize; ++l)
      for (int j = 0; j < 8; ++j) {
        const int e = 8 * l + j, r = e / 16, col = e % 16;
        double sum = C[r][col];
        for (int x = 0; x < 16; ++x) sum += A[r][x] * B[x][col];
        float f = static_cast<float>(sum);
        uint32_t b;
        std::memcpy(&b, &f, 4);
        out[j][l] = f != f ? 0x7fffffffu : b;
      }
    for (int j = 0; j < 8; ++j) {
      uint64_t* d = slot(c, ops[j]);
      for (int l = 0; l < kWarpSize; ++l) d[l] = out[j][l];
    }
    return;
  }
  const bool store = in.mode == 1, colMajor = in.flags & 1;
  const unsigned esize = isF32 ? 4 : 2;
  const uint64_t base = slot(c, ops[8])[0] + static_cast<uint64_t>(in.imm);
  const uint64_t stride = uint32_t(slot(c, ops[9])[0]);
  if (c.rec) c.rec->mask = 0;
  uint32_t regs[8][kWarpSize] = {};
  for (int l = 0; l < kWarpSize; ++l)
    for (int j = 0; j < 8; ++j) {
      const int e = 8 * l + j, r = e / 16, col = e % 16;
      const uint64_t idx = colMajor ? uint64_t(col) * stride + r : uint64_t(r) * stride + col;
      uint8_t* p =
          memoryPointer(c, in.space, base + idx * esize, esize, l, store, j == 0 ? c.rec : nullptr);
      if (store) {
        uint32_t v = uint32_t(slot(c, ops[j])[l]);
        std::memcpy(p, &v, 4);
      } else if (isF32) {
        std::memcpy(&regs[j][l], p, 4);
      } else {
        uint16_t h;
        std::memcpy(&h, p, 2);
        regs[j / 2][l] |= uint32_t(h) << (16 * (j % 2));
        regs[4 + j / 2][l] |= uint32_t(h) << (16 * (j % 2));  // the duplicate half
      }
    }
  if (store) return;
  for (int j = 0; j < 8; ++j) {
    uint64_t* d = slot(c, ops[j]);
    for (int l = 0; l < kWarpSize; ++l) d[l] = regs[j][l];
  }
}

}  // namespace

Handler mma() { return &mmaHandler; }
Handler matrixLoadStore() { return &matrixHandler; }
Handler wmma() { return &wmmaHandler; }

}  // namespace gpusc::func::handlers
