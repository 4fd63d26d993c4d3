// Updating an instantiated graph as applications do (capture the work again, try
// cudaGraphExecUpdate, instantiate again if it fails): a graph of the same nodes gives the
// instantiation its work, even after the instantiated graph was destroyed; another count of
// nodes, other dependencies or a node of another kind is cudaErrorGraphExecUpdateFailure with
// the reason in the result info, and the instantiation keeps its work. Then the CUDA C++
// Programming Guide's L2 set-aside with its error checks: the persisting-L2 limit and a stream's
// access-policy window read back as set, a launch with the window as an attribute, and the
// reset; they are hints (L2 persistence is not modelled) and change no result. And
// cudaGraphInstantiateWithParams, stream ids and devices.
#include "check.hpp"

__global__ void add(int* x, int v) { x[threadIdx.x] += v; }
__global__ void scale(int* x, int f) { x[threadIdx.x] *= f; }

// A graph of `kernels` launches of add(d, v) on one stream, one after another.
static cudaGraph_t capture(cudaStream_t s, int* d, int kernels, int v) {
  cudaGraph_t g;
  CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed));
  for (int i = 0; i < kernels; ++i) add<<<1, 32, 0, s>>>(d, v);
  CHECK(cudaStreamEndCapture(s, &g));
  return g;
}

static int first(const int* d) {
  int h = 0;
  CHECK(cudaMemcpy(&h, d, sizeof h, cudaMemcpyDeviceToHost));
  return h;
}

int main() {
  bool ok = true;
  int* d;
  CHECK(cudaMalloc(&d, 32 * sizeof(int)));
  CHECK(cudaMemset(d, 0, 32 * sizeof(int)));
  cudaStream_t s;
  CHECK(cudaStreamCreate(&s));

  // Instantiated from a graph of two add(1), which is then destroyed.
  cudaGraph_t g = capture(s, d, 2, 1);
  cudaGraphExec_t exec;
  CHECK(cudaGraphInstantiate(&exec, g, 0));
  CHECK(cudaGraphDestroy(g));
  CHECK(cudaGraphLaunch(exec, s));
  CHECK(cudaStreamSynchronize(s));
  ok &= first(d) == 2;

  // The same nodes with other arguments: updated.
  g = capture(s, d, 2, 10);
  cudaGraphExecUpdateResultInfo info{};
  info.result = cudaGraphExecUpdateError;
  CHECK(cudaGraphExecUpdate(exec, g, &info));
  ok &= info.result == cudaGraphExecUpdateSuccess && info.errorNode == nullptr;
  CHECK(cudaGraphDestroy(g));
  CHECK(cudaGraphLaunch(exec, s));
  CHECK(cudaStreamSynchronize(s));
  ok &= first(d) == 22;

  // Three nodes: the topology changed; the instantiation keeps the add(10)s.
  g = capture(s, d, 3, 100);
  EXPECT_ERROR(cudaGraphExecUpdate(exec, g, &info), cudaErrorGraphExecUpdateFailure);
  ok &= info.result == cudaGraphExecUpdateErrorTopologyChanged;
  ok &= cudaGetLastError() == cudaErrorGraphExecUpdateFailure;  // not sticky
  CHECK(cudaGraphDestroy(g));
  CHECK(cudaGraphLaunch(exec, s));
  CHECK(cudaStreamSynchronize(s));
  ok &= first(d) == 42;

  // Two independent nodes instead of a chain: the dependencies changed.
  CHECK(cudaGraphCreate(&g, 0));
  cudaGraphNode_t a, b;
  int v = 1000;
  void* args[] = {&d, &v};
  cudaKernelNodeParams p{};
  p.func = reinterpret_cast<void*>(add);
  p.gridDim = dim3(1);
  p.blockDim = dim3(32);
  p.kernelParams = args;
  CHECK(cudaGraphAddKernelNode(&a, g, nullptr, 0, &p));
  CHECK(cudaGraphAddKernelNode(&b, g, nullptr, 0, &p));
  EXPECT_ERROR(cudaGraphExecUpdate(exec, g, &info), cudaErrorGraphExecUpdateFailure);
  ok &= info.result == cudaGraphExecUpdateErrorTopologyChanged;
  CHECK(cudaGraphDestroy(g));

  // A memset node where a kernel was: a node's kind changed, and the info names it.
  CHECK(cudaGraphCreate(&g, 0));
  cudaMemsetParams m{};
  m.dst = d;
  m.value = 0;
  m.elementSize = 4;
  m.width = 32;
  m.height = 1;
  CHECK(cudaGraphAddKernelNode(&a, g, nullptr, 0, &p));
  CHECK(cudaGraphAddMemsetNode(&b, g, &a, 1, &m));
  EXPECT_ERROR(cudaGraphExecUpdate(exec, g, &info), cudaErrorGraphExecUpdateFailure);
  ok &= info.result == cudaGraphExecUpdateErrorNodeTypeChanged && info.errorNode == b;
  CHECK(cudaGraphDestroy(g));
  CHECK(cudaGraphLaunch(exec, s));
  CHECK(cudaStreamSynchronize(s));
  ok &= first(d) == 62;
  CHECK(cudaGraphExecDestroy(exec));
  if (!ok) std::printf("graph updates: %d\n", first(d));

  // Instantiation with parameters: the outcome in them.
  g = capture(s, d, 1, 1);
  cudaGraphInstantiateParams ip{};
  ip.flags = cudaGraphInstantiateFlagUpload;
  ip.uploadStream = s;
  ip.result_out = cudaGraphInstantiateError;
  CHECK(cudaGraphInstantiateWithParams(&exec, g, &ip));
  ok &= ip.result_out == cudaGraphInstantiateSuccess && ip.errNode_out == nullptr;
  CHECK(cudaGraphLaunch(exec, s));
  CHECK(cudaStreamSynchronize(s));
  ok &= first(d) == 63;
  CHECK(cudaGraphExecDestroy(exec));
  CHECK(cudaGraphDestroy(g));

  // Stream ids: the legacy stream's 0, the others distinct and the same each time asked.
  cudaStream_t t;
  CHECK(cudaStreamCreate(&t));
  unsigned long long idLegacy = 1, idS = 0, idT = 0, idS2 = 0, idPerThread = 0;
  CHECK(cudaStreamGetId(0, &idLegacy));
  CHECK(cudaStreamGetId(s, &idS));
  CHECK(cudaStreamGetId(t, &idT));
  CHECK(cudaStreamGetId(s, &idS2));
  CHECK(cudaStreamGetId(cudaStreamPerThread, &idPerThread));
  ok &= idLegacy == 0 && idS != 0 && idT != 0 && idS != idT && idS == idS2 && idPerThread != 0 &&
        idPerThread != idS && idPerThread != idT;
  int device = -1;
  CHECK(cudaStreamGetDevice(t, &device));
  ok &= device == 0;
  CHECK(cudaStreamDestroy(t));
  EXPECT_ERROR(cudaStreamGetId(t, &idT), cudaErrorInvalidResourceHandle);

  // L2 set-aside, the Programming Guide's way.
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  const size_t aside = 3 * size_t(prop.l2CacheSize) / 4;
  CHECK(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, aside));
  size_t got = 0;
  CHECK(cudaDeviceGetLimit(&got, cudaLimitPersistingL2CacheSize));
  ok &= got == aside;
  CHECK(cudaDeviceSetLimit(cudaLimitMaxL2FetchGranularity, 64));
  CHECK(cudaDeviceGetLimit(&got, cudaLimitMaxL2FetchGranularity));
  ok &= got == 64;
  EXPECT_ERROR(cudaDeviceSetLimit(cudaLimitMaxL2FetchGranularity, 129), cudaErrorInvalidValue);
  cudaStreamAttrValue w{};
  w.accessPolicyWindow.base_ptr = d;
  w.accessPolicyWindow.num_bytes = 32 * sizeof(int);
  w.accessPolicyWindow.hitRatio = 0.6f;
  w.accessPolicyWindow.hitProp = cudaAccessPropertyPersisting;
  w.accessPolicyWindow.missProp = cudaAccessPropertyStreaming;
  CHECK(cudaStreamSetAttribute(s, cudaStreamAttributeAccessPolicyWindow, &w));
  cudaStreamAttrValue back{};
  CHECK(cudaStreamGetAttribute(s, cudaStreamAttributeAccessPolicyWindow, &back));
  ok &= back.accessPolicyWindow.base_ptr == d && back.accessPolicyWindow.num_bytes == 128 &&
        back.accessPolicyWindow.hitRatio == 0.6f &&
        back.accessPolicyWindow.hitProp == cudaAccessPropertyPersisting;
  scale<<<1, 32, 0, s>>>(d, 2);
  cudaLaunchAttribute attr{};
  attr.id = cudaLaunchAttributeAccessPolicyWindow;
  attr.val.accessPolicyWindow = w.accessPolicyWindow;
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(1);
  cfg.blockDim = dim3(32);
  cfg.stream = s;
  cfg.attrs = &attr;
  cfg.numAttrs = 1;
  CHECK(cudaLaunchKernelEx(&cfg, add, d, 1));
  CHECK(cudaStreamSynchronize(s));
  ok &= first(d) == 127;
  w.accessPolicyWindow.num_bytes = 0;  // the window off again
  CHECK(cudaStreamSetAttribute(s, cudaStreamAttributeAccessPolicyWindow, &w));
  CHECK(cudaCtxResetPersistingL2Cache());
  CHECK(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, 0));
  // A destroyed stream's attributes go with it.
  CHECK(cudaStreamDestroy(s));
  EXPECT_ERROR(cudaStreamGetAttribute(s, cudaStreamAttributeAccessPolicyWindow, &back),
               cudaErrorInvalidResourceHandle);
  CHECK(cudaFree(d));
  return verdict(ok, "graph updates and L2 set-aside hints");
}
