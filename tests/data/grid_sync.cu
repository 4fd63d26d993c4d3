// Cooperative groups' grid sync, as CUDA code writes it: every thread of the grid reads its right
// neighbour's value (wrapping at the end), the grid syncs, every thread writes what it read plus
// one, the grid syncs again; `rounds` times. After round r, a[i] = a0[(i + r) % n] + r, which
// holds only if no thread of any block ran ahead of a sync. A thread beyond n still syncs.
// tests/test_ptx_isa.cpp (GridSync.*) checks it. grid.sync() reads the grid workspace from
// %envreg1:%envreg2 and traps when the launch is not cooperative.
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

extern "C" __global__ void rotate(int* a, int n, int rounds) {
  cg::grid_group grid = cg::this_grid();
  const unsigned long long i = grid.thread_rank();
  for (int r = 0; r < rounds; ++r) {
    int v = 0;
    if (i < n) v = a[(i + 1) % n];
    grid.sync();
    if (i < n) a[i] = v + 1;
    grid.sync();
  }
}
