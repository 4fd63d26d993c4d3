// A read stream for measuring DRAM bandwidth: every thread reads `iters` float4 values a grid's
// width apart (each warp reads 512 contiguous bytes per step) and writes their sum, so nearly
// all DRAM traffic is reads of `in`. See stream_read.yaml.
extern "C" __global__ void stream_read(const float4* __restrict__ in, unsigned iters,
                                       float* __restrict__ out) {
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  const unsigned stride = gridDim.x * blockDim.x;
  float sum = 0.0f;
  for (unsigned k = 0; k < iters; ++k) {
    const float4 v = in[i + k * stride];
    sum += v.x + v.y + v.z + v.w;
  }
  out[i] = sum;
}
