// wmma in the shapes m32n8k16 (f16 inputs and accumulators), m8n32k16 (bf16 inputs, f32
// accumulators in column-major memory), m16n16k8 (tf32 inputs, converted with cvt.rna.tf32.f32)
// and m16n16k16 (f16 inputs, an f16 accumulator added element-wise to an f32 one), as nvcc
// compiles them. tests/test_ptx_isa.cpp (WarpMatrix.NvccWmmaShapes) checks the results against
// plain C++ matrix products. Regenerate the PTX with stimuli/regen_ptx.sh.
// regen_ptx.sh: -arch=sm_80
#include <mma.h>
#include <cuda_bf16.h>
using namespace nvcuda;
extern "C" __global__ void h32x8(const half* a, const half* b, const half* c, half* d) {
  wmma::fragment<wmma::matrix_a, 32, 8, 16, half, wmma::row_major> fa;
  wmma::fragment<wmma::matrix_b, 32, 8, 16, half, wmma::col_major> fb;
  wmma::fragment<wmma::accumulator, 32, 8, 16, half> fc;
  wmma::load_matrix_sync(fa, a, 16); wmma::load_matrix_sync(fb, b, 16);
  wmma::load_matrix_sync(fc, c, 8, wmma::mem_row_major);
  wmma::mma_sync(fc, fa, fb, fc);
  wmma::store_matrix_sync(d, fc, 8, wmma::mem_row_major);
}
extern "C" __global__ void b8x32(const __nv_bfloat16* a, const __nv_bfloat16* b, const float* c, float* d) {
  wmma::fragment<wmma::matrix_a, 8, 32, 16, __nv_bfloat16, wmma::row_major> fa;
  wmma::fragment<wmma::matrix_b, 8, 32, 16, __nv_bfloat16, wmma::row_major> fb;
  wmma::fragment<wmma::accumulator, 8, 32, 16, float> fc;
  wmma::load_matrix_sync(fa, a, 16); wmma::load_matrix_sync(fb, b, 32);
  wmma::load_matrix_sync(fc, c, 32, wmma::mem_col_major);
  wmma::mma_sync(fc, fa, fb, fc);
  wmma::store_matrix_sync(d, fc, 32, wmma::mem_col_major);
}
extern "C" __global__ void t16(const float* a, const float* b, const float* c, float* d) {
  wmma::fragment<wmma::matrix_a, 16, 16, 8, wmma::precision::tf32, wmma::row_major> fa;
  wmma::fragment<wmma::matrix_b, 16, 16, 8, wmma::precision::tf32, wmma::col_major> fb;
  wmma::fragment<wmma::accumulator, 16, 16, 8, float> fc;
  wmma::load_matrix_sync(fa, a, 8); wmma::load_matrix_sync(fb, b, 8);
  for (int i = 0; i < fa.num_elements; ++i) fa.x[i] = wmma::__float_to_tf32(fa.x[i]);
  wmma::load_matrix_sync(fc, c, 16, wmma::mem_row_major);
  wmma::mma_sync(fc, fa, fb, fc);
  wmma::store_matrix_sync(d, fc, 16, wmma::mem_row_major);
}
extern "C" __global__ void h16mix(const half* a, const half* b, const float* c, half* d) {
  wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::col_major> fa;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::row_major> fb;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> fc;
  wmma::fragment<wmma::accumulator, 16, 16, 16, half> fd;
  wmma::load_matrix_sync(fa, a, 16); wmma::load_matrix_sync(fb, b, 16);
  wmma::load_matrix_sync(fc, c, 16, wmma::mem_row_major);
  wmma::fill_fragment(fd, 0.0f);
  wmma::mma_sync(fd, fa, fb, fd);
  for (int i = 0; i < fd.num_elements; ++i) fd.x[i] = __hadd(fd.x[i], __float2half(fc.x[i]));
  wmma::store_matrix_sync(d, fd, 16, wmma::mem_row_major);
}
