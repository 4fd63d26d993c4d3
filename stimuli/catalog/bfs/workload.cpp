// bfs: breadth-first search on a random sparse graph in CSR form, two launches per level
// (expand the frontier, then commit the next one), repeated by the host until no node is
// discovered. Exercises irregular gathers through the edge list, divergence (only frontier
// nodes work, and each loops over its own degree), racing same-value stores, a flag written by
// many threads, and many short launches. The check compares every node's level with a host
// queue-based BFS.
#include <deque>

#include "catalog.hpp"

namespace gpusc::catalog {

namespace {

class Bfs : public Workload {
 public:
  explicit Bfs(Size s)
      : n_(s == Size::Tiny      ? 600
           : s == Size::Small   ? 25000
           : s == Size::Default ? 60000
                                : 1000000) {
    // Degrees vary a lot: most nodes have 0-8 edges, one in 32 is a hub with 24-95. Most edges
    // go to a nearby node (long paths: many levels), one in 8 anywhere (irregular gathers).
    // Some nodes stay unreachable (cost -1).
    Rng rng(42);
    row_.assign(n_ + 1, 0);
    for (uint32_t v = 0; v < n_; ++v) {
      uint32_t degree = rng.below(32) == 0 ? 24 + rng.below(72) : rng.below(9);
      for (uint32_t e = 0; e < degree; ++e) {
        uint32_t w = rng.below(8) ? (v + n_ + rng.below(129) - 64) % n_ : rng.below(n_);
        col_.push_back(static_cast<int32_t>(w));
      }
      row_[v + 1] = static_cast<int32_t>(col_.size());
    }
  }

  std::string describe() const override {
    return fmt::format("n={} nodes, m={} edges, source={}", n_, col_.size(), source_);
  }

  void setup(Device& dev) override {
    drow_ = dev.upload(row_);
    dcol_ = dev.upload(col_);
    dfrontier_ = dev.malloc(n_ * sizeof(int32_t));
    dnext_ = dev.malloc(n_ * sizeof(int32_t));
    dvisited_ = dev.malloc(n_ * sizeof(int32_t));
    dcost_ = dev.malloc(n_ * sizeof(int32_t));
    dchanged_ = dev.malloc(sizeof(int32_t));
  }

  void run(Device& dev) override {
    Module& mod = loadPtx(dev, "bfs");
    const Kernel& init = mod.kernel("bfs_init");
    const Kernel& expand = mod.kernel("bfs_expand");
    const Kernel& commit = mod.kernel("bfs_commit");
    const uint32_t block = 256, grid = (n_ + block - 1) / block;
    const auto n = static_cast<int32_t>(n_);
    dev.launch(
        init, {grid}, {block}, 0,
        KernelArgs().ptr(dfrontier_).ptr(dnext_).ptr(dvisited_).ptr(dcost_).i32(source_).i32(n));
    // Each level discovers at least one node, so there are at most n levels.
    for (uint32_t level = 0; level <= n_; ++level) {
      dev.launch(expand, {grid}, {block}, 0,
                 KernelArgs()
                     .ptr(drow_)
                     .ptr(dcol_)
                     .ptr(dfrontier_)
                     .ptr(dnext_)
                     .ptr(dvisited_)
                     .ptr(dcost_)
                     .ptr(dchanged_)
                     .i32(n));
      dev.launch(commit, {grid}, {block}, 0,
                 KernelArgs().ptr(dfrontier_).ptr(dnext_).ptr(dvisited_).ptr(dchanged_).i32(n));
      if (dev.download<int32_t>(dchanged_, 1)[0] == 0) break;
    }
  }

  CheckResult check(Device& dev) override {
    std::vector<int32_t> want(n_, -1);
    std::deque<uint32_t> queue{static_cast<uint32_t>(source_)};
    want[source_] = 0;
    while (!queue.empty()) {
      uint32_t v = queue.front();
      queue.pop_front();
      for (int32_t e = row_[v]; e < row_[v + 1]; ++e) {
        auto w = static_cast<uint32_t>(col_[e]);
        if (want[w] < 0) {
          want[w] = want[v] + 1;
          queue.push_back(w);
        }
      }
    }
    return compareExact(dev.download<int32_t>(dcost_, n_), want, "cost");
  }

 private:
  uint32_t n_;
  int32_t source_ = 0;
  std::vector<int32_t> row_, col_;
  DevPtr drow_ = 0, dcol_ = 0, dfrontier_ = 0, dnext_ = 0, dvisited_ = 0, dcost_ = 0, dchanged_ = 0;
};

}  // namespace

CatalogEntry make_bfs() {
  return {"bfs", "Breadth-first search, frontier masks, two launches per level until no change",
          "irregular gathers, divergent data-dependent loops, racing stores, many launches",
          [](Size s) { return std::make_unique<Bfs>(s); }, true};
}

}  // namespace gpusc::catalog
