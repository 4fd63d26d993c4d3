// Loads, stores and atomics on every state space, with generic-address resolution and the
// faults a GPU would raise (misaligned access, address outside every allocation or window).
#include <fmt/format.h>

#include "func/handlers.hpp"
#include "func/lanes.hpp"

namespace gpusc::func::handlers {

namespace {

struct Resolved {
  uint8_t* ptr;
  MemSpace space;  // the space after generic resolution
  uint64_t addr;   // the address within that space
};

// Resolves `addr` in `space` for lane `l`; faults on an invalid access.
inline Resolved resolve(ExecCtx& c, MemSpace space, uint64_t addr, unsigned bytes, int l,
                        bool write) {
  if (addr & (bytes - 1))
    c.fault(l, fmt::format("misaligned {}-byte {} access at {} address 0x{:x}", bytes,
                           write ? "write" : "read", memSpaceName(space), addr));
  if (space == MemSpace::Generic) {
    if (addr >= kWindowBase && addr < kParamWindow + kWindowSize) {
      uint64_t window = (addr - kWindowBase) / kWindowSize;
      addr -= kWindowBase + window * kWindowSize;
      space = window == 0   ? MemSpace::Shared
              : window == 1 ? MemSpace::Local
              : window == 2 ? MemSpace::Const
                            : MemSpace::KernelParam;
    } else {
      space = MemSpace::Global;
    }
  }
  uint8_t* p = nullptr;
  switch (space) {
    case MemSpace::Global:
      p = c.L->gmem->translate(addr);
      break;
    case MemSpace::Shared:
      if (addr + bytes <= c.cta->shared.size()) p = c.cta->shared.data() + addr;
      break;
    case MemSpace::Local: {
      const uint64_t per = c.L->prog->localBytesPerThread;
      if (addr + bytes <= per) p = c.w->local.data() + l * per + addr;
      break;
    }
    case MemSpace::Const:
      if (!write && addr + bytes <= c.L->constBank->size())
        p = const_cast<uint8_t*>(c.L->constBank->data()) + addr;
      break;
    case MemSpace::KernelParam:
      if (!write && addr + bytes <= c.L->params.size()) p = c.L->params.data() + addr;
      break;
    case MemSpace::CallParam: {
      const uint64_t per = c.L->prog->callParamBytesPerThread;
      if (addr + bytes <= per) p = c.w->callParams.data() + l * per + addr;
      break;
    }
    default:
      break;
  }
  if (p == nullptr)
    c.fault(l, fmt::format("illegal {}-byte {} at {} address 0x{:x}", bytes,
                           write ? "write" : "read", memSpaceName(space), addr));
  return {p, space, addr};
}

inline void record(ExecCtx& c, const Inst& in, int l, uint64_t addr, MemSpace space, bool write,
                   bool atomic) {
  MemRecord& r = *c.rec;
  if (r.mask == 0) {
    r.space = space;
    r.bytes = static_cast<uint8_t>(in.bytes * in.vec);
    r.write = write;
    r.atomic = atomic;
  } else if (r.space != space) {
    r.space = MemSpace::Generic;  // a generic access that touched several spaces
  }
  r.mask |= 1u << l;
  r.addr[l] = addr;
}

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

template <MemSpace Space, unsigned Bytes, bool Signed>
void loadHandler(ExecCtx& c, const Inst& in, uint32_t mask) {
  const uint64_t* base = slot(c, in.src[0]);
  const unsigned vec = in.vec;
  const unsigned total = Bytes * vec;
  if (c.rec) c.rec->mask = 0;
  // Read every lane before writing any destination: a destination may be the address register.
  uint64_t vals[4][kWarpSize];
  forEachLane(mask, [&](int l) {
    uint64_t addr = base[l] + static_cast<uint64_t>(in.imm);
    Resolved r = resolve(c, Space, addr, total, l, false);
    for (unsigned v = 0; v < vec; ++v) vals[v][l] = loadValue<Bytes, Signed>(r.ptr + v * Bytes);
    if (c.rec) record(c, in, l, r.addr, r.space, false, false);
  });
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
  if (c.rec) c.rec->mask = 0;
  forEachLane(mask, [&](int l) {
    uint64_t addr = base[l] + static_cast<uint64_t>(in.imm);
    Resolved r = resolve(c, Space, addr, total, l, true);
    for (unsigned v = 0; v < vec; ++v) {
      uint64_t x = slot(c, in.src[1 + v])[l];
      std::memcpy(r.ptr + v * Bytes, &x, Bytes);  // little-endian: the low bytes
    }
    if (c.rec) record(c, in, l, r.addr, r.space, true, false);
  });
}

template <class T>
inline T atomicApply(AtomOp op, T old, T b, T cnew) {
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

template <class T, AtomOp Op, bool Ret>
void atomicHandler(ExecCtx& c, const Inst& in, uint32_t mask) {
  const uint64_t* base = slot(c, in.src[0]);
  const uint64_t* b = slot(c, in.src[1]);
  const uint64_t* e = slot(c, in.src[2]);
  const MemSpace space = in.space;
  if (c.rec) c.rec->mask = 0;
  uint64_t olds[kWarpSize];
  // Lanes perform their read-modify-write one after another, in lane order.
  forEachLane(mask, [&](int l) {
    uint64_t addr = base[l] + static_cast<uint64_t>(in.imm);
    Resolved r = resolve(c, space, addr, sizeof(T), l, true);
    T old;
    std::memcpy(&old, r.ptr, sizeof(T));
    T nv = atomicApply<T>(Op, old, get<T>(b, l), Op == AtomOp::Cas ? get<T>(e, l) : T(0));
    std::memcpy(r.ptr, &nv, sizeof(T));
    typename Raw<T>::type raw;
    std::memcpy(&raw, &old, sizeof(T));
    olds[l] = raw;
    if (c.rec) record(c, in, l, r.addr, r.space, true, true);
  });
  if constexpr (Ret) {
    uint64_t* d = slot(c, in.dst[0]);
    forEachLane(mask, [&](int l) { d[l] = olds[l]; });
  }
}

template <MemSpace S>
Handler loadFor(unsigned bytes, bool isSigned) {
  switch (bytes) {
    case 1:
      return isSigned ? &loadHandler<S, 1, true> : &loadHandler<S, 1, false>;
    case 2:
      return isSigned ? &loadHandler<S, 2, true> : &loadHandler<S, 2, false>;
    case 4:
      return isSigned ? &loadHandler<S, 4, true> : &loadHandler<S, 4, false>;
    case 8:
      return &loadHandler<S, 8, false>;
    default:
      return nullptr;
  }
}

template <MemSpace S>
Handler storeFor(unsigned bytes) {
  switch (bytes) {
    case 1:
      return &storeHandler<S, 1>;
    case 2:
      return &storeHandler<S, 2>;
    case 4:
      return &storeHandler<S, 4>;
    case 8:
      return &storeHandler<S, 8>;
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

Handler atomic(AtomOp op, Type t, bool ret) {
  switch (t) {
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
    default:
      return nullptr;
  }
}

}  // namespace gpusc::func::handlers
