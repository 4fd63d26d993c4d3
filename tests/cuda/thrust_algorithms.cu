// clang-format off
// build: -gencode arch=compute_75,code=[sm_75,compute_75] -gencode arch=compute_86,code=[sm_86,compute_86]
// clang-format on
// A program that writes no kernel of its own: Thrust's algorithms, whose kernels come from CUB
// (templates whose mangled names run to thousands of characters, tuned per architecture: the fat
// binary holds PTX for compute_75 and compute_86, and gpusc picks the one for the platform's
// compute capability). Radix sort (CUB's onesweep, whose tiles wait on earlier tiles' published
// counts), a merge sort by a comparator (launched with programmatic dependent launch allowed), a
// reduction, a transform and an inclusive scan (CUB's decoupled look-back) and a stream
// compaction, each checked exactly against the host.
//   thrust_algorithms [N]
#include <algorithm>
#include <cstdlib>
#include <numeric>
#include <vector>

#include <thrust/copy.h>
#include <thrust/device_vector.h>
#include <thrust/host_vector.h>
#include <thrust/reduce.h>
#include <thrust/scan.h>
#include <thrust/sort.h>
#include <thrust/transform.h>

#include "check.hpp"

namespace {

struct Residue {
  __host__ __device__ int operator()(int x) const { return (x % 1000) * (x % 1000) % 1000; }
};
struct Descending {
  __host__ __device__ bool operator()(int a, int b) const { return a > b; }
};
struct IsOdd {
  __host__ __device__ bool operator()(int x) const { return (x & 1) != 0; }
};

template <class T>
bool same(const thrust::device_vector<T>& d, const std::vector<T>& want) {
  const thrust::host_vector<T> got = d;
  return got.size() == want.size() && std::equal(want.begin(), want.end(), got.begin());
}

}  // namespace

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 20000;
  std::vector<int> h(n);
  unsigned s = 12345;
  for (auto& v : h) {
    s = s * 1664525u + 1013904223u;
    v = static_cast<int>((s >> 8) % 1000000u);
  }
  std::vector<int> sorted = h;
  std::sort(sorted.begin(), sorted.end());

  thrust::device_vector<int> d(h.begin(), h.end());
  thrust::sort(d.begin(), d.end());
  const bool radix = same(d, sorted);

  thrust::device_vector<int> m(h.begin(), h.end());
  thrust::sort(m.begin(), m.end(), Descending());
  const bool merge = same(m, std::vector<int>(sorted.rbegin(), sorted.rend()));

  const long long sum = thrust::reduce(d.begin(), d.end(), 0LL);
  const bool reduce = sum == std::accumulate(sorted.begin(), sorted.end(), 0LL);

  thrust::device_vector<int> r(n);
  thrust::transform(d.begin(), d.end(), r.begin(), Residue());
  thrust::inclusive_scan(r.begin(), r.end(), r.begin());
  std::vector<int> scanned(n);
  int acc = 0;
  for (int i = 0; i < n; ++i) scanned[i] = acc += Residue()(sorted[i]);
  const bool scan = same(r, scanned);

  thrust::device_vector<int> odd(n);
  odd.resize(thrust::copy_if(d.begin(), d.end(), odd.begin(), IsOdd()) - odd.begin());
  std::vector<int> wantOdd;
  std::copy_if(sorted.begin(), sorted.end(), std::back_inserter(wantOdd), IsOdd());
  const bool compact = same(odd, wantOdd);

  std::printf("radix sort %d, merge sort %d, reduce %d, transform and scan %d, copy_if %d\n", radix,
              merge, reduce, scan, compact);
  return verdict(radix && merge && reduce && scan && compact,
                 "Thrust's sorts, reduction, scan and compaction exact");
}
