// Newer warp, cache-policy, cluster and stack instructions: elect.sync, createpolicy, getctarank
// and mapa (every block is a cluster of one), alloca / stacksave / stackrestore.
#include <fmt/format.h>

#include "func/handlers.hpp"
#include "func/lanes.hpp"

namespace gpusc::func::handlers {

namespace {

void electSyncHandler(ExecCtx& c, const Inst& in, uint32_t mask) {
  uint64_t* d = slot(c, in.dst[0]);
  const uint64_t* m = slot(c, in.src[0]);
  if (mask == 0) return;
  // The member mask names the participating threads (the ISA requires the same value in each).
  const uint32_t members = static_cast<uint32_t>(m[__builtin_ctz(mask)]) & mask;
  if (members == 0) {  // undefined in the ISA; no leader: the lane number reads 0
    forEachLane(mask, [&](int l) { d[l] = 0; });
    writePred(c, in.dst[1], mask, 0);
    return;
  }
  const int leader = __builtin_ctz(members);
  forEachLane(mask, [&](int l) { d[l] = static_cast<uint32_t>(leader); });
  writePred(c, in.dst[1], mask, 1u << leader);
}

void createPolicyHandler(ExecCtx& c, const Inst& in, uint32_t mask) {
  uint64_t* d = slot(c, in.dst[0]);
  const uint64_t* a = slot(c, in.src[0]);
  forEachLane(mask, [&](int l) {
    d[l] = in.mode == 1 ? a[l] : static_cast<uint64_t>(in.imm) | (a[l] & 0xffffffffu);
  });
}

void clusterOfOneHandler(ExecCtx& c, const Inst& in, uint32_t mask) {
  uint64_t* d = slot(c, in.dst[0]);
  const uint64_t* a = slot(c, in.src[0]);
  const uint64_t* r = slot(c, in.src[1]);
  const uint64_t keep = in.bytes == 4 ? 0xffffffffull : ~0ull;
  forEachLane(mask, [&](int l) {
    if (in.mode == 0) {
      d[l] = 0;
      return;
    }
    const uint32_t rank = static_cast<uint32_t>(r[l]);
    if (rank != 0)
      c.fault(l, fmt::format("mapa to block rank {} of a cluster of one block (clusters are not "
                             "modelled)",
                             rank));
    d[l] = a[l] & keep;
  });
}

void stackAllocHandler(ExecCtx& c, const Inst& in, uint32_t mask) {
  uint64_t* used = slot(c, in.aux);
  uint64_t* d = slot(c, in.dst[0]);
  const uint64_t* s = slot(c, in.src[0]);
  const uint64_t base = static_cast<uint64_t>(in.imm);
  const uint64_t align = 1ull << in.mode;
  forEachLane(mask, [&](int l) {
    const uint64_t size = in.bytes == 4 ? (s[l] & 0xffffffffu) : s[l];
    const uint64_t at = (base + used[l] + align - 1) / align * align;
    const uint64_t stack = c.L->stackBytes;
    if (size > stack || at + size > base + stack)
      c.fault(l, fmt::format("alloca of {} bytes overflows the {}-byte stack of the thread ({} "
                             "bytes in use)",
                             size, stack, used[l]));
    used[l] = at + size - base;
    d[l] = at;
  });
}

void stackSaveHandler(ExecCtx& c, const Inst& in, uint32_t mask) {
  const uint64_t* used = slot(c, in.aux);
  uint64_t* d = slot(c, in.dst[0]);
  forEachLane(mask, [&](int l) { d[l] = static_cast<uint64_t>(in.imm) + used[l]; });
}

void stackRestoreHandler(ExecCtx& c, const Inst& in, uint32_t mask) {
  uint64_t* used = slot(c, in.aux);
  const uint64_t* a = slot(c, in.src[0]);
  const uint64_t base = static_cast<uint64_t>(in.imm);
  forEachLane(mask, [&](int l) {
    const uint64_t v = in.bytes == 4 ? (a[l] & 0xffffffffu) : a[l];
    if (v < base || v > base + c.L->stackBytes)
      c.fault(l,
              fmt::format("stackrestore to 0x{:x}, which is not a stack address of the thread", v));
    used[l] = v - base;
  });
}

}  // namespace

Handler electSync() { return &electSyncHandler; }
Handler createPolicy() { return &createPolicyHandler; }
Handler clusterOfOne() { return &clusterOfOneHandler; }
Handler stackAlloc() { return &stackAllocHandler; }
Handler stackSave() { return &stackSaveHandler; }
Handler stackRestore() { return &stackRestoreHandler; }

}  // namespace gpusc::func::handlers
