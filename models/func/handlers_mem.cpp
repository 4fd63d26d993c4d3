// Loads, stores and atomics on every state space, with generic-address resolution and the
// faults a GPU would raise (misaligned access, address outside every allocation or window).
#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <type_traits>
#include <utility>

#include <fmt/format.h>

#include "func/device_heap.hpp"
#include "func/handlers.hpp"
#include "func/lanes.hpp"
#include "func/mem_access.hpp"

namespace gpusc::func::handlers {

namespace {

template <unsigned Bytes, bool Signed>
inline uint64_t loadValue(const uint8_t* p) {
  if constexpr (Bytes == 1) {
    uint8_t v = *p;
    return Signed ? uint64_t(int64_t(int8_t(v))) : v;
  } else if constexpr (Bytes == 2) {
    uint16_t v;
    std::memcpy(&v, p, 2);
    return Signed ? uint64_t(int64_t(int16_t(v))) : v;
  } else if constexpr (Bytes == 4) {
    uint32_t v;
    std::memcpy(&v, p, 4);
    return Signed ? uint64_t(int64_t(int32_t(v))) : v;
  } else {
    uint64_t v;
    std::memcpy(&v, p, 8);
    return v;
  }
}

// The lanes of a half-warp, which the shortcuts for rows and broadcasts below take one at a time.
constexpr int kHalfWarp = kWarpSize / 2;

// The spaces that are one window of bytes for the whole instruction: the CTA's shared memory, and
// for reads the constant bank and the kernel's parameters. resolve() returns p == nullptr for a
// write to the read-only ones, which keep the generic path.
template <MemSpace Space>
constexpr bool isWindow(bool write) {
  return Space == MemSpace::Shared ||
         (!write && (Space == MemSpace::Const || Space == MemSpace::KernelParam));
}

// Whether a half-warp's addresses (base[0..15], before the instruction's offset) are one element
// (a broadcast: stride 0) or consecutive elements (a row: stride Bytes): the two ways a thread
// block 16 threads wide reads a tile, which a warp does one half-row at a time. One pass of
// subtractions, which the compiler vectorizes.
template <unsigned Bytes>
[[gnu::always_inline]] inline bool halfWarpBlock(const uint64_t* base, uint64_t& stride) {
  const uint64_t first = base[0];
  stride = base[1] - first;
  if (stride != 0 && stride != Bytes) return false;
  uint64_t off = 0;  // the two strides as constants, so that the compiler vectorizes each pass
  if (stride == 0) {
    for (int i = 0; i < kHalfWarp; ++i) off |= base[i] ^ first;
  } else {
    alignas(16) static constexpr auto kRow = [] {
      std::array<uint64_t, kHalfWarp> row{};
      for (int i = 0; i < kHalfWarp; ++i) row[i] = uint64_t(i) * Bytes;
      return row;
    }();
    for (int i = 0; i < kHalfWarp; ++i) off |= (base[i] - first) ^ kRow[i];
  }
  return off == 0;
}

// Whether each half-warp's addresses are a broadcast or a row (halfWarpBlock): then true, with
// each half's stride and its first lane's address with the instruction's offset (a sum of
// integers: the offset may be negative).
template <unsigned Bytes>
[[gnu::always_inline]] inline bool halfWarpBlocks(const uint64_t* base, uint64_t offset,
                                                  uint64_t (&first)[2], uint64_t (&stride)[2]) {
  if (!halfWarpBlock<Bytes>(base, stride[0]) || !halfWarpBlock<Bytes>(base + kHalfWarp, stride[1]))
    return false;
  first[0] = base[0] + offset;
  first[1] = base[kHalfWarp] + offset;
  return true;
}

// Each lane's address of such an access, for the timing model.
[[gnu::always_inline]] inline void recordHalfBlocks(MemRecord& r, const uint64_t (&first)[2],
                                                    const uint64_t (&stride)[2]) {
  for (int l = 0; l < kWarpSize; ++l)
    r.addr[l] = first[l / kHalfWarp] + uint64_t(l % kHalfWarp) * stride[l / kHalfWarp];
}

// A window space's lanes: what resolve() and record() do for that space, with the window and the
// record read once per instruction (in the generic loop the compiler reloads them after every
// lane, as the record's byte-sized fields may alias them), and the record's header set once. The
// faults are resolve()'s; the record's mask is set as the lanes are done (by the destructor, also
// when a fault unwinds), so a fault leaves the lanes before the faulting one recorded, as
// record() does.
template <MemSpace Space>
class WindowLanes {
 public:
  WindowLanes(ExecCtx& c, const Inst& in, uint32_t mask, unsigned bytes, bool write)
      : c_(c), rec_(c.rec), bytes_(bytes), write_(write) {
    static_assert(Space == MemSpace::Shared || Space == MemSpace::Const ||
                  Space == MemSpace::KernelParam);
    if (rec_) rec_->mask = 0;
    if (mask == 0) return;  // no lane resolves: nothing is read (a launch may lack a bank)
    if constexpr (Space == MemSpace::Shared) {
      window_ = c.cta->shared.data();
      size_ = c.cta->shared.size();
    } else if constexpr (Space == MemSpace::Const) {
      window_ = const_cast<uint8_t*>(c.L->constBank->data());
      size_ = c.L->constBank->size();
    } else {
      window_ = c.L->params.data();
      size_ = c.L->params.size();
    }
    if (!rec_) return;
    rec_->space = Space;
    rec_->bytes = static_cast<uint8_t>(in.bytes * in.vec);
    rec_->write = write;
    rec_->atomic = false;
  }
  // Lane l's bytes at addr, recorded.
  [[gnu::always_inline]] uint8_t* resolve(int l, uint64_t addr) {
    if (__builtin_expect(addr & (bytes_ - 1), 0))
      faultMisaligned(c_, l, bytes_, write_, Space, addr);
    if (__builtin_expect(!within(addr, bytes_, size_), 0))
      faultIllegal(c_, l, bytes_, write_, Space, addr);
    if (rec_) rec_->addr[l] = addr;
    done_ |= 1u << l;
    return window_ + addr;
  }
  // All 32 lanes at once, when none of them faults: true, with each lane's address (base +
  // offset) recorded. False when some lane would fault, with nothing recorded: the caller then
  // resolves lane by lane, which faults at the first such lane. The checks are one branch-free
  // pass of adds, subtracts and ors (which the compiler vectorizes), where resolve() branches
  // twice per lane: with `last` the highest address an access may start at (a window is far
  // below 2^63), bit 63 of addr | (last - addr) is set exactly when addr > last. The caller
  // computes each lane's address again as it accesses it (window() + (base[l] + offset): the
  // sum first, as an offset may be negative).
  [[gnu::always_inline]] bool resolveWarp(const uint64_t* base, uint64_t offset) {
    if (size_ < bytes_) return false;
    const uint64_t last = size_ - bytes_;
    uint64_t bits = 0, over = 0;
    for (int l = 0; l < kWarpSize; ++l) {
      const uint64_t addr = base[l] + offset;
      bits |= addr;
      over |= addr | (last - addr);
    }
    if ((bits & (bytes_ - 1)) != 0 || (over >> 63) != 0) return false;
    if (rec_)
      for (int l = 0; l < kWarpSize; ++l) rec_->addr[l] = base[l] + offset;
    done_ = kFullMask;
    return true;
  }
  // All 32 lanes at once when each half-warp's lanes access first[h], first[h] + stride[h], ...
  // with a stride of 0 or the access size (halfWarpBlock): then the first and the last lane of a
  // half are aligned and in the window exactly when all its lanes are, and two checks per half
  // replace resolveWarp's pass over the lanes. True with the lanes recorded; false as
  // resolveWarp, with nothing recorded.
  [[gnu::always_inline]] bool resolveHalfBlocks(const uint64_t (&first)[2],
                                                const uint64_t (&stride)[2]) {
    if (size_ < bytes_) return false;
    const uint64_t last = size_ - bytes_;
    for (int h = 0; h < 2; ++h) {
      const uint64_t end = first[h] + uint64_t(kHalfWarp - 1) * stride[h];
      if ((first[h] & (bytes_ - 1)) != 0 || first[h] > last || end > last) return false;
    }
    if (rec_) recordHalfBlocks(*rec_, first, stride);
    done_ = kFullMask;
    return true;
  }
  uint8_t* window() const { return window_; }
  ~WindowLanes() {
    if (rec_) rec_->mask = done_;
  }
  WindowLanes(const WindowLanes&) = delete;
  WindowLanes& operator=(const WindowLanes&) = delete;

 private:
  ExecCtx& c_;
  uint8_t* window_ = nullptr;
  uint64_t size_ = 0;
  MemRecord* const rec_;
  const unsigned bytes_;
  const bool write_;
  uint32_t done_ = 0;
};

// Local memory and call parameters: each lane has an area of its own (Warp::local,
// Warp::callParams), lane l's `per` bytes after lane l - 1's.
template <MemSpace Space>
constexpr bool isLaneArea() {
  return Space == MemSpace::Local || Space == MemSpace::CallParam;
}

// An access of a lane-area space at one address for every lane of `mask` (a local or parameter
// variable is one symbol and offset for all lanes; a spill slot is one offset), when it is aligned
// and inside the area: lane 0's byte at that address, lane l's `per` bytes further per lane, with
// the lanes recorded as record() records them; null, with nothing done, for any other access
// (the lane-by-lane path then takes it, or faults at the lane that faults). One check for the
// instruction where resolve() checks each lane.
template <MemSpace Space>
[[gnu::always_inline]] inline uint8_t* uniformLaneArea(ExecCtx& c, const Inst& in, uint32_t mask,
                                                       const uint64_t* base, unsigned total,
                                                       bool write, uint64_t& per) {
  if (mask == 0) return nullptr;
  const uint64_t a = base[__builtin_ctz(mask)];
  uint64_t differ = 0;
  if (mask == kFullMask) {
    for (int l = 0; l < kWarpSize; ++l) differ |= base[l] ^ a;
  } else {
    forEachLane(mask, [&](int l) { differ |= base[l] ^ a; });
  }
  if (differ != 0) return nullptr;
  const uint64_t addr = a + static_cast<uint64_t>(in.imm);
  uint8_t* area;
  if constexpr (Space == MemSpace::Local) {
    per = c.L->localBytes;
    area = c.w->local.data();
  } else {
    per = c.L->prog->callParamBytesPerThread;
    area = c.w->callParams.data();
  }
  if ((addr & (total - 1)) != 0 || !within(addr, total, per)) return nullptr;
  if (c.rec) {
    MemRecord& r = *c.rec;
    r.space = Space;
    r.bytes = static_cast<uint8_t>(in.bytes * in.vec);
    r.write = write;
    r.atomic = false;
    r.mask = mask;
    forEachLane(mask, [&](int l) { r.addr[l] = addr; });
  }
  return area + addr;
}

// A half-warp's values of a row of `Bytes`-byte elements at p, extended as loadValue extends
// them. Two- and four-byte elements go through GCC vector types: one load of the row and one
// widening conversion, kept in registers (vpmovzxdq in the AVX2 build). Copied through an array
// instead, the row was stored in 16-byte halves and read back in 32 (GCC's generic tuning splits
// unaligned 256-bit moves), a store-forwarding stall per read: 39 % of the samples of SGEMM's
// shared load (`perf annotate`, docs/performance.md).
template <unsigned Bytes, bool Signed>
[[gnu::always_inline]] inline void loadHalfRow(const uint8_t* p, uint64_t* out) {
  using Elem = std::conditional_t<Signed, std::make_signed_t<UIntOfSize<Bytes>>, UIntOfSize<Bytes>>;
  if constexpr (Bytes == 8) {
    std::memcpy(out, p, Bytes * kHalfWarp);
  } else if constexpr (Bytes == 2 || Bytes == 4) {
    using Wide = std::conditional_t<Signed, int64_t, uint64_t>;
    typedef Elem Row __attribute__((vector_size(Bytes * kHalfWarp)));
    typedef Wide Cells __attribute__((vector_size(8 * kHalfWarp)));
    Row row;
    std::memcpy(&row, p, sizeof row);
    const Cells cells = __builtin_convertvector(row, Cells);
    std::memcpy(out, &cells, sizeof cells);
  } else {
    Elem row[kHalfWarp];
    std::memcpy(row, p, sizeof row);
    for (int i = 0; i < kHalfWarp; ++i)
      out[i] = Signed ? uint64_t(int64_t(row[i])) : uint64_t(row[i]);
  }
}

// A full warp's global access (one element per lane) when each half-warp accesses a broadcast or
// a row (halfWarpBlock) inside one page: one translation per half instead of one per lane. Device
// memory is valid page by page (an allocation starts on a page, so a page holds at most one), so a
// half inside one valid page is valid in all its lanes, and aligned when its first lane is. True
// with each half's first element in p[h] and the lanes recorded; false, with nothing done, for
// any other access: the lane-by-lane path then takes it, or faults at the lane that faults.
template <unsigned Bytes>
[[gnu::always_inline]] inline bool globalHalfBlocks(ExecCtx& c, const Inst& in,
                                                    const uint64_t* base, bool write,
                                                    uint64_t (&stride)[2], uint8_t* (&p)[2]) {
  uint64_t first[2];
  if (!halfWarpBlocks<Bytes>(base, static_cast<uint64_t>(in.imm), first, stride)) return false;
  for (int h = 0; h < 2; ++h) {
    const uint64_t last = first[h] + uint64_t(kHalfWarp - 1) * stride[h];
    if ((first[h] & (Bytes - 1)) != 0 ||
        (first[h] >> GlobalMemory::kPageBits) != (last >> GlobalMemory::kPageBits))
      return false;
    p[h] = globalBytes(c, first[h], write);
    if (p[h] == nullptr) return false;
  }
  if (c.rec) {
    MemRecord& r = *c.rec;
    r.space = MemSpace::Global;
    r.bytes = static_cast<uint8_t>(Bytes);
    r.write = write;
    r.atomic = false;
    r.mask = kFullMask;
    recordHalfBlocks(r, first, stride);
  }
  return true;
}

// Each half's values into the destination d (which may be the base: its lanes were read).
template <unsigned Bytes, bool Signed>
[[gnu::always_inline]] inline void loadHalves(const uint8_t* const (&p)[2],
                                              const uint64_t (&stride)[2], uint64_t* d) {
  for (int h = 0; h < 2; ++h) {
    uint64_t* out = d + h * kHalfWarp;
    if (stride[h] == 0) {
      const uint64_t v = loadValue<Bytes, Signed>(p[h]);
      for (int i = 0; i < kHalfWarp; ++i) out[i] = v;
    } else {
      loadHalfRow<Bytes, Signed>(p[h], out);
    }
  }
}

// Each half's values x (the low `Bytes` of each lane's) to its element(s), in lane order: a
// broadcast half keeps its last lane's value, and the second half's stores come after the
// first's, so where the halves overlap the second wins, as lane by lane.
template <unsigned Bytes>
[[gnu::always_inline]] inline void storeHalves(uint8_t* const (&p)[2], const uint64_t (&stride)[2],
                                               const uint64_t* x) {
  using Elem = UIntOfSize<Bytes>;
  for (int h = 0; h < 2; ++h) {
    const uint64_t* in = x + h * kHalfWarp;
    if (stride[h] == 0) {
      std::memcpy(p[h], &in[kHalfWarp - 1], Bytes);  // little-endian: the low bytes
    } else {
      Elem row[kHalfWarp];
      for (int i = 0; i < kHalfWarp; ++i) row[i] = static_cast<Elem>(in[i]);
      std::memcpy(p[h], row, sizeof row);
    }
  }
}

template <MemSpace Space, unsigned Bytes, bool Signed>
void loadHandler(ExecCtx& c, const Inst& in, uint32_t mask) {
  const uint64_t* base = slot(c, in.src[0]);
  const unsigned vec = in.vec;
  const unsigned total = Bytes * vec;
  // Read every lane before writing any destination: a destination may be the address register.
  uint64_t vals[4][kWarpSize];
  if constexpr (isWindow<Space>(false)) {
    WindowLanes<Space> lanes(c, in, mask, total, false);
    if (mask == kFullMask && vec == 1) {
      const uint64_t offset = static_cast<uint64_t>(in.imm);
      const uint8_t* window = lanes.window();
      uint64_t* d = slot(c, in.dst[0]);  // may be the base: each lane's address is read first
      // Half-warps reading a broadcast or a row: one load, or a block copy, per half.
      uint64_t first[2], stride[2];
      if (halfWarpBlocks<Bytes>(base, offset, first, stride) &&
          lanes.resolveHalfBlocks(first, stride)) {
        const uint8_t* p[2] = {window + first[0], window + first[1]};
        loadHalves<Bytes, Signed>(p, stride, d);
        return;
      }
      if (lanes.resolveWarp(base, offset)) {
        for (int l = 0; l < kWarpSize; ++l)
          d[l] = loadValue<Bytes, Signed>(window + (base[l] + offset));
        return;
      }
    }
    // The vector length as a constant (.v2 and .v4 loads are rare; most loads are scalars).
    auto load = [&](auto n) {
      forEachLane(mask, [&](int l) {
        const uint8_t* p = lanes.resolve(l, base[l] + static_cast<uint64_t>(in.imm));
        for (unsigned v = 0; v < n(); ++v) vals[v][l] = loadValue<Bytes, Signed>(p + v * Bytes);
      });
    };
    if (vec == 1)
      load(std::integral_constant<unsigned, 1>{});
    else
      load([vec] { return vec; });
  } else {
    if constexpr (Space == MemSpace::Global) {
      uint64_t stride[2];
      uint8_t* p[2];
      if (mask == kFullMask && vec == 1 && globalHalfBlocks<Bytes>(c, in, base, false, stride, p)) {
        const uint8_t* const q[2] = {p[0], p[1]};
        loadHalves<Bytes, Signed>(q, stride, slot(c, in.dst[0]));
        return;
      }
    }
    bool done = false;
    if constexpr (isLaneArea<Space>()) {
      uint64_t per = 0;
      if (const uint8_t* p = uniformLaneArea<Space>(c, in, mask, base, total, false, per)) {
        if (vec == 1) {
          forEachLane(mask, [&](int l) { vals[0][l] = loadValue<Bytes, Signed>(p + l * per); });
        } else {
          forEachLane(mask, [&](int l) {
            for (unsigned v = 0; v < vec; ++v)
              vals[v][l] = loadValue<Bytes, Signed>(p + l * per + v * Bytes);
          });
        }
        done = true;
      }
    }
    if (!done) {
      if (c.rec) c.rec->mask = 0;
      forEachLane(mask, [&](int l) {
        uint64_t addr = base[l] + static_cast<uint64_t>(in.imm);
        Resolved r = resolve(c, Space, addr, total, l, false);
        for (unsigned v = 0; v < vec; ++v) vals[v][l] = loadValue<Bytes, Signed>(r.ptr + v * Bytes);
        if (c.rec) record(c, in, l, r.addr, r.space, false, false);
      });
    }
  }
  for (unsigned v = 0; v < vec; ++v) {
    uint64_t* d = slot(c, in.dst[v]);
    forEachLane(mask, [&](int l) { d[l] = vals[v][l]; });
  }
}

template <MemSpace Space, unsigned Bytes>
void storeHandler(ExecCtx& c, const Inst& in, uint32_t mask) {
  const uint64_t* base = slot(c, in.src[0]);
  const unsigned vec = in.vec;
  const unsigned total = Bytes * vec;
  if constexpr (isWindow<Space>(true)) {
    WindowLanes<Space> lanes(c, in, mask, total, true);
    if (mask == kFullMask && vec == 1) {
      const uint64_t offset = static_cast<uint64_t>(in.imm);
      uint64_t first[2], stride[2];
      if (halfWarpBlocks<Bytes>(base, offset, first, stride) &&
          lanes.resolveHalfBlocks(first, stride)) {
        uint8_t* const p[2] = {lanes.window() + first[0], lanes.window() + first[1]};
        storeHalves<Bytes>(p, stride, slot(c, in.src[1]));
        return;
      }
      if (lanes.resolveWarp(base, offset)) {
        const uint64_t* x = slot(c, in.src[1]);
        uint8_t* window = lanes.window();
        for (int l = 0; l < kWarpSize; ++l)  // in lane order: the last lane's store wins
          std::memcpy(window + (base[l] + offset), &x[l], Bytes);
        return;
      }
    }
    const uint64_t* const xs[4] = {slot(c, in.src[1]), slot(c, in.src[1 + (vec > 1)]),
                                   slot(c, in.src[1 + 2 * (vec > 2)]),
                                   slot(c, in.src[1 + 3 * (vec > 2)])};
    forEachLane(mask, [&](int l) {
      uint8_t* p = lanes.resolve(l, base[l] + static_cast<uint64_t>(in.imm));
      for (unsigned v = 0; v < vec; ++v)
        std::memcpy(p + v * Bytes, &xs[v][l], Bytes);  // little-endian: the low bytes
    });
    return;
  }
  if constexpr (Space == MemSpace::Global) {
    // Not with a write log: its writes are staged lane by lane (resolve()).
    uint64_t stride[2];
    uint8_t* p[2];
    if (mask == kFullMask && vec == 1 && !(c.env && c.env->log) &&
        globalHalfBlocks<Bytes>(c, in, base, true, stride, p)) {
      storeHalves<Bytes>(p, stride, slot(c, in.src[1]));
      return;
    }
  }
  const uint64_t* const xs[4] = {slot(c, in.src[1]), slot(c, in.src[1 + (vec > 1)]),
                                 slot(c, in.src[1 + 2 * (vec > 2)]),
                                 slot(c, in.src[1 + 3 * (vec > 2)])};
  if constexpr (isLaneArea<Space>()) {
    // Each lane writes its own area, so their order does not matter.
    uint64_t per = 0;
    if (uint8_t* p = uniformLaneArea<Space>(c, in, mask, base, total, true, per)) {
      forEachLane(mask, [&](int l) {
        for (unsigned v = 0; v < vec; ++v)
          std::memcpy(p + l * per + v * Bytes, &xs[v][l], Bytes);  // the low bytes
      });
      return;
    }
  }
  if (c.rec) c.rec->mask = 0;
  forEachLane(mask, [&](int l) {
    uint64_t addr = base[l] + static_cast<uint64_t>(in.imm);
    Resolved r = resolve(c, Space, addr, total, l, true);
    for (unsigned v = 0; v < vec; ++v)
      std::memcpy(r.ptr + v * Bytes, &xs[v][l], Bytes);  // little-endian: the low bytes
    if (c.rec) record(c, in, l, r.addr, r.space, true, false);
  });
}

template <class T>
inline T atomicApplyScalar(AtomOp op, T old, T b, T cnew) {
  switch (op) {
    case AtomOp::Add:
      return static_cast<T>(old + b);
    case AtomOp::Min:
      return old < b ? old : b;
    case AtomOp::Max:
      return old > b ? old : b;
    case AtomOp::Exch:
      return b;
    case AtomOp::Cas:
      return old == b ? cnew : old;
    default:
      break;
  }
  if constexpr (std::is_integral_v<T>) {
    switch (op) {
      case AtomOp::Inc:
        return old >= b ? T(0) : T(old + 1);
      case AtomOp::Dec:
        return (old == 0 || old > b) ? b : T(old - 1);
      case AtomOp::And:
        return old & b;
      case AtomOp::Or:
        return old | b;
      case AtomOp::Xor:
        return old ^ b;
      default:
        break;
    }
  }
  return old;
}

// f16/bf16 atomics (scalar and packed pairs): add, min, max, each element rounded to nearest
// even (.noftz: subnormals are kept). Float arithmetic then one rounding is exact here, since a
// float has more than twice the precision of either format.
template <bool Bf, unsigned N>
struct HalfAtom {
  std::conditional_t<N == 1, uint16_t, uint32_t> bits;
  static float value(uint16_t h) { return Bf ? bhalfToFloat(h) : halfToFloat(h); }
  static uint16_t round(float f) { return Bf ? floatToBhalf(f) : floatToHalf(f); }
  static bool isNaN(uint16_t h) { return std::isnan(value(h)); }
  static uint16_t apply1(AtomOp op, uint16_t a, uint16_t b) {
    if (op == AtomOp::Add) return round(value(a) + value(b));
    if (isNaN(a)) return b;
    if (isNaN(b)) return a;
    bool less = value(a) < value(b) || (value(a) == value(b) && (a & 0x8000u));
    return (op == AtomOp::Min) == less ? a : b;
  }
  HalfAtom apply(AtomOp op, HalfAtom b) const {
    HalfAtom r{0};
    for (unsigned i = 0; i < N; ++i)
      r.bits |= static_cast<decltype(bits)>(
          uint32_t(apply1(op, uint16_t(bits >> (16 * i)), uint16_t(b.bits >> (16 * i))))
          << (16 * i));
    return r;
  }
  bool operator==(const HalfAtom& o) const { return bits == o.bits; }
};
template <class T>
struct IsHalfAtom : std::false_type {};
template <bool Bf, unsigned N>
struct IsHalfAtom<HalfAtom<Bf, N>> : std::true_type {};

template <class T>
inline T atomicApply(AtomOp op, T old, T b, T cnew) {
  if constexpr (IsHalfAtom<T>::value) {
    if (op == AtomOp::Exch) return b;
    if (op == AtomOp::Cas) return old == b ? cnew : old;
    return old.apply(op, b);
  } else {
    return atomicApplyScalar(op, old, b, cnew);
  }
}

// One lane's read-modify-write of atom/red on T at `p` (b: args.v[0], cas's c: args.v[1]);
// returns the old value's bits. Performed at once, or logged and performed after the cycle.
// FlushF32: atom.add.f32 on global memory without .noftz, which the PTX ISA says flushes
// subnormal inputs and results to zero of their sign (on shared memory it keeps them).
template <class T, AtomOp Op, bool FlushF32 = false>
uint64_t atomicRmw(uint8_t* p, const RmwArgs& args) {
  T old;
  std::memcpy(&old, p, sizeof(T));
  T nv;
  if constexpr (FlushF32)
    nv = ftzFloat(ftzFloat(old) + ftzFloat(get<float>(args.v, 0)));
  else
    nv = atomicApply<T>(Op, old, get<T>(args.v, 0), Op == AtomOp::Cas ? get<T>(args.v, 1) : T{});
  std::memcpy(p, &nv, sizeof(T));
  typename Raw<T>::type raw;
  std::memcpy(&raw, &old, sizeof(T));
  return raw;
}

template <class T, AtomOp Op, bool Ret>
void atomicHandler(ExecCtx& c, const Inst& in, uint32_t mask) {
  const uint64_t* base = slot(c, in.src[0]);
  const uint64_t* b = slot(c, in.src[1]);
  const uint64_t* e = slot(c, in.src[2]);
  uint64_t* d = Ret ? slot(c, in.dst[0]) : nullptr;
  const MemSpace space = in.space;
  if (c.rec) c.rec->mask = 0;
  uint64_t olds[kWarpSize];
  uint32_t done = 0;  // lanes whose operation was performed (not logged)
  // Lanes perform their read-modify-write one after another, in lane order.
  forEachLane(mask, [&](int l) {
    uint64_t addr = base[l] + static_cast<uint64_t>(in.imm);
    Resolved r = resolve(c, space, addr, sizeof(T), l, true, true);
    RmwArgs args;
    args.v[0] = b[l];
    args.v[1] = e[l];
    auto rmw = &atomicRmw<T, Op>;
    if constexpr (std::is_same_v<T, float> && Op == AtomOp::Add)
      if (r.space == MemSpace::Global && in.mode2 == 0) rmw = &atomicRmw<float, AtomOp::Add, true>;
    if (GlobalWriteLog* log = deferredLog(c, r.space)) {
      log->rmw(r.addr, rmw, args, Ret ? d + l : nullptr);
    } else {
      olds[l] = rmw(r.ptr, args);
      done |= 1u << l;
    }
    if (c.rec) record(c, in, l, r.addr, r.space, true, true);
  });
  if constexpr (Ret) forEachLane(done, [&](int l) { d[l] = olds[l]; });
}

// ---- cp.async -----------------------------------------------------------------------------------

// cp.async.{ca,cg}.shared.global [dst], [src], cp-size, src-size: src[0]/imm is the shared
// destination, src[1]/aux (a signed offset) the global source, src[2] the number of source bytes
// (the rest of the cp-size bytes are zero-filled), bytes the cp-size. The copy completes at once,
// so commit and wait groups have nothing to wait for; the timing model sees a global load.
void cpAsyncHandler(ExecCtx& c, const Inst& in, uint32_t mask) {
  const uint64_t* dbase = slot(c, in.src[0]);
  const uint64_t* sbase = slot(c, in.src[1]);
  const uint64_t* srcSize = slot(c, in.src[2]);
  const unsigned size = in.bytes;
  if (c.rec) c.rec->mask = 0;
  forEachLane(mask, [&](int l) {
    uint64_t from = sbase[l] + static_cast<uint64_t>(int64_t(int32_t(in.aux)));
    uint64_t to = dbase[l] + static_cast<uint64_t>(in.imm);
    uint8_t buf[16] = {};
    const uint64_t n = std::min<uint64_t>(srcSize[l] & 0xffffffffu, size);
    if (n > 0) {
      Resolved r = resolve(c, MemSpace::Global, from, size, l, false);
      std::memcpy(buf, r.ptr, n);
      if (c.rec) record(c, in, l, r.addr, r.space, false, false);
    }
    Resolved w = resolve(c, MemSpace::Shared, to, size, l, true);
    std::memcpy(w.ptr, buf, size);
  });
}

// ---- device printf (vprintf) --------------------------------------------------------------------

template <class T>
T readAt(ExecCtx& c, uint64_t addr, int l) {
  Resolved r = resolve(c, MemSpace::Generic, addr, sizeof(T), l, false);
  T v;
  std::memcpy(&v, r.ptr, sizeof(T));
  return v;
}

std::string readCString(ExecCtx& c, uint64_t addr, int l) {
  std::string s;
  for (;;) {
    char ch = static_cast<char>(*resolve(c, MemSpace::Generic, addr++, 1, l, false).ptr);
    if (ch == 0) return s;
    s += ch;
    if (s.size() > 65536) c.fault(l, "printf string is longer than 64 KB");
  }
}

// Formats one lane's printf: `fmtAddr` is the generic address of the format string, `args` of
// the argument buffer (each argument aligned to its size, floats promoted to double, as the CUDA
// ABI packs them). Returns the text and the number of arguments.
std::pair<std::string, int> formatPrintf(ExecCtx& c, uint64_t fmtAddr, uint64_t args, int l) {
  const std::string f = readCString(c, fmtAddr, l);
  std::string out;
  int count = 0;
  uint64_t off = 0;
  auto next = [&](unsigned bytes) {
    off = (off + bytes - 1) / bytes * bytes;
    uint64_t a = args + off;
    off += bytes;
    ++count;
    return a;
  };
  for (size_t i = 0; i < f.size(); ++i) {
    if (f[i] != '%') {
      out += f[i];
      continue;
    }
    size_t j = i + 1;
    if (j < f.size() && f[j] == '%') {
      out += '%';
      i = j;
      continue;
    }
    std::string spec = "%";
    while (j < f.size() && std::strchr("-+ #0", f[j])) spec += f[j++];
    // Width and precision: digits, or '*' for an int argument before the value's.
    while (j < f.size() &&
           (std::isdigit(static_cast<unsigned char>(f[j])) || f[j] == '.' || f[j] == '*')) {
      if (f[j] == '*') {
        const int32_t v = readAt<int32_t>(c, next(4), l);
        if (spec.back() == '.' && v < 0)
          spec.pop_back();  // a negative precision is none
        else
          spec += std::to_string(v);  // a negative width is '-' and its size
      } else {
        spec += f[j];
      }
      ++j;
    }
    int longs = 0;
    int shorts = 0;  // 'h' makes the int argument a short, "hh" a char, as C's printf does
    while (j < f.size() && std::strchr("hlLzjt", f[j])) {
      if (f[j] == 'l' || f[j] == 'z' || f[j] == 'j' || f[j] == 't' || f[j] == 'L') ++longs;
      if (f[j] == 'h') ++shorts;
      ++j;
    }
    if (j >= f.size()) {
      out += spec;
      break;
    }
    const char conv = f[j];
    i = j;
    char buf[512];
    switch (conv) {
      case 'd':
      case 'i':
        if (longs)
          std::snprintf(buf, sizeof buf, (spec + "lld").c_str(),
                        static_cast<long long>(readAt<int64_t>(c, next(8), l)));
        else {
          int32_t v = readAt<int32_t>(c, next(4), l);
          if (shorts == 1) v = static_cast<int16_t>(v);
          if (shorts >= 2) v = static_cast<int8_t>(v);
          std::snprintf(buf, sizeof buf, (spec + "d").c_str(), v);
        }
        break;
      case 'u':
      case 'x':
      case 'X':
      case 'o':
        if (longs)
          std::snprintf(buf, sizeof buf, (spec + "ll" + conv).c_str(),
                        static_cast<unsigned long long>(readAt<uint64_t>(c, next(8), l)));
        else {
          uint32_t v = readAt<uint32_t>(c, next(4), l);
          if (shorts == 1) v = static_cast<uint16_t>(v);
          if (shorts >= 2) v = static_cast<uint8_t>(v);
          std::snprintf(buf, sizeof buf, (spec + conv).c_str(), v);
        }
        break;
      case 'c':
        std::snprintf(buf, sizeof buf, (spec + "c").c_str(), readAt<int32_t>(c, next(4), l));
        break;
      case 'f':
      case 'F':
      case 'e':
      case 'E':
      case 'g':
      case 'G':
      case 'a':
      case 'A':
        std::snprintf(buf, sizeof buf, (spec + conv).c_str(), readAt<double>(c, next(8), l));
        break;
      case 'p':
        std::snprintf(buf, sizeof buf, "0x%llx",
                      static_cast<unsigned long long>(readAt<uint64_t>(c, next(8), l)));
        break;
      case 's': {
        // A null string prints as "(null)", as the host's printf, which formats CUDA's device
        // printf buffer, prints it; any other address must hold a string.
        const uint64_t at = readAt<uint64_t>(c, next(8), l);
        const std::string str = at == 0 ? std::string("(null)") : readCString(c, at, l);
        if (spec == "%") {
          out += str;
        } else {  // width, precision, '-'
          const std::string sf = spec + "s";
          std::string t(std::size_t(std::snprintf(nullptr, 0, sf.c_str(), str.c_str())), '\0');
          std::snprintf(t.data(), t.size() + 1, sf.c_str(), str.c_str());
          out += t;
        }
        continue;
      }
      default:  // not a conversion printf knows: copied as written
        out += spec + conv;
        continue;
    }
    out += buf;
  }
  return {out, count};
}

// imm: call-parameter offset of the format pointer, aux: of the argument-buffer pointer,
// src[5]: of the return value (kNoPc: none). Lanes print in lane order.
void vprintfHandler(ExecCtx& c, const Inst& in, uint32_t mask) {
  forEachLane(mask, [&](int l) {
    auto [text, count] = formatPrintf(c, callParam<uint64_t>(c, uint64_t(in.imm), l),
                                      callParam<uint64_t>(c, in.aux, l), l);
    if (c.L->printfLog) *c.L->printfLog += text;
    if (in.src[5] != kNoPc) setCallParam<int32_t>(c, in.src[5], l, count);
  });
}

// call __assertfail (a failed device assert): imm, aux, src[4] and src[5] are the call-parameter
// offsets of the message, file, line and function. The first failing lane prints CUDA's line
// (to the printf output, as the runtime's device-side buffer does) and faults the launch, which
// the CUDA runtime reports as cudaErrorAssert.
void assertFailHandler(ExecCtx& c, const Inst& in, uint32_t mask) {
  if (mask == 0) return;
  const int l = __builtin_ctz(mask);
  const auto pointer = [&](uint64_t off) { return callParam<uint64_t>(c, off, l); };
  const auto line = callParam<uint32_t>(c, in.src[4], l);
  const std::string message = readCString(c, pointer(uint64_t(in.imm)), l);
  const std::string file = readCString(c, pointer(in.aux), l);
  const std::string function = readCString(c, pointer(in.src[5]), l);
  const uint32_t t = c.w->idInCta * kWarpSize + uint32_t(l);
  const uint32_t bx = c.L->block.x, by = c.L->block.y;
  const std::string text =
      fmt::format("{}:{}: {}: block: [{},{},{}], thread: [{},{},{}] Assertion `{}` failed.\n", file,
                  line, function, c.cta->ctaid.x, c.cta->ctaid.y, c.cta->ctaid.z, t % bx,
                  (t / bx) % by, t / (bx * by), message);
  if (c.L->printfLog) *c.L->printfLog += text;
  c.fault(l, fmt::format("assertion `{}` failed ({}:{})", message, file, line));
}

// call malloc / call free: imm is the offset of the argument in the call-parameter area, aux
// (malloc) of the result. Lanes allocate in lane order.
void mallocHandler(ExecCtx& c, const Inst& in, uint32_t mask) {
  forEachLane(mask, [&](int l) {
    const auto bytes = callParam<uint64_t>(c, uint64_t(in.imm), l);
    if (c.L->heap == nullptr) c.fault(l, "malloc without a device heap");
    setCallParam<uint64_t>(c, in.aux, l, c.L->heap->allocate(bytes));
  });
}

void freeHandler(ExecCtx& c, const Inst& in, uint32_t mask) {
  forEachLane(mask, [&](int l) {
    const auto p = callParam<uint64_t>(c, uint64_t(in.imm), l);
    if (p != 0 && (c.L->heap == nullptr || !c.L->heap->release(p)))
      c.fault(l, fmt::format("free(0x{:x}): not a block that malloc returned (or freed twice)", p));
  });
}

template <MemSpace S>
Handler loadFor(unsigned bytes, bool isSigned) {
  switch (bytes) {
    case 1:
      return isSigned ? withAvx2<&loadHandler<S, 1, true>>()
                      : withAvx2<&loadHandler<S, 1, false>>();
    case 2:
      return isSigned ? withAvx2<&loadHandler<S, 2, true>>()
                      : withAvx2<&loadHandler<S, 2, false>>();
    case 4:
      return isSigned ? withAvx2<&loadHandler<S, 4, true>>()
                      : withAvx2<&loadHandler<S, 4, false>>();
    case 8:
      return withAvx2<&loadHandler<S, 8, false>>();
    default:
      return nullptr;
  }
}

template <MemSpace S>
Handler storeFor(unsigned bytes) {
  switch (bytes) {
    case 1:
      return withAvx2<&storeHandler<S, 1>>();
    case 2:
      return withAvx2<&storeHandler<S, 2>>();
    case 4:
      return withAvx2<&storeHandler<S, 4>>();
    case 8:
      return withAvx2<&storeHandler<S, 8>>();
    default:
      return nullptr;
  }
}

template <class T, bool Ret>
Handler atomicFor(AtomOp op) {
  switch (op) {
    case AtomOp::Add:
      return &atomicHandler<T, AtomOp::Add, Ret>;
    case AtomOp::Min:
      return &atomicHandler<T, AtomOp::Min, Ret>;
    case AtomOp::Max:
      return &atomicHandler<T, AtomOp::Max, Ret>;
    case AtomOp::Exch:
      return &atomicHandler<T, AtomOp::Exch, Ret>;
    case AtomOp::Cas:
      return &atomicHandler<T, AtomOp::Cas, Ret>;
    default:
      break;
  }
  if constexpr (std::is_integral_v<T>) {
    switch (op) {
      case AtomOp::Inc:
        return &atomicHandler<T, AtomOp::Inc, Ret>;
      case AtomOp::Dec:
        return &atomicHandler<T, AtomOp::Dec, Ret>;
      case AtomOp::And:
        return &atomicHandler<T, AtomOp::And, Ret>;
      case AtomOp::Or:
        return &atomicHandler<T, AtomOp::Or, Ret>;
      case AtomOp::Xor:
        return &atomicHandler<T, AtomOp::Xor, Ret>;
      default:
        break;
    }
  }
  return nullptr;
}

}  // namespace

Handler load(MemSpace space, unsigned bytes, bool isSigned) {
  switch (space) {
    case MemSpace::Global:
      return loadFor<MemSpace::Global>(bytes, isSigned);
    case MemSpace::Shared:
      return loadFor<MemSpace::Shared>(bytes, isSigned);
    case MemSpace::Local:
      return loadFor<MemSpace::Local>(bytes, isSigned);
    case MemSpace::Const:
      return loadFor<MemSpace::Const>(bytes, isSigned);
    case MemSpace::KernelParam:
      return loadFor<MemSpace::KernelParam>(bytes, isSigned);
    case MemSpace::CallParam:
      return loadFor<MemSpace::CallParam>(bytes, isSigned);
    case MemSpace::Generic:
      return loadFor<MemSpace::Generic>(bytes, isSigned);
    default:
      return nullptr;
  }
}

Handler store(MemSpace space, unsigned bytes) {
  switch (space) {
    case MemSpace::Global:
      return storeFor<MemSpace::Global>(bytes);
    case MemSpace::Shared:
      return storeFor<MemSpace::Shared>(bytes);
    case MemSpace::Local:
      return storeFor<MemSpace::Local>(bytes);
    case MemSpace::CallParam:
      return storeFor<MemSpace::CallParam>(bytes);
    case MemSpace::Generic:
      return storeFor<MemSpace::Generic>(bytes);
    default:
      return nullptr;
  }
}

Handler vprintf() { return &vprintfHandler; }
Handler assertFail() { return &assertFailHandler; }
Handler deviceMalloc() { return &mallocHandler; }
Handler deviceFree() { return &freeHandler; }

Handler cpAsync() { return &cpAsyncHandler; }

Handler atomic(AtomOp op, Type t, bool ret) {
  switch (t) {
    case Type::B16:  // a 16-bit compare-and-swap only (atom.cas.b16, sm_70)
      if (op != AtomOp::Cas) return nullptr;
      return ret ? &atomicHandler<uint16_t, AtomOp::Cas, true>
                 : &atomicHandler<uint16_t, AtomOp::Cas, false>;
    case Type::U32:
    case Type::B32:
      return ret ? atomicFor<uint32_t, true>(op) : atomicFor<uint32_t, false>(op);
    case Type::S32:
      return ret ? atomicFor<int32_t, true>(op) : atomicFor<int32_t, false>(op);
    case Type::U64:
    case Type::B64:
      return ret ? atomicFor<uint64_t, true>(op) : atomicFor<uint64_t, false>(op);
    case Type::S64:
      return ret ? atomicFor<int64_t, true>(op) : atomicFor<int64_t, false>(op);
    case Type::F32:
      return ret ? atomicFor<float, true>(op) : atomicFor<float, false>(op);
    case Type::F64:
      return ret ? atomicFor<double, true>(op) : atomicFor<double, false>(op);
    case Type::F16:
      return ret ? atomicFor<HalfAtom<false, 1>, true>(op)
                 : atomicFor<HalfAtom<false, 1>, false>(op);
    case Type::F16x2:
      return ret ? atomicFor<HalfAtom<false, 2>, true>(op)
                 : atomicFor<HalfAtom<false, 2>, false>(op);
    case Type::BF16:
      return ret ? atomicFor<HalfAtom<true, 1>, true>(op) : atomicFor<HalfAtom<true, 1>, false>(op);
    case Type::BF16x2:
      return ret ? atomicFor<HalfAtom<true, 2>, true>(op) : atomicFor<HalfAtom<true, 2>, false>(op);
    default:
      return nullptr;
  }
}

}  // namespace gpusc::func::handlers

namespace gpusc::func {

uint8_t* memoryPointer(ExecCtx& c, MemSpace space, uint64_t addr, unsigned bytes, int l, bool write,
                       MemRecord* rec) {
  auto r = handlers::resolve(c, space, addr, bytes, l, write);
  if (rec) {
    if (rec->mask == 0) {
      rec->space = r.space;
      rec->bytes = static_cast<uint8_t>(bytes);
      rec->write = write;
      rec->atomic = false;
    } else if (rec->space != r.space) {
      rec->space = MemSpace::Generic;
    }
    rec->mask |= 1u << l;
    rec->addr[l] = r.addr;
  }
  return r.ptr;
}

}  // namespace gpusc::func
