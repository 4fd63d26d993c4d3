#include "cudart/cuda_errors.hpp"

#include <algorithm>
#include <iterator>

namespace gpusc::cudart {

namespace {

struct ErrorText {
  int code;
  const char* name;
  const char* text;
};

constexpr ErrorText kErrors[] = {
#include "cudart/cuda_errors.inc"
};

constexpr const char* kUnrecognized = "unrecognized error code";

const ErrorText* find(int code) {
  const auto* it = std::lower_bound(std::begin(kErrors), std::end(kErrors), code,
                                    [](const ErrorText& e, int c) { return e.code < c; });
  return it != std::end(kErrors) && it->code == code ? it : nullptr;
}

}  // namespace

const char* errorName(int code) {
  const ErrorText* e = find(code);
  return e ? e->name : kUnrecognized;
}

const char* errorString(int code) {
  const ErrorText* e = find(code);
  return e ? e->text : kUnrecognized;
}

}  // namespace gpusc::cudart
