// build: -gencode arch=compute_86,code=compute_86
// A program whose fat binary holds PTX for compute capability 8.6 only: a device of 8.6 (rtx3070)
// runs its kernel (with a warp reduction of 8.0), and one of 7.5 (gtx480) refuses it as a GPU
// would, cudaErrorNoKernelImageForDevice for the launch and for cudaFuncGetAttributes.
#include "check.hpp"

__global__ void sum(int* out) { out[threadIdx.x] = __reduce_add_sync(0xffffffffu, threadIdx.x); }

int main() {
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  const bool runs = prop.major * 10 + prop.minor >= 86;
  int* out;
  CHECK(cudaMalloc(&out, 32 * sizeof(int)));
  CHECK(cudaMemset(out, 0, 32 * sizeof(int)));
  cudaFuncAttributes fa{};
  const cudaError_t attr = cudaFuncGetAttributes(&fa, sum);
  sum<<<1, 32>>>(out);
  const cudaError_t launch = cudaGetLastError();
  int first = -1;
  CHECK(cudaMemcpy(&first, out, sizeof first, cudaMemcpyDeviceToHost));
  std::printf("compute capability %d.%d: attributes %s (PTX %d), launch %s, out[0] %d\n",
              prop.major, prop.minor, cudaGetErrorName(attr), fa.ptxVersion,
              cudaGetErrorName(launch), first);
  const bool ok = runs ? attr == cudaSuccess && fa.ptxVersion == 86 && launch == cudaSuccess &&
                             first == 31 * 32 / 2
                       : attr == cudaErrorNoKernelImageForDevice &&
                             launch == cudaErrorNoKernelImageForDevice && first == 0;
  CHECK(cudaFree(out));
  return verdict(ok, runs ? "a kernel of its compute capability runs"
                          : "PTX above the device's compute capability is refused");
}
