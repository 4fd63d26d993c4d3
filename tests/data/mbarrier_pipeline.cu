// A producer/consumer pipeline through shared memory, as CUDA 12+ code for sm_90 writes it:
// thread 0 fills a two-stage ring of shared buffers with bulk asynchronous copies
// (cp.async.bulk, completing on a "full" mbarrier with expect_tx), every thread waits for a
// stage (try_wait.parity), computes, and arrives on the stage's "empty" mbarrier, which the
// producer waits for before it refills the stage. The results leave through a bulk copy to global
// memory (bulk group). tests/test_ptx_isa.cpp (Mbarrier.*) checks them against the same formula.
// regen_ptx.sh: -arch=sm_90
#include <cuda/ptx>
namespace ptx = cuda::ptx;

constexpr int kThreads = 128;  // one int4 per thread and chunk
constexpr int kStages = 2;

__device__ inline void waitParity(uint64_t* bar, uint32_t parity) {
  while (!ptx::mbarrier_try_wait_parity(bar, parity)) {
  }
}

// out[c * kThreads + t] = in[c * kThreads + t] * (c + 1) + t (element-wise on int4), c < chunks
extern "C" __global__ void pipeline(const int4* in, int4* out, int chunks) {
  __shared__ alignas(128) int4 ring[kStages][kThreads];
  __shared__ alignas(128) int4 result[kThreads];
  __shared__ alignas(8) uint64_t full[kStages], empty[kStages];
  const int t = threadIdx.x;
  if (t == 0) {
    for (int s = 0; s < kStages; ++s) {
      ptx::mbarrier_init(&full[s], 1);
      ptx::mbarrier_init(&empty[s], kThreads);
    }
  }
  __syncthreads();
  int4 acc = make_int4(0, 0, 0, 0);
  for (int c = 0; c < chunks; ++c) {
    const int s = c % kStages;
    const uint32_t round = c / kStages;
    if (t == 0) {
      if (c >= kStages) waitParity(&empty[s], (round - 1) & 1);  // consumers freed the stage
      ptx::mbarrier_arrive_expect_tx(ptx::sem_release, ptx::scope_cta, ptx::space_shared, &full[s],
                                     sizeof(ring[s]));
      ptx::cp_async_bulk(ptx::space_shared, ptx::space_global, &ring[s][0], in + c * kThreads,
                         sizeof(ring[s]), &full[s]);
    }
    waitParity(&full[s], round & 1);
    const int4 v = ring[s][t];
    acc.x += v.x * (c + 1) + t;
    acc.y += v.y * (c + 1) + t;
    acc.z += v.z * (c + 1) + t;
    acc.w += v.w * (c + 1) + t;
    ptx::mbarrier_arrive(&empty[s]);
  }
  result[t] = acc;
  ptx::fence_proxy_async(ptx::space_shared);
  __syncthreads();
  if (t == 0) {
    ptx::cp_async_bulk(ptx::space_global, ptx::space_shared, out + blockIdx.x * kThreads,
                       &result[0], sizeof(result));
    ptx::cp_async_bulk_commit_group();
    ptx::cp_async_bulk_wait_group_read(ptx::n32_t<0>());
  }
}
