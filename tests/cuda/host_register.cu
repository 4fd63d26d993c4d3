// Registered host memory (cudaHostRegister) that kernels reach through the device pointer
// cudaHostGetDevicePointer gives: the program and its kernels read and write the same bytes with
// no copy, as on a GPU with unified addressing, for memory from malloc (a range that does not
// start on a page), a global array, an array on the stack of a thread the program started, and
// two ranges on one page (the main thread's stack is refused: it grows down on demand). Bytes
// beside the range on its pages stay as they were, and the memory keeps its bytes when it is
// unregistered.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include <cuda_runtime.h>

#include "check.hpp"

__global__ void scaleAdd(int* p, int n, int add) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] = p[i] * 2 + add;
}

int globalArray[3000];

// Registers `n` ints at `p`, runs the kernel on them through the device pointer, and checks that
// the host sees the kernel's results at once.
bool roundTrip(int* p, int n, unsigned flags, int add) {
  for (int i = 0; i < n; ++i) p[i] = i;
  CHECK(cudaHostRegister(p, n * sizeof(int), flags));
  int* d = nullptr;
  CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&d), p, 0));
  scaleAdd<<<(n + 127) / 128, 128>>>(d, n, add);
  CHECK(cudaDeviceSynchronize());
  bool ok = true;
  for (int i = 0; i < n; ++i) ok = ok && p[i] == i * 2 + add;
  // The host writes; the next kernel sees it.
  p[0] = 1000;
  scaleAdd<<<1, 32>>>(d, 1, 0);
  CHECK(cudaDeviceSynchronize());
  ok = ok && p[0] == 2000;
  CHECK(cudaHostUnregister(p));
  ok = ok && p[0] == 2000 && p[n - 1] == (n - 1) * 2 + add;
  p[1] = 7;  // still the program's writable memory
  return ok && p[1] == 7;
}

int main() {
  Expectations expect;
  int attr = -1;
  CHECK(cudaDeviceGetAttribute(&attr, cudaDevAttrCanUseHostPointerForRegisteredMem, 0));
  expect(attr == 0, "kernels use the device pointer, not the host pointer");

  // From malloc, four bytes past a page's start, with bytes beside it on its pages.
  const int n = 5000;
  auto* block = static_cast<int*>(std::malloc((n + 2) * sizeof(int)));
  block[0] = 0x5eed;
  int* p = block + 1;
  p[n] = 0xbeef;
  expect(roundTrip(p, n, cudaHostRegisterMapped, 3), "malloc'd memory, cudaHostRegisterMapped");
  expect(block[0] == 0x5eed && p[n] == 0xbeef, "bytes beside the range are unchanged");
  expect(roundTrip(p, n, cudaHostRegisterDefault, 5),
         "the same memory again, cudaHostRegisterDefault (mapped with unified addressing)");
  std::free(block);

  expect(roundTrip(globalArray, 3000, cudaHostRegisterPortable, 1), "a global array");
  // On the main thread's stack: registered, but refused a device pointer (gpusc cannot map it).
  int onStack[700];
  CHECK(cudaHostRegister(onStack, sizeof onStack, 0));
  int* none = nullptr;
  expect(cudaHostGetDevicePointer(reinterpret_cast<void**>(&none), onStack, 0) ==
                 cudaErrorNotSupported &&
             none == nullptr,
         "an array on the main thread's stack has no device pointer");
  cudaGetLastError();
  CHECK(cudaHostUnregister(onStack));
  // On another thread's stack, from that thread.
  bool threadOk = false;
  std::thread t([&threadOk] {
    int mine[700];
    threadOk = roundTrip(mine, 700, cudaHostRegisterDefault, 2);
  });
  t.join();
  expect(threadOk, "an array on the stack of another thread that calls");

  // Two ranges on one page: the second shares the first's mapping.
  auto* pair = static_cast<int*>(std::aligned_alloc(4096, 4096));
  for (int i = 0; i < 1024; ++i) pair[i] = i;
  CHECK(cudaHostRegister(pair, 64 * sizeof(int), 0));
  CHECK(cudaHostRegister(pair + 64, 64 * sizeof(int), 0));
  int *d1 = nullptr, *d2 = nullptr;
  CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&d1), pair, 0));
  CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&d2), pair + 64, 0));
  expect(d2 == d1 + 64, "two ranges on one page: one mapping");
  scaleAdd<<<1, 128>>>(d1, 128, 0);
  CHECK(cudaDeviceSynchronize());
  CHECK(cudaHostUnregister(pair));
  bool pairOk = pair[0] == 0 && pair[63] == 126 && pair[64] == 128 && pair[127] == 254;
  scaleAdd<<<1, 64>>>(d2, 64, 1);  // the second range is still mapped
  CHECK(cudaDeviceSynchronize());
  pairOk = pairOk && pair[64] == 257 && pair[127] == 509 && pair[128] == 128;
  CHECK(cudaHostUnregister(pair + 64));
  expect(pairOk, "two ranges on one page, unregistered one after the other");
  std::free(pair);

  // Pointer attributes and copies through the host pointer.
  std::vector<int> buf(1024, 9);
  CHECK(cudaHostRegister(buf.data(), buf.size() * sizeof(int), 0));
  cudaPointerAttributes a;
  CHECK(cudaPointerGetAttributes(&a, buf.data() + 10));
  int* dbuf = nullptr;
  CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&dbuf), buf.data(), 0));
  expect(a.type == cudaMemoryTypeHost && a.devicePointer == dbuf + 10 &&
             a.hostPointer == buf.data() + 10,
         "pointer attributes give the device pointer");
  int* dev = nullptr;
  CHECK(cudaMalloc(&dev, 1024 * sizeof(int)));
  CHECK(cudaMemcpy(dev, buf.data(), 1024 * sizeof(int), cudaMemcpyHostToDevice));
  scaleAdd<<<8, 128>>>(dev, 1024, 0);
  CHECK(cudaMemcpy(buf.data(), dev, 1024 * sizeof(int), cudaMemcpyDeviceToHost));
  expect(buf[0] == 18 && buf[1023] == 18, "copies to and from registered memory");
  CHECK(cudaMemcpy(dev, dbuf, 4 * sizeof(int), cudaMemcpyDeviceToDevice));
  int back = 0;
  CHECK(cudaMemcpy(&back, dev, sizeof(int), cudaMemcpyDeviceToHost));
  expect(back == 18, "a copy from the device pointer");
  CHECK(cudaHostUnregister(buf.data()));
  CHECK(cudaFree(dev));

  int other = 0;
  expect(
      cudaHostGetDevicePointer(reinterpret_cast<void**>(&dev), &other, 0) == cudaErrorInvalidValue,
      "memory that is not registered has no device pointer");
  cudaGetLastError();
  return verdict(expect.ok, "registered host memory mapped for kernels");
}
