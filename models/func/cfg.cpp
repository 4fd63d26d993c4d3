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

uint32_t estimateRegisters(const Program& p, const std::vector<uint8_t>& widths) {
  const size_t words = (p.numRegSlots + 63) / 64;
  auto liveMax = [&](const FunctionInfo& f) {
    auto blocks = buildBlocks(p, f);
    const size_t n = blocks.size();
    std::vector<std::vector<uint64_t>> liveIn(n, std::vector<uint64_t>(words, 0));
    auto liveOutOf = [&](size_t i, std::vector<uint64_t>& out) {
      std::fill(out.begin(), out.end(), 0);
      for (uint32_t s : blocks[i].succs)
        if (s != kExitBlock)
          for (size_t w = 0; w < words; ++w) out[w] |= liveIn[s][w];
    };
    std::vector<uint64_t> live(words);
    auto step = [&](uint32_t pc) {
      const InstInfo& ii = p.info[pc];
      if (p.code[pc].guard < 0)
        for (uint32_t s : ii.regWrites) live[s / 64] &= ~(1ull << (s % 64));
      for (uint32_t s : ii.regReads) live[s / 64] |= 1ull << (s % 64);
    };
    bool changed = true;
    while (changed) {
      changed = false;
      for (size_t i = n; i-- > 0;) {
        liveOutOf(i, live);
        for (uint32_t pc = blocks[i].end; pc-- > blocks[i].begin;) step(pc);
        if (live != liveIn[i]) {
          liveIn[i] = live;
          changed = true;
        }
      }
    }
    uint32_t best = 0;
    auto units = [&]() {
      uint32_t u = 0;
      for (size_t w = 0; w < words; ++w) {
        uint64_t bits = live[w];
        while (bits) {
          int b = __builtin_ctzll(bits);
          bits &= bits - 1;
          u += widths[w * 64 + b];
        }
      }
      return u;
    };
    for (size_t i = 0; i < n; ++i) {
      liveOutOf(i, live);
      best = std::max(best, units());
      for (uint32_t pc = blocks[i].end; pc-- > blocks[i].begin;) {
        step(pc);
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

}  // namespace gpusc::func
