#include "func/executor.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

#include <fmt/format.h>

#include "common/bits.hpp"
#include "common/error.hpp"
#include "common/run_budget.hpp"
#include "func/access_log.hpp"
#include "func/lanes.hpp"

namespace gpusc::func {

void ExecStats::add(const ExecStats& o) {
  warpInsts += o.warpInsts;
  threadInsts += o.threadInsts;
  for (int i = 0; i < kNumInstClasses; ++i) byClass[i] += o.byClass[i];
  for (int i = 0; i <= kWarpSize; ++i) activeLanes[i] += o.activeLanes[i];
  branches += o.branches;
  divergentBranches += o.divergentBranches;
  spinYields += o.spinYields;
  barrierWaits += o.barrierWaits;
  ctas += o.ctas;
  memInsts += o.memInsts;
  memUnits += o.memUnits;
}

namespace {

// The general count: every lane's sectors (an atomic's addresses) sorted.
uint64_t sortedUnits(const MemRecord& rec) {
  uint64_t keys[2 * kWarpSize];
  unsigned n = 0;
  for (uint32_t m = rec.mask; m != 0; m &= m - 1) {
    const int l = __builtin_ctz(m);
    if (rec.atomic) {
      keys[n++] = rec.addr[l];
    } else {
      const uint64_t first = rec.addr[l] >> 5,
                     last = (rec.addr[l] + std::max<uint8_t>(rec.bytes, 1) - 1) >> 5;
      keys[n++] = first;
      if (last != first) keys[n++] = last;
    }
  }
  std::sort(keys, keys + n);
  uint64_t distinct = 0, most = 0, run = 0;
  for (unsigned i = 0; i < n; ++i) {
    run = i > 0 && keys[i] == keys[i - 1] ? run + 1 : 1;
    distinct += run == 1;
    most = std::max(most, run);
  }
  return rec.atomic ? most : distinct;
}

// ExecStats::memUnits of one access (some lane in its mask): for an atomic the most lanes on one
// address, else the distinct 32-byte sectors the lanes touch (a lane's access may span two).
// Exact on every path; the cheap ones first, for the patterns most accesses have (memoryUnits
// takes a dense span before it).
uint64_t countedUnits(const MemRecord& rec) {
  if (rec.atomic) return sortedUnits(rec);
  const uint64_t span = std::max<uint8_t>(rec.bytes, 1) - 1;
  {
    // Lanes in ascending address order (rows of a 2D block, strided, partly masked): each lane
    // adds the sectors of its own past the previous lane's last, whose are all counted.
    uint64_t units = 0, prevAddr = 0, descending = 0;
    uint64_t nextNew = rec.addr[__builtin_ctz(rec.mask)] >> 5;  // first sector not yet counted
    forEachLane(rec.mask, [&](int l) {
      const uint64_t a = rec.addr[l], first = a >> 5, last = (a + span) >> 5;
      descending |= uint64_t(a < prevAddr) | uint64_t(a + span < a);
      units += last + 1 - std::max(first, nextNew);
      nextNew = last + 1;
      prevAddr = a;
    });
    if (descending == 0) return units;
  }
  {
    // Sectors within 32 below to 31 above the first active lane's (any access within 1 KB) count
    // as bits of one word, in one pass without sorting; a lane outside that range sends the
    // access to the general count.
    const uint64_t base = (rec.addr[__builtin_ctz(rec.mask)] >> 5) - 32;
    uint64_t bits = 0, outside = 0;
    forEachLane(rec.mask, [&](int l) {
      const uint64_t first = (rec.addr[l] >> 5) - base, last = ((rec.addr[l] + span) >> 5) - base;
      outside |= (first | last) >> 6;
      bits |= (1ull << (first & 63)) | (1ull << (last & 63));
    });
    if (outside == 0) return popcount64(bits);
  }
  return sortedUnits(rec);
}

// The units of `rec` (mask not 0), recorded by the instruction at `pc`: a dense span's at once,
// else the memo's when its entry for the instruction and mask holds the same pattern
// (MemoryUnitsMemo), else counted and kept there.
uint64_t memoryUnits(const MemRecord& rec, MemoryUnitsMemo& memo, uint32_t pc) {
  uint64_t firstByte, lastByte;
  if (!rec.atomic && denseSpan(rec, firstByte, lastByte))
    return (lastByte >> 5) - (firstByte >> 5) + 1;
  if (!memo.entries) memo.entries = std::make_unique<MemoryUnitsMemo::Entry[]>(memo.kEntries);
  const uint32_t hash = pc * 0x9e3779b1u ^ rec.mask * 0x85ebca77u;
  MemoryUnitsMemo::Entry& e = memo.entries[hash >> (32 - MemoryUnitsMemo::kEntryBits)];
  const uint64_t a0 = rec.addr[__builtin_ctz(rec.mask)];
  const auto sectorOffset = static_cast<uint8_t>(a0 & 31);
  if (e.mask == rec.mask && e.bytes == rec.bytes && e.atomic == rec.atomic &&
      e.sectorOffset == sectorOffset) {
    uint64_t differ = 0;  // one pass of subtractions, xors and ands, which the compiler vectorizes
    for (int l = 0; l < kWarpSize; ++l) differ |= ((rec.addr[l] - a0) ^ e.offset[l]) & e.lane[l];
    if (differ == 0) return e.units;
  }
  const uint64_t units = countedUnits(rec);
  e.mask = rec.mask;
  e.bytes = rec.bytes;
  e.sectorOffset = sectorOffset;
  e.atomic = rec.atomic;
  e.units = units;
  for (int l = 0; l < kWarpSize; ++l) {
    e.lane[l] = 0 - uint64_t((rec.mask >> l) & 1u);
    e.offset[l] = (rec.addr[l] - a0) & e.lane[l];
  }
  return units;
}

// Counts a step's recorded access (of the instruction at `pc`) in ExecStats::memInsts and
// memUnits, when the launch counts them (LaunchState::countMemoryUnits).
inline void countAccess(const LaunchState& L, ExecStats& st, const MemRecord& rec,
                        MemoryUnitsMemo& memo, uint32_t pc) {
  if (L.countMemoryUnits && rec.mask != 0) {
    st.memInsts += 1;
    st.memUnits += memoryUnits(rec, memo, pc);
  }
}

}  // namespace

void ExecCtx::fault(int lane, const std::string& what) const {
  const Program& p = *L->prog;
  uint32_t t = w->idInCta * kWarpSize + static_cast<uint32_t>(lane);
  uint32_t bx = L->block.x, by = L->block.y;
  const InstInfo& ii = p.info[pc];
  throw KernelFault(
      fmt::format("{} in kernel {} by thread ({},{},{}) of block ({},{},{}) at {}: {}", what,
                  p.name, t % bx, (t / bx) % by, t / (bx * by), cta->ctaid.x, cta->ctaid.y,
                  cta->ctaid.z, ii.loc.str(), ii.text));
}

namespace {

// The lanes of `lanes` whose guard predicate lets them execute `in`.
inline uint32_t guardedLanes(const Inst& in, const Warp& w, uint32_t lanes) {
  return in.guard >= 0 ? lanes & (in.guardNeg ? ~w.preds[in.guard] : w.preds[in.guard]) : lanes;
}

// Pops finished entries: empty ones, and ones that reached their reconvergence point.
inline void reconverge(Warp& w) {
  while (!w.stack.empty()) {
    const SimtEntry& t = w.stack.back();
    if (t.mask != 0 && t.pc != t.rpc) break;
    w.stack.pop_back();
  }
}

inline void gotoPc(Warp& w, uint32_t pc) {
  w.stack.back().pc = pc;
  reconverge(w);
}

// Whether the instruction at `pc` only ends the lanes that reach it: an unguarded exit, or a
// kernel's ret (no call frame on the stack).
bool onlyExits(const Program& p, const Warp& w, uint32_t pc) {
  if (pc >= p.code.size()) return true;  // past the end (kNoPc): no lane gets there
  const Inst& in = p.code[pc];
  if (in.guard >= 0) return false;
  if (in.flow == Flow::Exit) return true;
  if (in.flow != Flow::Ret) return false;
  for (const SimtEntry& e : w.stack)
    if (e.frame) return false;
  return true;
}

// Independent thread scheduling (compute capability 7.0 and later, which gpusc's platforms
// report): a path of a divergent warp may wait for lanes of its own warp on another path (a
// lock a lane of that path holds, a flag it sets), and the GPU lets those run. A reconvergence
// stack does not by itself: the path on top runs until it reaches its reconvergence point. So a
// path that spins yields. It spins when, while its warp is divergent, it takes a loop's branch
// back with the same registers, predicates and local memory as at the check before (`spinning`):
// a loop that computes anything changes its state from one iteration to the next; one that waits
// for memory another lane writes does not. It then yields:
// - to the nearest path below it that has not run yet (a sibling, or a path of an outer branch):
//   that path's entries move above it, it runs until it reaches its reconvergence point, and this
//   path resumes;
// - else to the nearest lanes waiting at a reconvergence point below it (the lanes that got the
//   lock and left the loop): they leave that entry as a path of their own, which runs from there
//   to the next reconvergence point below and waits there; the entry keeps the lanes still on
//   the paths above it, which run from it when they arrive.
// Paths run in another order than without it, but each lane executes the same instructions: a
// program whose lanes do not wait for each other computes the same results, and one whose loops
// never spin runs exactly as without it. Paths inside a called function's frame (a lock taken in
// a function that is not inlined) do not yield.
//
// The checks come kSpinFirstCheck branches back apart, and twice as far apart after each check
// that finds the state changed (up to kSpinLongestGap): a spinning path yields after 16
// iterations, and a loop that computes pays for about log2(iterations) hashes of its warp's state.
//
// A poll that reads a clock (a lock with a clock64() time-out, libcu++'s back-off) changes its
// registers every iteration and never looks like spinning. So a path of a divergent warp also
// yields once it has taken its loop's branch back about 70,000 times (the checks up to the
// longest gap, then kLongLoopChecks of them at that gap) without the warp reconverging: the
// scheduler of a GPU with independent thread scheduling does not let one path of a warp starve
// the others that long (CUDA C++ Programming Guide, "Independent Thread Scheduling": forward
// progress of every thread), and a loop that long only moves the order of the warp's paths, not
// what each lane executes.
constexpr uint32_t kSpinFirstCheck = 8;
constexpr uint32_t kSpinLongestGap = 4096;
constexpr uint32_t kLongLoopChecks = 16;

inline void resetSpin(Warp& w) {
  w.spins = 0;
  w.spinGap = kSpinFirstCheck;
  w.longChecks = 0;
}

// Whether the warp, at the branch back at `pc`, spins: its state hashed at each check, the same
// twice in a row. Local memory (which may be large) is hashed only when the registers and
// predicates are unchanged, which a loop that computes in registers never is.
[[gnu::noinline]] bool spinning(Warp& w, uint32_t pc) {
  if (++w.spins % w.spinGap != 0) return false;
  const bool first = w.spins == kSpinFirstCheck;
  uint64_t h = 0x9e3779b97f4a7c15ull ^ pc;
  const auto mix = [&h](uint64_t v) { h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2); };
  for (uint64_t v : w.regs) mix(v);
  for (uint32_t v : w.preds) mix(v);
  mix(w.stack.size());
  mix(w.stack.back().mask);
  const bool sameRegisters = !first && h == w.spinState;
  w.spinState = h;
  if (!sameRegisters) {
    w.spinLocal = 0;  // not hashed
    w.spins = kSpinFirstCheck;
    // Computing: the next check twice as far on (the count restarts so that it lands there),
    // until a loop this long yields anyway (kLongLoopChecks above).
    if (!first && w.spinGap < kSpinLongestGap)
      w.spinGap *= 2;
    else if (w.spinGap == kSpinLongestGap && ++w.longChecks >= kLongLoopChecks)
      return true;
    return false;
  }
  h = 0x9e3779b97f4a7c15ull;
  for (size_t i = 0; i + 8 <= w.local.size(); i += 8) {
    uint64_t v;
    std::memcpy(&v, w.local.data() + i, 8);
    mix(v);
  }
  for (size_t i = w.local.size() & ~size_t(7); i < w.local.size(); ++i) mix(w.local[i]);
  h |= 1;  // never 0, which stands for not hashed
  const bool same = h == w.spinLocal || w.local.empty();
  w.spinLocal = h;
  w.spins = kSpinFirstCheck;
  return same;
}

// yieldPath at a call frame s[k] below the spinning path (a lock taken in a function that is
// not inlined, as nvcc -G builds every function): the lanes waiting at the function's
// reconvergence point (the loop's exit: the lane that got the lock) run ahead, through the rest
// of the function and, after its ret, on from the call to the caller's reconvergence point, as
// lanes that leave a reconvergence entry do. Their entries are copies of the frame and of the
// entries below it down to the caller's (frames of calls without divergence in between) holding
// only them; the caller's copy is the one that ran ahead. Not for recursive frames, whose
// entries own saved activations.
bool runAheadFromCall(std::vector<SimtEntry>& s, size_t k, uint32_t above) {
  const uint32_t others = s[k].mask & ~above;
  if (others == 0 || s[k].pc != s[k + 1].rpc) return false;
  size_t c = k;
  while (c > 0 && s[c].frame) --c;
  if (s[c].frame) return false;
  for (size_t i = c; i <= k; ++i)
    if (s[i].recursive || s[i].waitsAtBarrier || s[i].waitsAtSync || (s[i].mask & others) != others)
      return false;
  for (size_t i = c; i <= k; ++i) {
    SimtEntry copy = s[i];
    copy.mask = others;
    copy.ranAhead = i == c;
    s[i].mask &= ~others;
    s.push_back(copy);
  }
  return true;
}

bool yieldPath(Warp& w) {
  std::vector<SimtEntry>& s = w.stack;
  const size_t top = s.size() - 1;
  if (s[top].frame) return false;
  uint32_t above = s[top].mask;  // the lanes of the entries above k
  for (size_t k = top; k-- > 0;) {
    SimtEntry& e = s[k];
    // An entry at its own reconvergence point (a loop's entry whose last divergence reconverges
    // where it does) has ended: its lanes wait at the entry below's pc.
    if (e.pc == e.rpc && !e.frame) continue;
    if (e.frame) return runAheadFromCall(s, k, above);
    // Lanes that ran ahead wait at a barrier for this path's, and lanes stopped at a
    // warp-synchronous instruction (meetAtWarpSync) wait there for them: neither runs before
    // this path gets there.
    if (e.waitsAtBarrier || e.waitsAtSync) {
      above |= e.mask;
      continue;
    }
    const uint32_t others = e.mask & ~above;
    if (e.pc == s[k + 1].rpc) {  // the reconvergence entry of the paths above it
      if (others) {              // lanes waiting there run ahead
        e.mask &= ~others;
        s.push_back({e.pc, e.rpc, others, false});
        s.back().ranAhead = true;
        return true;
      }
    } else if (others) {  // a path that has not run: its entries, [m, k], move above
      size_t m = k;
      while (m > 0 && !(s[m - 1].mask & above) && s[m - 1].mask != 0 && !s[m - 1].frame) --m;
      std::rotate(s.begin() + static_cast<std::ptrdiff_t>(m),
                  s.begin() + static_cast<std::ptrdiff_t>(k + 1), s.end());
      return true;
    }
    above |= e.mask;
  }
  return false;
}

// A path of a divergent warp yields (spinning, sleeping, or waiting at an mbarrier): its spin
// checks start over, and a yield that let another path run is counted.
bool yieldCounted(Warp& w, ExecStats& st) {
  resetSpin(w);
  if (!yieldPath(w)) return false;
  st.spinYields += 1;
  return true;
}

// Whether entries `a` and `b` of two paths continue alike: same pc, same reconvergence point, and
// both frames of the same (direct) call or both not frames.
inline bool sameStep(const SimtEntry& a, const SimtEntry& b) {
  return a.pc == b.pc && a.rpc == b.rpc && a.frame == b.frame && a.callSite == b.callSite &&
         !a.recursive && !b.recursive && !a.waitsAtSync && !b.waitsAtSync;
}

constexpr size_t kNoMerge = ~size_t(0);

// A path stopped at a barrier or a warp-synchronous instruction in a call (s[i]) and the path on
// top, arriving there: when each is one chain of entries holding only its lanes (frames at the same
// pcs, down to a caller's entry at the same pc with the same reconvergence point), they are the
// same continuation - lanes that ran ahead of a spinning path (yieldPath) into the call that the
// lanes they left now make too - and become one path, as they would have been without the
// yield. The stopped chain's entries are removed, their lanes added to the top chain's. Returns
// the index below the removed entries' first (kNoMerge: no merge).
size_t mergeSameContinuation(std::vector<SimtEntry>& s, size_t i) {
  const size_t top = s.size() - 1;
  const uint32_t ma = s[i].mask, mb = s[top].mask;
  size_t a = i, b = top;
  for (;;) {
    if (s[a].mask != ma || s[b].mask != mb || !sameStep(s[a], s[b])) return kNoMerge;
    if (!s[a].frame) break;  // the callers' entries
    if (a == 0 || b - 1 <= i) return kNoMerge;
    --a;
    --b;
  }
  for (size_t k = 0; a + k <= i; ++k) {
    s[b + k].mask |= s[a + k].mask;
    s[b + k].ranAhead = s[b + k].waitsAtBarrier = false;
  }
  s.erase(s.begin() + static_cast<std::ptrdiff_t>(a),
          s.begin() + static_cast<std::ptrdiff_t>(i + 1));
  return a;
}

// bar.sync, bar.red and bar.arrive are .aligned: the warp executes them with all its threads
// (NVIDIA's compilers reconverge divergent paths before one). A path reaches one while others
// are still apart when the paths' reconvergence point lies beyond it, which is the kernel's exit
// when one of them may exit or trap (`if (a) { if (x) return; ... } else ...; __syncthreads()`).
// The path at the barrier (the top entry, at `pc`) then waits for its siblings: returns true
// with a sibling moved on top to run until it reaches the barrier too, where the two merge.
// Lanes that wait at a reconvergence point that only exits leave the warp (all they would do).
// Returns false to let the top entry (with the lanes merged into it) arrive, with `joined` the
// lanes of paths in other calls that waited at this barrier and arrive with it.
bool awaitSiblingsAtBarrier(const Program& p, Warp& w, uint32_t pc, uint32_t& joined) {
  joined = 0;
  std::vector<SimtEntry>& s = w.stack;
  // Lanes that ran ahead of a spinning path wait at a barrier for the lanes they left (a barrier
  // counts every thread of the block), also in a function they called since: the path below
  // the lanes that ran ahead runs again.
  if (s.size() >= 2 && s.back().mask != w.live) {
    const uint32_t own = s.back().mask;
    for (size_t j = s.size() - 1; j > 0; --j) {
      if ((s[j].mask & own) != own) break;  // not an entry the path came from
      if (!s[j].ranAhead) continue;
      if (s[j - 1].waitsAtBarrier || s[j - 1].waitsAtSync) break;
      s.back().waitsAtBarrier = true;
      std::rotate(s.begin() + static_cast<std::ptrdiff_t>(j - 1),
                  s.begin() + static_cast<std::ptrdiff_t>(j), s.end());
      return true;
    }
  }
  // Paths of other calls (the same function called on both sides) stopped at this barrier.
  // One that has the same continuation as this path (lanes that ran ahead of a spinning path
  // into the same call: mergeSameContinuation) becomes one path with it again.
  const auto joinStopped = [&] {
    for (size_t i = s.size() - 1; i-- > 0;) {
      SimtEntry& x = s[i];
      if (!x.waitsAtBarrier || x.pc != pc || (x.mask & s.back().mask) || x.mask == 0) continue;
      joined |= x.mask;
      if (size_t from = mergeSameContinuation(s, i); from != kNoMerge) {
        i = from;
        continue;
      }
      x.pc = pc + 1;
      x.waitsAtBarrier = x.ranAhead = false;
    }
    return false;
  };
  while (s.size() >= 2 && s.back().mask != w.live) {
    SimtEntry& t = s.back();
    SimtEntry& e = s[s.size() - 2];
    if (t.frame || e.frame) return joinStopped();
    if (e.pc == t.rpc) {              // the path's reconvergence entry: its other paths have ended
      if ((e.mask & ~t.mask) == 0) {  // none waits there: the path goes on in its place
        t.rpc = e.rpc;
        s.erase(s.end() - 2);
        continue;
      }
      if (!onlyExits(p, w, e.pc)) return joinStopped();
      const uint32_t gone = e.mask & ~t.mask;  // lanes about to exit: they exit now
      for (SimtEntry& x : s) x.mask &= ~gone;
      w.live &= ~gone;
      continue;
    }
    if (e.rpc != t.rpc) return joinStopped();
    if (e.pc == pc) {  // a sibling path already here: one path from now on
      e.mask |= t.mask;
      e.ranAhead = e.waitsAtBarrier = false;
      s.pop_back();
      continue;
    }
    // At another barrier it waits for this one (.aligned barriers in divergent code: arrive
    // apart, as before); else it runs first.
    if (p.code[e.pc].flow == Flow::Barrier) return joinStopped();
    std::swap(t, e);
    return true;
  }
  return false;
}

// Warp-synchronous instructions (shfl, vote, match, redux and elect .sync, bar.warp.sync) make
// the lanes of their member mask wait for each other (sm_70 and later), also lanes that come on
// different paths: a function with a shuffle called from both sides of a branch reaches the same
// instruction in two frames. The paths run one after another here, so the path at `pc` (the top
// entry) meets the others there:
// - paths that stopped at `pc` before (waitsAtSync) join it: their lanes run the instruction with
//   it and go on after it (their active and executing lanes are added to `active` and `mask`);
// - else, the first time it gets there, it stops and the nearest other path holding missing
//   lanes runs first: its entries (the top one, at `k`, and those below it that hold none of
//   this path's lanes) move above this path's, and it returns true. A path that reaches `pc`
//   joins it as above; one that ends elsewhere, or stops at another such instruction, leaves it
//   to run alone, as do lanes no path brings here (two different instructions do not meet).
// A reconvergence entry (whose paths above it have not ended) does not run; its lanes are found
// in those paths, or have arrived there.
// Its step: with joined lanes, `r` and the lane count in `st` take them in; a stopped path
// executes no lane (and records no access).
[[gnu::noinline]] bool meetAtWarpSync(const Inst& in, Warp& w, uint32_t pc, uint32_t& active,
                                      uint32_t& mask, StepResult& r, ExecStats& st,
                                      MemRecord* rec) {
  std::vector<SimtEntry>& stack = w.stack;
  const uint32_t own = stack.back().mask;
  const uint32_t missing = w.live & ~own;
  bool joined = false;
  // A stopped path with the same continuation as this one (mergeSameContinuation) becomes one
  // path with it; others execute the instruction with it and go on apart.
  for (size_t i = stack.size() - 1; i-- > 0;) {
    SimtEntry& x = stack[i];
    if (!x.waitsAtSync || x.pc != pc || !(x.mask & missing)) continue;
    x.waitsAtSync = false;
    active |= x.mask;
    mask |= guardedLanes(in, w, x.mask);
    joined = true;
    if (size_t from = mergeSameContinuation(stack, i); from != kNoMerge) {
      i = from;
      continue;
    }
    x.pc = pc + 1;
  }
  const size_t top = stack.size() - 1;
  if (joined) {
    st.threadInsts += popcount32(active & ~own);
    r.active = active;
    r.executed = mask;
    return false;
  }
  if (stack[top].waitsAtSync) {  // back after the other path ran: it runs alone
    stack[top].waitsAtSync = false;
    return false;
  }
  for (size_t k = top; k-- > 0;) {
    const SimtEntry& e = stack[k];
    if (!(e.mask & missing)) continue;
    if (e.pc == stack[k + 1].rpc) continue;  // a reconvergence entry
    if (e.waitsAtSync || (e.mask & own)) return false;
    size_t m = k;  // the other path's entries: [m, k]
    while (m > 0 && !(stack[m - 1].mask & own) && stack[m - 1].mask != 0) --m;
    stack[top].waitsAtSync = true;
    r.executed = 0;
    if (rec) rec->mask = 0;
    std::rotate(stack.begin() + static_cast<std::ptrdiff_t>(m),
                stack.begin() + static_cast<std::ptrdiff_t>(k + 1), stack.end());
    return true;
  }
  return false;
}

uint64_t sregValue(ptx::SReg s, const LaunchState& L, const Cta& cta, uint32_t warp, int lane) {
  const uint32_t t = warp * kWarpSize + static_cast<uint32_t>(lane);
  const uint32_t bx = L.block.x, by = L.block.y;
  using ptx::SReg;
  switch (s) {
    case SReg::TidX:
      return t % bx;
    case SReg::TidY:
      return (t / bx) % by;
    case SReg::TidZ:
      return t / (bx * by);
    case SReg::NtidX:
      return L.block.x;
    case SReg::NtidY:
      return L.block.y;
    case SReg::NtidZ:
      return L.block.z;
    case SReg::CtaidX:
      return cta.ctaid.x;
    case SReg::CtaidY:
      return cta.ctaid.y;
    case SReg::CtaidZ:
      return cta.ctaid.z;
    case SReg::NctaidX:
      return L.grid.x;
    case SReg::NctaidY:
      return L.grid.y;
    case SReg::NctaidZ:
      return L.grid.z;
    case SReg::LaneId:
      return static_cast<uint32_t>(lane);
    case SReg::WarpId:
      return warp;
    case SReg::NWarpId:
      return L.warpsPerCta;
    case SReg::SmId:
      return cta.smId;
    case SReg::NSmId:
      return L.numSms;
    case SReg::GridId:
      return 0;
    case SReg::LaneMaskEq:
      return 1u << lane;
    case SReg::LaneMaskLe:
      return lane == 31 ? kFullMask : (2u << lane) - 1;
    case SReg::LaneMaskLt:
      return (1u << lane) - 1;
    case SReg::LaneMaskGe:
      return ~((1u << lane) - 1);
    case SReg::LaneMaskGt:
      return lane == 31 ? 0u : ~((2u << lane) - 1);
    case SReg::DynamicSmemSize:
      return L.dynamicShared;
    case SReg::TotalSmemSize:
      return L.sharedBytes;
    case SReg::ReservedSmemBegin:
    case SReg::ReservedSmemOffset0:
    case SReg::ReservedSmemOffset1:
      return L.reservedSharedAt;
    case SReg::ReservedSmemEnd:
      return L.reservedSharedAt + L.reservedShared;
    case SReg::ReservedSmemCap:
      return L.reservedShared;
    case SReg::AggrSmemSize:
      return L.sharedBytes + L.reservedShared;
    // Clusters are not modelled: each block is an implicit cluster of one block.
    case SReg::ClusterIdX:
      return cta.ctaid.x;
    case SReg::ClusterIdY:
      return cta.ctaid.y;
    case SReg::ClusterIdZ:
      return cta.ctaid.z;
    case SReg::NClusterIdX:
      return L.grid.x;
    case SReg::NClusterIdY:
      return L.grid.y;
    case SReg::NClusterIdZ:
      return L.grid.z;
    case SReg::ClusterNCtaIdX:
    case SReg::ClusterNCtaIdY:
    case SReg::ClusterNCtaIdZ:
    case SReg::ClusterNCtaRank:
      return 1;
    case SReg::EnvReg1:
      return L.gridWorkspace >> 32;
    case SReg::EnvReg2:
      return L.gridWorkspace & 0xffffffffu;
    case SReg::ClusterCtaIdX:
    case SReg::ClusterCtaIdY:
    case SReg::ClusterCtaIdZ:
    case SReg::ClusterCtaRank:
    case SReg::IsExplicitCluster:
      return 0;
    default:
      return 0;
  }
}

// Fills the row of special register `s` for the lanes of warp `warp`. The thread index is
// counted up lane by lane from the warp's first thread, without two divisions per lane.
void fillSreg(uint64_t* row, ptx::SReg s, const LaunchState& L, const Cta& cta, uint32_t warp) {
  using ptx::SReg;
  if (s != SReg::TidX && s != SReg::TidY && s != SReg::TidZ) {
    for (int l = 0; l < kWarpSize; ++l) row[l] = sregValue(s, L, cta, warp, l);
    return;
  }
  const uint32_t bx = L.block.x, by = L.block.y, t0 = warp * kWarpSize;
  uint32_t x = t0 % bx, y = (t0 / bx) % by, z = t0 / (bx * by);
  for (int l = 0; l < kWarpSize; ++l) {
    row[l] = s == SReg::TidX ? x : s == SReg::TidY ? y : z;
    if (++x == bx) {
      x = 0;
      if (++y == by) {
        y = 0;
        ++z;
      }
    }
  }
}

}  // namespace

void Executor::initCta(Cta& cta, const Dim3& ctaid, uint64_t linearId, uint32_t smId) const {
  const Program& p = *L_.prog;
  cta.ctaid = ctaid;
  cta.linearId = linearId;
  cta.smId = smId;
  cta.shared.assign(
      L_.reservedSharedMapped ? L_.reservedSharedAt + L_.reservedShared : L_.sharedBytes, 0);
  const uint64_t threads = L_.block.count();
  const uint32_t nw = L_.warpsPerCta;
  cta.warps.resize(nw);
  cta.liveWarps = nw;
  for (auto& b : cta.barriers) b = Barrier{};
  cta.syncEpoch = 0;
  cta.wokenAtEpoch = ~0ull;
  cta.mbarrierPhaseDone = false;
  for (uint32_t wi = 0; wi < nw; ++wi) {
    Warp& w = cta.warps[wi];
    w.regs.assign(size_t(p.numSlots) * kWarpSize, 0);
    w.preds.assign(p.numPreds, 0);
    for (const auto& s : p.sregSlots)
      fillSreg(w.regs.data() + size_t(s.slot) * kWarpSize, s.sreg, L_, cta, wi);
    w.local.assign(size_t(L_.localBytes) * kWarpSize, 0);
    w.callParams.assign(size_t(p.callParamBytesPerThread) * kWarpSize, 0);
    uint64_t first = uint64_t(wi) * kWarpSize;
    uint64_t n = std::min<uint64_t>(kWarpSize, threads - first);
    w.live = n >= 32 ? kFullMask : ((1u << n) - 1);
    w.carry = 0;
    w.idInCta = wi;
    w.state = WarpState::Ready;
    w.barrierId = 0;
    w.redPc = kNoPc;
    w.redMask = 0;
    w.instructions = 0;
    resetSpin(w);
    w.mbarrierYieldEpoch = ~0u;
    w.stack.clear();
    w.stack.push_back({p.functions[0].begin, kNoPc, w.live, false});
    w.frameSaves.clear();
    w.frameSaveAt.clear();
  }
}

bool Executor::tryRelease(Cta& cta, uint32_t id) {
  Barrier& b = cta.barriers[id];
  if (b.arrivedWarps == 0) return false;
  uint32_t expected = b.expectedThreads ? b.expectedThreads : cta.liveWarps * kWarpSize;
  if (b.arrivedWarps * kWarpSize < expected) return false;
  for (uint32_t wi = 0; wi < cta.warps.size(); ++wi) {
    if (!((b.waiting >> wi) & 1u)) continue;
    Warp& w = cta.warps[wi];
    w.state = WarpState::Ready;
    // A bar.red's result is known only now: it goes to the lanes that executed it (not lanes
    // whose guard was false, nor lanes at another pc: those registers are not its to write).
    if (w.redPc == kNoPc) continue;  // bar.sync on the same barrier
    const Inst& ri = L_.prog->code[w.redPc];
    const uint32_t lanes = w.redMask;
    w.redPc = kNoPc;
    if (ri.mode2 == 0) {
      for (int l = 0; l < kWarpSize; ++l)
        if ((lanes >> l) & 1u) row(w, ri.dst[0])[l] = b.redPopc;
    } else {
      const bool v = ri.mode2 == 1 ? b.redAnd : b.redOr;
      w.preds[ri.dst[0]] = (w.preds[ri.dst[0]] & ~lanes) | (v ? lanes : 0u);
    }
  }
  b = Barrier{};
  cta.syncEpoch += 1;
  return true;
}

void Executor::arriveAtBarrier(Cta& cta, Warp& w, const Inst& in, uint32_t mask, StepResult& r) {
  const int lane = __builtin_ctz(mask);
  const auto fault = [&](const std::string& what) {
    ExecCtx c = context(cta, w, mask, r.pc);
    c.fault(lane, what);
  };
  // A number or count in a register is the warp's first active lane's (the PTX ISA asks every
  // thread of the warp for the same value).
  const auto fromRegister = [&](uint32_t slot) { return row(w, slot)[lane] & 0xffffffffu; };
  const uint64_t id = in.flags & kBarrierIdInRegister ? fromRegister(in.src[0]) : in.aux;
  if (id > 15) fault(fmt::format("barrier number {} is not 0..15", id));
  uint64_t count = static_cast<uint64_t>(in.imm);
  if (in.flags & kBarrierCountInRegister) {
    count = fromRegister(in.src[1]);
    if (count == 0 || count % kWarpSize != 0)
      fault(fmt::format("barrier thread count {} is not a positive multiple of 32", count));
  }
  Barrier& b = cta.barriers[id];
  if (count) {
    if (b.expectedThreads && b.expectedThreads != count)
      fault(fmt::format("barrier {} used with thread counts {} and {}", id, b.expectedThreads,
                        count));
    b.expectedThreads = static_cast<uint32_t>(count);
  }
  const bool waits = in.mode != 1;  // bar.arrive does not wait
  b.arrivedWarps += 1;
  if (in.mode == 2) {
    uint32_t p = (in.predSrcNeg & 4 ? ~w.preds[in.src[2]] : w.preds[in.src[2]]) & mask;
    b.redPopc += popcount32(p);
    b.redAnd = b.redAnd && p == mask;
    b.redOr = b.redOr || p != 0;
  }
  if (waits) {
    b.waiting |= 1ull << w.idInCta;
    w.state = WarpState::AtBarrier;
    w.barrierId = static_cast<uint32_t>(id);
    r.kind = StepKind::AtBarrier;
    if (in.mode == 2) {
      w.redPc = r.pc;
      w.redMask = mask;
    }
  }
  if (tryRelease(cta, static_cast<uint32_t>(id))) r.released = true;
}

void Executor::callIndirect(Cta& cta, Warp& w, const Inst& in, uint32_t mask, StepResult& r) {
  const Program& p = *L_.prog;
  const IndirectCall& ic = p.indirectCalls[in.aux];
  const uint32_t pc = r.pc;
  // Lanes grouped by callee, in the order their lowest lane appears.
  std::vector<std::pair<uint32_t, uint32_t>> groups;  // target index, lanes
  for (int l = 0; l < kWarpSize; ++l) {
    if (!((mask >> l) & 1u)) continue;
    const uint64_t fp = row(w, in.src[0])[l];
    uint32_t ti = 0;
    while (ti < ic.targets.size() && ic.targets[ti].address != fp) ++ti;
    if (ti == ic.targets.size()) {
      ExecCtx c = context(cta, w, r.active, pc);
      c.fault(l, fp == 0 ? std::string("indirect call through a null function pointer")
                         : fmt::format("indirect call to 0x{:x}, which is not a function {}", fp,
                                       ic.fromTargetList ? "of the call's .calltargets list"
                                                         : "whose address the module takes "
                                                           "with the call's .callprototype"));
    }
    auto g = std::find_if(groups.begin(), groups.end(), [&](auto& e) { return e.first == ti; });
    if (g == groups.end())
      groups.push_back({ti, 1u << l});
    else
      g->second |= 1u << l;
  }
  // The first group runs first; each returns to pc + 1, where the warp reconverges. A recursive
  // callee's activation is saved before its lanes' arguments reach its parameters.
  for (auto it = groups.rbegin(); it != groups.rend(); ++it) {
    const IndirectTarget& t = ic.targets[it->first];
    const bool recursive = p.functions[t.func].frame != kNoPc;
    if (recursive) saveActivation(w, t.func);
    copyCallParams(w, it->second, t.params, ic.args, ic.argBytes);
    if (recursive) forEachLane(it->second, [&](int l) { takeFrame(cta, w, t.func, l, r); });
    SimtEntry e{t.entry, kNoPc, it->second, true, false, pc};
    e.recursive = recursive;
    w.stack.push_back(e);
  }
  r.diverged = groups.size() > 1;
}

void Executor::copyCallParams(Warp& w, uint32_t lanes, const std::vector<uint32_t>& to,
                              const std::vector<uint32_t>& from,
                              const std::vector<uint32_t>& bytes) {
  const size_t stride = L_.prog->callParamBytesPerThread;
  forEachLane(lanes, [&](int l) {
    uint8_t* lane = w.callParams.data() + stride * size_t(l);
    for (size_t i = 0; i < to.size(); ++i) std::memmove(lane + to[i], lane + from[i], bytes[i]);
  });
}

namespace {
// The callee of an indirect call whose `ret` this is.
const IndirectTarget& returningTarget(const IndirectCall& ic, const Inst& ret) {
  for (const auto& c : ic.targets)
    if (c.func == ret.func) return c;
  throw InternalError("indirect call frame returns from a function it did not call");
}
}  // namespace

void Executor::returnIndirect(Warp& w, const Inst& call, const Inst& ret, uint32_t mask) {
  const IndirectCall& ic = L_.prog->indirectCalls[call.aux];
  copyCallParams(w, mask, ic.rets, returningTarget(ic, ret).returns, ic.retBytes);
}

// A record of Warp::frameSaves: the callee's register rows (32 cells each), its predicates (one
// word each), its parameter bytes (each lane's, in words) and each lane's stack bytes in use.
namespace {
size_t paramWords(const RecursiveFrame& fr) { return (fr.paramEnd - fr.paramBegin + 7) / 8; }
size_t recordWords(const RecursiveFrame& fr) {
  return size_t(fr.rowEnd - fr.rowBegin) * kWarpSize + (fr.predEnd - fr.predBegin) +
         paramWords(fr) * kWarpSize + kWarpSize;
}
// The recursive frames in w.stack below `end`: the index of the record the frame at `end` owns.
size_t recursiveFramesBelow(const Warp& w, size_t end) {
  size_t k = 0;
  for (size_t i = 0; i < end; ++i) k += w.stack[i].recursive;
  return k;
}
}  // namespace

void Executor::saveActivation(Warp& w, uint32_t func) {
  const Program& p = *L_.prog;
  const RecursiveFrame& fr = p.frames[p.functions[func].frame];
  // Records of frames that ended without a ret (their lanes exited) are dropped first.
  const size_t k = recursiveFramesBelow(w, w.stack.size());
  if (w.frameSaveAt.size() > k) {
    w.frameSaves.resize(w.frameSaveAt[k]);
    w.frameSaveAt.resize(k);
  }
  const size_t at = w.frameSaves.size();
  w.frameSaveAt.push_back(static_cast<uint32_t>(at));
  w.frameSaves.resize(at + recordWords(fr));
  uint64_t* out = w.frameSaves.data() + at;
  const size_t rows = size_t(fr.rowEnd - fr.rowBegin) * kWarpSize;
  std::memcpy(out, w.regs.data() + size_t(fr.rowBegin) * kWarpSize, rows * 8);
  out += rows;
  for (uint32_t q = fr.predBegin; q < fr.predEnd; ++q) *out++ = w.preds[q];
  const size_t stride = p.callParamBytesPerThread, bytes = fr.paramEnd - fr.paramBegin;
  for (int l = 0; l < kWarpSize; ++l)
    std::memcpy(out + paramWords(fr) * size_t(l),
                w.callParams.data() + stride * size_t(l) + fr.paramBegin, bytes);
  out += paramWords(fr) * kWarpSize;
  std::memcpy(out, row(w, p.stackSlot), kWarpSize * 8);
}

void Executor::takeFrame(Cta& cta, Warp& w, uint32_t func, int l, const StepResult& r) {
  const Program& p = *L_.prog;
  const RecursiveFrame& fr = p.frames[p.functions[func].frame];
  uint64_t* used = row(w, p.stackSlot);
  const uint64_t base = (p.stackBase + used[l] + 15) / 16 * 16;
  if (base + fr.frameBytes > uint64_t(p.stackBase) + L_.stackBytes)
    context(cta, w, r.active, r.pc)
        .fault(l, fmt::format("the call to {} is {} recursive calls deep and overflows the "
                              "{}-byte stack of the thread ({} bytes in use, {} more needed)",
                              p.functions[func].name, w.frameSaveAt.size(), L_.stackBytes, used[l],
                              base + fr.frameBytes - p.stackBase - used[l]));
  used[l] = base + fr.frameBytes - p.stackBase;
  if (fr.frameRow != kNoPc) row(w, fr.frameRow)[l] = base;
}

void Executor::callRecursive(Cta& cta, Warp& w, const Inst& in, uint32_t mask, StepResult& r) {
  const Program& p = *L_.prog;
  const RecursiveCall& rc = p.recursiveCalls[static_cast<size_t>(in.imm)];
  saveActivation(w, rc.func);
  copyCallParams(w, mask, rc.params, rc.args, rc.argBytes);
  forEachLane(mask, [&](int l) { takeFrame(cta, w, rc.func, l, r); });
  SimtEntry e{in.target, kNoPc, mask, true, false, r.pc};
  e.recursive = true;
  w.stack.push_back(e);
}

void Executor::returnRecursive(Warp& w, size_t frame, const Inst& ret, uint32_t mask) {
  const Program& p = *L_.prog;
  const SimtEntry& e = w.stack[frame];
  const Inst& call = p.code[e.callSite];
  // The call's result variables, and the callee's.
  const std::vector<uint32_t>*rets, *returns, *retBytes;
  if (call.flow == Flow::CallIndirect) {
    const IndirectCall& ic = p.indirectCalls[call.aux];
    rets = &ic.rets;
    returns = &returningTarget(ic, ret).returns;
    retBytes = &ic.retBytes;
  } else {
    const RecursiveCall& rc = p.recursiveCalls[static_cast<size_t>(call.imm)];
    rets = &rc.rets;
    returns = &rc.returns;
    retBytes = &rc.retBytes;
  }
  const RecursiveFrame& fr = p.frames[p.functions[ret.func].frame];
  const size_t k = recursiveFramesBelow(w, frame);
  if (k >= w.frameSaveAt.size())
    throw InternalError("a recursive function returns to a call whose activation is not saved");
  const uint64_t* in = w.frameSaves.data() + w.frameSaveAt[k];
  const size_t rows = fr.rowEnd - fr.rowBegin;
  const size_t stride = p.callParamBytesPerThread, bytes = fr.paramEnd - fr.paramBegin;
  const uint64_t* preds = in + rows * kWarpSize;
  const uint64_t* params = preds + (fr.predEnd - fr.predBegin);
  const uint64_t* used = params + paramWords(fr) * kWarpSize;
  uint64_t* usedNow = row(w, p.stackSlot);
  size_t resultBytes = 0;
  for (uint32_t b : *retBytes) resultBytes += b;
  std::vector<uint8_t> results(resultBytes);
  for (int l = 0; l < kWarpSize; ++l) {
    if (!((mask >> l) & 1u)) continue;
    uint8_t* lane = w.callParams.data() + stride * size_t(l);
    // The results leave the callee's storage before its caller's activation comes back (a
    // function calling itself has its call's variables among its own).
    size_t n = 0;
    for (size_t i = 0; i < rets->size(); ++i) {
      std::memcpy(results.data() + n, lane + (*returns)[i], (*retBytes)[i]);
      n += (*retBytes)[i];
    }
    for (size_t r = 0; r < rows; ++r)
      w.regs[(fr.rowBegin + r) * kWarpSize + size_t(l)] = in[r * kWarpSize + size_t(l)];
    const uint32_t bit = 1u << l;
    for (uint32_t q = fr.predBegin; q < fr.predEnd; ++q)
      w.preds[q] = (w.preds[q] & ~bit) | (uint32_t(preds[q - fr.predBegin]) & bit);
    std::memcpy(lane + fr.paramBegin, params + paramWords(fr) * size_t(l), bytes);
    usedNow[l] = used[l];
    n = 0;
    for (size_t i = 0; i < rets->size(); ++i) {
      std::memcpy(lane + (*rets)[i], results.data() + n, (*retBytes)[i]);
      n += (*retBytes)[i];
    }
  }
  if (e.mask == 0) {  // every lane has returned: the record goes
    w.frameSaves.resize(w.frameSaveAt[k]);
    w.frameSaveAt.resize(k);
  }
}

void Executor::afterMbarrier(Cta& cta, Warp& w, StepResult& r, bool divergent, ExecStats& st) {
  if (cta.mbarrierPhaseDone) {  // a phase completed: sleeping waiters retry
    cta.mbarrierPhaseDone = false;
    for (Warp& o : cta.warps)
      if (o.state == WarpState::MbarrierWait && &o != &w) {
        o.state = WarpState::Ready;
        r.released = true;
      }
  }
  // A path of a divergent warp that waits for an mbarrier's phase may wait for lanes of its own
  // warp on another path (cuda::barrier reached from both sides of a branch): those run first,
  // as a spinning path lets them (yieldPath above), and the warp sleeps only when none can. Once
  // per change of the CTA's barriers: two paths that both wait for other warps would otherwise
  // hand the warp back and forth without end.
  if (w.state == WarpState::MbarrierWait && divergent && !w.stack.empty() &&
      w.mbarrierYieldEpoch != static_cast<uint32_t>(cta.syncEpoch)) {
    w.mbarrierYieldEpoch = static_cast<uint32_t>(cta.syncEpoch);
    if (yieldCounted(w, st)) {
      w.state = WarpState::Ready;
      return;
    }
  }
  if (w.state == WarpState::MbarrierWait) {
    r.kind = StepKind::AtBarrier;
    if (wakeIfStuck(cta)) r.released = true;
  }
}

bool Executor::wakeIfStuck(Cta& cta) {
  bool sleeping = false;
  for (const Warp& o : cta.warps) {
    if (o.state == WarpState::Ready) return false;
    sleeping = sleeping || o.state == WarpState::MbarrierWait;
  }
  if (!sleeping || cta.wokenAtEpoch == cta.syncEpoch) return false;
  cta.wokenAtEpoch = cta.syncEpoch;
  for (Warp& o : cta.warps)
    if (o.state == WarpState::MbarrierWait) o.state = WarpState::Ready;
  return true;
}

void Executor::warpFinished(Cta& cta, Warp& w, StepResult& r) {
  w.state = WarpState::Done;
  r.kind = StepKind::Exited;
  cta.liveWarps -= 1;
  // Barriers that count all live threads may now be complete.
  for (uint32_t id = 0; id < 16; ++id)
    if (cta.barriers[id].expectedThreads == 0 && tryRelease(cta, id)) r.released = true;
}

[[gnu::always_inline]] inline StepResult Executor::stepHere(Cta& cta, Warp& w, ExecStats& st,
                                                            MemRecord* rec, StepEnv* env) {
  const Program& p = *L_.prog;
  StepResult r;
  SimtEntry& top = w.stack.back();
  const uint32_t pc = top.pc;
  if (pc >= p.code.size())
    throw InternalError(fmt::format("warp {} of kernel {} has no valid pc", w.idInCta, p.name));
  const Inst& in = p.code[pc];
  uint32_t active = top.mask;
  uint32_t mask = guardedLanes(in, w, active);
  r.pc = pc;
  r.active = active;
  r.executed = mask;
  const int n = static_cast<int>(popcount32(active));
  st.warpInsts += 1;
  st.threadInsts += static_cast<uint64_t>(n);
  st.byClass[static_cast<int>(in.cls)] += 1;
  st.activeLanes[n] += 1;
  w.instructions += 1;
  if (env == nullptr) L_.clock += 1;  // shared by every SM: a step with an env leaves it alone

  switch (in.flow) {
    case Flow::Normal: {
      if (__builtin_expect(in.warpSync, 0) && active != w.live &&
          meetAtWarpSync(in, w, pc, active, mask, r, st, rec))
        return r;  // another path runs first
      if (mask) {
        ExecCtx c = context(cta, w, active, pc, rec, env);
        in.fn(c, in, mask);
        if (rec != nullptr) countAccess(L_, st, *rec, unitsMemo(env), pc);
      } else if (rec) {
        rec->mask = 0;
      }
      // (not `top`: a merge at a warp-synchronous instruction may have removed entries below it)
      SimtEntry& cur = w.stack.back();
      cur.pc = pc + 1;
      if (cur.pc == cur.rpc) reconverge(w);
      if (in.wakes) afterMbarrier(cta, w, r, active != w.live, st);
      // A path of a divergent warp that sleeps waits for something: another path of the warp
      // (the lane holding a lock, libcu++'s semaphores and barriers before sm_80 back off with
      // nanosleep while they poll) runs first, as a spinning path lets it (yieldPath above). A
      // poll that reads a clock never looks like spinning: its registers change.
      if (__builtin_expect(in.sleeps, 0) && active != w.live && !w.stack.empty())
        yieldCounted(w, st);
      return r;
    }
    case Flow::Branch: {
      st.branches += 1;
      const uint32_t taken = mask, notTaken = active & ~mask;
      if (notTaken == 0 || in.target == pc + 1) {
        gotoPc(w, in.target);
        if (in.target <= pc && taken != 0) {  // a loop's branch back (yieldPath above)
          if (active == w.live) {
            resetSpin(w);
          } else if (!w.stack.empty() && w.stack.back().pc == in.target && spinning(w, pc)) {
            yieldCounted(w, st);
          }
        }
      } else if (taken == 0) {
        gotoPc(w, pc + 1);
      } else {
        st.divergentBranches += 1;
        r.diverged = true;
        resetSpin(w);
        const uint32_t rpc = in.reconv;
        top.pc = rpc;
        if (pc + 1 != rpc) w.stack.push_back({pc + 1, rpc, notTaken, false});
        if (in.target != rpc) w.stack.push_back({in.target, rpc, taken, false});
        reconverge(w);
      }
      return r;
    }
    case Flow::BranchIndexed: {
      st.branches += 1;
      if (mask == 0) {
        gotoPc(w, pc + 1);
        return r;
      }
      const auto& table = p.branchTables[in.aux];
      uint32_t targets[kWarpSize];
      for (int l = 0; l < kWarpSize; ++l) {
        if (!((mask >> l) & 1u)) continue;
        uint32_t idx = static_cast<uint32_t>(row(w, in.src[0])[l]);
        if (idx >= table.size()) {
          ExecCtx c = context(cta, w, active, pc, rec, env);
          c.fault(l,
                  fmt::format("brx.idx index {} is outside its {}-entry table", idx, table.size()));
        }
        targets[l] = table[idx];
      }
      // Group lanes by target; lanes whose guard was false fall through.
      std::vector<std::pair<uint32_t, uint32_t>> groups;  // target, lanes
      if (active & ~mask) groups.push_back({pc + 1, active & ~mask});
      for (int l = 0; l < kWarpSize; ++l) {
        if (!((mask >> l) & 1u)) continue;
        auto it = std::find_if(groups.begin(), groups.end(),
                               [&](auto& g) { return g.first == targets[l]; });
        if (it == groups.end())
          groups.push_back({targets[l], 1u << l});
        else
          it->second |= 1u << l;
      }
      if (groups.size() == 1) {
        gotoPc(w, groups[0].first);
      } else {
        st.divergentBranches += 1;
        r.diverged = true;
        const uint32_t rpc = in.reconv;
        top.pc = rpc;
        for (auto it = groups.rbegin(); it != groups.rend(); ++it)
          if (it->first != rpc) w.stack.push_back({it->first, rpc, it->second, false});
        reconverge(w);
      }
      return r;
    }
    case Flow::Call: {
      top.pc = pc + 1;
      if (mask && in.mode == 1) {
        callRecursive(cta, w, in, mask, r);
      } else if (mask) {
        w.stack.push_back({in.target, kNoPc, mask, true});
      } else {
        reconverge(w);
      }
      return r;
    }
    case Flow::CallIndirect: {
      top.pc = pc + 1;
      if (mask) {
        callIndirect(cta, w, in, mask, r);
      } else {
        reconverge(w);
      }
      return r;
    }
    case Flow::Ret: {
      top.pc = pc + 1;
      if (mask) {
        // The returning lanes' frame is the nearest that holds them: a path that waits at a
        // warp-synchronous instruction in a call of its own may lie above it (meetAtWarpSync).
        for (size_t i = w.stack.size(); i-- > 0;) {
          const bool theirs = (w.stack[i].mask & mask) != 0;
          w.stack[i].mask &= ~mask;
          if (!w.stack[i].frame || !theirs) continue;
          if (w.stack[i].recursive)
            returnRecursive(w, i, in, mask);
          else if (w.stack[i].callSite != kNoPc)
            returnIndirect(w, p.code[w.stack[i].callSite], in, mask);
          break;
        }
      }
      reconverge(w);
      return r;
    }
    case Flow::Exit: {
      top.pc = pc + 1;
      if (mask) {
        for (auto& e : w.stack) e.mask &= ~mask;
        w.live &= ~mask;
      }
      reconverge(w);
      if (w.stack.empty()) warpFinished(cta, w, r);
      if (w.done() && wakeIfStuck(cta)) r.released = true;
      return r;
    }
    case Flow::Trap: {
      if (mask) {
        ExecCtx c = context(cta, w, active, pc, rec, env);
        c.fault(__builtin_ctz(mask), "trap instruction executed");
      }
      gotoPc(w, pc + 1);
      return r;
    }
    case Flow::Barrier: {
      if (top.mask != w.live) {
        uint32_t joined = 0;
        if (awaitSiblingsAtBarrier(p, w, pc, joined)) return r;  // another path runs to it
        SimtEntry& merged = w.stack.back();                      // the lanes here now
        mask = guardedLanes(in, w, merged.mask | joined);
        st.threadInsts += popcount32(joined);
        r.active = merged.mask | joined;
        r.executed = mask;
        merged.pc = pc + 1;
        merged.waitsAtBarrier = false;  // it arrives (a path it waited for may have exited)
      } else {
        top.pc = pc + 1;
      }
      if (mask) {
        st.barrierWaits += 1;
        arriveAtBarrier(cta, w, in, mask, r);
      }
      if (!w.stack.empty() && w.stack.back().pc == w.stack.back().rpc) reconverge(w);
      if (w.state == WarpState::AtBarrier && wakeIfStuck(cta)) r.released = true;
      return r;
    }
  }
  return r;
}

StepResult Executor::step(Cta& cta, Warp& w, ExecStats& st, MemRecord* rec, StepEnv* env) {
  return stepHere(cta, w, st, rec, env);
}

void Executor::runCta(Cta& cta, ExecStats& st, const RunBudget* budget, StepEnv* env,
                      uint64_t suspendAfter) {
  // Counting memory units or logging the accesses records every step's accesses; the plain loop
  // stays as it was.
  if (L_.countMemoryUnits || L_.accessLog != nullptr)
    runCtaLoop<true>(cta, st, budget, env, suspendAfter);
  else
    runCtaLoop<false>(cta, st, budget, env, suspendAfter);
}

// A plain instruction: it leaves the warp's SIMT stack alone and only its handler runs
// (stepHere's Flow::Normal without warp sync, sleep or wake-up).
inline bool plain(const Inst& in) {
  return in.flow == Flow::Normal && !in.warpSync && !in.wakes && !in.sleeps;
}

template <bool kRecord>
uint32_t Executor::runStraight(Cta& cta, Warp& w, ExecStats& st, StepEnv* env, uint64_t limit,
                               [[maybe_unused]] MemRecord* rec) {
  const Program& p = *L_.prog;
  SimtEntry& top = w.stack.back();
  const uint32_t start = top.pc;
  uint64_t end = std::min<uint64_t>(p.code.size(), uint64_t(start) + limit);
  if (top.rpc > start) end = std::min<uint64_t>(end, top.rpc);
  if (start >= end || !plain(p.code[start])) return 0;
  // The top path's lanes stay the same: no plain instruction touches the stack or the live lanes.
  const uint32_t active = top.mask;
  const int n = static_cast<int>(popcount32(active));
  ExecCtx c = context(cta, w, active, start, kRecord ? rec : nullptr, env);
  uint32_t pc = start;
  const auto count = [&](uint32_t ran) {
    st.warpInsts += ran;
    st.threadInsts += uint64_t(n) * ran;
    st.activeLanes[n] += ran;
    w.instructions += ran;
  };
  try {
    do {
      const Inst& in = p.code[pc];
      st.byClass[static_cast<int>(in.cls)] += 1;
      if (env == nullptr) L_.clock += 1;
      const uint32_t mask = guardedLanes(in, w, active);
      c.pc = pc;
      if constexpr (kRecord) {
        rec->mask = 0;
        if (mask) {
          in.fn(c, in, mask);
          countAccess(L_, st, *rec, unitsMemo(env), pc);
        }
        if (L_.accessLog != nullptr) L_.accessLog->record(*rec);
      } else if (mask) {
        in.fn(c, in, mask);
      }
      ++pc;
    } while (pc < end && w.state == WarpState::Ready && plain(p.code[pc]));
  } catch (...) {
    count(pc - start + 1);  // the faulting instruction counted and not passed, as step() leaves it
    top.pc = pc;
    throw;
  }
  count(pc - start);
  gotoPc(w, pc);
  return pc - start;
}

template <bool kRecord>
void Executor::runCtaLoop(Cta& cta, ExecStats& st, const RunBudget* budget, StepEnv* env,
                          uint64_t suspendAfter) {
  // Host checks (clock, interrupt flag) every kHostCheck warp instructions. Written out here:
  // with cooperative_ctas.cpp's HostCheck object in this loop instead, GCC stopped inlining
  // step() into it (a call per warp instruction; docs/performance.md). The suspension's count
  // shares the check's comparison.
  constexpr uint64_t kHostCheck = 4096;
  constexpr uint32_t kWarpTurn = 1024;
  const bool limited = budget != nullptr && budget->active();
  const uint64_t suspendAt = suspendAfter != 0 ? st.warpInsts + suspendAfter : ~0ull;
  auto nextCheckAt = [&] {
    const uint64_t at =
        limited ? st.warpInsts + std::min(kHostCheck, budget->instructionsLeft(st.warpInsts))
                : ~0ull;
    return std::min(at, suspendAt);
  };
  uint64_t checkAt = nextCheckAt();
  st.ctas += 1;
  [[maybe_unused]] MemRecord rec;  // kRecord
  while (cta.liveWarps > 0) {
    bool progress = false;
    for (Warp& w : cta.warps) {
      // A warp runs until it blocks, sleeps (nanosleep ends its turn), or for kWarpTurn
      // instructions: then the others take their turns, so a warp that spins on shared memory
      // for another warp of its block (cooperative groups' tiles of several warps sync that way,
      // cuda::barrier before sm_80 polls before it sleeps) lets that warp get there. A turn of
      // 1,024 bounds what such a poll wastes; a change of warp is one pass of this loop, which
      // costs nothing measurable at that length (the catalog's functional bench).
      for (uint32_t turn = 0; turn < kWarpTurn && w.state == WarpState::Ready;) {
        if (st.warpInsts >= checkAt) {
          if (st.warpInsts >= suspendAt) return;  // not ended: runTogether takes it on
          if (auto stop = budget->check(0, st.warpInsts))
            throw RunStopped(*stop, budget->message(*stop, 0, st.warpInsts));
          checkAt = nextCheckAt();
        }
        progress = true;
        // Straight-line instructions in one go, within the turn and up to the next check.
        const uint64_t room = std::min<uint64_t>(kWarpTurn - turn, checkAt - st.warpInsts);
        if (const uint32_t ran = runStraight<kRecord>(cta, w, st, env, room, &rec); ran != 0) {
          turn += ran;
          continue;
        }
        ++turn;
        if constexpr (kRecord) {  // every step records its accesses, to count or log them
          rec.mask = 0;
          stepHere(cta, w, st, &rec, env);
          if (L_.accessLog != nullptr) L_.accessLog->record(rec);
        } else {
          stepHere(cta, w, st, nullptr, env);
        }
      }
      if (w.state == WarpState::Yielded) w.state = WarpState::Ready;
    }
    if (!progress) throwDeadlock(cta);
  }
}

void Executor::throwDeadlock(const Cta& cta) const {
  std::string where;
  for (const Warp& w : cta.warps) {
    if (w.state == WarpState::AtBarrier)
      where += fmt::format(" warp {} at barrier {} ({});", w.idInCta, w.barrierId,
                           L_.prog->info[w.pc() - 1].loc.str());
    if (w.state == WarpState::MbarrierWait)
      where += fmt::format(" warp {} waits for an mbarrier phase ({});", w.idInCta,
                           L_.prog->info[w.pc() - 1].loc.str());
  }
  throw KernelFault(
      fmt::format("deadlock in kernel {} block ({},{},{}): every live warp waits at a barrier "
                  "that cannot complete:{}",
                  L_.prog->name, cta.ctaid.x, cta.ctaid.y, cta.ctaid.z, where));
}

}  // namespace gpusc::func
