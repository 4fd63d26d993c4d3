// build: -arch=sm_75
// A coalesced write stream: 2 blocks of 1,024 threads per SM store float4s over a 24 MB buffer
// with a grid-stride loop, so consecutive blocks start 16 KB apart, a multiple of every
// power-of-two count of 256-byte partition chunks; the blocks advance in step. The L2 may keep
// as much of the buffer as it holds when the kernel ends; the rest must reach DRAM during it.
// Prints that rest's bandwidth, as a share of the peak the device reports (twice the memory
// clock times the bus width), and PASS when it lies within the arguments' range of percentages.
//   write_stream MIN_PCT MAX_PCT
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

__global__ void writeStream(float4* out, size_t n) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n;
       i += size_t(gridDim.x) * blockDim.x)
    out[i] = make_float4(1, 2, 3, 4);
}

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: write_stream MIN_PCT MAX_PCT\n");
    return 2;
  }
  const double minPct = std::atof(argv[1]), maxPct = std::atof(argv[2]);
  int sms = 0, clockKhz = 0, busBits = 0, l2Bytes = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  cudaDeviceGetAttribute(&clockKhz, cudaDevAttrMemoryClockRate, 0);
  cudaDeviceGetAttribute(&busBits, cudaDevAttrGlobalMemoryBusWidth, 0);
  cudaDeviceGetAttribute(&l2Bytes, cudaDevAttrL2CacheSize, 0);
  const size_t bytes = size_t(24) << 20;
  float4* buffer = nullptr;
  if (cudaMalloc(&buffer, bytes) != cudaSuccess) return 1;
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  cudaEventRecord(start);
  writeStream<<<2 * sms, 1024>>>(buffer, bytes / sizeof(float4));
  cudaEventRecord(stop);
  cudaEventSynchronize(stop);
  float ms = 0;
  cudaEventElapsedTime(&ms, start, stop);
  float4 last;
  cudaMemcpy(&last, buffer + bytes / sizeof(float4) - 1, sizeof last, cudaMemcpyDeviceToHost);
  if (cudaGetLastError() != cudaSuccess || last.w != 4 || ms <= 0) {
    std::printf("FAIL: the stream did not run\n");
    return 1;
  }
  const double gbs = (bytes - l2Bytes) / (ms * 1e-3) / 1e9;
  const double peak = 2.0 * clockKhz * 1e3 * busBits / 8 / 1e9;
  const double pct = 100 * gbs / peak;
  std::printf(
      "write stream: %.3f ms; %.1f GB/s beyond the L2's %d bytes, %.1f %% of the peak "
      "%.1f GB/s\n",
      ms, gbs, l2Bytes, pct, peak);
  const bool ok = pct >= minPct && pct <= maxPct;
  std::printf("%s: expected %g to %g %%\n", ok ? "PASS" : "FAIL", minPct, maxPct);
  return ok ? 0 : 1;
}
