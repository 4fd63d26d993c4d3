// A data-dependent host loop: breadth-first search one level per launch, on a ring of cliques,
// until a launch reports that nothing changed (the flag read back each time). The levels are
// checked against a host BFS, and the number of launches against the graph's depth.
#include <cstdio>
#include <queue>
#include <vector>

#include <cuda_runtime.h>

#include "check.hpp"

__global__ void expand(const int* offsets, const int* edges, int* level, int n, int depth,
                       int* changed) {
  const int v = blockIdx.x * blockDim.x + threadIdx.x;
  if (v >= n || level[v] != depth) return;
  for (int e = offsets[v]; e < offsets[v + 1]; ++e) {
    const int u = edges[e];
    if (level[u] < 0) {
      level[u] = depth + 1;
      *changed = 1;
    }
  }
}

int main() {
  // A path of 40 cliques of 6 vertices: clique c's vertices all link to clique c+1's first vertex.
  const int cliques = 40, k = 6, n = cliques * k;
  std::vector<std::vector<int>> adj(n);
  for (int c = 0; c < cliques; ++c)
    for (int i = 0; i < k; ++i) {
      for (int j = 0; j < k; ++j)
        if (i != j) adj[c * k + i].push_back(c * k + j);
      if (c + 1 < cliques) adj[c * k + i].push_back((c + 1) * k);
    }
  std::vector<int> offsets{0}, edges;
  for (const auto& a : adj) {
    edges.insert(edges.end(), a.begin(), a.end());
    offsets.push_back(int(edges.size()));
  }
  std::vector<int> level(n, -1);
  level[0] = 0;
  int *dOff, *dEdges, *dLevel, *dChanged;
  CHECK(cudaMalloc(&dOff, offsets.size() * sizeof(int)));
  CHECK(cudaMalloc(&dEdges, edges.size() * sizeof(int)));
  CHECK(cudaMalloc(&dLevel, n * sizeof(int)));
  CHECK(cudaMalloc(&dChanged, sizeof(int)));
  CHECK(cudaMemcpy(dOff, offsets.data(), offsets.size() * sizeof(int), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dEdges, edges.data(), edges.size() * sizeof(int), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dLevel, level.data(), n * sizeof(int), cudaMemcpyHostToDevice));
  int depth = 0, launches = 0;
  for (int changed = 1; changed; ++depth) {
    changed = 0;
    CHECK(cudaMemcpy(dChanged, &changed, sizeof changed, cudaMemcpyHostToDevice));
    expand<<<(n + 127) / 128, 128>>>(dOff, dEdges, dLevel, n, depth, dChanged);
    ++launches;
    CHECK(cudaMemcpy(&changed, dChanged, sizeof changed, cudaMemcpyDeviceToHost));
  }
  std::vector<int> got(n), want(n, -1);
  CHECK(cudaMemcpy(got.data(), dLevel, n * sizeof(int), cudaMemcpyDeviceToHost));
  std::queue<int> q;
  want[0] = 0;
  q.push(0);
  int deepest = 0;
  while (!q.empty()) {
    const int v = q.front();
    q.pop();
    for (int u : adj[v])
      if (want[u] < 0) want[u] = want[v] + 1, deepest = want[u], q.push(u);
  }
  std::printf("%d launches, deepest level %d\n", launches, deepest);
  return verdict(got == want && launches == deepest + 1, "BFS levels until no change");
}
