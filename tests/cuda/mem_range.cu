// What cudaMemAdvise and cudaMemPrefetchAsync said of a managed range, read back with
// cudaMemRangeGetAttribute(s): each attribute over a whole range, over parts that differ, and
// after advice is undone.
#include <cstdio>

#include "check.hpp"

int attribute(cudaMemRangeAttribute a, const void* p, size_t bytes) {
  int v = 12345;
  CHECK(cudaMemRangeGetAttribute(&v, sizeof v, a, p, bytes));
  return v;
}

int main() {
  Expectations expect;
  constexpr size_t kBytes = 3 << 16, kHalf = kBytes / 2;
  char* m = nullptr;
  CHECK(cudaMallocManaged(&m, kBytes));
  const cudaMemLocation device = {cudaMemLocationTypeDevice, 0};
  const cudaMemLocation host = {cudaMemLocationTypeHost, 0};

  expect(attribute(cudaMemRangeAttributeReadMostly, m, kBytes) == 0 &&
             attribute(cudaMemRangeAttributePreferredLocation, m, kBytes) == cudaInvalidDeviceId &&
             attribute(cudaMemRangeAttributeLastPrefetchLocation, m, kBytes) == cudaInvalidDeviceId,
         "no advice");

  CHECK(cudaMemAdvise(m, kBytes, cudaMemAdviseSetReadMostly, device));
  CHECK(cudaMemAdvise(m, kHalf, cudaMemAdviseSetPreferredLocation, device));
  CHECK(cudaMemAdvise(m + kHalf, kHalf, cudaMemAdviseSetPreferredLocation, host));
  CHECK(cudaMemAdvise(m, kBytes, cudaMemAdviseSetAccessedBy, device));
  CHECK(cudaMemPrefetchAsync(m + kHalf, kHalf, device, 0, 0));
  int accessedBy[3] = {7, 7, 7};
  CHECK(cudaMemRangeGetAttribute(accessedBy, sizeof accessedBy, cudaMemRangeAttributeAccessedBy, m,
                                 kBytes));
  expect(
      attribute(cudaMemRangeAttributeReadMostly, m, kBytes) == 1 &&
          attribute(cudaMemRangeAttributePreferredLocation, m, kHalf) == 0 &&
          attribute(cudaMemRangeAttributePreferredLocation, m + kHalf, kHalf) == cudaCpuDeviceId &&
          attribute(cudaMemRangeAttributePreferredLocation, m, kBytes) == cudaInvalidDeviceId &&
          attribute(cudaMemRangeAttributePreferredLocationType, m, kHalf) ==
              cudaMemLocationTypeDevice &&
          attribute(cudaMemRangeAttributePreferredLocationId, m, kHalf) == 0 &&
          attribute(cudaMemRangeAttributePreferredLocationType, m, kBytes) ==
              cudaMemLocationTypeInvalid &&
          accessedBy[0] == 0 && accessedBy[1] == cudaInvalidDeviceId &&
          accessedBy[2] == cudaInvalidDeviceId &&
          attribute(cudaMemRangeAttributeLastPrefetchLocation, m + kHalf, kHalf) == 0 &&
          attribute(cudaMemRangeAttributeLastPrefetchLocation, m, kBytes) == cudaInvalidDeviceId,
      "advice and a prefetch, over the whole range and its halves");

  CHECK(cudaMemAdvise(m, 4096, cudaMemAdviseUnsetReadMostly, device));
  CHECK(cudaMemAdvise(m, kBytes, cudaMemAdviseUnsetAccessedBy, device));
  CHECK(cudaMemPrefetchAsync(m + kHalf, kHalf, host, 0, 0));
  void* data[2] = {nullptr, nullptr};
  int readMostly = 7, lastPrefetch = 7;
  data[0] = &readMostly;
  data[1] = &lastPrefetch;
  size_t sizes[2] = {4, 4};
  cudaMemRangeAttribute which[2] = {cudaMemRangeAttributeReadMostly,
                                    cudaMemRangeAttributeLastPrefetchLocation};
  CHECK(cudaMemRangeGetAttributes(data, sizes, which, 2, m + kHalf, kHalf));
  CHECK(cudaMemRangeGetAttribute(accessedBy, sizeof accessedBy, cudaMemRangeAttributeAccessedBy, m,
                                 kBytes));
  expect(attribute(cudaMemRangeAttributeReadMostly, m, kBytes) == 0 && readMostly == 1 &&
             lastPrefetch == cudaCpuDeviceId && accessedBy[0] == cudaInvalidDeviceId,
         "advice undone, a later prefetch");

  int v = 0;
  int hostOnly[4];
  expect(cudaMemRangeGetAttribute(&v, sizeof v, cudaMemRangeAttributeReadMostly, hostOnly,
                                  sizeof hostOnly) == cudaErrorInvalidValue,
         "a range outside managed memory is refused");
  CHECK(cudaFree(m));
  return verdict(expect.ok, "managed memory ranges' attributes");
}
