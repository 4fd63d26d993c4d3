// clang-format off
// build: -gencode arch=compute_75,code=[sm_75,compute_75] -gencode arch=compute_86,code=[sm_86,compute_86]
// clang-format on
// Recursive device functions (docs/ptx-support.md, "Recursion"): every activation has its own
// registers, parameters and local variables. Lanes of a warp recurse to different depths; a
// function passes the address of its own local array to the activations it calls, which write
// into it; two functions call each other; a deeper recursion runs once the program raises the
// stack (cudaLimitStackSize); and a recursion deeper than the thread's stack is a kernel fault,
// not a hang or a wrong answer.
#include <cstdio>
#include <new>

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

// A scene graph: a group's virtual count() calls its children's, through their vtables.
struct Shape {
  __device__ virtual int count(int depth) const = 0;
};
struct Leaf : Shape {
  int v = 0;
  __device__ explicit Leaf(int value) : v(value) {}
  __device__ int count(int) const override { return v; }
};
struct Group : Shape {
  const Shape *a = nullptr, *b = nullptr;
  __device__ Group(const Shape* first, const Shape* second) : a(first), b(second) {}
  __device__ int count(int depth) const override {
    return a->count(depth + 1) * 2 + b->count(depth + 1) + depth;
  }
};

// Nodes 0-7 are leaves; 8-11 group pairs of leaves, 12-13 pairs of those, 14 is the root.
__global__ void buildScene(Leaf* leaves, Group* groups, const Shape** nodes) {
  for (int i = 0; i < 8; ++i) nodes[i] = new (&leaves[i]) Leaf(5 * i + 1);
  for (int g = 0; g < 7; ++g) {
    const int first = g < 4 ? 2 * g : g < 6 ? 8 + 2 * (g - 4) : 12;
    nodes[8 + g] = new (&groups[g]) Group(nodes[first], nodes[first + 1]);
  }
}

__global__ void countScene(const Shape* const* nodes, int* out) {
  out[threadIdx.x] = nodes[threadIdx.x % 15]->count(0);
}

int sceneCount(int node, int depth) {
  if (node < 8) return 5 * node + 1;
  const int g = node - 8, first = g < 4 ? 2 * g : g < 6 ? 8 + 2 * (g - 4) : 12;
  return sceneCount(first, depth + 1) * 2 + sceneCount(first + 1, depth + 1) + depth;
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
  Leaf* leaves;
  Group* groups;
  const Shape** scene;
  int* counts;
  CHECK(cudaMalloc(&leaves, 8 * sizeof(Leaf)));
  CHECK(cudaMalloc(&groups, 7 * sizeof(Group)));
  CHECK(cudaMalloc(&scene, 15 * sizeof(Shape*)));
  CHECK(cudaMalloc(&counts, 64 * sizeof(int)));
  buildScene<<<1, 1>>>(leaves, groups, scene);
  countScene<<<1, 64>>>(scene, counts);
  int gotCounts[64];
  CHECK(cudaMemcpy(gotCounts, counts, sizeof gotCounts, cudaMemcpyDeviceToHost));
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
  for (int t = 0; t < 64; ++t) wrong += gotCounts[t] != sceneCount(t % 15, 0);
  for (int t = 0; t < n; ++t)
    wrong += (gotFib[t] != fibOf[t % 17]) + (gotSum[t] != sumOf[t % nodes]) +
             (gotParity[t] != ((t % 37) % 2 == 0 ? 2 : 1));
  std::printf(
      "fib(16) %d, tree sum %d (expected %d), scene %d (expected %d), down(20) %llu "
      "(expected %llu), %d wrong\n",
      gotFib[16], gotSum[0], sumOf[0], gotCounts[14], sceneCount(14, 0), gotDeep, expectDeep,
      wrong);
  // 1,000 activations of 48 bytes need a larger stack than the default 1 KiB.
  size_t stack = 0;
  EXPECT_ERROR(cudaDeviceSetLimit(cudaLimitStackSize, 1 << 20), cudaErrorInvalidValue);
  EXPECT_ERROR(cudaGetLastError(), cudaErrorInvalidValue);  // more than a thread's local memory
  CHECK(cudaDeviceSetLimit(cudaLimitStackSize, 64 * 1024));
  CHECK(cudaDeviceGetLimit(&stack, cudaLimitStackSize));
  deep<<<1, 1>>>(deepOut, 1000);
  unsigned long long gotThousand = 0, expectThousand = 1;
  CHECK(cudaMemcpy(&gotThousand, deepOut, sizeof gotThousand, cudaMemcpyDeviceToHost));
  for (unsigned d = 1000; d > 0; --d) expectThousand = expectThousand * 3 + d;
  expectThousand += 1000ull * 1001 / 2;
  std::printf("with a %zu-byte stack: down(1000) %llu (expected %llu)\n", stack, gotThousand,
              expectThousand);
  // A recursion far deeper than a thread's stack faults.
  CHECK(cudaDeviceSetLimit(cudaLimitStackSize, 1024));
  deep<<<1, 1>>>(deepOut, 100000);
  const cudaError_t overflow = cudaDeviceSynchronize();
  std::printf("down(100000): %s\n", cudaGetErrorName(overflow));
  return verdict(wrong == 0 && gotDeep == expectDeep && stack == 64 * 1024 &&
                     gotThousand == expectThousand && overflow == cudaErrorLaunchFailure,
                 "recursive device functions");
}
