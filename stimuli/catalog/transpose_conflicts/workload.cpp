// transpose_conflicts: the transpose of transpose_workload.hpp through an unpadded 32x32
// shared tile, so every column read of the tile is a 32-way bank conflict.
#include "catalog/transpose_workload.hpp"

namespace gpusc::catalog {

CatalogEntry make_transpose_conflicts() {
  return {"transpose_conflicts",
          "Matrix transpose through an unpadded 32x32 shared tile (bank conflicts)",
          "shared-memory bank conflicts (32-way), coalesced global access, barriers, 2D grid, "
          "partial tiles",
          [](Size s) { return std::make_unique<TransposeWorkload>("transpose_conflicts", s); }};
}

}  // namespace gpusc::catalog
