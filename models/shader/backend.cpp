#include "shader/backend.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <set>

#include <fmt/format.h>

#include "common/error.hpp"
#include "shader/analysis.hpp"

namespace gpusc::shader {

namespace {

void forTemps(Instr& in, const std::function<void(uint16_t&)>& f) {
  if (in.dst.file == File::Temp) f(in.dst.index);
  for (int s = 0; s < in.sources(); ++s)
    if (in.src[size_t(s)].file == File::Temp) f(in.src[size_t(s)].index);
}

}  // namespace

AllocationResult allocateRegisters(Program& p, int temporaries, int outputEntries) {
  AllocationResult res;
  const size_t n = p.temporaryCount();
  const Liveness live = liveness(p);
  const Cfg cfg = analyseCfg(p);
  std::vector<std::set<size_t>> adj(n);
  std::vector<double> cost(n, 0.0);
  std::vector<bool> present(n, false);
  auto edge = [&](size_t a, size_t b) {
    if (a == b) return;
    adj[a].insert(b);
    adj[b].insert(a);
  };
  for (size_t b = 0; b < p.blocks.size(); ++b) {
    Block& blk = p.blocks[b];
    const double weight = std::pow(10.0, std::min(cfg.loopDepth[b], 6));
    std::vector<uint8_t> l = live.out[b];
    if (blk.term.kind == TermKind::Branch && blk.term.cond.file == File::Temp) {
      l[blk.term.cond.index] |= uint8_t(1u << blk.term.cond.swz[0]);
      cost[blk.term.cond.index] += weight;
      present[blk.term.cond.index] = true;
    }
    for (size_t k = blk.code.size(); k-- > 0;) {
      Instr& in = blk.code[k];
      forTemps(in, [&](uint16_t& t) {
        cost[t] += weight;
        present[t] = true;
      });
      if (in.dst.file == File::Temp) {
        for (size_t u = 0; u < n; ++u)
          if (l[u]) edge(in.dst.index, u);
        l[in.dst.index] &= uint8_t(~in.dst.mask);
      }
      for (int s = 0; s < in.sources(); ++s)
        if (in.src[size_t(s)].file == File::Temp) l[in.src[size_t(s)].index] |= in.readMask(s);
    }
    // Values live into the block (some may have no definition on a path) overlap.
    for (size_t u = 0; u < n; ++u)
      for (size_t w = u + 1; w < n && live.in[b][u]; ++w)
        if (live.in[b][w]) edge(u, w);
  }
  res.requirement = maxPressure(p);

  // Chaitin-style simplification with `temporaries` colours; the cheapest node per neighbour is
  // set aside for the output buffer when nothing can be simplified.
  const size_t K = size_t(temporaries);
  std::vector<size_t> degree(n);
  std::vector<bool> removed(n, false), spill(n, false);
  std::vector<size_t> stack;
  for (size_t v = 0; v < n; ++v) degree[v] = adj[v].size();
  size_t left = 0;
  for (size_t v = 0; v < n; ++v) left += present[v];
  for (size_t v = 0; v < n; ++v)
    if (!present[v]) removed[v] = true;
  auto remove = [&](size_t v) {
    removed[v] = true;
    --left;
    for (size_t u : adj[v])
      if (!removed[u]) --degree[u];
  };
  while (left > 0) {
    bool any = false;
    for (size_t v = 0; v < n; ++v)
      if (!removed[v] && degree[v] < K) {
        stack.push_back(v);
        remove(v);
        any = true;
      }
    if (any) continue;
    size_t best = n;
    double bestScore = 0;
    for (size_t v = 0; v < n; ++v) {
      if (removed[v]) continue;
      const double score = cost[v] / double(std::max<size_t>(1, degree[v]));
      if (best == n || score < bestScore) {
        best = v;
        bestScore = score;
      }
    }
    stack.push_back(best);  // optimistic: it may still get a colour
    remove(best);
  }
  std::vector<int> colour(n, -1);
  while (!stack.empty()) {
    const size_t v = stack.back();
    stack.pop_back();
    std::vector<bool> used(K, false);
    for (size_t u : adj[v])
      if (!spill[u] && colour[u] >= 0) used[size_t(colour[u])] = true;
    for (size_t c = 0; c < K; ++c)
      if (!used[c]) {
        colour[v] = int(c);
        break;
      }
    if (colour[v] < 0) spill[v] = true;
  }
  // Spilled temporaries go to output entries that nothing else uses.
  std::vector<bool> taken(size_t(outputEntries), false);
  auto take = [&](int idx, int count) {
    for (int k = idx; k < idx + count && k < outputEntries; ++k) taken[size_t(k)] = true;
  };
  for (const auto& b : p.outputs) take(b.index, b.entries);
  for (const auto& blk : p.blocks)
    for (const auto& in : blk.code) {
      if (in.dst.file == File::Output) take(in.dst.index, 1);
      for (int s = 0; s < in.sources(); ++s)
        if (in.src[size_t(s)].file == File::Output) take(in.src[size_t(s)].index, 1);
    }
  std::vector<int> slot(n, -1);
  for (size_t v = 0; v < n; ++v) {
    if (!spill[v]) continue;
    ++res.spilled;
    std::vector<bool> busy = taken;
    for (size_t u : adj[v])
      if (spill[u] && slot[u] >= 0) busy[size_t(slot[u])] = true;
    for (int o = 0; o < outputEntries; ++o)
      if (!busy[size_t(o)]) {
        slot[v] = o;
        break;
      }
    if (slot[v] < 0)
      throw InputError(fmt::format(
          "{}: register allocation failed: the program needs {} registers, the core has {} "
          "temporaries and no free output-buffer entry left to spill to",
          p.name, res.requirement, temporaries));
  }
  auto rewrite = [&](File& f, uint16_t& idx) {
    if (f != File::Temp) return;
    if (spill[idx]) {
      f = File::Output;
      idx = uint16_t(slot[idx]);
    } else {
      idx = uint16_t(std::max(colour[idx], 0));
    }
  };
  for (auto& blk : p.blocks) {
    for (auto& in : blk.code) {
      rewrite(in.dst.file, in.dst.index);
      for (int s = 0; s < in.sources(); ++s)
        rewrite(in.src[size_t(s)].file, in.src[size_t(s)].index);
    }
    if (blk.term.kind == TermKind::Branch) rewrite(blk.term.cond.file, blk.term.cond.index);
    // Copies whose two ends got the same register (the SSA front end's phi copies) vanish.
    blk.code.erase(std::remove_if(blk.code.begin(), blk.code.end(),
                                  [](const Instr& in) {
                                    return in.op == Op::Mov && in.src[0].identity() &&
                                           in.src[0].sameRegister(in.dst.file, in.dst.index);
                                  }),
                   blk.code.end());
  }
  p.allocated = true;
  return res;
}

void bundle(Program& p) {
  auto independent = [](const Instr& a, const Instr& b) {
    if (reads(b, a.dst.file, a.dst.index) || writes(b, a.dst.file, a.dst.index)) return false;
    const Unit ua = opInfo(a.op).unit, ub = opInfo(b.op).unit;
    return ua == Unit::Alu || ub == Unit::Alu || ua != ub;
  };
  for (size_t bi = 0; bi < p.blocks.size(); ++bi) {
    Block& blk = p.blocks[bi];
    for (auto& in : blk.code) in.pairNext = false;
    blk.term.pairPrev = false;
    size_t k = 0;
    while (k + 1 < blk.code.size()) {
      if (independent(blk.code[k], blk.code[k + 1])) {
        blk.code[k].pairNext = true;
        k += 2;
      } else {
        k += 1;
      }
    }
    // The branch word joins an unpaired last instruction it does not depend on.
    const bool lastFree =
        !blk.code.empty() && (blk.code.size() == 1 || !blk.code[blk.code.size() - 2].pairNext);
    if (lastFree && branchWords(blk.term, int(bi)) > 0) {
      const Instr& last = blk.code.back();
      const bool dep = blk.term.kind == TermKind::Branch &&
                       blk.term.cond.sameRegister(last.dst.file, last.dst.index);
      blk.term.pairPrev = !dep;
    }
  }
  p.bundled = true;
}

}  // namespace gpusc::shader
