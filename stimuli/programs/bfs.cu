// bfs as a stand-alone CUDA program: the catalog kernels (stimuli/catalog/bfs) on the catalog
// workload's random graph, with its allocations and launches (bfs_init, then bfs_expand and
// bfs_commit per level until `changed` reads zero), checked against a host queue-based BFS.
//   bfs [tiny|small|default]
#include <deque>

#include "program.hpp"

#include "../catalog/bfs/bfs.cu"

int main(int argc, char** argv) {
  const Size size = parseSize(argc, argv);
  const uint32_t n = size == Size::Tiny ? 600 : size == Size::Small ? 25000 : 60000;
  const int32_t source = 0;

  // Degrees vary a lot: most nodes have 0-8 edges, one in 32 is a hub with 24-95. Most edges go
  // to a nearby node, one in 8 anywhere. Some nodes stay unreachable (cost -1).
  gpusc::Rng rng(42);
  std::vector<int32_t> row(n + 1, 0), col;
  for (uint32_t v = 0; v < n; ++v) {
    const uint32_t degree = rng.below(32) == 0 ? 24 + rng.below(72) : rng.below(9);
    for (uint32_t e = 0; e < degree; ++e) {
      const uint32_t w = rng.below(8) ? (v + n + rng.below(129) - 64) % n : rng.below(n);
      col.push_back(static_cast<int32_t>(w));
    }
    row[v + 1] = static_cast<int32_t>(col.size());
  }

  int32_t* drow = upload(row);
  int32_t* dcol = upload(col);
  int32_t* dfrontier = deviceAlloc<int32_t>(n);
  int32_t* dnext = deviceAlloc<int32_t>(n);
  int32_t* dvisited = deviceAlloc<int32_t>(n);
  int32_t* dcost = deviceAlloc<int32_t>(n);
  int32_t* dchanged = deviceAlloc<int32_t>(1);

  const uint32_t block = 256, grid = (n + block - 1) / block;
  bfs_init<<<grid, block>>>(dfrontier, dnext, dvisited, dcost, source, int(n));
  CHECK(cudaGetLastError());
  // Each level discovers at least one node, so there are at most n levels.
  for (uint32_t level = 0; level <= n; ++level) {
    bfs_expand<<<grid, block>>>(drow, dcol, dfrontier, dnext, dvisited, dcost, dchanged, int(n));
    CHECK(cudaGetLastError());
    bfs_commit<<<grid, block>>>(dfrontier, dnext, dvisited, dchanged, int(n));
    CHECK(cudaGetLastError());
    if (download(dchanged, 1)[0] == 0) break;
  }

  std::vector<int32_t> want(n, -1);
  std::deque<uint32_t> queue{static_cast<uint32_t>(source)};
  want[source] = 0;
  while (!queue.empty()) {
    const uint32_t v = queue.front();
    queue.pop_front();
    for (int32_t e = row[v]; e < row[v + 1]; ++e) {
      const auto w = static_cast<uint32_t>(col[e]);
      if (want[w] < 0) {
        want[w] = want[v] + 1;
        queue.push_back(w);
      }
    }
  }
  return finish(compareExact(download(dcost, n), want, "cost"));
}
