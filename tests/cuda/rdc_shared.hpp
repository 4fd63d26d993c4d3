// What both files of the relocatable-device-code test share.
#pragma once

// Instantiated in both files: each file's PTX defines it (.weak), the link keeps one.
template <class T>
__device__ T twice(T x) {
  return x + x;
}

// Mutually recursive templates: each file's PTX declares one (.weak, no body) before it defines
// both; the link keeps a declaration and one definition of each.
template <class T>
__device__ __noinline__ T oddSteps(T x);
template <class T>
__device__ __noinline__ T evenSteps(T x) {
  return x == 0 ? 0 : 1 + oddSteps<T>(x - 1);
}
template <class T>
__device__ __noinline__ T oddSteps(T x) {
  return x == 0 ? 0 : 1 + evenSteps<T>(x - 1);
}

// Dynamic shared memory: both files' PTX declare it (.extern .shared), the link keeps one.
extern __shared__ int staged[];

extern __device__ int gBias;
extern __constant__ int cTable[4];
__device__ int scaled(int x);
void launchFromDeviceFile(int* out, int n);
void launchStepsFromDeviceFile(int* out);
