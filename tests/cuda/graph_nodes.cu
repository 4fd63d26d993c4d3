// A CUDA graph built node by node, as the runtime's graph API builds one: a memset node, two
// kernel nodes after it that do not depend on each other, a kernel node joining them, a child
// graph (a kernel node and a 1D copy node), a 3D copy node and a host node. The join's
// dependency on one branch is added afterwards (cudaGraphAddDependencies) between nodes added in
// the other order, so running the nodes in the order they were added would be wrong. The graph
// runs twice, the second time with new arguments for one kernel node
// (cudaGraphExecKernelNodeSetParams); a graph whose dependencies form a cycle is refused.
#include <cstdio>
#include <vector>

#include <cuda_runtime.h>

#include "check.hpp"

constexpr int kN = 1024;

__global__ void addTo(int* v, int k) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < kN) v[i] += k;
}

__global__ void scaleTo(int* v, int k) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < kN) v[i] *= k;
}

// dst[i] = a[i] + b[i]
__global__ void join(const int* a, const int* b, int* dst) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < kN) dst[i] = a[i] + b[i];
}

struct Seen {
  int calls = 0;
};
void hostStep(void* p) { ++static_cast<Seen*>(p)->calls; }

cudaKernelNodeParams kernelNode(void* f, void** args) {
  cudaKernelNodeParams p{};
  p.func = f;
  p.gridDim = dim3(kN / 256);
  p.blockDim = dim3(256);
  p.kernelParams = args;
  return p;
}

int main() {
  int *a, *b, *c, *d;
  CHECK(cudaMalloc(&a, kN * sizeof(int)));
  CHECK(cudaMalloc(&b, kN * sizeof(int)));
  CHECK(cudaMalloc(&c, kN * sizeof(int)));
  CHECK(cudaMalloc(&d, kN * sizeof(int)));
  std::vector<int> host(kN, -1);
  Seen seen;

  cudaGraph_t graph, child;
  CHECK(cudaGraphCreate(&graph, 0));
  // a = 0x01010101 per element (bytes of 1), b = 3 (elements of 4 bytes).
  cudaGraphNode_t setA, setB, incA, mulB, joinAB, sub, copy3d, done;
  cudaMemsetParams ma{};
  ma.dst = a, ma.value = 1, ma.elementSize = 1, ma.width = kN * 4, ma.height = 1;
  CHECK(cudaGraphAddMemsetNode(&setA, graph, nullptr, 0, &ma));
  cudaMemsetParams mb{};
  mb.dst = b, mb.value = 3, mb.elementSize = 4, mb.width = kN, mb.height = 1;
  CHECK(cudaGraphAddMemsetNode(&setB, graph, nullptr, 0, &mb));
  int incBy = 5, mulBy = 7;
  void* incArgs[] = {&a, &incBy};
  void* mulArgs[] = {&b, &mulBy};
  void* joinArgs[] = {&a, &b, &c};
  cudaKernelNodeParams pInc = kernelNode((void*)addTo, incArgs);
  cudaKernelNodeParams pMul = kernelNode((void*)scaleTo, mulArgs);
  cudaKernelNodeParams pJoin = kernelNode((void*)join, joinArgs);
  // The join first, after the multiply only; the increment after it in the list, and the edge
  // from the increment to the join added afterwards.
  CHECK(cudaGraphAddKernelNode(&mulB, graph, &setB, 1, &pMul));
  CHECK(cudaGraphAddKernelNode(&joinAB, graph, &mulB, 1, &pJoin));
  CHECK(cudaGraphAddKernelNode(&incA, graph, &setA, 1, &pInc));
  CHECK(cudaGraphAddDependencies(graph, &incA, &joinAB, nullptr, 1));
  // Child graph: c += 100, then d = c.
  CHECK(cudaGraphCreate(&child, 0));
  int hundred = 100;
  void* childArgs[] = {&c, &hundred};
  cudaKernelNodeParams pChild = kernelNode((void*)addTo, childArgs);
  cudaGraphNode_t childAdd, childCopy;
  CHECK(cudaGraphAddKernelNode(&childAdd, child, nullptr, 0, &pChild));
  CHECK(cudaGraphAddMemcpyNode1D(&childCopy, child, &childAdd, 1, d, c, kN * sizeof(int),
                                 cudaMemcpyDeviceToDevice));
  CHECK(cudaGraphAddChildGraphNode(&sub, graph, &joinAB, 1, child));
  // d to the host as 32 rows of 32 elements.
  cudaMemcpy3DParms p3{};
  p3.srcPtr = make_cudaPitchedPtr(d, 32 * sizeof(int), 32, 32);
  p3.dstPtr = make_cudaPitchedPtr(host.data(), 32 * sizeof(int), 32, 32);
  p3.extent = make_cudaExtent(32 * sizeof(int), 32, 1);
  p3.kind = cudaMemcpyDeviceToHost;
  CHECK(cudaGraphAddMemcpyNode(&copy3d, graph, &sub, 1, &p3));
  cudaHostNodeParams hp{hostStep, &seen};
  CHECK(cudaGraphAddHostNode(&done, graph, &copy3d, 1, &hp));
  size_t nodes = 0;
  CHECK(cudaGraphGetNodes(graph, nullptr, &nodes));

  cudaGraphExec_t exec;
  CHECK(cudaGraphInstantiate(&exec, graph, 0));
  int bad = 0;
  const auto check = [&](int inc, int mul, int calls) {
    const int want = 0x01010101 + inc + 3 * mul + 100;
    for (int x : host) bad += x != want;
    bad += seen.calls != calls;
  };
  CHECK(cudaGraphLaunch(exec, 0));
  CHECK(cudaStreamSynchronize(0));
  check(5, 7, 1);
  // New arguments for the multiply in the instantiation.
  int mulAgain = 11;
  void* mulArgs2[] = {&b, &mulAgain};
  cudaKernelNodeParams pMul2 = kernelNode((void*)scaleTo, mulArgs2);
  CHECK(cudaGraphExecKernelNodeSetParams(exec, mulB, &pMul2));
  EXPECT_ERROR(cudaGraphExecKernelNodeSetParams(exec, setB, &pMul2), cudaErrorInvalidValue);
  cudaGetLastError();
  CHECK(cudaGraphLaunch(exec, 0));
  CHECK(cudaStreamSynchronize(0));
  check(5, 11, 2);
  // A cycle: the join before the multiply it depends on.
  CHECK(cudaGraphAddDependencies(graph, &joinAB, &mulB, nullptr, 1));
  cudaGraphExec_t cyclic;
  EXPECT_ERROR(cudaGraphInstantiate(&cyclic, graph, 0), cudaErrorInvalidValue);
  cudaGetLastError();
  CHECK(cudaGraphExecDestroy(exec));
  CHECK(cudaGraphDestroy(child));
  CHECK(cudaGraphDestroy(graph));
  std::printf("a graph of %zu nodes ran twice; d[0] = %d\n", nodes, host[0]);
  return verdict(bad == 0 && nodes == 8, "a graph built node by node runs in dependency order");
}
