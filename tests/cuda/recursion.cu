// clang-format off
// build: -gencode arch=compute_75,code=[sm_75,compute_75] -gencode arch=compute_86,code=[sm_86,compute_86]
// clang-format on
// Recursive device functions (docs/ptx-support.md, "Recursion"): every activation has its own
// registers, parameters and local variables. Lanes of a warp recurse to different depths; a
// function passes the address of its own local array to the activations it calls, which write
// into it; two functions call each other; and a recursion deeper than the thread's stack is a
// kernel fault, not a hang or a wrong answer.
#include <cstdio>

#include "check.hpp"

__device__ int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

struct Node {
  int left, right, value;
};

// The subtree's sum, written by each child into its parent's local array through a pointer.
__device__ void subtreeSum(const Node* t, int i, int* into) {
  int sums[2];  // the children's sums: written by the activations this one calls
  if (t[i].left >= 0)
    subtreeSum(t, t[i].left, &sums[0]);
  else
    sums[0] = 0;
  if (t[i].right >= 0)
    subtreeSum(t, t[i].right, &sums[1]);
  else
    sums[1] = 0;
  *into = t[i].value + sums[0] + sums[1];
}

__device__ bool isOdd(unsigned n);
__device__ bool isEven(unsigned n) { return n == 0 ? true : isOdd(n - 1); }
__device__ bool isOdd(unsigned n) { return n == 0 ? false : isEven(n - 1); }

// Not a tail call: the activation reads its own frame after the call returns.
__device__ unsigned long long down(unsigned n, unsigned long long acc) {
  volatile int pad[8];  // a frame of its own on the stack in every activation
  pad[n & 7] = static_cast<int>(n);
  if (n == 0) return acc;
  const unsigned long long r = down(n - 1, acc * 3 + pad[n & 7]);
  return r + static_cast<unsigned long long>(pad[n & 7]);
}

__global__ void recurse(int* fibs, int* sums, int* parity, const Node* tree, int nodes) {
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  fibs[t] = fib(t % 17);  // lanes of a warp at depths 0 to 16
  subtreeSum(tree, t % nodes, &sums[t]);
  parity[t] = isEven(static_cast<unsigned>(t % 37)) ? 2 : 1;
}

__global__ void deep(unsigned long long* out, unsigned depth) { *out = down(depth, 1); }

int main() {
  constexpr int nodes = 63, threads = 96, blocks = 2, n = threads * blocks;
  Node host[nodes];
  for (int i = 0; i < nodes; ++i)
    host[i] = {2 * i + 1 < nodes ? 2 * i + 1 : -1, 2 * i + 2 < nodes ? 2 * i + 2 : -1, 3 * i + 1};
  Node* tree;
  int *fibs, *sums, *parity;
  unsigned long long* deepOut;
  CHECK(cudaMalloc(&tree, sizeof host));
  CHECK(cudaMalloc(&fibs, n * sizeof(int)));
  CHECK(cudaMalloc(&sums, n * sizeof(int)));
  CHECK(cudaMalloc(&parity, n * sizeof(int)));
  CHECK(cudaMalloc(&deepOut, sizeof(unsigned long long)));
  CHECK(cudaMemcpy(tree, host, sizeof host, cudaMemcpyHostToDevice));
  recurse<<<blocks, threads>>>(fibs, sums, parity, tree, nodes);
  deep<<<1, 1>>>(deepOut, 20);
  int gotFib[n], gotSum[n], gotParity[n];
  unsigned long long gotDeep = 0;
  CHECK(cudaMemcpy(gotFib, fibs, sizeof gotFib, cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(gotSum, sums, sizeof gotSum, cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(gotParity, parity, sizeof gotParity, cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(&gotDeep, deepOut, sizeof gotDeep, cudaMemcpyDeviceToHost));
  // The expected values, computed here without recursion.
  int fibOf[17] = {0, 1};
  for (int i = 2; i < 17; ++i) fibOf[i] = fibOf[i - 1] + fibOf[i - 2];
  int sumOf[nodes];
  for (int i = nodes; i-- > 0;)
    sumOf[i] = host[i].value + (host[i].left >= 0 ? sumOf[host[i].left] : 0) +
               (host[i].right >= 0 ? sumOf[host[i].right] : 0);
  unsigned long long expectDeep = 1;
  for (unsigned d = 20; d > 0; --d) expectDeep = expectDeep * 3 + d;
  expectDeep += 20 * 21 / 2;  // each activation adds its n on the way back
  int wrong = 0;
  for (int t = 0; t < n; ++t)
    wrong += (gotFib[t] != fibOf[t % 17]) + (gotSum[t] != sumOf[t % nodes]) +
             (gotParity[t] != ((t % 37) % 2 == 0 ? 2 : 1));
  std::printf("fib(16) %d, tree sum %d (expected %d), down(20) %llu (expected %llu), %d wrong\n",
              gotFib[16], gotSum[0], sumOf[0], gotDeep, expectDeep, wrong);
  // A recursion far deeper than a thread's stack (1 KiB by default) faults.
  deep<<<1, 1>>>(deepOut, 100000);
  const cudaError_t overflow = cudaDeviceSynchronize();
  std::printf("down(100000): %s\n", cudaGetErrorName(overflow));
  return verdict(wrong == 0 && gotDeep == expectDeep && overflow == cudaErrorLaunchFailure,
                 "recursive device functions");
}
