// A kernel that waits for the host: sampled simulation must not put back memory the host
// program shares with the device. Two launches of one kernel make a group, so a third launch
// of its shape would first run in the functional engine on a copy of memory; here that launch
// asks a host thread for a value through mapped memory, spins until it comes, and then works
// longer than the others, so that it starts a group of its own and runs in detail after that
// first run. Putting memory back after the first run would undo the host's answer, and the
// detailed run would wait for ever. Run with --sample kernel.
#include <cstdio>
#include <thread>

#include <cuda_runtime.h>

#include "check.hpp"

__global__ void step(float* x, int n, int ask, volatile int* question, volatile int* answer) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = x[i] * 0.5f + 1.0f;
  if (ask && i == 0) {
    *question = 1;
    __threadfence_system();
    while (*answer == 0) {
    }
    // Work enough to set this launch apart from the first two: a group of its own, which runs
    // in detail after its first run in the functional engine.
    float v = float(*answer);
    for (int k = 0; k < 20000; ++k) v = v * 1.0f + 0.0f;
    x[0] = v;
  }
}

int main() {
  const int n = 1 << 14;
  float* x;
  CHECK(cudaMalloc(&x, n * sizeof(float)));
  CHECK(cudaMemset(x, 0, n * sizeof(float)));
  int* flags;
  CHECK(cudaHostAlloc(&flags, 2 * sizeof(int), cudaHostAllocMapped));
  flags[0] = flags[1] = 0;
  int* deviceFlags;
  CHECK(cudaHostGetDevicePointer(&deviceFlags, flags, 0));
  for (int i = 0; i < 2; ++i) step<<<n / 256, 256>>>(x, n, 0, deviceFlags, deviceFlags + 1);
  CHECK(cudaDeviceSynchronize());
  std::thread host([flags] {
    while (static_cast<volatile int*>(flags)[0] == 0) std::this_thread::yield();
    static_cast<volatile int*>(flags)[1] = 42;
  });
  step<<<n / 256, 256>>>(x, n, 1, deviceFlags, deviceFlags + 1);
  const cudaError_t e = cudaDeviceSynchronize();
  host.join();
  float x0 = 0, x1 = 0;
  CHECK(cudaMemcpy(&x0, x, sizeof x0, cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(&x1, x + 1, sizeof x1, cudaMemcpyDeviceToHost));
  std::printf("the kernel got %g from the host\n", x0);
  return verdict(e == cudaSuccess && x0 == 42.0f && x1 == 1.75f,
                 "the host's answer through mapped memory reached the waiting kernel");
}
