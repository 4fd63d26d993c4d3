// A 2D mesh interconnect (seeds 000 and 003): noc.mesh_columns x noc.mesh_rows MeshRouters with
// dimension-order XY routing, each router linked to its four neighbours and to the network
// interface of the node placed on it (if any). Router (x, y) is in column x and row y, row 0 at
// the top; links are noc.link_latency cycles long in each direction.
//
// Size: 0 columns and 0 rows give the smallest square holding every node (SMs and L2 slices);
// one of them 0 gives the fewest lines of that kind that hold them.
//
// Layout: noc.sm_positions and noc.mc_positions place each SM and each L2 slice (in order; with
// one slice per memory partition, each memory partition) on a router: each list is empty or has
// one position per node; positions must be inside the mesh and no two nodes may share a router
// (InputError naming the key otherwise). A list left empty is laid out by default:
//   L2 slices  on one colour of the checkerboard (routers with x + y odd), in row-major order,
//              evenly spaced over the free squares of that colour: slice i on the
//              floor((2i + 1) x n / 2L)-th of the n free squares (L slices); if there are more
//              slices than such squares, the rest spread the same way over the free squares of
//              the other colour. This scatters the memory controllers over the die (4x4 with 8
//              partitions: the full checkerboard).
//   SMs        on the remaining free routers in row-major order.
// Routers without a node only forward traffic.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "noc/interconnect.hpp"
#include "noc/mesh_router.hpp"

namespace gpusc::noc {

struct MeshLayout {
  uint32_t columns = 0, rows = 0;
  std::vector<uint32_t> x, y;  // per node (SMs, then L2 slices)
};

// The mesh's size and every node's router; InputError (naming the key) for a bad layout.
MeshLayout meshLayout(const PlatformConfig& cfg);

class Mesh : public Interconnect {
 public:
  Mesh(const sc_core::sc_module_name& name, const PlatformConfig& cfg);
  ~Mesh() override;

  const MeshLayout& layout() const { return layout_; }
  const MeshRouter& router(uint32_t x, uint32_t y) const {
    return *routers_[y * layout_.columns + x];
  }
  // Endpoint name of router (x, y) in the statistics' links.
  static std::string routerName(uint32_t x, uint32_t y);

 private:
  MeshLayout layout_;
  std::vector<std::unique_ptr<MeshRouter>> routers_;  // row-major
};

}  // namespace gpusc::noc
