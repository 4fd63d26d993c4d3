// transpose_conflicts as a stand-alone CUDA program: the catalog kernel
// (stimuli/catalog/transpose_conflicts) with the catalog workload's matrix, allocations and launch,
// checked exactly on the host (transpose_program.hpp).
//   transpose_conflicts [tiny|small|default]
#include "transpose_program.hpp"

#include "../catalog/transpose_conflicts/transpose_conflicts.cu"

int main(int argc, char** argv) { return runTranspose(argc, argv, transpose_conflicts); }
