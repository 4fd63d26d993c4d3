// CUDA graphs by stream capture: the work issued to a capturing stream (a copy to a symbol, a
// memset, kernels, a host function, a copy back) is recorded, not done, and the graph replays it
// at each launch. A second stream joins the capture by waiting on an event recorded in it, and
// the first waits for it again. Kernel arguments are copied when captured (a scalar changed
// afterwards does not change the graph); memory is read when the graph runs (new input and a new
// bias each launch). Both streams report the same capture while it lasts. Scratch memory allocated
// and freed in the capture (cudaMallocAsync, cudaFreeAsync) is the graph's, valid at every launch.
// Memory allocated in a capture and not freed there outlives each launch: the program frees it
// (cudaFreeAsync) before the next launch, which allocates it again at the same address; a launch
// while it is still allocated is refused, unless the graph frees it on launch
// (cudaGraphInstantiateFlagAutoFreeOnLaunch); still allocated when the graph is destroyed, it
// stays allocated. The capture's cudaMallocAsync and cudaFreeAsync are memory allocation and free
// nodes, read back with their address and size; a graph with them has one instantiation at a
// time. A captured kernel's node takes new arguments
// (cudaGraphExecKernelNodeSetParams). The legacy default stream cannot be captured. Events
// recorded in a capture cannot be queried, and a capture whose forked stream has work its origin
// never waited for ends without a graph, as does one that a synchronize or query of its stream
// invalidated.
#include <cstdio>
#include <vector>

#include <cuda_runtime.h>

#include "check.hpp"

__global__ void addScaled(const int* in, int* acc, int factor, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) acc[i] += factor * in[i];
}

__device__ int bias;

__global__ void square(const int* acc, int* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = acc[i] * acc[i] + bias;
}

__global__ void fill(int* p, int v) { p[threadIdx.x] = v + threadIdx.x; }

namespace {
int hostCalls = 0;
void countCall(void*) { ++hostCalls; }
}  // namespace

int main() {
  const int n = 1000;
  int *in, *acc = nullptr, *out;
  CHECK(cudaMalloc(&in, n * sizeof(int)));
  CHECK(cudaMalloc(&out, n * sizeof(int)));
  std::vector<int> host(n, -1), input(n);
  cudaStream_t s1, s2;
  CHECK(cudaStreamCreate(&s1));
  CHECK(cudaStreamCreate(&s2));
  cudaEvent_t forked, joined;
  CHECK(cudaEventCreate(&forked));
  CHECK(cudaEventCreate(&joined));

  cudaGraph_t graph;
  EXPECT_ERROR(cudaStreamBeginCapture(0, cudaStreamCaptureModeGlobal),
               cudaErrorStreamCaptureUnsupported);
  cudaGetLastError();
  CHECK(cudaStreamBeginCapture(s1, cudaStreamCaptureModeGlobal));
  int factor = 3, hostBias = 0;
  CHECK(cudaMemcpyToSymbolAsync(bias, &hostBias, sizeof hostBias, 0, cudaMemcpyHostToDevice, s1));
  CHECK(cudaMallocAsync(&acc, n * sizeof(int), s1));
  CHECK(cudaMemsetAsync(acc, 0, n * sizeof(int), s1));
  addScaled<<<(n + 255) / 256, 256, 0, s1>>>(in, acc, factor, n);
  CHECK(cudaEventRecord(forked, s1));
  CHECK(cudaStreamWaitEvent(s2, forked, 0));
  square<<<(n + 127) / 128, 128, 0, s2>>>(acc, out, n);
  CHECK(cudaEventRecord(joined, s2));
  // An event recorded in a capture marks a point in the graph: it has no state to query.
  EXPECT_ERROR(cudaEventQuery(joined), cudaErrorCapturedEvent);
  EXPECT_ERROR(cudaEventSynchronize(joined), cudaErrorCapturedEvent);
  cudaGetLastError();
  CHECK(cudaStreamWaitEvent(s1, joined, 0));
  CHECK(cudaFreeAsync(acc, s1));
  CHECK(cudaLaunchHostFunc(s1, countCall, nullptr));
  CHECK(cudaMemcpyAsync(host.data(), out, n * sizeof(int), cudaMemcpyDeviceToHost, s1));
  cudaStreamCaptureStatus s2Status, s1Status, infoStatus;
  CHECK(cudaStreamIsCapturing(s2, &s2Status));
  unsigned long long id1 = 0, id2 = 0;
  size_t deps = 0;
  CHECK(cudaStreamGetCaptureInfo(s1, &infoStatus, &id1));
  CHECK(cudaStreamGetCaptureInfo(s2, &infoStatus, &id2, nullptr, nullptr, nullptr, &deps));
  const bool oneCapture = infoStatus == cudaStreamCaptureStatusActive && id1 != 0 && id1 == id2;
  CHECK(cudaStreamEndCapture(s1, &graph));
  CHECK(cudaStreamIsCapturing(s1, &s1Status));
  factor = 100;  // the captured launch keeps 3
  CHECK(cudaStreamGetCaptureInfo(s2, &infoStatus, &id2));
  bool ok = s2Status == cudaStreamCaptureStatusActive && s1Status == cudaStreamCaptureStatusNone &&
            oneCapture && deps == 1 && infoStatus == cudaStreamCaptureStatusNone &&
            hostCalls == 0 && host[0] == -1;  // nothing ran yet
  // Eight nodes: the copy to the symbol, the allocation, the memset, two kernels, the free, the
  // host function and the copy back.
  size_t nodes = 0;
  CHECK(cudaGraphGetNodes(graph, nullptr, &nodes));
  ok = ok && nodes == 8;
  if (nodes == 8) {
    cudaGraphNode_t all[8];
    CHECK(cudaGraphGetNodes(graph, all, &nodes));
    cudaGraphNodeType allocType, freeType;
    CHECK(cudaGraphNodeGetType(all[1], &allocType));
    CHECK(cudaGraphNodeGetType(all[5], &freeType));
    cudaMemAllocNodeParams allocParams{};
    CHECK(cudaGraphMemAllocNodeGetParams(all[1], &allocParams));
    void* freedPointer = nullptr;
    CHECK(cudaGraphMemFreeNodeGetParams(all[5], &freedPointer));
    ok = ok && allocType == cudaGraphNodeTypeMemAlloc && freeType == cudaGraphNodeTypeMemFree &&
         allocParams.dptr == acc && allocParams.bytesize == n * sizeof(int) && freedPointer == acc;
  }

  cudaGraphExec_t exec;
  CHECK(cudaGraphInstantiate(&exec, graph, 0));
  for (int round = 1; round <= 3; ++round) {
    for (int i = 0; i < n; ++i) input[i] = (i % 17) + round;
    hostBias = 1000 * round;
    CHECK(cudaMemcpy(in, input.data(), n * sizeof(int), cudaMemcpyHostToDevice));
    CHECK(cudaGraphLaunch(exec, s1));
    CHECK(cudaStreamSynchronize(s1));
    for (int i = 0; i < n; ++i) ok = ok && host[i] == (3 * input[i]) * (3 * input[i]) + hostBias;
  }
  ok = ok && hostCalls == 3;
  CHECK(cudaGraphExecDestroy(exec));
  CHECK(cudaGraphDestroy(graph));

  // Every fork must be joined: s1 waits for s2's work through s3 (joined), and then s2 works
  // on after the point s1 waited for (unjoined: the capture ends without a graph).
  cudaStream_t s3;
  cudaEvent_t e2, e3;
  CHECK(cudaStreamCreate(&s3));
  CHECK(cudaEventCreate(&e2));
  CHECK(cudaEventCreate(&e3));
  for (bool workAfterJoin : {false, true}) {
    CHECK(cudaStreamBeginCapture(s1, cudaStreamCaptureModeGlobal));
    CHECK(cudaEventRecord(forked, s1));
    CHECK(cudaStreamWaitEvent(s2, forked, 0));
    square<<<1, 32, 0, s2>>>(in, out, 32);
    CHECK(cudaEventRecord(e2, s2));
    CHECK(cudaStreamWaitEvent(s3, e2, 0));
    CHECK(cudaEventRecord(e3, s3));
    CHECK(cudaStreamWaitEvent(s1, e3, 0));
    if (workAfterJoin) square<<<1, 32, 0, s2>>>(in, out, 32);
    cudaGraph_t g = nullptr;
    const cudaError_t e = cudaStreamEndCapture(s1, &g);
    cudaStreamCaptureStatus left = cudaStreamCaptureStatusActive;
    CHECK(cudaStreamIsCapturing(s2, &left));
    ok = ok && left == cudaStreamCaptureStatusNone;
    if (workAfterJoin) {
      ok = ok && e == cudaErrorStreamCaptureUnjoined && g == nullptr;
      cudaGetLastError();
    } else {
      ok = ok && e == cudaSuccess && g != nullptr;
      if (g) CHECK(cudaGraphDestroy(g));
    }
    if (!ok)
      std::printf("fork %s: %s\n", workAfterJoin ? "unjoined" : "joined", cudaGetErrorName(e));
  }
  // A call a capture cannot hold (synchronizing or querying the capturing stream) fails and
  // invalidates the capture: later work in it is refused, and it ends without a graph.
  for (bool query : {false, true}) {
    CHECK(cudaStreamBeginCapture(s1, cudaStreamCaptureModeGlobal));
    square<<<1, 32, 0, s1>>>(in, out, 32);
    const cudaError_t broke = query ? cudaStreamQuery(s1) : cudaStreamSynchronize(s1);
    cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
    CHECK(cudaStreamIsCapturing(s1, &status));
    const cudaError_t later = cudaMemsetAsync(out, 0, 4, s1);
    cudaGraph_t g = reinterpret_cast<cudaGraph_t>(&status);
    const cudaError_t ended = cudaStreamEndCapture(s1, &g);
    cudaStreamCaptureStatus after = cudaStreamCaptureStatusActive;
    CHECK(cudaStreamIsCapturing(s1, &after));
    const bool invalidated = broke == cudaErrorStreamCaptureUnsupported &&
                             status == cudaStreamCaptureStatusInvalidated &&
                             later == cudaErrorStreamCaptureInvalidated &&
                             ended == cudaErrorStreamCaptureInvalidated && g == nullptr &&
                             after == cudaStreamCaptureStatusNone;
    if (!invalidated)
      std::printf("%s in a capture: %s, status %d, then %s, end %s\n",
                  query ? "cudaStreamQuery" : "cudaStreamSynchronize", cudaGetErrorName(broke),
                  int(status), cudaGetErrorName(later), cudaGetErrorName(ended));
    ok = ok && invalidated;
    cudaGetLastError();
  }
  // An allocation that outlives the graph's launches.
  {
    int* live = nullptr;
    CHECK(cudaStreamBeginCapture(s1, cudaStreamCaptureModeGlobal));
    CHECK(cudaMallocAsync(&live, 32 * sizeof(int), s1));
    fill<<<1, 32, 0, s1>>>(live, 500);
    cudaGraph_t g;
    CHECK(cudaStreamEndCapture(s1, &g));
    cudaGraphExec_t x, autoFree;
    CHECK(cudaGraphInstantiate(&x, g, 0));
    // A graph with memory nodes has one instantiation at a time.
    const cudaError_t second = cudaGraphInstantiate(&autoFree, g, 0);
    cudaGetLastError();
    int seen[4] = {-1, -1, -1, -1};
    for (int launch = 0; launch < 2; ++launch) {
      CHECK(cudaGraphLaunch(x, s1));
      CHECK(cudaMemcpyAsync(&seen[launch], live + 7, sizeof(int), cudaMemcpyDeviceToHost, s1));
      if (launch == 0) CHECK(cudaFreeAsync(live, s1));
    }
    const cudaError_t again = cudaGraphLaunch(x, s1);  // still allocated from the last launch
    cudaGetLastError();
    CHECK(cudaFree(live));
    CHECK(cudaGraphExecDestroy(x));
    CHECK(cudaGraphInstantiateWithFlags(&autoFree, g, cudaGraphInstantiateFlagAutoFreeOnLaunch));
    for (int launch = 2; launch < 4; ++launch) {
      CHECK(cudaGraphLaunch(autoFree, s1));
      CHECK(cudaMemcpyAsync(&seen[launch], live + 9, sizeof(int), cudaMemcpyDeviceToHost, s1));
    }
    CHECK(cudaStreamSynchronize(s1));
    const bool outlives = seen[0] == 507 && seen[1] == 507 && seen[2] == 509 && seen[3] == 509 &&
                          again == cudaErrorInvalidValue && second == cudaErrorInvalidValue;
    if (!outlives)
      std::printf("outliving allocation: %d %d %d %d, launch while allocated %s\n", seen[0],
                  seen[1], seen[2], seen[3], cudaGetErrorName(again));
    ok = ok && outlives;
    CHECK(cudaGraphExecDestroy(autoFree));
    CHECK(cudaGraphDestroy(g));
    // Still allocated from the last launch, it outlives the graph too: the program reads it,
    // then frees it.
    int kept = -1;
    const cudaError_t read = cudaMemcpy(&kept, live + 3, sizeof(int), cudaMemcpyDeviceToHost);
    const cudaError_t freed = cudaFree(live);
    if (read != cudaSuccess || kept != 503 || freed != cudaSuccess)
      std::printf("after the graph: %s %d, free %s\n", cudaGetErrorName(read), kept,
                  cudaGetErrorName(freed));
    ok = ok && read == cudaSuccess && kept == 503 && freed == cudaSuccess;
  }
  // A captured kernel's node takes new arguments in the instantiated graph.
  {
    CHECK(cudaStreamBeginCapture(s1, cudaStreamCaptureModeGlobal));
    fill<<<1, 32, 0, s1>>>(out, 100);
    cudaGraph_t g;
    CHECK(cudaStreamEndCapture(s1, &g));
    cudaGraphNode_t node;
    size_t count = 1;
    CHECK(cudaGraphGetNodes(g, &node, &count));
    cudaGraphExec_t x;
    CHECK(cudaGraphInstantiate(&x, g, 0));
    int v = 200;
    void* args[] = {&out, &v};
    cudaKernelNodeParams params{};
    params.func = reinterpret_cast<void*>(fill);
    params.gridDim = dim3(1);
    params.blockDim = dim3(32);
    params.kernelParams = args;
    CHECK(cudaGraphExecKernelNodeSetParams(x, node, &params));
    CHECK(cudaGraphLaunch(x, s1));
    int got = -1;
    CHECK(cudaMemcpyAsync(&got, out + 7, sizeof(int), cudaMemcpyDeviceToHost, s1));
    CHECK(cudaStreamSynchronize(s1));
    if (got != 207) std::printf("captured node with new arguments: %d\n", got);
    ok = ok && got == 207;
    CHECK(cudaGraphExecDestroy(x));
    CHECK(cudaGraphDestroy(g));
  }
  std::printf("%zu nodes, %d host calls, out[999] = %d\n", nodes, hostCalls, host[n - 1]);
  return verdict(ok, "a captured graph replayed three times");
}
