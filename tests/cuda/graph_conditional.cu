// Conditional graph nodes (CUDA 12.3): a while loop whose body kernel counts and sets the
// condition until it reaches 10 (its body captured with cudaStreamBeginCaptureToGraph), run twice
// (the handle takes its default at each launch); an if with an else chosen by a kernel; a switch.
#include <cstdio>

#include "check.hpp"

__global__ void countTo(int* counter, int limit, cudaGraphConditionalHandle h) {
  if (threadIdx.x == 0) {
    const int c = ++*counter;
    cudaGraphSetConditional(h, c < limit ? 1 : 0);
  }
}

__global__ void choose(const int* x, int threshold, cudaGraphConditionalHandle h) {
  if (threadIdx.x == 0) cudaGraphSetConditional(h, *x > threshold ? 1 : 0);
}

__global__ void pick(cudaGraphConditionalHandle h, unsigned v) {
  if (threadIdx.x == 0) cudaGraphSetConditional(h, v);
}

__global__ void store(int* p, int v) {
  if (threadIdx.x == 0) *p = v;
}

// A conditional node of `type` with `size` bodies after `dep`; the bodies in `bodies`.
cudaGraphNode_t addConditional(cudaGraph_t g, cudaGraphNode_t dep, cudaGraphConditionalHandle h,
                               cudaGraphConditionalNodeType type, unsigned size,
                               cudaGraph_t* bodies) {
  cudaGraphNodeParams p = {};
  p.type = cudaGraphNodeTypeConditional;
  p.conditional.handle = h;
  p.conditional.type = type;
  p.conditional.size = size;
  cudaGraphNode_t n;
  CHECK(cudaGraphAddNode(&n, g, dep ? &dep : nullptr, nullptr, dep ? 1 : 0, &p));
  for (unsigned i = 0; i < size; ++i) bodies[i] = p.conditional.phGraph_out[i];
  return n;
}

// A kernel node running store(p, v) in graph g.
void addStore(cudaGraph_t g, int* p, int v) {
  void* args[] = {&p, &v};
  cudaKernelNodeParams k = {};
  k.func = reinterpret_cast<void*>(store);
  k.gridDim = dim3(1);
  k.blockDim = dim3(32);
  k.kernelParams = args;
  cudaGraphNode_t n;
  CHECK(cudaGraphAddKernelNode(&n, g, nullptr, 0, &k));
}

int main() {
  Expectations expect;
  int* d = nullptr;
  CHECK(cudaMalloc(&d, 4 * sizeof(int)));
  int h[4];

  // while: the body (captured) counts; the handle starts at 1 each launch.
  cudaGraph_t loop, body[3];
  CHECK(cudaGraphCreate(&loop, 0));
  cudaGraphConditionalHandle whileHandle;
  CHECK(cudaGraphConditionalHandleCreate(&whileHandle, loop, 1, cudaGraphCondAssignDefault));
  const cudaGraphNode_t w =
      addConditional(loop, nullptr, whileHandle, cudaGraphCondTypeWhile, 1, body);
  cudaStream_t s;
  CHECK(cudaStreamCreate(&s));
  CHECK(
      cudaStreamBeginCaptureToGraph(s, body[0], nullptr, nullptr, 0, cudaStreamCaptureModeGlobal));
  countTo<<<1, 32, 0, s>>>(d, 10, whileHandle);
  cudaGraph_t captured;
  CHECK(cudaStreamEndCapture(s, &captured));
  cudaGraphNodeType type;
  CHECK(cudaGraphNodeGetType(w, &type));
  cudaGraphExec_t x;
  CHECK(cudaGraphInstantiate(&x, loop, 0));
  int counts[2];
  for (int run = 0; run < 2; ++run) {
    CHECK(cudaMemset(d, 0, sizeof(int)));
    CHECK(cudaGraphLaunch(x, s));
    CHECK(cudaStreamSynchronize(s));
    CHECK(cudaMemcpy(&counts[run], d, sizeof(int), cudaMemcpyDeviceToHost));
  }
  std::printf("while: %d and %d iterations\n", counts[0], counts[1]);
  expect(captured == body[0] && type == cudaGraphNodeTypeConditional && counts[0] == 10 &&
             counts[1] == 10,
         "a while loop until its body clears the condition");

  // if/else: a kernel compares d[1] with 5 and sets the handle; the bodies store 100 or 200.
  cudaGraph_t branch;
  CHECK(cudaGraphCreate(&branch, 0));
  cudaGraphConditionalHandle ifHandle;
  CHECK(cudaGraphConditionalHandleCreate(&ifHandle, branch, 0, 0));
  int threshold = 5;
  int* x1 = d + 1;
  void* chooseArgs[] = {&x1, &threshold, &ifHandle};
  cudaKernelNodeParams k = {};
  k.func = reinterpret_cast<void*>(choose);
  k.gridDim = dim3(1);
  k.blockDim = dim3(32);
  k.kernelParams = chooseArgs;
  cudaGraphNode_t decide;
  CHECK(cudaGraphAddKernelNode(&decide, branch, nullptr, 0, &k));
  addConditional(branch, decide, ifHandle, cudaGraphCondTypeIf, 2, body);
  addStore(body[0], d + 2, 100);
  addStore(body[1], d + 2, 200);
  cudaGraphExec_t xb;
  CHECK(cudaGraphInstantiate(&xb, branch, 0));
  int outcomes[2];
  for (int v : {9, 1}) {
    CHECK(cudaMemcpy(d + 1, &v, sizeof v, cudaMemcpyHostToDevice));
    CHECK(cudaGraphLaunch(xb, 0));
    CHECK(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost));
    outcomes[v == 9 ? 0 : 1] = h[2];
  }
  expect(outcomes[0] == 100 && outcomes[1] == 200, "an if and its else");

  // switch: the kernel picks body 2 of 3.
  cudaGraph_t sw;
  CHECK(cudaGraphCreate(&sw, 0));
  cudaGraphConditionalHandle swHandle;
  CHECK(cudaGraphConditionalHandleCreate(&swHandle, sw, 0, 0));
  unsigned which = 2;
  void* pickArgs[] = {&swHandle, &which};
  k.func = reinterpret_cast<void*>(pick);
  k.kernelParams = pickArgs;
  cudaGraphNode_t picked;
  CHECK(cudaGraphAddKernelNode(&picked, sw, nullptr, 0, &k));
  addConditional(sw, picked, swHandle, cudaGraphCondTypeSwitch, 3, body);
  for (int i = 0; i < 3; ++i) addStore(body[i], d + 3, 10 * (i + 1));
  cudaGraphExec_t xs;
  CHECK(cudaGraphInstantiate(&xs, sw, 0));
  CHECK(cudaGraphLaunch(xs, 0));
  CHECK(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost));
  expect(h[3] == 30, "a switch runs the body its value numbers");

  CHECK(cudaGraphExecDestroy(x));
  CHECK(cudaGraphExecDestroy(xb));
  CHECK(cudaGraphExecDestroy(xs));
  CHECK(cudaGraphDestroy(loop));
  CHECK(cudaGraphDestroy(branch));
  CHECK(cudaGraphDestroy(sw));
  CHECK(cudaFree(d));
  return verdict(expect.ok, "conditional graph nodes");
}
