// String-keyed factories for policies (warp schedulers, CTA placement, replacement, ...), so a
// platform file picks an implementation by name. Each subsystem keeps its built-in entries in a
// const registry (immutable, shared by every run). A testbench that brings its own policy copies
// the built-ins into a Policies object (gpu/policies.hpp; the shader cluster:
// shader/shader_policies.hpp), add()s to it, and hands it to the platform it builds: there is no
// global registry to mutate.
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

  // Registers another policy (e.g. a testbench's own). InputError when `name` is empty or
  // already taken: a registration never silently replaces a policy.
  void add(std::string name, std::string doc, Factory make) {
    if (name.empty()) throw InputError(fmt::format("a {} needs a name", what_));
    if (contains(name))
      throw InputError(fmt::format("a {} named '{}' is already registered", what_, name));
    if (!make) throw InputError(fmt::format("{} '{}': no factory", what_, name));
    entries_.push_back({std::move(name), std::move(doc), std::move(make)});
  }

  bool contains(const std::string& name) const {
    for (const auto& e : entries_)
      if (e.name == name) return true;
    return false;
  }

  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const auto& e : entries_) out.push_back(e.name);
    return out;
  }
  const std::vector<Entry>& entries() const { return entries_; }
  const std::string& what() const { return what_; }

 private:
  std::string what_;
  std::vector<Entry> entries_;
};

}  // namespace gpusc
