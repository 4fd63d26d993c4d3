#include "catalog.hpp"

#include <cmath>

#include "common/embedded.hpp"
#include "common/error.hpp"
#include "common/strings.hpp"

namespace gpusc {
extern const EmbeddedFile kEmbeddedPtx[];
}

namespace gpusc::catalog {

Size parseSize(const std::string& s) {
  if (s == "tiny") return Size::Tiny;
  if (s == "small") return Size::Small;
  if (s == "default") return Size::Default;
  if (s == "large") return Size::Large;
  throw InputError(fmt::format("--size {}: expected tiny, small, default or large{}", s,
                               didYouMean(s, {"tiny", "small", "default", "large"})));
}

const char* sizeName(Size s) {
  switch (s) {
    case Size::Tiny:
      return "tiny";
    case Size::Small:
      return "small";
    case Size::Default:
      return "default";
    case Size::Large:
      return "large";
  }
  return "?";
}

CatalogEntry checkedSizes(CatalogEntry e) {
  if (e.large) return e;
  auto make = std::move(e.make);
  const std::string name = e.name;
  e.make = [make, name](Size s) {
    if (s == Size::Large)
      throw InputError(fmt::format("--size large: {} has no large size (kernels with one: {})",
                                   name, join(largeNames(), ", ")));
    return make(s);
  };
  return e;
}

std::vector<std::string> largeNames() {
  std::vector<std::string> out;
  for (const auto& e : all())
    if (e.large) out.push_back(e.name);
  return out;
}

std::vector<std::string> names() {
  std::vector<std::string> out;
  for (const auto& e : all()) out.push_back(e.name);
  return out;
}

const CatalogEntry& find(const std::string& name) {
  static const std::vector<CatalogEntry> entries = all();
  for (const auto& e : entries)
    if (e.name == name) return e;
  throw InputError(fmt::format("--kernel {}: no such catalog kernel{} (see `gpusc list kernels`)",
                               name, didYouMean(name, names())));
}

std::string_view ptx(const std::string& name, const std::string& file) {
  std::string path = fmt::format("stimuli/catalog/{}/{}.ptx", name, file.empty() ? name : file);
  for (const EmbeddedFile* f : listEmbedded(kEmbeddedPtx))
    if (path == f->path) return f->text;
  throw InputError(fmt::format("no embedded PTX {}", path));
}

Module& loadPtx(Device& dev, const std::string& name, const std::string& file) {
  std::string path = fmt::format("stimuli/catalog/{}/{}.ptx", name, file.empty() ? name : file);
  return dev.loadModule(ptx(name, file), path);
}

namespace {

template <class T>
inline void fmaRowLoop(T a, const T* b, T* acc, size_t n) {
  for (size_t j = 0; j < n; ++j) acc[j] = std::fma(a, b[j], acc[j]);
}

#if defined(__x86_64__)
// The loop compiled for CPUs with fma: std::fma becomes the instruction, and vectorizes.
template <class T>
__attribute__((target("fma"), flatten)) void fmaRowHardware(T a, const T* b, T* acc, size_t n) {
  fmaRowLoop(a, b, acc, n);
}
#endif

template <class T>
void fmaRowOn(T a, const T* b, T* acc, size_t n) {
#if defined(__x86_64__)
  if (__builtin_cpu_supports("fma")) return fmaRowHardware(a, b, acc, n);
#endif
  fmaRowLoop(a, b, acc, n);
}

}  // namespace

void fmaRow(float a, const float* b, float* acc, size_t n) { fmaRowOn(a, b, acc, n); }
void fmaRow(double a, const double* b, double* acc, size_t n) { fmaRowOn(a, b, acc, n); }

CheckResult allOf(std::initializer_list<CheckResult> results) {
  std::string summary;
  for (const auto& r : results) {
    if (!r.pass) return r;
    summary += (summary.empty() ? "" : "; ") + r.message;
  }
  return {true, summary};
}

}  // namespace gpusc::catalog
