// Calls that fail, counted by error name in stats.json's workload.failed_calls whether the
// runtime library refuses them itself (a device that is not there, a function it does not
// support) or the simulator does (a launch the device cannot run).
#include <cstdio>

#include "check.hpp"

__global__ void noop() {}

int main() {
  bool ok = cudaSetDevice(3) == cudaErrorInvalidDevice;
  cudaIpcMemHandle_t handle;
  int* d = nullptr;
  CHECK(cudaMalloc(&d, 64));
  ok = ok && cudaIpcGetMemHandle(&handle, d) == cudaErrorNotSupported;
  ok = ok && cudaIpcGetMemHandle(&handle, d) == cudaErrorNotSupported;
  noop<<<1, 4096>>>();
  ok = ok && cudaGetLastError() == cudaErrorInvalidConfiguration;
  CHECK(cudaFree(d));
  return verdict(ok, "failing calls");
}
