// What a GPU refuses, with the codes it gives: launches no device can run (too many threads per
// block, too much shared memory, a grid of no blocks), a copy of no kind, a pointer that is not an
// allocation, a device that does not exist, and a runtime function gpusc does not implement. None
// is sticky: a correct launch afterwards runs. Also the attributes and the occupancy calculator,
// and launch attributes (cudaLaunchKernelEx).
#include <cstdio>

#include <cuda_runtime.h>

#include "check.hpp"

__global__ void fill(int* v, int value) {
  extern __shared__ int scratch[];
  scratch[threadIdx.x] = value;
  __syncthreads();
  v[blockIdx.x * blockDim.x + threadIdx.x] = scratch[threadIdx.x];
}

int main() {
  int* v;
  CHECK(cudaMalloc(&v, 4096 * sizeof(int)));
  fill<<<1, 2048, 2048 * sizeof(int)>>>(v, 1);
  EXPECT_ERROR(cudaGetLastError(), cudaErrorInvalidConfiguration);
  EXPECT_ERROR(cudaGetLastError(), cudaSuccess);  // read and cleared
  // More dynamic shared memory than the kernel may ask for (48 KB less its static shared memory
  // without cudaFuncAttributeMaxDynamicSharedMemorySize): an invalid argument.
  fill<<<1, 64, 1 << 20>>>(v, 1);
  EXPECT_ERROR(cudaGetLastError(), cudaErrorInvalidValue);
  fill<<<0, 64, 64 * sizeof(int)>>>(v, 1);
  EXPECT_ERROR(cudaGetLastError(), cudaErrorInvalidConfiguration);
  int host[4];
  EXPECT_ERROR(cudaMemcpy(host, v, sizeof host, cudaMemcpyKind(7)),
               cudaErrorInvalidMemcpyDirection);
  EXPECT_ERROR(cudaFree(host), cudaErrorInvalidValue);
  EXPECT_ERROR(cudaSetDevice(1), cudaErrorInvalidDevice);
  cudaMipmappedArray_t array;
  const cudaChannelFormatDesc texel = cudaCreateChannelDesc<float>();
  EXPECT_ERROR(cudaMallocMipmappedArray(&array, &texel, make_cudaExtent(16, 16, 0), 4),
               cudaErrorNotSupported);
  cudaGetLastError();
  int count = 0;
  CHECK(cudaGetDeviceCount(&count));
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  cudaFuncAttributes attr;
  CHECK(cudaFuncGetAttributes(&attr, fill));
  int blocks = 0;
  CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, fill, 256, 256 * sizeof(int)));
  // CUDA's header template on top of the calculator, cudaFuncGetAttributes and the attributes.
  int minGrid = 0, bestBlock = 0;
  CHECK(cudaOccupancyMaxPotentialBlockSize(&minGrid, &bestBlock, fill, 0, 1024));
  int computeMode = -1, sms = 0;
  CHECK(cudaDeviceGetAttribute(&computeMode, cudaDevAttrComputeMode, 0));
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  EXPECT_ERROR(cudaDeviceGetAttribute(&sms, cudaDeviceAttr(100000), 0), cudaErrorInvalidValue);
  EXPECT_ERROR(cudaGetLastError(), cudaErrorInvalidValue);  // read and cleared
  std::printf(
      "%d device: %s, %d SMs, compute capability %d.%d; fill: %d registers, %d blocks "
      "of 256 threads per SM; best block %d threads, a grid of %d blocks fills the device\n",
      count, prop.name, prop.multiProcessorCount, prop.major, prop.minor, attr.numRegs, blocks,
      bestBlock, minGrid);
  // cudaLaunchKernelEx: attributes that only relax or order a serial launch run it; clusters of
  // several blocks are refused (cooperative launches: cooperative_groups.cu).
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(4);
  config.blockDim = dim3(256);
  config.dynamicSmemBytes = 256 * sizeof(int);
  cudaLaunchAttribute attrs[2]{};
  config.attrs = attrs;
  config.numAttrs = 1;
  attrs[0].id = cudaLaunchAttributeClusterDimension;
  attrs[0].val.clusterDim = {2, 1, 1};
  EXPECT_ERROR(cudaLaunchKernelEx(&config, fill, v, 5), cudaErrorNotSupported);
  cudaGetLastError();
  attrs[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attrs[0].val.programmaticStreamSerializationAllowed = 1;
  attrs[1].id = cudaLaunchAttributePriority;
  attrs[1].val.priority = 0;
  config.numAttrs = 2;
  CHECK(cudaLaunchKernelEx(&config, fill, v, 5));
  int fives[1024];
  CHECK(cudaMemcpy(fives, v, sizeof fives, cudaMemcpyDeviceToHost));
  int bad = 0;
  for (int x : fives) bad += x != 5;
  fill<<<4, 256, 256 * sizeof(int)>>>(v, 7);
  CHECK(cudaGetLastError());
  int out[1024];
  CHECK(cudaMemcpy(out, v, sizeof out, cudaMemcpyDeviceToHost));
  for (int x : out) bad += x != 7;
  const bool attrsOk = count == 1 && attr.numRegs > 0 && attr.maxThreadsPerBlock > 0 &&
                       blocks > 0 && blocks * 256 <= prop.maxThreadsPerMultiProcessor &&
                       bestBlock > 0 && bestBlock <= 1024 && minGrid >= sms &&
                       computeMode == cudaComputeModeDefault && sms == prop.multiProcessorCount;
  return verdict(bad == 0 && attrsOk, "refused launches and calls give a GPU's error codes");
}
