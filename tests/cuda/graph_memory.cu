// What graphs own and share, as libraries that build graphs use it: memory allocation and free
// nodes made node by node (an allocation at a fixed address, freed in its graph or by another
// graph, the device's graph-memory figures, CUDA's rules for graphs with memory nodes); a child
// graph node's own graph read back and changed, and an instantiation's child node given another
// graph; user objects whose destructor runs when the last graph holding them goes, also held by
// the graph a capture is building; a kernel node's attributes (an access-policy window read back,
// the cooperative attribute making a grid-synchronising kernel's node cooperative); copies to and
// from a symbol as graph nodes; a capture depending on a node added to its graph; a batch of
// copies and a 3D peer copy; the stream capture mode exchanged; the shared memory's bank
// configuration; a stream's attributes copied.
#include <cooperative_groups.h>

#include <cstdio>
#include <cstring>
#include <vector>

#include <cuda_runtime.h>

#include "check.hpp"

namespace cg = cooperative_groups;

constexpr int kN = 256;

__device__ int table[kN + 16];

__global__ void fill(int* v, int x) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < kN) v[i] = x + i;
}

__global__ void addTo(int* v, int k) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < kN) v[i] += k;
}

__global__ void copyOut(const int* from, int* to) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < kN) to[i] = from[i];
}

// Each block writes its slice, the grid syncs, and every thread reads another block's slice.
__global__ void rotate(int* v, int* out) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  v[i] = i;
  cg::this_grid().sync();
  out[i] = v[(i + blockDim.x) % (gridDim.x * blockDim.x)];
}

cudaKernelNodeParams kernelParams(void* func, void** args, int blocks = kN / 64) {
  cudaKernelNodeParams p = {};
  p.func = func;
  p.gridDim = dim3(blocks);
  p.blockDim = dim3(64);
  p.kernelParams = args;
  return p;
}

bool ramp(const std::vector<int>& v, int base) {
  for (int i = 0; i < kN; ++i)
    if (v[i] != base + i) return false;
  return true;
}

int destroyed = 0;
void countDestroy(void* counter) {
  ++destroyed;
  *static_cast<int*>(counter) += 1;
}

uint64_t graphMem(cudaGraphMemAttributeType attr) {
  uint64_t v = 0;
  CHECK(cudaDeviceGetGraphMemAttribute(0, attr, &v));
  return v;
}

int main() {
  Expectations expect;
  int* out = nullptr;
  CHECK(cudaMalloc(&out, kN * sizeof(int)));
  std::vector<int> h(kN, -1);
  const size_t bytes = kN * sizeof(int);
  const uint64_t memBefore = graphMem(cudaGraphMemAttrUsedMemCurrent);

  // alloc -> fill -> add 7 -> copy out -> free, launched three times: the allocation keeps its
  // address, the graph's memory counts it while the graph exists.
  cudaGraph_t g;
  CHECK(cudaGraphCreate(&g, 0));
  cudaMemAllocNodeParams ap = {};
  ap.poolProps.allocType = cudaMemAllocationTypePinned;
  ap.poolProps.location.type = cudaMemLocationTypeDevice;
  ap.poolProps.location.id = 0;
  ap.bytesize = bytes;
  cudaGraphNode_t alloc, fillNode, add, copy, freeNode;
  CHECK(cudaGraphAddMemAllocNode(&alloc, g, nullptr, 0, &ap));
  int* scratch = static_cast<int*>(ap.dptr);
  int base = 1000, seven = 7;
  void* fillArgs[] = {&scratch, &base};
  void* addArgs[] = {&scratch, &seven};
  void* copyArgs[] = {&scratch, &out};
  cudaKernelNodeParams kp = kernelParams(reinterpret_cast<void*>(fill), fillArgs);
  CHECK(cudaGraphAddKernelNode(&fillNode, g, &alloc, 1, &kp));
  kp = kernelParams(reinterpret_cast<void*>(addTo), addArgs);
  CHECK(cudaGraphAddKernelNode(&add, g, &fillNode, 1, &kp));
  kp = kernelParams(reinterpret_cast<void*>(copyOut), copyArgs);
  CHECK(cudaGraphAddKernelNode(&copy, g, &add, 1, &kp));
  CHECK(cudaGraphAddMemFreeNode(&freeNode, g, &copy, 1, scratch));
  expect(scratch != nullptr && graphMem(cudaGraphMemAttrUsedMemCurrent) == memBefore + bytes,
         "an allocation node's memory is the graph's");
  cudaMemAllocNodeParams readAlloc = {};
  void* readFree = nullptr;
  CHECK(cudaGraphMemAllocNodeGetParams(alloc, &readAlloc));
  CHECK(cudaGraphMemFreeNodeGetParams(freeNode, &readFree));
  expect(readAlloc.dptr == scratch && readAlloc.bytesize == bytes && readFree == scratch &&
             readAlloc.poolProps.allocType == cudaMemAllocationTypePinned,
         "memory nodes' parameters read back");
  // CUDA's rules for a graph with memory nodes.
  cudaGraph_t clone, parent;
  cudaGraphNode_t child;
  EXPECT_ERROR(cudaGraphClone(&clone, g), cudaErrorInvalidValue);
  CHECK(cudaGraphCreate(&parent, 0));
  EXPECT_ERROR(cudaGraphAddChildGraphNode(&child, parent, nullptr, 0, g), cudaErrorInvalidValue);
  EXPECT_ERROR(cudaGraphDestroyNode(add), cudaErrorInvalidValue);
  EXPECT_ERROR(cudaGraphAddMemFreeNode(&child, g, nullptr, 0, scratch), cudaErrorInvalidValue);
  EXPECT_ERROR(cudaGraphAddMemFreeNode(&child, g, nullptr, 0, out), cudaErrorInvalidValue);
  ap.poolProps.allocType = cudaMemAllocationTypeInvalid;
  EXPECT_ERROR(cudaGraphAddMemAllocNode(&child, g, nullptr, 0, &ap), cudaErrorInvalidValue);
  ap.poolProps.allocType = cudaMemAllocationTypePinned;
  cudaGetLastError();
  cudaGraphExec_t x, second;
  CHECK(cudaGraphInstantiate(&x, g, 0));
  EXPECT_ERROR(cudaGraphInstantiate(&second, g, 0), cudaErrorInvalidValue);
  cudaGetLastError();
  bool every = true;
  for (int round = 0; round < 3; ++round) {
    std::fill(h.begin(), h.end(), -1);
    CHECK(cudaGraphLaunch(x, 0));
    CHECK(cudaMemcpy(h.data(), out, bytes, cudaMemcpyDeviceToHost));
    every = every && ramp(h, 1007);
  }
  expect(every, "a graph allocating, using and freeing its scratch memory, three launches");
  CHECK(cudaGraphExecDestroy(x));
  CHECK(cudaGraphInstantiate(&x, g, 0));  // the one before is gone
  CHECK(cudaGraphExecDestroy(x));
  CHECK(cudaGraphDestroy(g));
  const uint64_t high = graphMem(cudaGraphMemAttrUsedMemHigh);
  expect(graphMem(cudaGraphMemAttrUsedMemCurrent) == memBefore && high >= memBefore + bytes &&
             graphMem(cudaGraphMemAttrReservedMemHigh) == high,
         "the graph's memory goes with it; the high watermark stays");
  uint64_t zero = 0, seven64 = 7;
  CHECK(cudaDeviceSetGraphMemAttribute(0, cudaGraphMemAttrUsedMemHigh, &zero));
  EXPECT_ERROR(cudaDeviceSetGraphMemAttribute(0, cudaGraphMemAttrUsedMemHigh, &seven64),
               cudaErrorInvalidValue);
  EXPECT_ERROR(cudaDeviceSetGraphMemAttribute(0, cudaGraphMemAttrUsedMemCurrent, &zero),
               cudaErrorInvalidValue);
  cudaGetLastError();
  CHECK(cudaDeviceGraphMemTrim(0));
  expect(graphMem(cudaGraphMemAttrUsedMemHigh) == memBefore, "the high watermark reset");

  // An allocation its graph does not free outlives the launch; another graph's free node frees
  // it, so the first graph may run again.
  {
    cudaGraph_t maker, freer;
    CHECK(cudaGraphCreate(&maker, 0));
    CHECK(cudaGraphCreate(&freer, 0));
    cudaGraphNode_t a, f, fr;
    CHECK(cudaGraphAddMemAllocNode(&a, maker, nullptr, 0, &ap));
    int* kept = static_cast<int*>(ap.dptr);
    int start = 50;
    void* args[] = {&kept, &start};
    kp = kernelParams(reinterpret_cast<void*>(fill), args);
    CHECK(cudaGraphAddKernelNode(&f, maker, &a, 1, &kp));
    CHECK(cudaGraphAddMemFreeNode(&fr, freer, nullptr, 0, kept));
    cudaGraphExec_t mx, fx;
    CHECK(cudaGraphInstantiate(&mx, maker, 0));
    CHECK(cudaGraphInstantiate(&fx, freer, 0));
    CHECK(cudaGraphLaunch(mx, 0));
    CHECK(cudaMemcpy(h.data(), kept, bytes, cudaMemcpyDeviceToHost));
    const bool read = ramp(h, 50);
    const cudaError_t whileAllocated = cudaGraphLaunch(mx, 0);
    cudaGetLastError();
    CHECK(cudaGraphLaunch(fx, 0));
    const cudaError_t afterFree = cudaGraphLaunch(mx, 0);
    CHECK(cudaFree(kept));
    expect(read && whileAllocated == cudaErrorInvalidValue && afterFree == cudaSuccess,
           "an allocation outliving its graph's launch, freed by another graph");
    CHECK(cudaGraphExecDestroy(mx));
    CHECK(cudaGraphExecDestroy(fx));
    CHECK(cudaGraphDestroy(maker));
    CHECK(cudaGraphDestroy(freer));
  }

  // A child graph node's own graph: changed through cudaGraphChildGraphNodeGetGraph, it changes
  // instantiations made after, not before; an instantiation's node takes another graph's work.
  {
    cudaGraph_t body, other, embedded;
    CHECK(cudaGraphCreate(&body, 0));
    CHECK(cudaGraphCreate(&other, 0));
    int three = 3, forty = 40;
    void* bodyArgs[] = {&out, &three};
    void* otherArgs[] = {&out, &forty};
    cudaGraphNode_t bodyKernel, otherKernel, inner;
    kp = kernelParams(reinterpret_cast<void*>(fill), bodyArgs);
    CHECK(cudaGraphAddKernelNode(&bodyKernel, body, nullptr, 0, &kp));
    kp = kernelParams(reinterpret_cast<void*>(fill), otherArgs);
    CHECK(cudaGraphAddKernelNode(&otherKernel, other, nullptr, 0, &kp));
    CHECK(cudaGraphAddChildGraphNode(&child, parent, nullptr, 0, body));
    CHECK(cudaGraphChildGraphNodeGetGraph(child, &embedded));
    size_t count = 1;
    CHECK(cudaGraphGetNodes(embedded, &inner, &count));
    cudaGraphExec_t before, after;
    CHECK(cudaGraphInstantiate(&before, parent, 0));
    int nine = 900;
    void* changedArgs[] = {&out, &nine};
    kp = kernelParams(reinterpret_cast<void*>(fill), changedArgs);
    CHECK(cudaGraphKernelNodeSetParams(inner, &kp));
    CHECK(cudaGraphInstantiate(&after, parent, 0));
    cudaMemAllocNodeParams more = ap;
    EXPECT_ERROR(cudaGraphAddMemAllocNode(&inner, embedded, nullptr, 0, &more),
                 cudaErrorInvalidValue);
    cudaGetLastError();
    CHECK(cudaGraphLaunch(before, 0));
    CHECK(cudaMemcpy(h.data(), out, bytes, cudaMemcpyDeviceToHost));
    const bool old = ramp(h, 3);
    CHECK(cudaGraphLaunch(after, 0));
    CHECK(cudaMemcpy(h.data(), out, bytes, cudaMemcpyDeviceToHost));
    const bool changed = ramp(h, 900);
    CHECK(cudaGraphExecChildGraphNodeSetParams(before, child, other));
    CHECK(cudaGraphLaunch(before, 0));
    CHECK(cudaMemcpy(h.data(), out, bytes, cudaMemcpyDeviceToHost));
    const bool swapped = ramp(h, 40);
    cudaGraph_t empty;
    CHECK(cudaGraphCreate(&empty, 0));
    EXPECT_ERROR(cudaGraphExecChildGraphNodeSetParams(before, child, empty), cudaErrorInvalidValue);
    cudaGetLastError();
    expect(embedded != body && old && changed && swapped,
           "a child graph node's own graph, changed; an instantiation's child given another graph");
    CHECK(cudaGraphExecDestroy(before));
    CHECK(cudaGraphExecDestroy(after));
    CHECK(cudaGraphDestroy(body));
    CHECK(cudaGraphDestroy(other));
    CHECK(cudaGraphDestroy(empty));

    // A graph with memory nodes becomes a child only by moving it into the parent.
    cudaGraph_t withMemory;
    CHECK(cudaGraphCreate(&withMemory, 0));
    cudaGraphNode_t a, f, fr;
    CHECK(cudaGraphAddMemAllocNode(&a, withMemory, nullptr, 0, &ap));
    int* tmp = static_cast<int*>(ap.dptr);
    int start = 70;
    void* args[] = {&tmp, &start};
    void* outArgs[] = {&tmp, &out};
    kp = kernelParams(reinterpret_cast<void*>(fill), args);
    CHECK(cudaGraphAddKernelNode(&f, withMemory, &a, 1, &kp));
    kp = kernelParams(reinterpret_cast<void*>(copyOut), outArgs);
    cudaGraphNode_t c2;
    CHECK(cudaGraphAddKernelNode(&c2, withMemory, &f, 1, &kp));
    CHECK(cudaGraphAddMemFreeNode(&fr, withMemory, &c2, 1, tmp));
    cudaGraph_t holder;
    CHECK(cudaGraphCreate(&holder, 0));
    cudaGraphNodeParams np = {};
    np.type = cudaGraphNodeTypeGraph;
    np.graph.graph = withMemory;
    np.graph.ownership = cudaGraphChildGraphOwnershipMove;
    cudaGraphNode_t moved;
    CHECK(cudaGraphAddNode(&moved, holder, nullptr, nullptr, 0, &np));
    cudaGraph_t movedGraph = nullptr;
    CHECK(cudaGraphChildGraphNodeGetGraph(moved, &movedGraph));
    cudaGraphExec_t hx;
    CHECK(cudaGraphInstantiate(&hx, holder, 0));
    CHECK(cudaGraphLaunch(hx, 0));
    CHECK(cudaMemcpy(h.data(), out, bytes, cudaMemcpyDeviceToHost));
    expect(movedGraph == withMemory && ramp(h, 70),
           "a graph with memory nodes moved into a child graph node");
    CHECK(cudaGraphExecDestroy(hx));
    CHECK(cudaGraphDestroy(holder));
  }

  // User objects: the destructor runs when the last reference goes, a graph's or an
  // instantiation's included.
  {
    int calls = 0;
    cudaUserObject_t object;
    CHECK(cudaUserObjectCreate(&object, &calls, countDestroy, 1, cudaUserObjectNoDestructorSync));
    cudaGraph_t owner;
    CHECK(cudaGraphCreate(&owner, 0));
    cudaGraphNode_t e;
    CHECK(cudaGraphAddEmptyNode(&e, owner, nullptr, 0));
    CHECK(cudaGraphRetainUserObject(owner, object, 1, cudaGraphUserObjectMove));  // ours moved
    CHECK(cudaUserObjectRetain(object, 2));
    CHECK(cudaUserObjectRelease(object, 2));
    EXPECT_ERROR(cudaUserObjectRelease(object, 2), cudaErrorInvalidValue);  // we hold none
    cudaGetLastError();
    cudaGraphExec_t ox;
    CHECK(cudaGraphInstantiate(&ox, owner, 0));
    CHECK(cudaGraphDestroy(owner));
    const int whileInstantiated = calls;
    CHECK(cudaGraphLaunch(ox, 0));
    CHECK(cudaGraphExecDestroy(ox));
    const int afterAll = calls;

    // Held by the graph a capture builds (cudaStreamGetCaptureInfo gives it out).
    int captureCalls = 0;
    cudaStream_t s;
    CHECK(cudaStreamCreate(&s));
    CHECK(cudaUserObjectCreate(&object, &captureCalls, countDestroy, 1,
                               cudaUserObjectNoDestructorSync));
    CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
    int seventy = 70;
    fill<<<kN / 64, 64, 0, s>>>(out, seventy);
    cudaStreamCaptureStatus status;
    cudaGraph_t building = nullptr;
    CHECK(cudaStreamGetCaptureInfo(s, &status, nullptr, &building));
    CHECK(cudaGraphRetainUserObject(building, object, 1, cudaGraphUserObjectMove));
    cudaGraph_t captured;
    CHECK(cudaStreamEndCapture(s, &captured));
    size_t nodes = 0;
    CHECK(cudaGraphGetNodes(captured, nullptr, &nodes));
    const int duringGraph = captureCalls;
    CHECK(cudaGraphDestroy(captured));
    expect(whileInstantiated == 0 && afterAll == 1 && captured == building && nodes == 1 &&
               duringGraph == 0 && captureCalls == 1 && destroyed == 2,
           "user objects' destructors run when their last graph or instantiation goes");
    CHECK(cudaStreamDestroy(s));
  }

  // A kernel node's attributes: a hint read back as set; the cooperative attribute lets a
  // grid-synchronising kernel run as a node, and is copied to another node.
  {
    int* v = nullptr;
    int* rotated = nullptr;
    const int blocks = 4, threads = 64, n = blocks * threads;
    CHECK(cudaMalloc(&v, n * sizeof(int)));
    CHECK(cudaMalloc(&rotated, n * sizeof(int)));
    cudaGraph_t kg;
    CHECK(cudaGraphCreate(&kg, 0));
    void* args[] = {&v, &rotated};
    kp = kernelParams(reinterpret_cast<void*>(rotate), args, blocks);
    cudaGraphNode_t coop, plain;
    CHECK(cudaGraphAddKernelNode(&coop, kg, nullptr, 0, &kp));
    CHECK(cudaGraphAddKernelNode(&plain, kg, &coop, 1, &kp));
    cudaKernelNodeAttrValue value = {};
    value.accessPolicyWindow.base_ptr = v;
    value.accessPolicyWindow.num_bytes = n * sizeof(int);
    value.accessPolicyWindow.hitRatio = 0.5f;
    value.accessPolicyWindow.hitProp = cudaAccessPropertyPersisting;
    value.accessPolicyWindow.missProp = cudaAccessPropertyStreaming;
    CHECK(cudaGraphKernelNodeSetAttribute(coop, cudaKernelNodeAttributeAccessPolicyWindow, &value));
    value = {};
    value.cooperative = 1;
    CHECK(cudaGraphKernelNodeSetAttribute(coop, cudaKernelNodeAttributeCooperative, &value));
    CHECK(cudaGraphKernelNodeCopyAttributes(plain, coop));
    cudaKernelNodeAttrValue back = {}, backCoop = {};
    CHECK(cudaGraphKernelNodeGetAttribute(plain, cudaKernelNodeAttributeAccessPolicyWindow, &back));
    CHECK(cudaGraphKernelNodeGetAttribute(plain, cudaKernelNodeAttributeCooperative, &backCoop));
    value = {};
    value.clusterDim.x = 2;
    value.clusterDim.y = value.clusterDim.z = 1;
    EXPECT_ERROR(
        cudaGraphKernelNodeSetAttribute(plain, cudaLaunchAttributeClusterDimension, &value),
        cudaErrorNotSupported);
    cudaGetLastError();
    cudaGraphExec_t kx;
    CHECK(cudaGraphInstantiate(&kx, kg, 0));
    CHECK(cudaGraphLaunch(kx, 0));
    std::vector<int> r(n);
    CHECK(cudaMemcpy(r.data(), rotated, n * sizeof(int), cudaMemcpyDeviceToHost));
    bool rotatedOk = true;
    for (int i = 0; i < n; ++i) rotatedOk = rotatedOk && r[i] == (i + threads) % n;
    expect(back.accessPolicyWindow.base_ptr == v && back.accessPolicyWindow.hitRatio == 0.5f &&
               backCoop.cooperative == 1 && rotatedOk,
           "kernel node attributes: a hint read back, cooperative nodes syncing their grid");
    CHECK(cudaGraphExecDestroy(kx));
    CHECK(cudaGraphDestroy(kg));
    CHECK(cudaFree(v));
    CHECK(cudaFree(rotated));
  }

  // Copies to and from a symbol as graph nodes: plain copies of its bytes, read back and set
  // again on the graph and on an instantiation; a captured one reads back the same way.
  {
    std::vector<int> src(kN), src2(kN);
    for (int i = 0; i < kN; ++i) src[i] = 5000 + i, src2[i] = 6000 + i;
    int* tableAt = nullptr;
    CHECK(cudaGetSymbolAddress(reinterpret_cast<void**>(&tableAt), table));
    cudaGraph_t sg;
    CHECK(cudaGraphCreate(&sg, 0));
    cudaGraphNode_t to, from;
    CHECK(cudaGraphAddMemcpyNodeToSymbol(&to, sg, nullptr, 0, table, src.data(), bytes,
                                         16 * sizeof(int), cudaMemcpyHostToDevice));
    CHECK(cudaGraphAddMemcpyNodeFromSymbol(&from, sg, &to, 1, out, table, bytes, 16 * sizeof(int),
                                           cudaMemcpyDeviceToDevice));
    EXPECT_ERROR(cudaGraphAddMemcpyNodeToSymbol(&to, sg, nullptr, 0, table, src.data(), bytes,
                                                17 * sizeof(int), cudaMemcpyHostToDevice),
                 cudaErrorInvalidValue);
    cudaGetLastError();
    cudaMemcpy3DParms cp = {};
    CHECK(cudaGraphMemcpyNodeGetParams(to, &cp));
    const bool readBack = cp.dstPtr.ptr == tableAt + 16 && cp.extent.width == bytes;
    cudaGraphExec_t sx;
    CHECK(cudaGraphInstantiate(&sx, sg, 0));
    CHECK(cudaGraphLaunch(sx, 0));
    CHECK(cudaMemcpy(h.data(), out, bytes, cudaMemcpyDeviceToHost));
    const bool first = ramp(h, 5000);
    CHECK(cudaGraphExecMemcpyNodeSetParamsToSymbol(sx, to, table, src2.data(), bytes, 0,
                                                   cudaMemcpyHostToDevice));
    CHECK(cudaGraphExecMemcpyNodeSetParamsFromSymbol(sx, from, out, table, bytes, 0,
                                                     cudaMemcpyDeviceToDevice));
    CHECK(cudaGraphLaunch(sx, 0));
    CHECK(cudaMemcpy(h.data(), out, bytes, cudaMemcpyDeviceToHost));
    const bool second = ramp(h, 6000);
    CHECK(cudaGraphMemcpyNodeSetParamsToSymbol(to, table, src.data(), bytes, 0,
                                               cudaMemcpyHostToDevice));
    CHECK(cudaGraphMemcpyNodeSetParamsFromSymbol(from, out, table, bytes, 0, cudaMemcpyDefault));
    cudaGraphExec_t sx2;
    CHECK(cudaGraphInstantiate(&sx2, sg, 0));
    CHECK(cudaGraphLaunch(sx2, 0));
    CHECK(cudaMemcpy(h.data(), out, bytes, cudaMemcpyDeviceToHost));
    const bool third = ramp(h, 5000);
    cudaStream_t s;
    CHECK(cudaStreamCreate(&s));
    CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    CHECK(cudaMemcpyToSymbolAsync(table, src.data(), 8 * sizeof(int), 4 * sizeof(int),
                                  cudaMemcpyHostToDevice, s));
    cudaGraph_t cg2;
    CHECK(cudaStreamEndCapture(s, &cg2));
    cudaGraphNode_t capturedCopy;
    size_t one = 1;
    CHECK(cudaGraphGetNodes(cg2, &capturedCopy, &one));
    cp = {};
    CHECK(cudaGraphMemcpyNodeGetParams(capturedCopy, &cp));
    expect(readBack && first && second && third && cp.dstPtr.ptr == tableAt + 4 &&
               cp.extent.width == 8 * sizeof(int),
           "copies to and from a symbol as graph nodes, read back and set again");
    CHECK(cudaGraphExecDestroy(sx));
    CHECK(cudaGraphExecDestroy(sx2));
    CHECK(cudaGraphDestroy(sg));
    CHECK(cudaGraphDestroy(cg2));
    CHECK(cudaStreamDestroy(s));
  }

  // A capture whose next node also depends on a node the program added to the graph being
  // captured.
  {
    cudaStream_t s;
    CHECK(cudaStreamCreate(&s));
    CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    cudaStreamCaptureStatus status;
    cudaGraph_t building = nullptr;
    CHECK(cudaStreamGetCaptureInfo(s, &status, nullptr, &building));
    int eleven = 11, one = 1;
    void* args[] = {&out, &eleven};
    kp = kernelParams(reinterpret_cast<void*>(fill), args);
    cudaGraphNode_t added;
    CHECK(cudaGraphAddKernelNode(&added, building, nullptr, 0, &kp));
    CHECK(cudaStreamUpdateCaptureDependencies(s, &added, nullptr, 1,
                                              cudaStreamAddCaptureDependencies));
    addTo<<<kN / 64, 64, 0, s>>>(out, one);
    cudaGraph_t captured;
    CHECK(cudaStreamEndCapture(s, &captured));
    cudaGraphNode_t from[2], to[2];
    size_t edges = 2;
    CHECK(cudaGraphGetEdges(captured, from, to, nullptr, &edges));
    cudaGraphExec_t cx;
    CHECK(cudaGraphInstantiate(&cx, captured, 0));
    CHECK(cudaMemset(out, 0, bytes));
    CHECK(cudaGraphLaunch(cx, 0));
    CHECK(cudaMemcpy(h.data(), out, bytes, cudaMemcpyDeviceToHost));
    expect(edges == 1 && from[0] == added && ramp(h, 12),
           "a captured node depending on a node added to the graph being captured");
    CHECK(cudaGraphExecDestroy(cx));
    CHECK(cudaGraphDestroy(captured));

    // A batch of copies with two sets of attributes, and a 3D copy between device 0 and itself.
    std::vector<int> a(kN), b(kN, -1);
    for (int i = 0; i < kN; ++i) a[i] = 300 + i;
    int* d2 = nullptr;
    CHECK(cudaMalloc(&d2, bytes));
    void* dsts[] = {out, d2, b.data()};
    const void* srcs[] = {a.data(), out, d2};
    size_t sizes[] = {bytes, bytes, bytes};
    cudaMemcpyAttributes attrs[2] = {};
    attrs[0].srcAccessOrder = cudaMemcpySrcAccessOrderDuringApiCall;
    attrs[1].srcAccessOrder = cudaMemcpySrcAccessOrderStream;
    size_t idx[] = {0, 1};
    CHECK(cudaMemcpyBatchAsync(dsts, srcs, sizes, 3, attrs, idx, 2, s));
    CHECK(cudaStreamSynchronize(s));
    const bool batch = b == a;
    size_t badIdx[] = {1, 2};
    EXPECT_ERROR(cudaMemcpyBatchAsync(dsts, srcs, sizes, 3, attrs, badIdx, 2, s),
                 cudaErrorInvalidValue);
    EXPECT_ERROR(cudaMemcpyBatchAsync(dsts, srcs, sizes, 3, attrs, idx, 2, 0),
                 cudaErrorInvalidValue);
    cudaGetLastError();
    cudaMemcpy3DPeerParms pp = {};
    pp.srcPtr = make_cudaPitchedPtr(out, 64 * sizeof(int), 64, 4);
    pp.dstPtr = make_cudaPitchedPtr(d2, 64 * sizeof(int), 64, 4);
    pp.srcPos = make_cudaPos(8 * sizeof(int), 1, 0);
    pp.dstPos = make_cudaPos(0, 0, 0);
    pp.extent = make_cudaExtent(16 * sizeof(int), 2, 1);
    CHECK(cudaMemset(d2, 0, bytes));
    CHECK(cudaMemcpy3DPeer(&pp));
    std::vector<int> p3(kN);
    CHECK(cudaMemcpy(p3.data(), d2, bytes, cudaMemcpyDeviceToHost));
    bool peer = true;
    for (int row = 0; row < 2; ++row)
      for (int x = 0; x < 16; ++x) peer = peer && p3[row * 64 + x] == 300 + (row + 1) * 64 + 8 + x;
    peer = peer && p3[16] == 0;
    pp.dstDevice = 1;
    EXPECT_ERROR(cudaMemcpy3DPeer(&pp), cudaErrorInvalidDevice);
    cudaGetLastError();
    // A batch of 3D copies: host rows (32 of every 40 ints, 4 rows) to a device pointer, and
    // from there to a CUDA array of ints at an offset.
    std::vector<int> rows(40 * 4);
    for (int i = 0; i < 40 * 4; ++i) rows[i] = 7000 + i;
    cudaArray_t arr;
    cudaChannelFormatDesc desc = cudaCreateChannelDesc<int>();
    CHECK(cudaMallocArray(&arr, &desc, 64, 8));
    cudaMemcpy3DBatchOp ops[2] = {};
    ops[0].src.type = cudaMemcpyOperandTypePointer;
    ops[0].src.op.ptr.ptr = rows.data();
    ops[0].src.op.ptr.rowLength = 40 * sizeof(int);
    ops[0].dst.type = cudaMemcpyOperandTypePointer;
    ops[0].dst.op.ptr.ptr = d2;
    ops[0].extent = make_cudaExtent(32 * sizeof(int), 4, 1);
    ops[0].srcAccessOrder = cudaMemcpySrcAccessOrderDuringApiCall;
    ops[1].src.type = cudaMemcpyOperandTypePointer;
    ops[1].src.op.ptr.ptr = d2;
    ops[1].dst.type = cudaMemcpyOperandTypeArray;
    ops[1].dst.op.array.array = arr;
    ops[1].dst.op.array.offset = {16, 2, 0};
    ops[1].extent = make_cudaExtent(32, 4, 1);
    ops[1].srcAccessOrder = cudaMemcpySrcAccessOrderStream;
    CHECK(cudaMemcpy3DBatchAsync(2, ops, 0, s));
    std::vector<int> back(64 * 8, -1);
    CHECK(cudaMemcpy2DFromArray(back.data(), 64 * sizeof(int), arr, 0, 0, 64 * sizeof(int), 8,
                                cudaMemcpyDeviceToHost));
    bool batch3d = true;
    for (int y = 0; y < 4; ++y)
      for (int x = 0; x < 32; ++x)
        batch3d = batch3d && back[(y + 2) * 64 + 16 + x] == 7000 + y * 40 + x;
    ops[1].extent.width = 0;
    EXPECT_ERROR(cudaMemcpy3DBatchAsync(2, ops, 0, s), cudaErrorInvalidValue);
    cudaGetLastError();
    CHECK(cudaFreeArray(arr));
    expect(batch && peer && batch3d,
           "a batch of copies, a batch of 3D copies; a 3D copy between device 0 and itself");
    CHECK(cudaFree(d2));
    CHECK(cudaStreamDestroy(s));
  }

  // The capture mode, the shared memory's banks, a stream's attributes copied.
  {
    cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
    CHECK(cudaThreadExchangeStreamCaptureMode(&mode));
    const cudaStreamCaptureMode first = mode;  // the thread's default
    CHECK(cudaThreadExchangeStreamCaptureMode(&mode));
    mode = static_cast<cudaStreamCaptureMode>(7);
    EXPECT_ERROR(cudaThreadExchangeStreamCaptureMode(&mode), cudaErrorInvalidValue);
    cudaGetLastError();
    expect(first == cudaStreamCaptureModeGlobal, "the capture mode exchanged");

    // Deprecated calls that programs still make.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    cudaSharedMemConfig banks = cudaSharedMemBankSizeDefault;
    CHECK(cudaDeviceSetSharedMemConfig(cudaSharedMemBankSizeEightByte));
    CHECK(cudaDeviceGetSharedMemConfig(&banks));
    CHECK(cudaFuncSetSharedMemConfig(fill, cudaSharedMemBankSizeEightByte));
    EXPECT_ERROR(cudaDeviceSetSharedMemConfig(static_cast<cudaSharedMemConfig>(5)),
                 cudaErrorInvalidValue);
    cudaGetLastError();
#pragma GCC diagnostic pop
    expect(banks == cudaSharedMemBankSizeFourByte, "the shared memory's banks stay 4 bytes wide");

    cudaStream_t s1, s2;
    CHECK(cudaStreamCreate(&s1));
    CHECK(cudaStreamCreate(&s2));
    cudaStreamAttrValue sv = {};
    sv.accessPolicyWindow.base_ptr = out;
    sv.accessPolicyWindow.num_bytes = bytes;
    sv.accessPolicyWindow.hitRatio = 1.0f;
    CHECK(cudaStreamSetAttribute(s1, cudaStreamAttributeAccessPolicyWindow, &sv));
    CHECK(cudaStreamCopyAttributes(s2, s1));
    cudaStreamAttrValue sb = {};
    CHECK(cudaStreamGetAttribute(s2, cudaStreamAttributeAccessPolicyWindow, &sb));
    expect(sb.accessPolicyWindow.base_ptr == out && sb.accessPolicyWindow.num_bytes == bytes,
           "a stream's attributes copied to another");
    CHECK(cudaStreamDestroy(s1));
    CHECK(cudaStreamDestroy(s2));
  }

  CHECK(cudaGraphDestroy(parent));
  CHECK(cudaFree(out));
  return verdict(expect.ok, "graph memory, child graphs, user objects and attributes");
}
