// A library for tests/cuda/libraries.cu, built by nvcc -fatbin (PTX, and SASS for sm_75) and
// loaded by the program at run time with cudaLibraryLoadFromFile.
extern "C" __global__ void saxpy(float a, const float* x, float* y, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
