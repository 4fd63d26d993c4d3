// transpose_padded: the transpose of transpose_workload.hpp through a 32x33 padded shared tile,
// so column reads of the tile are free of bank conflicts.
#include "catalog/transpose_workload.hpp"

namespace gpusc::catalog {

CatalogEntry make_transpose_padded() {
  return {"transpose_padded",
          "Matrix transpose through a padded 32x33 shared tile (no bank conflicts)",
          "conflict-free shared memory, coalesced global access, barriers, 2D grid, partial tiles",
          [](Size s) { return std::make_unique<TransposeWorkload>("transpose_padded", s); }};
}

}  // namespace gpusc::catalog
