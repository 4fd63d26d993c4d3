// mbarrier objects and bulk asynchronous copies (cp.async.bulk) in shared memory.
//
// An mbarrier is a 64-bit shared-memory object. gpusc encodes it as: bits 0-19 the pending
// arrival count of the current phase, 20-39 the expected arrival count, 40-60 the transaction
// count (signed), 62 "initialised", 63 the phase parity. The value is opaque to programs (PTX
// defines none); `mbarrier.arrive` returns the object before the arrival as its state.
// Bulk copies happen at once when they execute, and then signal their mbarrier's complete-tx.
#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "func/handlers.hpp"
#include "func/lanes.hpp"
#include "func/mem_access.hpp"

namespace gpusc::func::handlers {

namespace {

constexpr uint64_t kCountMask = (1u << 20) - 1;  // the ISA's limit of counts and tx-counts
constexpr uint64_t kValid = 1ull << 62;
constexpr uint64_t kPhase = 1ull << 63;

struct Mbar {
  uint64_t pending = 0, expected = 0;
  int64_t tx = 0;
  bool phase = false;
};

Mbar unpack(uint64_t v) {
  Mbar m;
  m.pending = v & kCountMask;
  m.expected = (v >> 20) & kCountMask;
  const uint64_t t = (v >> 40) & ((1u << 21) - 1);
  m.tx = (t & (1u << 20)) ? int64_t(t) - (int64_t(1) << 21) : int64_t(t);
  m.phase = v & kPhase;
  return m;
}

uint64_t pack(const Mbar& m) {
  return m.pending | (m.expected << 20) | ((uint64_t(m.tx) & ((1u << 21) - 1)) << 40) | kValid |
         (m.phase ? kPhase : 0);
}

// Resolves lane l's mbarrier address (shared memory, 8-byte aligned).
uint8_t* mbarrierAt(ExecCtx& c, MemSpace space, uint64_t addr, int l, bool write, uint64_t& off) {
  Resolved r = resolve(c, space, addr, 8, l, write);
  if (r.space != MemSpace::Shared)
    c.fault(l, fmt::format("mbarrier address 0x{:x} is not in shared memory", addr));
  off = r.addr;
  return r.ptr;
}

// Applies `op` with operand `value` to the mbarrier at `p` for lane l; returns its old value.
// Marks the CTA when a phase completes.
uint64_t update(ExecCtx& c, MbarOp op, uint8_t flags, uint8_t* p, uint64_t off, uint64_t value,
                int l) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  const uint64_t old = v;
  if (op == MbarOp::Init) {
    if (value == 0 || value > kCountMask)
      c.fault(l, fmt::format("mbarrier.init count {} is outside [1, {}]", value, kCountMask));
    Mbar m;
    m.pending = m.expected = value;
    v = pack(m);
  } else if (op == MbarOp::Inval) {
    v = 0;
  } else {
    if (!(v & kValid))
      c.fault(l, fmt::format("mbarrier at shared offset 0x{:x} is used before mbarrier.init (or "
                             "after mbarrier.inval)",
                             off));
    Mbar m = unpack(v);
    auto addTx = [&](int64_t d) {
      m.tx += d;
      if (m.tx > int64_t(kCountMask) || m.tx < -int64_t(kCountMask))
        c.fault(l, fmt::format("mbarrier at shared offset 0x{:x}: transaction count {} is "
                               "outside [-{}, {}]",
                               off, m.tx, kCountMask, kCountMask));
    };
    if (op == MbarOp::Arrive || op == MbarOp::ArriveDrop) {
      const uint64_t n = (flags & kMbarExpectTx) ? 1 : value;
      if (flags & kMbarExpectTx) addTx(int64_t(value & 0xffffffffu));
      if (n == 0 || n > m.pending)
        c.fault(l, fmt::format("mbarrier at shared offset 0x{:x}: {} arrivals with {} pending", off,
                               n, m.pending));
      m.pending -= n;
      if (op == MbarOp::ArriveDrop) m.expected -= std::min(n, m.expected);
    } else if (op == MbarOp::ExpectTx) {
      addTx(int64_t(value & 0xffffffffu));
    } else {  // CompleteTx
      addTx(-int64_t(value & 0xffffffffu));
    }
    if (m.pending == 0 && m.tx == 0) {
      if (flags & kMbarNoComplete)
        c.fault(l, fmt::format("mbarrier.arrive.noComplete completed the phase of the mbarrier "
                               "at shared offset 0x{:x}",
                               off));
      m.phase = !m.phase;
      m.pending = m.expected;
      c.cta->mbarrierPhaseDone = true;
    }
    v = pack(m);
  }
  std::memcpy(p, &v, 8);
  c.cta->syncEpoch += 1;
  return old;
}

template <MbarOp Op>
void mbarrierHandler(ExecCtx& c, const Inst& in, uint32_t mask) {
  if constexpr (Op == MbarOp::PendingCount) {  // mbarrier.pending_count.b64 d, state
    uint64_t* d = slot(c, in.dst[0]);
    const uint64_t* s = slot(c, in.src[0]);
    forEachLane(mask, [&](int l) { d[l] = s[l] & kCountMask; });
    return;
  }
  const uint64_t* base = slot(c, in.src[0]);
  const uint64_t* arg = slot(c, in.src[1]);
  if (c.rec) c.rec->mask = 0;
  constexpr bool isWait = Op == MbarOp::TestWait || Op == MbarOp::TryWait;
  uint32_t complete = 0;
  forEachLane(mask, [&](int l) {
    uint64_t off;
    uint8_t* p = mbarrierAt(c, in.space, base[l] + uint64_t(in.imm), l, !isWait, off);
    if (c.rec) record(c, in, l, off, MemSpace::Shared, !isWait, !isWait);
    if constexpr (isWait) {
      uint64_t v;
      std::memcpy(&v, p, 8);
      if (!(v & kValid))
        c.fault(l, fmt::format("mbarrier at shared offset 0x{:x} is used before mbarrier.init "
                               "(or after mbarrier.inval)",
                               off));
      // The phase waited for is complete when the current parity differs from its parity.
      const bool parity = (in.flags & kMbarParity) ? (arg[l] & 1u) : (arg[l] >> 63);
      if (bool(v >> 63) != parity) complete |= 1u << l;
    } else {
      const uint64_t old = update(c, Op, in.flags, p, off, arg[l], l);
      if (in.ndst) slot(c, in.dst[0])[l] = old;
    }
  });
  if constexpr (isWait) {
    writePred(c, in.dst[0], mask, complete);
    if (complete != mask) c.w->state = WarpState::MbarrierWait;
  }
}

// cp.async.bulk (mode: 0 global -> shared, 1 shared -> global, 2 shared -> shared). src[0] + imm
// is the destination, src[1] + aux (signed) the source, src[2] the size, src[3] + dst[0]
// (signed) the mbarrier (modes 0 and 2).
// One element of cp.reduce.async.bulk: *d = *d op *s.
template <class T>
T reduceInt(BulkRedOp op, T d, T s) {
  switch (op) {
    case BulkRedOp::And:
      return d & s;
    case BulkRedOp::Or:
      return d | s;
    case BulkRedOp::Xor:
      return d ^ s;
    case BulkRedOp::Add:
      return static_cast<T>(d + s);
    case BulkRedOp::Inc:  // as atom.inc: wraps to 0 past s
      return d >= s ? T(0) : static_cast<T>(d + 1);
    case BulkRedOp::Dec:  // as atom.dec: wraps to s below 1 or above s
      return (d == 0 || d > s) ? s : static_cast<T>(d - 1);
    case BulkRedOp::Min:
      return std::min(d, s);
    case BulkRedOp::Max:
      return std::max(d, s);
  }
  return d;
}

template <class T>
void reduceElements(BulkRedOp op, uint8_t* d, const uint8_t* s, unsigned bytes) {
  for (unsigned i = 0; i < bytes; i += sizeof(T)) {
    T x, y;
    std::memcpy(&x, d + i, sizeof(T));
    std::memcpy(&y, s + i, sizeof(T));
    x = reduceInt<T>(op, x, y);
    std::memcpy(d + i, &x, sizeof(T));
  }
}

// d += s for one f32 or f64 element (F, stored as the bits B); a NaN sum is `canonicalNan`.
template <class F, class B>
void addFloatElement(uint8_t* d, const uint8_t* s, B canonicalNan) {
  F x, y;
  std::memcpy(&x, d, sizeof(F));
  std::memcpy(&y, s, sizeof(F));
  const F r = x + y;
  B b;
  std::memcpy(&b, &r, sizeof(F));
  if (r != r) b = canonicalNan;
  std::memcpy(d, &b, sizeof(F));
}

// Adds `bytes` of floating-point elements (f32, f64; f16 and bf16 rounded once to nearest even,
// subnormals kept: .noftz). NaN sums are the canonical NaN.
void reduceFloat(BulkRedType t, uint8_t* d, const uint8_t* s, unsigned bytes) {
  const unsigned w = t == BulkRedType::F64 ? 8 : t == BulkRedType::F32 ? 4 : 2;
  for (unsigned i = 0; i < bytes; i += w) {
    if (t == BulkRedType::F32) {
      addFloatElement<float, uint32_t>(d + i, s + i, 0x7fffffffu);
    } else if (t == BulkRedType::F64) {
      addFloatElement<double, uint64_t>(d + i, s + i, 0x7fffffffffffffffull);
    } else {
      uint16_t x, y;
      std::memcpy(&x, d + i, 2);
      std::memcpy(&y, s + i, 2);
      const bool bf = t == BulkRedType::BF16;
      const double r = bf ? double(bhalfToFloat(x)) + double(bhalfToFloat(y))
                          : double(halfToFloat(x)) + double(halfToFloat(y));
      uint16_t h = r != r ? 0x7fff : bf ? roundToBhalf(r, Round::Rn) : roundToHalf(r, Round::Rn);
      std::memcpy(d + i, &h, 2);
    }
  }
}

// One 16-byte chunk of cp.reduce.async.bulk (flags, mode2: the instruction's).
void reduceChunk(uint8_t flags, uint8_t mode2, uint8_t* d, const uint8_t* s, unsigned bytes) {
  const BulkRedOp op = static_cast<BulkRedOp>(flags - 1);
  switch (static_cast<BulkRedType>(mode2)) {
    case BulkRedType::B32:
    case BulkRedType::U32:
      return reduceElements<uint32_t>(op, d, s, bytes);
    case BulkRedType::S32:
      return reduceElements<int32_t>(op, d, s, bytes);
    case BulkRedType::B64:
    case BulkRedType::U64:
      return reduceElements<uint64_t>(op, d, s, bytes);
    case BulkRedType::S64:
      return reduceElements<int64_t>(op, d, s, bytes);
    default:
      return reduceFloat(static_cast<BulkRedType>(mode2), d, s, bytes);
  }
}

// A chunk reduced into global memory by a step with a write log: the source bytes in args.v,
// the instruction's flags and mode2 in args.param.
uint64_t reduceChunkRmw(uint8_t* d, const RmwArgs& args) {
  uint8_t s[16];
  std::memcpy(s, args.v, 16);
  reduceChunk(uint8_t(args.param), uint8_t(args.param >> 8), d, s, 16);
  return 0;
}

void bulkHandler(ExecCtx& c, const Inst& in, uint32_t mask) {
  const uint64_t* dbase = slot(c, in.src[0]);
  const uint64_t* sbase = slot(c, in.src[1]);
  const uint64_t* sizes = slot(c, in.src[2]);
  const uint64_t* mbase = slot(c, in.src[3]);
  const MemSpace from = in.mode == 1 || in.mode == 2 ? MemSpace::Shared : MemSpace::Global;
  const MemSpace to = in.mode == 1 ? MemSpace::Global : MemSpace::Shared;
  const bool single = (mask & (mask - 1)) == 0;
  if (c.rec) c.rec->mask = 0;
  forEachLane(mask, [&](int l) {
    const uint64_t size = sizes[l] & 0xffffffffu;
    if (size == 0 || size % 16)
      c.fault(l, fmt::format("{} size {} is not a positive multiple of 16",
                             in.flags ? "cp.reduce.async.bulk" : "cp.async.bulk", size));
    const uint64_t src = sbase[l] + uint64_t(int64_t(int32_t(in.aux)));
    const uint64_t dst = dbase[l] + uint64_t(in.imm);
    uint64_t memAddr = 0;
    for (uint64_t off = 0; off < size; off += 16) {
      Resolved s = resolve(c, from, src + off, 16, l, false);
      Resolved d = resolve(c, to, dst + off, 16, l, true, in.flags != 0);
      if (!in.flags) {
        std::memmove(d.ptr, s.ptr, 16);
      } else if (GlobalWriteLog* log = deferredLog(c, d.space)) {
        RmwArgs args;
        std::memcpy(args.v, s.ptr, 16);
        args.param = uint32_t(in.flags) | uint32_t(in.mode2) << 8;
        log->rmw(d.addr, &reduceChunkRmw, args, nullptr);
      } else {
        reduceChunk(in.flags, in.mode2, d.ptr, s.ptr, 16);
      }
      if (off == 0) memAddr = in.mode == 1 ? d.addr : s.addr;
    }
    if (c.rec) {
      // The timing model sees the copy's memory side: an elected thread's copy as one access per
      // 128-byte line of its first 4 KiB, spread over the record's lanes.
      MemRecord& r = *c.rec;
      if (single) {
        const uint64_t lines = std::min<uint64_t>(kWarpSize, (size + 127) / 128);
        r.mask = lines >= 32 ? kFullMask : (1u << lines) - 1;
        r.space = in.mode == 2 ? MemSpace::Shared : MemSpace::Global;
        r.bytes = static_cast<uint8_t>(std::min<uint64_t>(size, 128));
        r.write = in.mode == 1;
        r.atomic = false;
        for (uint64_t k = 0; k < lines; ++k) r.addr[k] = memAddr + 128 * k;
      } else {
        record(c, in, l, memAddr, in.mode == 2 ? MemSpace::Shared : MemSpace::Global, in.mode == 1,
               false);
      }
    }
    if (in.mode != 1) {
      uint64_t off;
      uint8_t* p =
          mbarrierAt(c, in.space, mbase[l] + uint64_t(int64_t(int32_t(in.dst[0]))), l, true, off);
      update(c, MbarOp::CompleteTx, 0, p, off, size, l);
    }
  });
}

}  // namespace

Handler mbarrier(MbarOp op) {
  switch (op) {
    case MbarOp::Init:
      return &mbarrierHandler<MbarOp::Init>;
    case MbarOp::Inval:
      return &mbarrierHandler<MbarOp::Inval>;
    case MbarOp::Arrive:
      return &mbarrierHandler<MbarOp::Arrive>;
    case MbarOp::ArriveDrop:
      return &mbarrierHandler<MbarOp::ArriveDrop>;
    case MbarOp::ExpectTx:
      return &mbarrierHandler<MbarOp::ExpectTx>;
    case MbarOp::CompleteTx:
      return &mbarrierHandler<MbarOp::CompleteTx>;
    case MbarOp::TestWait:
      return &mbarrierHandler<MbarOp::TestWait>;
    case MbarOp::TryWait:
      return &mbarrierHandler<MbarOp::TryWait>;
    case MbarOp::PendingCount:
      return &mbarrierHandler<MbarOp::PendingCount>;
  }
  return nullptr;
}

Handler cpAsyncBulk() { return &bulkHandler; }

}  // namespace gpusc::func::handlers
