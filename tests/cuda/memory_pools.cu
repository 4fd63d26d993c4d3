// Stream-ordered allocation as applications use it: the device says it supports memory pools,
// the default pool's release threshold is set and read back, cudaMallocAsync's buffers work in a
// kernel and are counted by the pool that gave them (used now and at most, a high watermark
// reset), a created pool with a maximum size refuses what would pass it, becomes the device's
// current pool for cudaMallocAsync, and can be destroyed while memory from it is still allocated
// (the default pool becomes current again); pools' access and the calls gpusc refuses.
#include <cstdint>
#include <cstring>

#include "check.hpp"

__global__ void fill(int* v, int n, int base) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) v[i] = base + i;
}

__global__ void add(const int* a, const int* b, int* c, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}

static uint64_t attribute(cudaMemPool_t pool, cudaMemPoolAttr attr) {
  uint64_t v = 0;
  CHECK(cudaMemPoolGetAttribute(pool, attr, &v));
  return v;
}

int main() {
  bool ok = true;
  int supported = 0;
  CHECK(cudaDeviceGetAttribute(&supported, cudaDevAttrMemoryPoolsSupported, 0));
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  ok &= supported == 1 && prop.memoryPoolsSupported == 1;

  cudaMemPool_t pool = nullptr, current = nullptr;
  CHECK(cudaDeviceGetDefaultMemPool(&pool, 0));
  CHECK(cudaDeviceGetMemPool(&current, 0));
  ok &= pool != nullptr && current == pool;
  uint64_t threshold = UINT64_MAX;
  CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold));
  ok &= attribute(pool, cudaMemPoolAttrReleaseThreshold) == UINT64_MAX;
  int reuse = 0;
  CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolReuseAllowOpportunistic, &reuse));
  reuse = 1;
  CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolReuseAllowOpportunistic, &reuse));
  ok &= reuse == 0;
  const uint64_t usedBefore = attribute(pool, cudaMemPoolAttrUsedMemCurrent);

  // Three buffers on two streams, the sum checked on the host.
  const int n = 1000;
  const size_t bytes = n * sizeof(int);
  cudaStream_t s1, s2;
  CHECK(cudaStreamCreate(&s1));
  CHECK(cudaStreamCreate(&s2));
  int *a, *b, *c;
  CHECK(cudaMallocAsync(&a, bytes, s1));
  CHECK(cudaMallocAsync(&b, bytes, s2));
  CHECK(cudaMallocAsync(&c, bytes, s1));
  ok &= attribute(pool, cudaMemPoolAttrUsedMemCurrent) == usedBefore + 3 * bytes;
  ok &= attribute(pool, cudaMemPoolAttrReservedMemCurrent) >= usedBefore + 3 * bytes;
  fill<<<(n + 127) / 128, 128, 0, s1>>>(a, n, 0);
  fill<<<(n + 127) / 128, 128, 0, s2>>>(b, n, 1000);
  cudaEvent_t done;
  CHECK(cudaEventCreate(&done));
  CHECK(cudaEventRecord(done, s2));
  CHECK(cudaStreamWaitEvent(s1, done, 0));
  add<<<(n + 127) / 128, 128, 0, s1>>>(a, b, c, n);
  int host[n];
  CHECK(cudaMemcpyAsync(host, c, bytes, cudaMemcpyDeviceToHost, s1));
  CHECK(cudaFreeAsync(a, s1));
  CHECK(cudaFreeAsync(b, s1));
  CHECK(cudaStreamSynchronize(s1));
  for (int i = 0; i < n; ++i) ok &= host[i] == 1000 + 2 * i;
  ok &= attribute(pool, cudaMemPoolAttrUsedMemCurrent) == usedBefore + bytes;
  ok &= attribute(pool, cudaMemPoolAttrUsedMemHigh) >= usedBefore + 3 * bytes;
  uint64_t zero = 0;
  CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrUsedMemHigh, &zero));
  ok &= attribute(pool, cudaMemPoolAttrUsedMemHigh) == usedBefore + bytes;
  uint64_t one = 1;
  EXPECT_ERROR(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrUsedMemHigh, &one),
               cudaErrorInvalidValue);
  EXPECT_ERROR(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &zero),
               cudaErrorInvalidValue);
  CHECK(cudaFree(c));  // cudaFree also gives memory back to its pool
  ok &= attribute(pool, cudaMemPoolAttrUsedMemCurrent) == usedBefore;
  CHECK(cudaMemPoolTrimTo(pool, 0));

  // A pool of at most 16 KiB.
  cudaMemPoolProps props;
  std::memset(&props, 0, sizeof props);
  props.allocType = cudaMemAllocationTypePinned;
  props.location.type = cudaMemLocationTypeDevice;
  props.location.id = 0;
  props.maxSize = 16 << 10;
  cudaMemPool_t small = nullptr;
  CHECK(cudaMemPoolCreate(&small, &props));
  int *p1, *p2, *p3;
  CHECK(cudaMallocFromPoolAsync(reinterpret_cast<void**>(&p1), 12 << 10, small, s1));
  EXPECT_ERROR(cudaMallocFromPoolAsync(reinterpret_cast<void**>(&p2), 8 << 10, small, s1),
               cudaErrorMemoryAllocation);
  cudaGetLastError();
  CHECK(cudaDeviceSetMemPool(0, small));
  CHECK(cudaDeviceGetMemPool(&current, 0));
  ok &= current == small;
  CHECK(cudaMallocAsync(&p2, 4 << 10, s1));  // from the current pool: full now
  ok &= attribute(small, cudaMemPoolAttrUsedMemCurrent) == (16 << 10);
  ok &= attribute(pool, cudaMemPoolAttrUsedMemCurrent) == usedBefore;
  fill<<<8, 128, 0, s1>>>(p2, 1024, 7);
  int back[1024];
  CHECK(cudaMemcpyAsync(back, p2, sizeof back, cudaMemcpyDeviceToHost, s1));
  CHECK(cudaStreamSynchronize(s1));
  for (int i = 0; i < 1024; ++i) ok &= back[i] == 7 + i;
  EXPECT_ERROR(cudaMallocAsync(&p3, 4, s1), cudaErrorMemoryAllocation);
  cudaGetLastError();
  // Destroyed with two allocations outstanding: the default pool is current again, the memory
  // stays usable until freed, and the handle is gone.
  CHECK(cudaMemPoolDestroy(small));
  CHECK(cudaDeviceGetMemPool(&current, 0));
  ok &= current == pool;
  fill<<<1, 32, 0, s1>>>(p1, 32, 3);
  CHECK(cudaMemcpyAsync(back, p1, 32 * sizeof(int), cudaMemcpyDeviceToHost, s1));
  CHECK(cudaFreeAsync(p1, s1));
  CHECK(cudaFreeAsync(p2, s1));
  CHECK(cudaStreamSynchronize(s1));
  for (int i = 0; i < 32; ++i) ok &= back[i] == 3 + i;
  uint64_t v = 0;
  EXPECT_ERROR(cudaMemPoolGetAttribute(small, cudaMemPoolAttrUsedMemCurrent, &v),
               cudaErrorInvalidValue);
  EXPECT_ERROR(cudaMemPoolDestroy(pool), cudaErrorInvalidValue);  // a default pool
  cudaGetLastError();

  // Access: the device reads and writes its pools.
  cudaMemAccessDesc desc;
  desc.location = props.location;
  desc.flags = cudaMemAccessFlagsProtReadWrite;
  CHECK(cudaMemPoolSetAccess(pool, &desc, 1));
  cudaMemAccessFlags flags = cudaMemAccessFlagsProtNone;
  cudaMemLocation location = props.location;
  CHECK(cudaMemPoolGetAccess(&flags, pool, &location));
  ok &= flags == cudaMemAccessFlagsProtReadWrite;
  location.id = 1;
  EXPECT_ERROR(cudaMemPoolGetAccess(&flags, pool, &location), cudaErrorInvalidDevice);
  // Pools shared with other processes are not there (no handle types supported).
  int handleTypes = -1;
  CHECK(cudaDeviceGetAttribute(&handleTypes, cudaDevAttrMemoryPoolSupportedHandleTypes, 0));
  ok &= handleTypes == 0;
  props.handleTypes = cudaMemHandleTypePosixFileDescriptor;
  EXPECT_ERROR(cudaMemPoolCreate(&small, &props), cudaErrorNotSupported);
  cudaGetLastError();

  CHECK(cudaEventDestroy(done));
  CHECK(cudaStreamDestroy(s1));
  CHECK(cudaStreamDestroy(s2));
  return verdict(ok, "stream-ordered allocation and memory pools");
}
