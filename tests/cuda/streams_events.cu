// Streams, asynchronous copies, events and host functions: two streams each copy in, run a
// kernel and copy out; events around the second stream's kernel measure simulated time (more than
// zero in timing mode, zero in functional mode: the first argument says which); a host function
// queued behind a stream's work runs after it.
#include <cstdio>
#include <cstring>
#include <vector>

#include <cuda_runtime.h>

#include "check.hpp"

__global__ void addOne(int* v, int n, int reps) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    for (int r = 0; r < reps; ++r) v[i] += 1;
}

struct Flag {
  const int* host;
  int seen;
};

void CUDART_CB afterWork(void* data) {
  auto* f = static_cast<Flag*>(data);
  f->seen = f->host[0];
}

int main(int argc, char** argv) {
  const bool timing = argc > 1 && std::strcmp(argv[1], "timing") == 0;
  const int n = 1000;
  cudaStream_t s[2];
  for (auto& st : s) CHECK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  int* host;
  CHECK(cudaMallocHost(&host, 2 * n * sizeof(int)));
  int* dev[2];
  for (int k = 0; k < 2; ++k) {
    CHECK(cudaMalloc(&dev[k], n * sizeof(int)));
    for (int i = 0; i < n; ++i) host[k * n + i] = k * 1000 + i;
  }
  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreateWithFlags(&stop, cudaEventBlockingSync));
  Flag flag{host, -1};
  for (int k = 0; k < 2; ++k) {
    CHECK(cudaMemcpyAsync(dev[k], host + k * n, n * sizeof(int), cudaMemcpyHostToDevice, s[k]));
    if (k == 1) CHECK(cudaEventRecord(start, s[k]));
    addOne<<<(n + 127) / 128, 128, 0, s[k]>>>(dev[k], n, 10 * (k + 1));
    CHECK(cudaGetLastError());
    if (k == 1) CHECK(cudaEventRecord(stop, s[k]));
    CHECK(cudaMemcpyAsync(host + k * n, dev[k], n * sizeof(int), cudaMemcpyDeviceToHost, s[k]));
  }
  CHECK(cudaLaunchHostFunc(s[0], afterWork, &flag));
  for (auto& st : s) CHECK(cudaStreamSynchronize(st));
  CHECK(cudaEventSynchronize(stop));
  float ms = -1;
  CHECK(cudaEventElapsedTime(&ms, start, stop));
  int bad = 0;
  for (int k = 0; k < 2; ++k)
    for (int i = 0; i < n; ++i) bad += host[k * n + i] != k * 1000 + i + 10 * (k + 1);
  const bool timeOk = timing ? ms > 0 : ms == 0;
  std::printf("elapsed %.6f ms, host function saw %d\n", ms, flag.seen);
  for (auto& st : s) CHECK(cudaStreamDestroy(st));
  CHECK(cudaEventDestroy(start));
  CHECK(cudaEventDestroy(stop));
  CHECK(cudaFreeHost(host));
  EXPECT_ERROR(cudaStreamDestroy(s[0]), cudaErrorInvalidResourceHandle);
  cudaGetLastError();
  return verdict(bad == 0 && timeOk && flag.seen == 10, "two streams, events, a host function");
}
