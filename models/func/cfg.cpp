#include "func/cfg.hpp"

#include <algorithm>
#include <map>

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/dominator_tree.hpp>

namespace gpusc::func {

std::vector<BasicBlock> buildBlocks(const Program& p, const FunctionInfo& f) {
  const uint32_t b = f.begin, e = f.end;
  std::vector<char> leader(e - b + 1, 0);
  leader[0] = 1;
  auto mark = [&](uint32_t pc) {
    if (pc >= b && pc < e) leader[pc - b] = 1;
  };
  for (uint32_t pc = b; pc < e; ++pc) {
    const Inst& x = p.code[pc];
    switch (x.flow) {
      case Flow::Branch:
        mark(x.target);
        mark(pc + 1);
        break;
      case Flow::BranchIndexed:
        for (uint32_t t : p.branchTables[x.aux]) mark(t);
        mark(pc + 1);
        break;
      case Flow::Ret:
      case Flow::Exit:
      case Flow::Trap:
        mark(pc + 1);
        break;
      default:
        break;
    }
  }
  std::vector<BasicBlock> blocks;
  std::map<uint32_t, uint32_t> blockAt;
  for (uint32_t pc = b; pc < e; ++pc) {
    if (leader[pc - b]) {
      if (!blocks.empty()) blocks.back().end = pc;
      blockAt[pc] = static_cast<uint32_t>(blocks.size());
      blocks.push_back({pc, e, {}});
    }
  }
  auto blockOf = [&](uint32_t pc) { return pc >= e ? kExitBlock : blockAt.at(pc); };
  for (auto& blk : blocks) {
    const Inst& x = p.code[blk.end - 1];
    const bool guarded = x.guard >= 0;
    auto add = [&](uint32_t s) {
      if (std::find(blk.succs.begin(), blk.succs.end(), s) == blk.succs.end())
        blk.succs.push_back(s);
    };
    switch (x.flow) {
      case Flow::Branch:
        add(blockOf(x.target));
        if (guarded) add(blockOf(blk.end));
        break;
      case Flow::BranchIndexed:
        for (uint32_t t : p.branchTables[x.aux]) add(blockOf(t));
        if (guarded) add(blockOf(blk.end));
        break;
      case Flow::Ret:
      case Flow::Exit:
      case Flow::Trap:
        add(kExitBlock);
        if (guarded) add(blockOf(blk.end));
        break;
      default:
        add(blockOf(blk.end));
        break;
    }
  }
  return blocks;
}

std::vector<uint32_t> immediatePostDominators(const std::vector<BasicBlock>& blocks) {
  using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::bidirectionalS>;
  using Vertex = boost::graph_traits<Graph>::vertex_descriptor;
  const size_t n = blocks.size();
  const size_t exitV = n;
  // Reverse graph rooted at the virtual exit: post-dominators are its dominators.
  Graph g(n + 1);
  std::vector<std::vector<size_t>> preds(n + 1);
  for (size_t i = 0; i < n; ++i)
    for (uint32_t s : blocks[i].succs) {
      size_t t = s == kExitBlock ? exitV : s;
      boost::add_edge(t, i, g);
      preds[t].push_back(i);
    }
  // Blocks that cannot reach the exit (endless loops) are given an edge to it, so every block
  // has a post-dominator.
  std::vector<char> reaches(n + 1, 0);
  std::vector<size_t> work{exitV};
  reaches[exitV] = 1;
  while (!work.empty()) {
    size_t v = work.back();
    work.pop_back();
    for (size_t p : preds[v])
      if (!reaches[p]) {
        reaches[p] = 1;
        work.push_back(p);
      }
  }
  for (size_t i = n; i-- > 0;) {
    if (reaches[i]) continue;
    boost::add_edge(exitV, i, g);
    // Everything that reaches i now reaches the exit.
    std::vector<size_t> w{i};
    reaches[i] = 1;
    while (!w.empty()) {
      size_t v = w.back();
      w.pop_back();
      for (size_t p : preds[v])
        if (!reaches[p]) {
          reaches[p] = 1;
          w.push_back(p);
        }
    }
  }
  std::vector<Vertex> idom(n + 1, boost::graph_traits<Graph>::null_vertex());
  auto index = boost::get(boost::vertex_index, g);
  auto idomMap = boost::make_iterator_property_map(idom.begin(), index);
  boost::lengauer_tarjan_dominator_tree(g, boost::vertex(exitV, g), idomMap);
  std::vector<uint32_t> out(n, kExitBlock);
  for (size_t i = 0; i < n; ++i) {
    Vertex d = idom[i];
    out[i] = (d == boost::graph_traits<Graph>::null_vertex() || d == exitV)
                 ? kExitBlock
                 : static_cast<uint32_t>(d);
  }
  return out;
}

void computeReconvergence(Program& p, const FunctionInfo& f) {
  auto blocks = buildBlocks(p, f);
  auto ipdom = immediatePostDominators(blocks);
  for (size_t i = 0; i < blocks.size(); ++i) {
    Inst& x = p.code[blocks[i].end - 1];
    if (x.flow == Flow::Branch || x.flow == Flow::BranchIndexed)
      x.reconv = ipdom[i] == kExitBlock ? kNoPc : blocks[ipdom[i]].begin;
  }
}

namespace {

// Per-thread register liveness of one function, as bit sets over PTX register numbers.
// Predicated writes do not end a live range: a lane whose predicate is false keeps the old value.
class Liveness {
 public:
  Liveness(const Program& p, const FunctionInfo& f)
      : p_(p), blocks_(buildBlocks(p, f)), words_((p.numRegSlots + 63) / 64) {
    const size_t n = blocks_.size();
    liveIn_.assign(n, std::vector<uint64_t>(words_, 0));
    std::vector<uint64_t> live(words_);
    bool changed = true;
    while (changed) {
      changed = false;
      for (size_t i = n; i-- > 0;) {
        liveOut(i, live);
        for (uint32_t pc = blocks_[i].end; pc-- > blocks_[i].begin;) step(pc, live);
        if (live != liveIn_[i]) {
          liveIn_[i] = live;
          changed = true;
        }
      }
    }
  }

  const std::vector<BasicBlock>& blocks() const { return blocks_; }
  size_t words() const { return words_; }
  // Registers live at the function's entry (read before any write on some path).
  const std::vector<uint64_t>& atEntry() const { return liveIn_.at(0); }

  // The registers live after block i.
  void liveOut(size_t i, std::vector<uint64_t>& out) const {
    std::fill(out.begin(), out.end(), 0);
    for (uint32_t s : blocks_[i].succs)
      if (s != kExitBlock)
        for (size_t w = 0; w < words_; ++w) out[w] |= liveIn_[s][w];
  }
  // Turns the registers live after `pc` into those live before it.
  void step(uint32_t pc, std::vector<uint64_t>& live) const {
    const InstInfo& ii = p_.info[pc];
    if (p_.code[pc].guard < 0)
      for (uint32_t s : ii.regWrites) live[s / 64] &= ~(1ull << (s % 64));
    for (uint32_t s : ii.regReads) live[s / 64] |= 1ull << (s % 64);
  }

 private:
  const Program& p_;
  std::vector<BasicBlock> blocks_;
  size_t words_;
  std::vector<std::vector<uint64_t>> liveIn_;
};

}  // namespace

uint32_t estimateRegisters(const Program& p, const std::vector<uint8_t>& widths) {
  auto liveMax = [&](const FunctionInfo& f) {
    const Liveness lv(p, f);
    std::vector<uint64_t> live(lv.words());
    uint32_t best = 0;
    auto units = [&]() {
      uint32_t u = 0;
      for (size_t w = 0; w < live.size(); ++w) {
        uint64_t bits = live[w];
        while (bits) {
          int b = __builtin_ctzll(bits);
          bits &= bits - 1;
          u += widths[w * 64 + b];
        }
      }
      return u;
    };
    for (size_t i = 0; i < lv.blocks().size(); ++i) {
      lv.liveOut(i, live);
      best = std::max(best, units());
      for (uint32_t pc = lv.blocks()[i].end; pc-- > lv.blocks()[i].begin;) {
        lv.step(pc, live);
        best = std::max(best, units());
      }
    }
    return best;
  };
  uint32_t entry = 0, callee = 0;
  for (const auto& f : p.functions)
    (f.isEntry ? entry : callee) = std::max(f.isEntry ? entry : callee, liveMax(f));
  return entry + callee;
}

std::vector<uint32_t> shareRegisterRows(const Program& p,
                                        const std::vector<uint32_t>& firstRegOfFunction,
                                        uint32_t& numRows,
                                        std::vector<uint32_t>* firstRowOfFunction) {
  // Past this many registers named in one function, its registers keep a row each: the
  // interference matrix grows as the square (8,192 registers: 8 MB).
  constexpr uint32_t kMaxColoured = 8192;
  std::vector<uint32_t> rowOf(p.numRegSlots, 0);
  numRows = 0;
  if (firstRowOfFunction) firstRowOfFunction->clear();
  for (size_t fi = 0; fi < p.functions.size(); ++fi) {
    if (firstRowOfFunction) firstRowOfFunction->push_back(numRows);
    const FunctionInfo& f = p.functions[fi];
    const uint32_t rb = firstRegOfFunction.at(fi), re = firstRegOfFunction.at(fi + 1);
    // The function's registers its instructions name, numbered densely. A declared register no
    // instruction names needs no row (nothing reads or writes it; `.reg .b32 %r<N>` declares
    // many such).
    std::vector<uint32_t> local(re - rb, UINT32_MAX), named;
    auto mine = [&](uint32_t r) { return r >= rb && r < re; };
    for (uint32_t pc = f.begin; pc < f.end; ++pc)
      for (const auto* list : {&p.info[pc].regReads, &p.info[pc].regWrites})
        for (uint32_t r : *list)
          if (mine(r) && local[r - rb] == UINT32_MAX) {
            local[r - rb] = uint32_t(named.size());
            named.push_back(r);
          }
    const uint32_t n = uint32_t(named.size());
    if (n > kMaxColoured) {
      for (uint32_t a = 0; a < n; ++a) rowOf[named[a]] = numRows + a;
      numRows += n;
      continue;
    }
    const Liveness lv(p, f);
    const size_t words = lv.words(), nw = (n + 63) / 64;
    // Interference of the named registers (dense numbers), n x n bits.
    std::vector<uint64_t> adj(size_t(n) * nw, 0);
    auto edge = [&](uint32_t a, uint32_t b) {
      if (!mine(a) || !mine(b) || a == b) return;
      a = local[a - rb];
      b = local[b - rb];
      adj[size_t(a) * nw + b / 64] |= 1ull << (b % 64);
      adj[size_t(b) * nw + a / 64] |= 1ull << (a % 64);
    };
    std::vector<uint64_t> live(words);
    for (size_t i = 0; i < lv.blocks().size(); ++i) {
      lv.liveOut(i, live);
      for (uint32_t pc = lv.blocks()[i].end; pc-- > lv.blocks()[i].begin;) {
        const InstInfo& ii = p.info[pc];
        for (uint32_t w : ii.regWrites) {
          // A write interferes with every register live after it, and with the instruction's
          // other operands: a handler may read a source after writing a destination (another
          // lane's, for cross-lane operations), or write its destinations in any order.
          for (size_t k = 0; k < words; ++k)
            for (uint64_t bits = live[k]; bits; bits &= bits - 1)
              edge(w, uint32_t(k * 64 + __builtin_ctzll(bits)));
          for (uint32_t r : ii.regReads) edge(w, r);
          for (uint32_t r : ii.regWrites) edge(w, r);
        }
        lv.step(pc, live);
      }
    }
    // Registers live at entry are read before they are written (they read 0 in the entry, or
    // the previous call's value in a function): each keeps a row of its own.
    std::vector<uint32_t> colour(n, UINT32_MAX);
    std::vector<char> exclusive;
    uint32_t colours = 0;
    for (uint32_t a = 0; a < n; ++a)
      if ((lv.atEntry()[named[a] / 64] >> (named[a] % 64)) & 1u) {
        colour[a] = colours++;
        exclusive.push_back(1);
      }
    // Greedy colouring in the order the registers are first named: the lowest row no
    // interfering register holds.
    std::vector<uint32_t> takenBy(colours, UINT32_MAX);
    for (uint32_t a = 0; a < n; ++a) {
      if (colour[a] != UINT32_MAX) continue;
      for (size_t k = 0; k < nw; ++k)
        for (uint64_t bits = adj[size_t(a) * nw + k]; bits; bits &= bits - 1) {
          const uint32_t b = uint32_t(k * 64 + __builtin_ctzll(bits));
          if (colour[b] != UINT32_MAX) takenBy[colour[b]] = a;
        }
      uint32_t c = 0;
      while (c < colours && (exclusive[c] || takenBy[c] == a)) ++c;
      if (c == colours) {
        ++colours;
        exclusive.push_back(0);
        takenBy.push_back(UINT32_MAX);
      }
      colour[a] = c;
    }
    // Each function has rows of its own, so a call keeps its caller's values.
    for (uint32_t a = 0; a < n; ++a) rowOf[named[a]] = numRows + colour[a];
    numRows += colours;
  }
  if (firstRowOfFunction) firstRowOfFunction->push_back(numRows);
  return rowOf;
}

}  // namespace gpusc::func
