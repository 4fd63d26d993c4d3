// What the stand-alone CUDA programs share (stimuli/programs/*.cu): the problem size from the
// command line, allocation and copies that stop the program on a CUDA error, and the catalog's
// checks (stimuli/catalog.hpp) for the program's own verdict: "PASS ..." and exit status 0, or
// "FAIL ..." and 1.
//
// Each program is a catalog kernel's workload written as a CUDA program: the same inputs (the
// same Rng and seeds), the same allocations in the same order, the same launches. Under
// `gpusc exec` its launches are the catalog workload's, so its cycles are `gpusc run --kernel`'s.
// Plain CUDA and C++17: it builds with nvcc alone (`nvcc -cudart shared -I models`).
#pragma once

#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <string>
#include <vector>

#include "common/rng.hpp"

#define CHECK(call)                                                           \
  do {                                                                        \
    const cudaError_t e_ = (call);                                            \
    if (e_ != cudaSuccess) {                                                  \
      std::fprintf(stderr, "%s:%d: %s: %s (%s)\n", __FILE__, __LINE__, #call, \
                   cudaGetErrorName(e_), cudaGetErrorString(e_));             \
      std::exit(2);                                                           \
    }                                                                         \
  } while (0)

enum class Size { Tiny, Small, Default };

// The first argument: tiny, small or default (none: default).
inline Size parseSize(int argc, char** argv) {
  if (argc < 2) return Size::Default;
  const std::string s = argv[1];
  if (s == "tiny") return Size::Tiny;
  if (s == "small") return Size::Small;
  if (s == "default") return Size::Default;
  std::fprintf(stderr, "%s: size %s: expected tiny, small or default\n", argv[0], s.c_str());
  std::exit(2);
}

// The device's SM count (the root-cause stimuli give every SM its blocks).
inline uint32_t multiprocessors() {
  int sms = 0;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  return static_cast<uint32_t>(sms);
}

template <class T>
T* deviceAlloc(size_t count) {
  void* p = nullptr;
  CHECK(cudaMalloc(&p, count * sizeof(T)));
  return static_cast<T*>(p);
}

// cudaMalloc and a copy of `host` (the catalog's Device::upload).
template <class T>
T* upload(const std::vector<T>& host) {
  T* p = deviceAlloc<T>(host.size());
  CHECK(cudaMemcpy(p, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice));
  return p;
}

template <class T>
std::vector<T> download(const T* src, size_t count) {
  std::vector<T> out(count);
  CHECK(cudaMemcpy(out.data(), src, count * sizeof(T), cudaMemcpyDeviceToHost));
  return out;
}

struct CheckResult {
  bool pass = true;
  std::string message;
};

template <class T>
double asNumber(T v) {
  return static_cast<double>(v);
}

template <class T>
CheckResult compareExact(const std::vector<T>& got, const std::vector<T>& want,
                         const std::string& what) {
  if (got.size() != want.size())
    return {false, what + ": " + std::to_string(got.size()) + " elements, expected " +
                       std::to_string(want.size())};
  for (size_t i = 0; i < got.size(); ++i)
    if (!(got[i] == want[i])) {
      char text[256];
      std::snprintf(text, sizeof text, "%s[%zu] = %.9g, expected %.9g", what.c_str(), i,
                    asNumber(got[i]), asNumber(want[i]));
      return {false, text};
    }
  return {true, what + ": " + std::to_string(got.size()) + " elements exact"};
}

// |got - want| <= atol + rtol * |want| for every element (NaN matches NaN).
template <class T>
CheckResult compareClose(const std::vector<T>& got, const std::vector<T>& want, double rtol,
                         double atol, const std::string& what) {
  if (got.size() != want.size())
    return {false, what + ": " + std::to_string(got.size()) + " elements, expected " +
                       std::to_string(want.size())};
  for (size_t i = 0; i < got.size(); ++i) {
    const double g = asNumber(got[i]), w = asNumber(want[i]);
    if (std::isnan(g) && std::isnan(w)) continue;
    if (!(std::fabs(g - w) <= atol + rtol * std::fabs(w))) {
      char text[256];
      std::snprintf(text, sizeof text, "%s[%zu] = %.9g, expected %.9g", what.c_str(), i, g, w);
      return {false, text};
    }
  }
  return {true, what + ": " + std::to_string(got.size()) + " elements within tolerance"};
}

inline CheckResult allOf(std::initializer_list<CheckResult> results) {
  std::string summary;
  for (const auto& r : results) {
    if (!r.pass) return r;
    summary += (summary.empty() ? "" : "; ") + r.message;
  }
  return {true, summary};
}

inline std::vector<double> asDouble(const std::vector<float>& v) { return {v.begin(), v.end()}; }

// The program's verdict and exit status.
inline int finish(const CheckResult& r) {
  std::printf("%s (%s)\n", r.pass ? "PASS" : "FAIL", r.message.c_str());
  return r.pass ? 0 : 1;
}
