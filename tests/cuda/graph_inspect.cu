// A CUDA graph read back and changed through the runtime's graph API, as programs that tune a
// captured graph do: node types and parameters (kernel, memcpy, memset, host, event record and
// wait), roots, edges, dependencies and dependents; a kernel node's parameters read, changed and
// set again on the graph and on an instantiation; a node disabled in an instantiation; an edge
// removed and a node destroyed; a clone changed apart from its original; a captured stream's
// nodes; the graph as DOT.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <unistd.h>

#include <cuda_runtime.h>

#include "check.hpp"

constexpr int kN = 256;

__global__ void addTo(int* v, int k) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < kN) v[i] += k;
}

void countCall(void* counter) { ++*static_cast<int*>(counter); }

bool all(const std::vector<int>& v, int x) {
  for (int e : v)
    if (e != x) return false;
  return true;
}

int main() {
  char dotPath[] = "/tmp/gpusc-graph-XXXXXX";
  const int dotFile = mkstemp(dotPath);
  if (dotFile < 0) return verdict(false, "a temporary file for the DOT text");
  close(dotFile);
  Expectations expect;
  int* d = nullptr;
  CHECK(cudaMalloc(&d, kN * sizeof(int)));
  std::vector<int> h(kN, 0), init(kN, 3);
  int hostCalls = 0;
  cudaEvent_t event;
  CHECK(cudaEventCreate(&event));

  // A copy of 3s to the device -> a kernel adding 5 -> a host node and an event record; an
  // event wait and an empty node after it beside them.
  cudaGraph_t g;
  CHECK(cudaGraphCreate(&g, 0));
  cudaGraphNode_t copy, kernel, host, record, wait, empty;
  CHECK(cudaGraphAddMemcpyNode1D(&copy, g, nullptr, 0, d, init.data(), kN * sizeof(int),
                                 cudaMemcpyHostToDevice));
  int k = 5;
  void* args[] = {&d, &k};
  cudaKernelNodeParams kp = {};
  kp.func = reinterpret_cast<void*>(addTo);
  kp.gridDim = dim3(kN / 64);
  kp.blockDim = dim3(64);
  kp.kernelParams = args;
  CHECK(cudaGraphAddKernelNode(&kernel, g, &copy, 1, &kp));
  cudaHostNodeParams hp = {countCall, &hostCalls};
  CHECK(cudaGraphAddHostNode(&host, g, &kernel, 1, &hp));
  CHECK(cudaGraphAddEventRecordNode(&record, g, &kernel, 1, event));
  CHECK(cudaGraphAddEventWaitNode(&wait, g, nullptr, 0, event));
  CHECK(cudaGraphAddEmptyNode(&empty, g, &wait, 1));

  size_t n = 0;
  CHECK(cudaGraphGetNodes(g, nullptr, &n));
  std::vector<cudaGraphNode_t> nodes(n);
  CHECK(cudaGraphGetNodes(g, nodes.data(), &n));
  std::vector<cudaGraphNodeType> types(n);
  for (size_t i = 0; i < n; ++i) CHECK(cudaGraphNodeGetType(nodes[i], &types[i]));
  expect(n == 6 && types[0] == cudaGraphNodeTypeMemcpy && types[1] == cudaGraphNodeTypeKernel &&
             types[2] == cudaGraphNodeTypeHost && types[3] == cudaGraphNodeTypeEventRecord &&
             types[4] == cudaGraphNodeTypeWaitEvent && types[5] == cudaGraphNodeTypeEmpty,
         "node types");

  cudaKernelNodeParams got = {};
  CHECK(cudaGraphKernelNodeGetParams(kernel, &got));
  expect(got.func == kp.func && got.gridDim.x == kN / 64 && got.blockDim.x == 64 &&
             *static_cast<int**>(got.kernelParams[0]) == d &&
             *static_cast<int*>(got.kernelParams[1]) == 5,
         "a kernel node's parameters");
  cudaMemcpy3DParms cp = {};
  CHECK(cudaGraphMemcpyNodeGetParams(copy, &cp));
  expect(cp.dstPtr.ptr == d && cp.srcPtr.ptr == init.data() &&
             cp.extent.width == kN * sizeof(int) && cp.kind == cudaMemcpyHostToDevice,
         "a 1D copy node's parameters");
  cudaHostNodeParams gotHost = {};
  cudaEvent_t gotEvent = nullptr;
  CHECK(cudaGraphHostNodeGetParams(host, &gotHost));
  CHECK(cudaGraphEventRecordNodeGetEvent(record, &gotEvent));
  expect(gotHost.fn == countCall && gotHost.userData == &hostCalls && gotEvent == event,
         "host and event nodes' parameters");
  expect(cudaGraphKernelNodeGetParams(copy, &got) == cudaErrorInvalidValue,
         "a memcpy node has no kernel parameters");
  cudaGetLastError();

  size_t roots = 0, edges = 0, deps = 0, dependents = 0;
  CHECK(cudaGraphGetRootNodes(g, nullptr, &roots));
  CHECK(cudaGraphGetEdges(g, nullptr, nullptr, nullptr, &edges));
  std::vector<cudaGraphNode_t> from(edges), to(edges);
  CHECK(cudaGraphGetEdges(g, from.data(), to.data(), nullptr, &edges));
  CHECK(cudaGraphNodeGetDependencies(host, nullptr, nullptr, &deps));
  CHECK(cudaGraphNodeGetDependentNodes(kernel, nullptr, nullptr, &dependents));
  expect(roots == 2 && edges == 4 && from[0] == copy && to[0] == kernel && deps == 1 &&
             dependents == 2,
         "roots, edges, dependencies and dependents");

  // Runs: 3 + 5 = 8. Then the kernel node adds 7 (its parameters read, changed, set) and the
  // instantiation's copy is disabled: 8 + 7 = 15.
  cudaGraphExec_t x;
  CHECK(cudaGraphInstantiate(&x, g, 0));
  CHECK(cudaGraphLaunch(x, 0));
  CHECK(cudaMemcpy(h.data(), d, kN * sizeof(int), cudaMemcpyDeviceToHost));
  expect(all(h, 8) && hostCalls == 1, "the graph runs");
  int k2 = 7;
  void* args2[] = {&d, &k2};
  got.kernelParams = args2;
  CHECK(cudaGraphExecKernelNodeSetParams(x, kernel, &got));
  CHECK(cudaGraphNodeSetEnabled(x, copy, 0));
  unsigned enabled = 1;
  CHECK(cudaGraphNodeGetEnabled(x, copy, &enabled));
  CHECK(cudaGraphLaunch(x, 0));
  CHECK(cudaMemcpy(h.data(), d, kN * sizeof(int), cudaMemcpyDeviceToHost));
  expect(enabled == 0 && all(h, 15) && hostCalls == 2,
         "new kernel parameters and a disabled copy in an instantiation");

  // A clone whose kernel adds 100, apart from the original; the original loses its host node and
  // the edge to its event record.
  cudaGraph_t c;
  cudaGraphNode_t cloneKernel;
  CHECK(cudaGraphClone(&c, g));
  CHECK(cudaGraphNodeFindInClone(&cloneKernel, kernel, c));
  int k3 = 100;
  void* args3[] = {&d, &k3};
  got.kernelParams = args3;
  CHECK(cudaGraphKernelNodeSetParams(cloneKernel, &got));
  CHECK(cudaGraphDestroyNode(host));
  CHECK(cudaGraphRemoveDependencies(g, &kernel, &record, nullptr, 1));
  CHECK(cudaGraphGetNodes(g, nullptr, &n));
  CHECK(cudaGraphGetEdges(g, nullptr, nullptr, nullptr, &edges));
  cudaGraphExec_t xc, xg;
  CHECK(cudaGraphInstantiate(&xc, c, 0));
  CHECK(cudaGraphInstantiate(&xg, g, 0));
  CHECK(cudaGraphLaunch(xc, 0));
  CHECK(cudaMemcpy(h.data(), d, kN * sizeof(int), cudaMemcpyDeviceToHost));
  const bool cloneRan = all(h, 103) && hostCalls == 3;
  CHECK(cudaGraphLaunch(xg, 0));
  CHECK(cudaMemcpy(h.data(), d, kN * sizeof(int), cudaMemcpyDeviceToHost));
  expect(cloneRan && all(h, 8) && hostCalls == 3 && n == 5 && edges == 2,
         "a clone apart from its original, a node destroyed and an edge removed");

  // A captured stream: a kernel, a copy, a memset and a host function, each a node of its type.
  cudaStream_t s;
  CHECK(cudaStreamCreate(&s));
  cudaGraph_t captured;
  CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  addTo<<<kN / 64, 64, 0, s>>>(d, 1);
  CHECK(cudaMemcpyAsync(h.data(), d, kN * sizeof(int), cudaMemcpyDeviceToHost, s));
  CHECK(cudaMemsetAsync(d, 0, kN * sizeof(int), s));
  CHECK(cudaLaunchHostFunc(s, countCall, &hostCalls));
  CHECK(cudaStreamEndCapture(s, &captured));
  CHECK(cudaGraphGetNodes(captured, nullptr, &n));
  nodes.resize(n);
  CHECK(cudaGraphGetNodes(captured, nodes.data(), &n));
  types.resize(n);
  for (size_t i = 0; i < n; ++i) CHECK(cudaGraphNodeGetType(nodes[i], &types[i]));
  cudaMemsetParams mp = {};
  CHECK(cudaGraphKernelNodeGetParams(nodes[0], &got));
  CHECK(cudaGraphMemsetNodeGetParams(nodes[2], &mp));
  expect(n == 4 && types[0] == cudaGraphNodeTypeKernel && types[1] == cudaGraphNodeTypeMemcpy &&
             types[2] == cudaGraphNodeTypeMemset && types[3] == cudaGraphNodeTypeHost &&
             got.gridDim.x == kN / 64 && *static_cast<int*>(got.kernelParams[1]) == 1 &&
             mp.dst == d && mp.width == kN * sizeof(int) && mp.value == 0,
         "a captured stream's nodes");

  // CUDA 12.2's generic calls: a memset node to 1s and a kernel node adding 2 after it, the
  // kernel's parameters set again (adding 4) through cudaGraphNodeSetParams: 5.
  cudaGraph_t g2;
  CHECK(cudaGraphCreate(&g2, 0));
  cudaGraphNodeParams np = {};
  np.type = cudaGraphNodeTypeMemset;
  np.memset.dst = d;
  np.memset.value = 1;
  np.memset.elementSize = 4;
  np.memset.width = kN;
  np.memset.height = 1;
  cudaGraphNode_t set2, add2;
  CHECK(cudaGraphAddNode(&set2, g2, nullptr, nullptr, 0, &np));
  int k4 = 2;
  void* args4[] = {&d, &k4};
  np = {};
  np.type = cudaGraphNodeTypeKernel;
  np.kernel.func = reinterpret_cast<void*>(addTo);
  np.kernel.gridDim = dim3(kN / 64);
  np.kernel.blockDim = dim3(64);
  np.kernel.kernelParams = args4;
  CHECK(cudaGraphAddNode(&add2, g2, &set2, nullptr, 1, &np));
  k4 = 4;
  CHECK(cudaGraphNodeSetParams(add2, &np));
  cudaGraphExec_t x2;
  CHECK(cudaGraphInstantiate(&x2, g2, 0));
  CHECK(cudaGraphLaunch(x2, 0));
  CHECK(cudaMemcpy(h.data(), d, kN * sizeof(int), cudaMemcpyDeviceToHost));
  cudaGraphNodeType t2;
  CHECK(cudaGraphNodeGetType(set2, &t2));
  expect(all(h, 5) && t2 == cudaGraphNodeTypeMemset, "nodes added and set by the generic calls");
  CHECK(cudaGraphExecDestroy(x2));
  CHECK(cudaGraphDestroy(g2));

  CHECK(cudaGraphDebugDotPrint(g, dotPath, 0));
  FILE* f = std::fopen(dotPath, "r");
  char text[4096] = {};
  const size_t read = f ? std::fread(text, 1, sizeof text - 1, f) : 0;
  if (f) std::fclose(f);
  std::remove(dotPath);
  expect(read > 0 && std::strstr(text, "digraph") &&
             std::strstr(text, "kernel _Z5addToPii <<<(4,1,1), (64,1,1)>>>") &&
             std::strstr(text, "n0 -> n1"),
         "the graph as DOT");

  CHECK(cudaGraphExecDestroy(x));
  CHECK(cudaGraphExecDestroy(xc));
  CHECK(cudaGraphExecDestroy(xg));
  CHECK(cudaGraphDestroy(g));
  CHECK(cudaGraphDestroy(c));
  CHECK(cudaGraphDestroy(captured));
  CHECK(cudaFree(d));
  return verdict(expect.ok, "graphs read back and changed");
}
