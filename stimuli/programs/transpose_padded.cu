// transpose_padded as a stand-alone CUDA program: the catalog kernel
// (stimuli/catalog/transpose_padded) with the catalog workload's matrix, allocations and launch,
// checked exactly on the host (transpose_program.hpp).
//   transpose_padded [tiny|small|default]
#include "transpose_program.hpp"

#include "../catalog/transpose_padded/transpose_padded.cu"

int main(int argc, char** argv) { return runTranspose(argc, argv, transpose_padded); }
