// What the test programs share: stop on an unexpected CUDA error; print the verdict.
#pragma once

#include <cstdio>
#include <cstdlib>

#include <cuda_runtime.h>

#define CHECK(call)                                                                             \
  do {                                                                                          \
    const cudaError_t e_ = (call);                                                              \
    if (e_ != cudaSuccess) {                                                                    \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorName(e_)); \
      std::exit(2);                                                                             \
    }                                                                                           \
  } while (0)

// The error a call must return.
#define EXPECT_ERROR(call, expected)                                                          \
  do {                                                                                        \
    const cudaError_t e_ = (call);                                                            \
    if (e_ != (expected)) {                                                                   \
      std::fprintf(stderr, "%s:%d: %s returned %s, expected %s\n", __FILE__, __LINE__, #call, \
                   cudaGetErrorName(e_), cudaGetErrorName(expected));                         \
      std::exit(1);                                                                           \
    }                                                                                         \
  } while (0)

// Expectations checked one by one: each prints its outcome; `ok` says whether all held.
struct Expectations {
  bool ok = true;
  void operator()(bool pass, const char* what) {
    std::printf("%s: %s\n", what, pass ? "ok" : "WRONG");
    ok = ok && pass;
  }
};

inline int verdict(bool pass, const char* what) {
  std::printf("%s (%s)\n", pass ? "PASS" : "FAIL", what);
  return pass ? 0 : 1;
}
