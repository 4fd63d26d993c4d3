// regen_ptx.sh: -rdc=true
// Kernels that launch kernels (dynamic parallelism), for tests/test_ptx_isa.cpp (DeviceLaunches.*):
// each block of `parent` launches a child over its part of `out` with a value the block wrote;
// `chain` launches itself `depth` levels deep; `refused` makes a launch the device refuses and
// keeps the error; `allocates` calls a device runtime function gpusc does not offer.
extern "C" __global__ void child(int* out, int base, int scale) {
  out[base + threadIdx.x] = scale * (base + int(threadIdx.x));
}

extern "C" __global__ void parent(int* out, int* scales) {
  if (threadIdx.x == 0) {
    scales[blockIdx.x] = int(blockIdx.x) + 2;
    child<<<1, blockDim.x>>>(out, int(blockIdx.x * blockDim.x), scales[blockIdx.x]);
  }
}

extern "C" __global__ void chain(int* levels, int level, int depth) {
  levels[level] = level + 1;
  if (level + 1 < depth) chain<<<1, 1>>>(levels, level + 1, depth);
}

extern "C" __global__ void refused(int* errors) {
  child<<<1, 4096>>>(errors, 0, 1);
  errors[threadIdx.x] = int(cudaGetLastError());
}

extern "C" __global__ void allocates(int** p) { cudaMalloc(reinterpret_cast<void**>(p), 64); }
