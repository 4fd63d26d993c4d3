// Memory access helpers shared by the memory instruction handlers (internal to models/func):
// generic-address resolution with the faults a GPU raises, and the per-lane address record the
// timing model reads.
#pragma once

#include <cstdint>
#include <cstring>

#include <fmt/format.h>

#include "func/state.hpp"
#include "func/step_env.hpp"

namespace gpusc::func::handlers {

struct Resolved {
  uint8_t* ptr;
  MemSpace space;  // the space after generic resolution
  uint64_t addr;   // the address within that space
};

// The faults, out of line: they are rare, and resolve() stays small enough to inline into the
// handlers' lane loops (where the space is often a constant).
[[noreturn, gnu::cold, gnu::noinline]] inline void faultMisaligned(ExecCtx& c, int l,
                                                                   unsigned bytes, bool write,
                                                                   MemSpace space, uint64_t addr) {
  c.fault(l, fmt::format("misaligned {}-byte {} access at {} address 0x{:x}", bytes,
                         write ? "write" : "read", memSpaceName(space), addr));
}
[[noreturn, gnu::cold, gnu::noinline]] inline void faultIllegal(ExecCtx& c, int l, unsigned bytes,
                                                                bool write, MemSpace space,
                                                                uint64_t addr) {
  c.fault(l, fmt::format("illegal {}-byte {} at {} address 0x{:x}", bytes, write ? "write" : "read",
                         memSpaceName(space), addr));
}

// `bytes` at `addr` lie within a space of `size` bytes. (Not `addr + bytes <= size`: an address
// just below the space's start is near 2^64, and the sum wraps around.)
[[gnu::always_inline]] inline bool within(uint64_t addr, uint64_t bytes, uint64_t size) {
  return addr < size && size - addr >= bytes;
}

// Global memory's bytes at `addr` for a step (through its SM's translation cache, with an env),
// to write or only to read (GlobalMemory::translateForWrite, translate); null outside every
// allocation.
[[gnu::always_inline]] inline uint8_t* globalBytes(const ExecCtx& c, uint64_t addr, bool write) {
  GlobalMemory& g = *c.L->gmem;
  if (write) return c.env ? g.translateForWrite(addr, c.env->tlb) : g.translateForWrite(addr);
  return c.env ? g.translate(addr, c.env->tlb) : g.translate(addr);
}

// Resolves `addr` in `space` for lane `l`; faults on an invalid access.
// A step with a write log (StepEnv::log) defers its global writes: a plain write (`write`, not
// `rmw`) to global memory gets a staging slot of the log, pre-filled with the current bytes, for
// the caller to write; a read-modify-write (`rmw`) gets the memory itself, for the caller to read
// from or to log (deferredLog()), not to write.
[[gnu::always_inline]] inline Resolved resolve(ExecCtx& c, MemSpace space, uint64_t addr,
                                               unsigned bytes, int l, bool write,
                                               bool rmw = false) {
  if (__builtin_expect(addr & (bytes - 1), 0)) faultMisaligned(c, l, bytes, write, space, addr);
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
      p = globalBytes(c, addr, write);
      if (p && write && !rmw && c.env && c.env->log) p = c.env->log->stage(addr, p, bytes);
      break;
    case MemSpace::Shared:
      if (within(addr, bytes, c.cta->shared.size())) p = c.cta->shared.data() + addr;
      break;
    case MemSpace::Local: {
      const uint64_t per = c.L->localBytes;
      if (within(addr, bytes, per)) p = c.w->local.data() + l * per + addr;
      break;
    }
    case MemSpace::Const:
      if (!write && within(addr, bytes, c.L->constBank->size()))
        p = const_cast<uint8_t*>(c.L->constBank->data()) + addr;
      break;
    case MemSpace::KernelParam:
      if (!write && within(addr, bytes, c.L->params.size())) p = c.L->params.data() + addr;
      break;
    case MemSpace::CallParam: {
      const uint64_t per = c.L->prog->callParamBytesPerThread;
      if (within(addr, bytes, per)) p = c.w->callParams.data() + l * per + addr;
      break;
    }
    default:
      break;
  }
  if (__builtin_expect(p == nullptr, 0)) faultIllegal(c, l, bytes, write, space, addr);
  return {p, space, addr};
}

// The log a read-modify-write resolved to `space` goes to, or null when it is performed at once.
inline GlobalWriteLog* deferredLog(const ExecCtx& c, MemSpace space) {
  return space == MemSpace::Global && c.env ? c.env->log : nullptr;
}

// Lane l's call parameter of type T at `offset` in the call-parameter area (the arguments of a
// call the engine answers itself: printf, malloc, the device runtime's), and the writing of its
// result there.
template <class T>
T callParam(ExecCtx& c, uint64_t offset, int l) {
  T v;
  std::memcpy(&v, resolve(c, MemSpace::CallParam, offset, sizeof(T), l, false).ptr, sizeof(T));
  return v;
}
template <class T>
void setCallParam(ExecCtx& c, uint64_t offset, int l, T v) {
  std::memcpy(resolve(c, MemSpace::CallParam, offset, sizeof(T), l, true).ptr, &v, sizeof(T));
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

}  // namespace gpusc::func::handlers
