// Breadth-first search over a graph in CSR form, frontier-mask style (as in Rodinia's bfs).
// Each BFS level is two launches: bfs_expand visits the neighbours of every frontier node
// (irregular gathers, divergent per-thread loops whose trip count is the node's degree), then
// bfs_commit turns the nodes discovered in this level into the next frontier and raises
// `changed`. The host repeats the pair until `changed` stays zero.
//
//   row[n + 1]  CSR row offsets: the edges of node v are col[row[v] .. row[v + 1])
//   col[m]      edge targets
//   frontier    1 for the nodes of the current level
//   next        1 for the nodes discovered while expanding the current level
//   visited     1 for nodes already in some level
//   cost        the level of each node, -1 when not (yet) reached

// Sets up the search from `source`: only the source is in the frontier, at level 0.
extern "C" __global__ void bfs_init(int* frontier, int* next, int* visited, int* cost, int source,
                                    int n) {
  int v = blockIdx.x * blockDim.x + threadIdx.x;
  if (v >= n) return;
  int s = v == source;
  frontier[v] = s;
  next[v] = 0;
  visited[v] = s;
  cost[v] = s ? 0 : -1;
}

// Expands the frontier. Every frontier node belongs to the same level, so the nodes that several
// frontier nodes discover all receive the same cost: the racing stores write equal values.
// Thread 0 clears `changed`; bfs_commit, launched after this kernel, sets it again.
extern "C" __global__ void bfs_expand(const int* __restrict__ row, const int* __restrict__ col,
                                      int* frontier, int* next, const int* visited, int* cost,
                                      int* changed, int n) {
  int v = blockIdx.x * blockDim.x + threadIdx.x;
  if (v == 0) *changed = 0;
  if (v >= n || !frontier[v]) return;
  frontier[v] = 0;
  int level = cost[v] + 1;
  int end = row[v + 1];
  for (int e = row[v]; e < end; ++e) {
    int w = col[e];
    if (!visited[w]) {
      cost[w] = level;
      next[w] = 1;
    }
  }
}

// Commits the nodes discovered by bfs_expand: they become the next frontier.
extern "C" __global__ void bfs_commit(int* frontier, int* next, int* visited, int* changed, int n) {
  int v = blockIdx.x * blockDim.x + threadIdx.x;
  if (v >= n || !next[v]) return;
  next[v] = 0;
  frontier[v] = 1;
  visited[v] = 1;
  *changed = 1;
}
