#include "shader/analysis.hpp"

#include <algorithm>

namespace gpusc::shader {

namespace {

void use(std::vector<uint8_t>& live, const Operand& o, uint8_t mask) {
  if (o.file == File::Temp && o.index < live.size()) live[o.index] |= mask;
}

// One instruction, backwards: kill what it writes, then add what it reads.
void step(std::vector<uint8_t>& live, const Instr& in) {
  if (in.dst.file == File::Temp && in.dst.index < live.size())
    live[in.dst.index] &= uint8_t(~in.dst.mask);
  for (int s = 0; s < in.sources(); ++s) use(live, in.src[size_t(s)], in.readMask(s));
}

std::vector<uint8_t> liveBeforeTerminator(const Block& b, const std::vector<uint8_t>& out) {
  std::vector<uint8_t> live = out;
  if (b.term.kind == TermKind::Branch) use(live, b.term.cond, uint8_t(1u << b.term.cond.swz[0]));
  return live;
}

int count(const std::vector<uint8_t>& live) {
  int n = 0;
  for (uint8_t m : live) n += m != 0;
  return n;
}

}  // namespace

Liveness liveness(const Program& p) {
  const size_t n = p.blocks.size(), regs = p.temporaryCount();
  Liveness l;
  l.in.assign(n, std::vector<uint8_t>(regs, 0));
  l.out = l.in;
  bool changed = true;
  while (changed) {
    changed = false;
    for (size_t b = n; b-- > 0;) {
      const Block& blk = p.blocks[b];
      std::vector<uint8_t> out(regs, 0);
      for (int s : blk.successors())
        for (size_t r = 0; r < regs; ++r) out[r] |= l.in[size_t(s)][r];
      std::vector<uint8_t> live = liveBeforeTerminator(blk, out);
      for (size_t k = blk.code.size(); k-- > 0;) step(live, blk.code[k]);
      if (out != l.out[b] || live != l.in[b]) {
        l.out[b] = std::move(out);
        l.in[b] = std::move(live);
        changed = true;
      }
    }
  }
  return l;
}

std::vector<int> blockPressure(const Program& p, const Liveness& l, int b) {
  const Block& blk = p.blocks[size_t(b)];
  std::vector<int> pr(blk.code.size() + 1, 0);
  std::vector<uint8_t> live = liveBeforeTerminator(blk, l.out[size_t(b)]);
  pr[blk.code.size()] = count(live);
  for (size_t k = blk.code.size(); k-- > 0;) {
    step(live, blk.code[k]);
    pr[k] = count(live);
  }
  return pr;
}

int maxPressure(const Program& p) {
  const Liveness l = liveness(p);
  int m = 0;
  for (size_t b = 0; b < p.blocks.size(); ++b)
    for (int x : blockPressure(p, l, int(b))) m = std::max(m, x);
  return m;
}

int tunnel(const std::vector<int>& pressure, int registers, int from, int to) {
  int m = 0;
  for (int k = std::max(from, 0); k <= to && k < int(pressure.size()); ++k)
    m = std::max(m, pressure[size_t(k)]);
  return registers - m;
}

Cfg analyseCfg(const Program& p) {
  const size_t n = p.blocks.size();
  Cfg c;
  if (n == 0) return c;  // no block: nothing to analyse (checkProgram rejects such programs)
  c.succ.resize(n);
  c.pred.resize(n);
  for (size_t b = 0; b < n; ++b) {
    c.succ[b] = p.blocks[b].successors();
    for (int s : c.succ[b]) c.pred[size_t(s)].push_back(int(b));
  }
  // Reachability from the entry.
  c.reachable.assign(n, false);
  std::vector<int> work{0};
  while (!work.empty()) {
    int b = work.back();
    work.pop_back();
    if (c.reachable[size_t(b)]) continue;
    c.reachable[size_t(b)] = true;
    for (int s : c.succ[size_t(b)]) work.push_back(s);
  }
  // Dominators: iterative over bit vectors (shader programs have few blocks).
  c.dom.assign(n, std::vector<bool>(n, true));
  c.dom[0].assign(n, false);
  c.dom[0][0] = true;
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t b = 1; b < n; ++b) {
      std::vector<bool> d(n, true);
      bool any = false;
      for (int q : c.pred[b]) {
        if (!c.reachable[size_t(q)]) continue;
        any = true;
        for (size_t k = 0; k < n; ++k) d[k] = d[k] && c.dom[size_t(q)][k];
      }
      if (!any) d.assign(n, false);
      d[b] = true;
      if (d != c.dom[b]) {
        c.dom[b] = std::move(d);
        changed = true;
      }
    }
  }
  // Post-dominators, with a virtual exit after every end/kil block.
  c.postdom.assign(n, std::vector<bool>(n, true));
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t b = n; b-- > 0;) {
      std::vector<bool> d(n, true);
      if (c.succ[b].empty()) d.assign(n, false);
      for (int s : c.succ[b])
        for (size_t k = 0; k < n; ++k) d[k] = d[k] && c.postdom[size_t(s)][k];
      d[b] = true;
      if (d != c.postdom[b]) {
        c.postdom[b] = std::move(d);
        changed = true;
      }
    }
  }
  // Descendants: reachable through at least one edge.
  c.desc.assign(n, std::vector<bool>(n, false));
  for (size_t b = 0; b < n; ++b) {
    std::vector<int> w(c.succ[b].begin(), c.succ[b].end());
    while (!w.empty()) {
      int x = w.back();
      w.pop_back();
      if (c.desc[b][size_t(x)]) continue;
      c.desc[b][size_t(x)] = true;
      for (int s : c.succ[size_t(x)]) w.push_back(s);
    }
  }
  // Loop depth: a block is in the natural loop of back edge s -> h (h dominates s) when h
  // dominates it and it reaches s without passing h.
  c.loopDepth.assign(n, 0);
  for (size_t s = 0; s < n; ++s)
    for (int h : c.succ[s]) {
      if (!c.dom[s][size_t(h)]) continue;
      std::vector<bool> in(n, false);
      in[size_t(h)] = true;
      std::vector<int> w{int(s)};
      while (!w.empty()) {
        int x = w.back();
        w.pop_back();
        if (in[size_t(x)]) continue;
        in[size_t(x)] = true;
        for (int q : c.pred[size_t(x)]) w.push_back(q);
      }
      for (size_t b = 0; b < n; ++b) c.loopDepth[b] += in[b];
    }
  return c;
}

}  // namespace gpusc::shader
