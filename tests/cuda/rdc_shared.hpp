// What both files of the relocatable-device-code test share.
#pragma once

// Instantiated in both files: each file's PTX defines it (.weak), the link keeps one.
template <class T>
__device__ T twice(T x) {
  return x + x;
}

// Dynamic shared memory: both files' PTX declare it (.extern .shared), the link keeps one.
extern __shared__ int staged[];

extern __device__ int gBias;
extern __constant__ int cTable[4];
__device__ int scaled(int x);
void launchFromDeviceFile(int* out, int n);
