// String-keyed factories for policies (warp schedulers, CTA placement, replacement, ...), so a
// platform file picks an implementation by name. A registry is built once, from a list of
// entries, and is immutable afterwards.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "common/error.hpp"
#include "common/strings.hpp"

namespace gpusc {

template <class Product, class... Args>
class Registry {
 public:
  using Factory = std::function<std::unique_ptr<Product>(Args...)>;
  struct Entry {
    std::string name;
    std::string doc;  // one line, for `gpusc list` and the docs
    Factory make;
  };

  Registry(std::string what, std::vector<Entry> entries)
      : what_(std::move(what)), entries_(std::move(entries)) {}

  std::unique_ptr<Product> create(const std::string& name, Args... args) const {
    for (const auto& e : entries_)
      if (e.name == name) return e.make(std::forward<Args>(args)...);
    throw InputError(fmt::format("no {} named '{}'{} (known: {})", what_, name,
                                 didYouMean(name, names()), join(names(), ", ")));
  }

  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const auto& e : entries_) out.push_back(e.name);
    return out;
  }
  const std::vector<Entry>& entries() const { return entries_; }

 private:
  std::string what_;
  std::vector<Entry> entries_;
};

}  // namespace gpusc
