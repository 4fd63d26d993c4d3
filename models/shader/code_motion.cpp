#include "shader/code_motion.hpp"

#include <algorithm>
#include <functional>
#include <set>

#include <fmt/format.h>

#include "shader/analysis.hpp"

namespace gpusc::shader {

namespace {

bool isDto(const Instr& i, Buffer b) { return b == Buffer::Input ? isInputDto(i) : isOutputDto(i); }

bool accesses(const Instr& x, File f, uint16_t idx) {
  return reads(x, f, idx) || writes(x, f, idx);
}

// Moving DTO `d` across instruction `x` changes nothing when `x` neither touches what `d` writes
// nor writes what `d` reads.
bool conflicts(const Instr& d, const Instr& x) {
  if (accesses(x, d.dst.file, d.dst.index)) return true;
  return writes(x, d.src[0].file, d.src[0].index);
}

bool conflictsTerm(const Instr& d, const Terminator& t) {
  return t.kind == TermKind::Branch && t.cond.sameRegister(d.dst.file, d.dst.index);
}

void renameUses(Program& p, uint16_t from, uint16_t to) {
  for (auto& b : p.blocks) {
    for (auto& i : b.code)
      for (int s = 0; s < i.sources(); ++s)
        if (i.src[size_t(s)].sameRegister(File::Temp, from)) i.src[size_t(s)].index = to;
    if (b.term.kind == TermKind::Branch && b.term.cond.sameRegister(File::Temp, from))
      b.term.cond.index = to;
  }
}

// Every definition of temporary t.
std::vector<const Instr*> defsOf(const Program& p, uint16_t t) {
  std::vector<const Instr*> out;
  for (const auto& b : p.blocks)
    for (const auto& i : b.code)
      if (writes(i, File::Temp, t)) out.push_back(&i);
  return out;
}

// Redundant input DTO `later` (same source as `earlier`, which comes first in its block) can be
// removed and its temporary renamed when it is the temporary's only definition and every
// definition of `earlier`'s temporary loads the same input (so it holds that input wherever it is
// defined).
bool canMerge(const Program& p, const Instr& earlier, const Instr& later) {
  if (defsOf(p, later.dst.index).size() != 1) return false;
  for (const Instr* d : defsOf(p, earlier.dst.index))
    if (!isInputDto(*d) || d->src[0].index != earlier.src[0].index) return false;
  return true;
}

std::vector<int> pressureOf(const Program& p, int b) { return blockPressure(p, liveness(p), b); }

// Moves code[from, from + n) to start at `to` (to < from) or to end just before `to` (to > from).
void moveRange(std::vector<Instr>& code, size_t from, size_t n, size_t to) {
  std::vector<Instr> run(code.begin() + long(from), code.begin() + long(from + n));
  code.erase(code.begin() + long(from), code.begin() + long(from + n));
  if (to > from) to -= n;
  code.insert(code.begin() + long(to), run.begin(), run.end());
}

bool crossesFreely(const std::vector<Instr>& code, size_t cFrom, size_t n, size_t lo, size_t hi) {
  for (size_t k = lo; k < hi; ++k)
    for (size_t d = cFrom; d < cFrom + n; ++d)
      if (conflicts(code[d], code[k])) return false;
  return true;
}

// Runs of DTOs in a block: [start, end).
std::vector<std::pair<size_t, size_t>> dtoRuns(const Block& blk, Buffer b, bool eachAlone) {
  std::vector<std::pair<size_t, size_t>> runs;
  for (size_t k = 0; k < blk.code.size(); ++k) {
    if (!isDto(blk.code[k], b)) continue;
    if (!eachAlone && !runs.empty() && runs.back().second == k)
      runs.back().second = k + 1;
    else
      runs.push_back({k, k + 1});
  }
  return runs;
}

void localInput(Program& p, int b, int R) {
  Block& blk = p.blocks[size_t(b)];
  // Lines 2-8: redundant DTOs, traversed backwards.
  for (size_t i = blk.code.size(); i-- > 0;) {
    if (!isInputDto(blk.code[i])) continue;
    // The last DTO before I_i that transfers the same input.
    size_t j = i;
    while (j-- > 0)
      if (isInputDto(blk.code[j]) && blk.code[j].src[0].index == blk.code[i].src[0].index) break;
    if (j == size_t(-1)) continue;
    const auto pr = pressureOf(p, b);
    if (tunnel(pr, R, int(j) + 1, int(i)) <= 0 || !canMerge(p, blk.code[j], blk.code[i])) continue;
    const uint16_t from = blk.code[i].dst.index, to = blk.code[j].dst.index;
    blk.code.erase(blk.code.begin() + long(i));
    renameUses(p, from, to);
  }
  // Lines 9-16: every DTO is a cluster; clusters move up behind the previous one through the
  // tunnel, bottom to top.
  auto runs = dtoRuns(blk, Buffer::Input, true);
  for (size_t c = runs.size(); c-- > 1;) {
    auto [f, e] = runs[c];
    const size_t l = runs[c - 1].second;  // just after C_{i-1}
    const size_t n = e - f;
    if (f > l) {
      const auto pr = pressureOf(p, b);
      if (tunnel(pr, R, int(l), int(f)) < int(n) || !crossesFreely(blk.code, f, n, l, f)) continue;
      moveRange(blk.code, f, n, l);
    }
    runs[c - 1].second += n;  // C_i joins C_{i-1}
  }
  // The first cluster rises to the top of the block when the tunnel allows (so that global
  // code motion can move it on).
  runs = dtoRuns(blk, Buffer::Input, false);
  if (!runs.empty() && runs[0].first > 0) {
    auto [f, e] = runs[0];
    const auto pr = pressureOf(p, b);
    if (tunnel(pr, R, 0, int(f)) >= int(e - f) && crossesFreely(blk.code, f, e - f, 0, f))
      moveRange(blk.code, f, e - f, 0);
  }
}

void localOutput(Program& p, int b, int R) {
  Block& blk = p.blocks[size_t(b)];
  auto runs = dtoRuns(blk, Buffer::Output, true);
  // The mirror of lines 9-16: clusters sink to just before the next one, top to bottom.
  for (size_t c = 0; c + 1 < runs.size(); ++c) {
    auto [s, l] = runs[c];
    const size_t f = runs[c + 1].first, n = l - s;
    if (f > l) {
      const auto pr = pressureOf(p, b);
      if (tunnel(pr, R, int(l), int(f)) < int(n) || !crossesFreely(blk.code, s, n, l, f)) continue;
      moveRange(blk.code, s, n, f);
    }
    runs[c + 1].first -= n;
  }
  runs = dtoRuns(blk, Buffer::Output, false);
  if (runs.empty()) return;
  auto [s, l] = runs.back();
  const size_t end = blk.code.size();
  if (l == end) return;
  bool free = crossesFreely(blk.code, s, l - s, l, end);
  for (size_t d = s; d < l && free; ++d) free = !conflictsTerm(blk.code[d], blk.term);
  const auto pr = pressureOf(p, b);
  if (free && tunnel(pr, R, int(l), int(end)) >= int(l - s)) moveRange(blk.code, s, l - s, end);
}

// ---- global code motion: one implementation for both directions ---------------------------

// The CFG as the analysis sees it: for the input buffer as it is, for the output buffer reversed
// (clusters flow from predecessors, post-dominators take the dominators' place).
struct View {
  Buffer buffer;
  const Cfg& cfg;
  bool input() const { return buffer == Buffer::Input; }
  const std::vector<int>& from(int b) const {  // where clusters come from: successors
    return input() ? cfg.succ[size_t(b)] : cfg.pred[size_t(b)];
  }
  const std::vector<int>& toward(int b) const {  // where clusters go: predecessors
    return input() ? cfg.pred[size_t(b)] : cfg.succ[size_t(b)];
  }
  bool sdom(int d, int b) const {  // d lies on every path to b from the far end
    return input() ? cfg.strictlyDominates(d, b) : (d != b && cfg.postDominates(d, b));
  }
  bool pdom(int b, int t) const {  // b lies on every path from t onwards
    return input() ? cfg.postDominates(b, t) : cfg.dom[size_t(t)][size_t(b)];
  }
  bool desc(int b, int x) const {  // x is downstream of b
    if (input()) return cfg.desc[size_t(b)][size_t(x)];
    return cfg.desc[size_t(x)][size_t(b)];
  }
  // How far a dominator is from b: fewer dominators of its own = farther.
  size_t depth(int d) const {
    const auto& v = input() ? cfg.dom[size_t(d)] : cfg.postdom[size_t(d)];
    return size_t(std::count(v.begin(), v.end(), true));
  }
};

// The cluster at the top (input) or bottom (output) of a block: [start, end).
std::pair<size_t, size_t> genRange(const Block& blk, Buffer b) {
  const size_t n = blk.code.size();
  if (b == Buffer::Input) {
    size_t e = 0;
    while (e < n && isInputDto(blk.code[e])) ++e;
    return {0, e};
  }
  size_t s = n;
  while (s > 0 && isOutputDto(blk.code[s - 1])) --s;
  // A branch condition that reads what the cluster writes keeps it in the block.
  for (size_t k = s; k < n; ++k)
    if (conflictsTerm(blk.code[k], blk.term)) return {n, n};
  return {s, n};
}

using ClusterSet = std::set<int>;

struct Placement {
  const Program& p;
  View v;
  int R;
  PlacementAnalysis a;
  std::vector<std::vector<Instr>> clusters;  // DTOs of each block's own cluster

  // Whether the clusters of `set` can all pass block b: the tunnel holds them and nothing in
  // the block touches what they write (or writes what they read).
  int weight(const ClusterSet& set) const {
    int w = 0;
    for (int c : set) w += a.size[size_t(c)];
    return w;
  }
  // Every instruction of the block counts, its own cluster too: a cluster that passes b may go
  // on past b's cluster, which may stay (two writes of one output would swap).
  bool passes(const ClusterSet& set, int b) const {
    if (weight(set) > a.tunnel[size_t(b)]) return false;
    const Block& blk = p.blocks[size_t(b)];
    for (int c : set) {
      if (c == b) continue;
      for (const Instr& d : clusters[size_t(c)]) {
        if (conflictsTerm(d, blk.term)) return false;
        for (const Instr& x : blk.code)
          if (conflicts(d, x)) return false;
      }
    }
    return true;
  }
};

}  // namespace

const char* bufferName(Buffer b) { return b == Buffer::Input ? "input" : "output"; }

void insertDtos(Program& p, Buffer buf) {
  uint16_t next = p.temporaryCount();
  // A `mov tX, vK` of the program is a DTO already when it is tX's only definition and tX is not
  // read before it (not live at the entry): then it dominates every use of tX, and moving it up
  // cannot change what any of them reads. Any other (a copy into a temporary with several
  // definitions, such as the front end's phi copies) reads vK through a DTO of its own.
  std::vector<int> defs(next, 0);
  for (const auto& blk : p.blocks)
    for (const auto& i : blk.code)
      if (i.dst.file == File::Temp) ++defs[i.dst.index];
  const std::vector<uint8_t> liveAtEntry =
      p.blocks.empty() ? std::vector<uint8_t>() : liveness(p).in[0];
  auto isDtoAlready = [&](const Instr& i) {
    return isInputDto(i) && defs[i.dst.index] == 1 && liveAtEntry[i.dst.index] == 0;
  };
  for (auto& blk : p.blocks) {
    std::vector<Instr> out;
    for (Instr in : blk.code) {
      if (buf == Buffer::Input && !isDtoAlready(in)) {
        std::vector<std::pair<uint16_t, uint16_t>> map;  // input -> temporary
        for (int s = 0; s < in.sources(); ++s) {
          Operand& o = in.src[size_t(s)];
          if (o.file != File::Input) continue;
          auto it =
              std::find_if(map.begin(), map.end(), [&](auto& m) { return m.first == o.index; });
          if (it == map.end()) {
            Instr d;
            d.op = Op::Mov;
            d.dst = Dest{File::Temp, next, 0xF};
            d.src[0] = Operand{File::Input, o.index};
            out.push_back(d);
            map.push_back({o.index, next++});
            it = map.end() - 1;
          }
          o.file = File::Temp;
          o.index = it->second;
        }
        out.push_back(in);
      } else if (buf == Buffer::Output && in.dst.file == File::Output && !isOutputDto(in)) {
        Instr d;
        d.op = Op::Mov;
        d.dst = in.dst;
        d.src[0] = Operand{File::Temp, next};
        in.dst = Dest{File::Temp, next++, in.dst.mask};
        out.push_back(in);
        out.push_back(d);
      } else {
        out.push_back(in);
      }
    }
    blk.code = std::move(out);
    if (buf == Buffer::Input && blk.term.kind == TermKind::Branch &&
        blk.term.cond.file == File::Input) {
      Instr d;
      d.op = Op::Mov;
      d.dst = Dest{File::Temp, next, 0xF};
      d.src[0] = Operand{File::Input, blk.term.cond.index};
      blk.code.push_back(d);
      blk.term.cond.file = File::Temp;
      blk.term.cond.index = next++;
    }
  }
}

void localCodeMotion(Program& p, Buffer b, int registers) {
  for (size_t k = 0; k < p.blocks.size(); ++k) {
    if (b == Buffer::Input)
      localInput(p, int(k), registers);
    else
      localOutput(p, int(k), registers);
  }
}

namespace {

class LargeCluster : public BranchPointPolicy {
 public:
  int choose(const std::vector<int>& sizes) const override {
    int best = -1;
    for (size_t i = 0; i < sizes.size(); ++i)
      if (best < 0 || sizes[i] > sizes[size_t(best)]) best = int(i);
    return best;
  }
};
class SmallCluster : public BranchPointPolicy {
 public:
  int choose(const std::vector<int>& sizes) const override {
    int best = -1;
    for (size_t i = 0; i < sizes.size(); ++i)
      if (best < 0 || sizes[i] < sizes[size_t(best)]) best = int(i);
    return best;
  }
};
class ZeroOrAll : public BranchPointPolicy {
 public:
  int choose(const std::vector<int>&) const override { return -1; }
};
class Duplicate : public JoinPointPolicy {
 public:
  bool duplicates() const override { return true; }
};
class DominatorOnly : public JoinPointPolicy {
 public:
  bool duplicates() const override { return false; }
};

}  // namespace

const Registry<BranchPointPolicy>& branchPointPolicies() {
  static const Registry<BranchPointPolicy> r(
      "branch-point policy",
      {{"large-cluster", "the larger of the clusters that fit the tunnel alone moves",
        [] { return std::make_unique<LargeCluster>(); }},
       {"small-cluster", "the smaller of the clusters that fit the tunnel alone moves",
        [] { return std::make_unique<SmallCluster>(); }},
       {"zero-or-all", "no cluster moves unless all of them fit the tunnel together",
        [] { return std::make_unique<ZeroOrAll>(); }}});
  return r;
}

const Registry<JoinPointPolicy>& joinPointPolicies() {
  static const Registry<JoinPointPolicy> r(
      "join-point policy",
      {{"duplication-allowed", "a cluster that can pass every predecessor is copied into each",
        [] { return std::make_unique<Duplicate>(); }},
       {"duplication-forbidden", "a cluster moves only to a strict dominator (Algorithm 3)",
        [] { return std::make_unique<DominatorOnly>(); }}});
  return r;
}

PlacementAnalysis clusterPlacement(const Program& p, Buffer buf, int registers,
                                   const BranchPointPolicy& branch) {
  const Cfg cfg = analyseCfg(p);
  View v{buf, cfg};
  const size_t n = p.blocks.size();
  Placement pl{p, v, registers, {}, {}};
  PlacementAnalysis& a = pl.a;
  const Liveness live = liveness(p);
  a.tunnel.resize(n);
  a.gen.assign(n, -1);
  a.size.assign(n, 0);
  pl.clusters.resize(n);
  for (size_t b = 0; b < n; ++b) {
    const auto pr = blockPressure(p, live, int(b));
    a.tunnel[b] = tunnel(pr, registers, 0, int(pr.size()) - 1);
    const auto [s, e] = genRange(p.blocks[b], buf);
    if (e > s && cfg.reachable[b]) {
      a.gen[b] = int(b);
      a.size[b] = int(e - s);
      pl.clusters[b].assign(p.blocks[b].code.begin() + long(s), p.blocks[b].code.begin() + long(e));
    }
  }
  std::vector<ClusterSet> in(n), out(n);
  auto order = [&](size_t k) { return buf == Buffer::Input ? n - 1 - k : k; };
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t k = 0; k < n; ++k) {
      const int b = int(order(k));
      if (!cfg.reachable[size_t(b)]) continue;
      // Eq. 2: CandidateSucc(b).
      ClusterSet all;
      for (int s : v.from(b)) all.insert(in[size_t(s)].begin(), in[size_t(s)].end());
      ClusterSet o;
      if (pl.passes(all, b)) {
        o = all;
      } else {
        std::vector<int> cands, sizes;
        for (int s : v.from(b))
          if (!in[size_t(s)].empty() && pl.passes(in[size_t(s)], b)) {
            cands.push_back(s);
            sizes.push_back(pl.weight(in[size_t(s)]));
          }
        const int pick = branch.choose(sizes);
        if (pick >= 0) o = in[size_t(cands[size_t(pick)])];
      }
      ClusterSet i = o;
      if (a.gen[size_t(b)] >= 0) i.insert(b);
      if (i != in[size_t(b)] || o != out[size_t(b)]) changed = true;
      in[size_t(b)] = std::move(i);
      out[size_t(b)] = std::move(o);
    }
    PlacementAnalysis::Iteration it;
    for (size_t b = 0; b < n; ++b) {
      it.in.emplace_back(in[b].begin(), in[b].end());
      it.out.emplace_back(out[b].begin(), out[b].end());
    }
    a.iterations.push_back(std::move(it));
  }
  a.placement.assign(n, {});
  return a;
}

PlacementAnalysis globalCodeMotion(Program& p, Buffer buf, int registers,
                                   const BranchPointPolicy& branch, const JoinPointPolicy& join) {
  PlacementAnalysis a = clusterPlacement(p, buf, registers, branch);
  const Cfg cfg = analyseCfg(p);
  View v{buf, cfg};
  const size_t n = p.blocks.size();
  const auto& in = a.iterations.back().in;
  auto has = [&](int block, int c) {
    const auto& s = in[size_t(block)];
    return std::binary_search(s.begin(), s.end(), c);
  };
  // Blocks whose own cluster moves, and where each copy goes.
  std::vector<std::vector<int>> dest(n);
  for (size_t bi = 0; bi < n; ++bi) {
    const int b = int(bi), c = a.gen[bi];
    if (c < 0) continue;
    if (!join.duplicates()) {
      // Algorithm 3, lines 5-14: the farthest strict dominator d with c in CLUSTER_in(d) such
      // that every block t between d and b lets c pass and none is entered from below b.
      std::vector<int> doms;
      for (size_t d = 0; d < n; ++d)
        if (v.sdom(int(d), b)) doms.push_back(int(d));
      std::sort(doms.begin(), doms.end(), [&](int x, int y) { return v.depth(x) < v.depth(y); });
      for (int d : doms) {
        if (!has(d, c) || cfg.loopDepth[size_t(d)] > cfg.loopDepth[bi]) continue;
        // Output buffer: the DTOs must run on exactly the paths they ran on (b dominates d).
        if (!v.input() && !cfg.dom[size_t(d)][bi]) continue;
        bool ok = true;
        for (size_t t = 0; t < n && ok; ++t) {
          if (!v.sdom(d, int(t)) || !v.pdom(b, int(t))) continue;
          if (!has(int(t), c)) ok = false;
          for (int q : v.toward(int(t)))
            if (v.desc(b, q)) ok = false;
        }
        if (ok) {
          dest[bi] = {d};
          break;
        }
      }
    } else {
      // Duplication allowed: a cluster crosses a join point into every predecessor when all of
      // them can hold it, recursively; never into a loop, never out of one.
      std::function<void(int, std::vector<int>&)> place = [&](int x, std::vector<int>& to) {
        const auto& tw = v.toward(x);
        bool ok = !tw.empty() && x != (v.input() ? 0 : -1);
        for (int q : tw) {
          if (!has(q, c) || v.desc(x, q) || cfg.loopDepth[size_t(q)] > cfg.loopDepth[size_t(x)])
            ok = false;
          // Output buffer: a successor reached from elsewhere would run the DTOs there too.
          if (!v.input() && cfg.pred[size_t(q)].size() != 1) ok = false;
        }
        if (!ok) {
          to.push_back(x);
          return;
        }
        for (int q : tw) place(q, to);
      };
      std::vector<int> to;
      place(b, to);
      std::sort(to.begin(), to.end());
      to.erase(std::unique(to.begin(), to.end()), to.end());
      if (!(to.size() == 1 && to[0] == b)) dest[bi] = to;
    }
  }
  // Lines 16-18: move. Remove the moving clusters first, then insert them at their places: for
  // the input buffer after the top cluster of the block, for the output buffer before its
  // bottom cluster.
  std::vector<std::vector<Instr>> moving(n);
  for (size_t b = 0; b < n; ++b) {
    if (dest[b].empty()) continue;
    auto [s, e] = genRange(p.blocks[b], buf);
    auto& code = p.blocks[b].code;
    moving[b].assign(code.begin() + long(s), code.begin() + long(e));
    code.erase(code.begin() + long(s), code.begin() + long(e));
  }
  // Into each block, the clusters in the order they ran: by their blocks' dominator depth (the
  // blocks moving into one block lie on a chain of its dominators, or post-dominators), placed
  // one after the other after the block's top cluster or before its bottom one.
  std::vector<int> sources;
  for (size_t b = 0; b < n; ++b)
    if (!dest[b].empty()) sources.push_back(int(b));
  std::stable_sort(sources.begin(), sources.end(), [&](int x, int y) {
    return std::count(cfg.dom[size_t(x)].begin(), cfg.dom[size_t(x)].end(), true) <
           std::count(cfg.dom[size_t(y)].begin(), cfg.dom[size_t(y)].end(), true);
  });
  std::vector<size_t> at(n);
  for (size_t d = 0; d < n; ++d) {
    auto [s, e] = genRange(p.blocks[d], buf);
    at[d] = v.input() ? e : s;
  }
  for (int b : sources)
    for (int d : dest[size_t(b)]) {
      a.placement[size_t(d)].push_back(b);
      auto& code = p.blocks[size_t(d)].code;
      code.insert(code.begin() + long(at[size_t(d)]), moving[size_t(b)].begin(),
                  moving[size_t(b)].end());
      at[size_t(d)] += moving[size_t(b)].size();
    }
  for (auto& pl : a.placement) std::sort(pl.begin(), pl.end());
  // Lines 19-25: redundant DTOs at the top of each block (input buffer).
  if (v.input())
    for (auto& blk : p.blocks) {
      for (size_t i = genRange(blk, buf).second; i-- > 1;)
        for (size_t j = 0; j < i; ++j)
          if (blk.code[j].src[0].index == blk.code[i].src[0].index &&
              canMerge(p, blk.code[j], blk.code[i])) {
            const uint16_t from = blk.code[i].dst.index, to = blk.code[j].dst.index;
            blk.code.erase(blk.code.begin() + long(i));
            renameUses(p, from, to);
            break;
          }
    }
  return a;
}

bool naiveCodeMotion(Program& p, Buffer buf, int registers) {
  Program q = p;
  uint16_t next = q.temporaryCount();
  // Every register of the buffer the program touches lives in a temporary, its home: inputs
  // are loaded into theirs at the entry; outputs are kept in theirs and written to the buffer
  // just before each `end`.
  const File file = buf == Buffer::Input ? File::Input : File::Output;
  std::vector<int> home;
  std::vector<uint16_t> used;
  auto rehome = [&](File& f, uint16_t& index) {
    if (f != file) return;
    if (index >= home.size()) home.resize(index + 1u, -1);
    if (home[index] < 0) {
      home[index] = next++;
      used.push_back(index);
    }
    f = File::Temp;
    index = uint16_t(home[index]);
  };
  for (auto& blk : q.blocks) {
    for (auto& in : blk.code) {
      for (int s = 0; s < in.sources(); ++s)
        rehome(in.src[size_t(s)].file, in.src[size_t(s)].index);
      rehome(in.dst.file, in.dst.index);
    }
    if (blk.term.kind == TermKind::Branch) rehome(blk.term.cond.file, blk.term.cond.index);
  }
  // An output's home starts as the output buffer does, at zero, so components a path leaves
  // unwritten reach the buffer unchanged.
  Operand zero{File::Const, 0};
  if (buf == Buffer::Output) {
    const auto it = std::find_if(q.constants.begin(), q.constants.end(), [](const auto& c) {
      return c.second == Vec4{0, 0, 0, 0};
    });
    if (it != q.constants.end()) {
      zero.index = it->first;
    } else {
      zero.index = q.constantCount++;
      q.constants.push_back({zero.index, Vec4{0, 0, 0, 0}});
    }
  }
  auto mov = [](Dest d, Operand s) {
    Instr i;
    i.dst = d;
    i.src[0] = s;
    return i;
  };
  std::vector<Instr> head;
  for (uint16_t k : used)
    head.push_back(mov(Dest{File::Temp, uint16_t(home[k]), 0xF},
                       buf == Buffer::Input ? Operand{File::Input, k} : zero));
  auto& entry = q.blocks[0].code;
  entry.insert(entry.begin(), head.begin(), head.end());
  if (buf == Buffer::Output)
    for (auto& blk : q.blocks)
      if (blk.term.kind == TermKind::End)
        for (uint16_t k : used)
          blk.code.push_back(
              mov(Dest{File::Output, k, 0xF}, Operand{File::Temp, uint16_t(home[k])}));
  if (maxPressure(q) > registers) return false;
  p = std::move(q);
  return true;
}

}  // namespace gpusc::shader
