// The kernel catalog: CUDA kernels written for gpusc, each with the PTX nvcc generated from it,
// inputs, launches and a host-side reference check. `gpusc run --kernel NAME` runs one;
// tests run every one.
//
// A catalog kernel lives in stimuli/catalog/<name>/: <name>.cu, <name>.ptx and workload.cpp,
// which defines `gpusc::catalog::CatalogEntry make_<name>()`. CMake finds the folders itself.
#pragma once

#include <cmath>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "common/rng.hpp"
#include "gpu/device.hpp"

namespace gpusc::catalog {

// Problem sizes: Tiny for unit tests (fast even in timing mode), Small for quick runs,
// Default for `gpusc run` (seconds in functional mode), Large for the kernels where a study's
// input size makes sense (a minute or two in functional mode, hours in full timing mode: the
// size sampled simulation is for; CatalogEntry::large).
enum class Size { Tiny, Small, Default, Large };
Size parseSize(const std::string& s);  // "tiny" | "small" | "default" | "large"; else InputError
const char* sizeName(Size s);

struct CheckResult {
  bool pass = true;
  std::string message;  // the first mismatch, or a summary of what was checked
};

class Workload {
 public:
  virtual ~Workload() = default;
  virtual std::string describe() const = 0;    // problem size, e.g. "n=1048576"
  virtual void setup(Device& dev) = 0;         // allocate and initialise device inputs
  virtual void run(Device& dev) = 0;           // all the launches
  virtual CheckResult check(Device& dev) = 0;  // compare with the host reference
};

struct CatalogEntry {
  std::string name;         // the folder name
  std::string description;  // one line
  std::string behaviour;    // what it exercises: divergence, shared-memory conflicts, ...
  std::function<std::unique_ptr<Workload>(Size)> make;
  bool large = false;  // has a Large size (make refuses Large otherwise: an InputError)
};

// `e` with its make() refusing Size::Large when the kernel has none (all() applies it).
CatalogEntry checkedSizes(CatalogEntry e);
// The kernels with a Large size.
std::vector<std::string> largeNames();

std::vector<CatalogEntry> all();                    // generated from the folders
const CatalogEntry& find(const std::string& name);  // InputError with the closest name
std::vector<std::string> names();

// The embedded PTX of stimuli/catalog/<name>/<file>.ptx, and a device module loaded from it.
std::string_view ptx(const std::string& name, const std::string& file = "");
Module& loadPtx(Device& dev, const std::string& name, const std::string& file = "");

// ---- checks: the first mismatch, with its index and both values ----

template <class T>
CheckResult compareExact(const std::vector<T>& got, const std::vector<T>& want,
                         const std::string& what) {
  if (got.size() != want.size())
    return {false, fmt::format("{}: {} elements, expected {}", what, got.size(), want.size())};
  for (size_t i = 0; i < got.size(); ++i)
    if (!(got[i] == want[i]))
      return {false, fmt::format("{}[{}] = {}, expected {}", what, i, got[i], want[i])};
  return {true, fmt::format("{}: {} elements exact", what, got.size())};
}

// |got - want| <= atol + rtol * |want| for every element (NaN matches NaN).
template <class T>
CheckResult compareClose(const std::vector<T>& got, const std::vector<T>& want, double rtol,
                         double atol, const std::string& what) {
  if (got.size() != want.size())
    return {false, fmt::format("{}: {} elements, expected {}", what, got.size(), want.size())};
  double worst = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    double g = static_cast<double>(got[i]), w = static_cast<double>(want[i]);
    if (std::isnan(g) && std::isnan(w)) continue;
    double err = std::fabs(g - w);
    if (!(err <= atol + rtol * std::fabs(w)))
      return {false,
              fmt::format("{}[{}] = {:.9g}, expected {:.9g} (tolerance {} + {} x |expected|)", what,
                          i, g, w, atol, rtol)};
    if (w != 0) worst = std::max(worst, err / std::fabs(w));
  }
  return {true, fmt::format("{}: {} elements within tolerance (worst relative error {:.3g})", what,
                            got.size(), worst)};
}

// Combines several checks: fails with the first failure.
CheckResult allOf(std::initializer_list<CheckResult> results);

// One k step of a matrix product's row: acc[j] = fma(a, b[j], acc[j]) for j < n, each with one
// rounding. Row by row (i, k, j) a reference accumulates every element's products in ascending k,
// as a kernel's fma chain does, while reading B along its rows; the host's fma instruction does
// the work where the CPU has one (libm's otherwise), so a large GEMM's check takes seconds.
void fmaRow(float a, const float* b, float* acc, size_t n);
void fmaRow(double a, const double* b, double* acc, size_t n);

// Floats widened, for references computed in double precision.
inline std::vector<double> asDouble(const std::vector<float>& v) { return {v.begin(), v.end()}; }

}  // namespace gpusc::catalog
