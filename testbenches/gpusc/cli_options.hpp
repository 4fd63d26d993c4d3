// Checks the command-line front ends (gpusc run and exec, gpusc shader run) share.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "common/error.hpp"
#include "common/strings.hpp"

namespace gpusc::cli {

// An option that is a key's shorthand, given (`given`) with a --set of that key or of a section
// above it among `sets` (KEY=VALUE): one of the two would silently lose, so InputError names both.
inline void refuseOptionAndSet(bool given, const std::string& option, const std::string& key,
                               const std::vector<std::string>& sets) {
  if (!given) return;
  for (const std::string& s : sets) {
    const std::string setKey(trim(std::string_view(s).substr(0, s.find('='))));
    if (!setKey.empty() && (key == setKey || key.rfind(setKey + ".", 0) == 0))
      throw InputError(fmt::format("{} and --set {}: both set {}; give one", option, s, key));
  }
}

namespace detail {
inline std::string setKey(const std::string& s) {
  return std::string(trim(std::string_view(s).substr(0, s.find('='))));
}
// `inner` is a key within section `outer`.
inline bool within(const std::string& inner, const std::string& outer) {
  return inner.rfind(outer + ".", 0) == 0 || inner.rfind(outer + "[", 0) == 0;
}
}  // namespace detail

// Two of `sets` (KEY=VALUE, in the order given) that set the same key, or a section after a key
// within it (which the section's value replaces): one would silently lose, so InputError names
// both. (A key within a section given before it refines the section, as a YAML file would.)
inline void refuseRepeatedSets(const std::vector<std::string>& sets) {
  for (size_t j = 1; j < sets.size(); ++j) {
    const std::string later = detail::setKey(sets[j]);
    for (size_t i = 0; i < j; ++i) {
      const std::string earlier = detail::setKey(sets[i]);
      if (later.empty() || earlier.empty()) continue;
      if (earlier == later)
        throw InputError(fmt::format("--set {} and --set {}: both set {}; give it once", sets[i],
                                     sets[j], later));
      if (detail::within(earlier, later))
        throw InputError(
            fmt::format("--set {} and --set {}: the section {} replaces {} given "
                        "before it; give the key after the section, or once",
                        sets[i], sets[j], later, earlier));
    }
  }
}

// `sets` applied in order with a later one winning (a sweep point's: its spec's, its variant's,
// its axes'), as the --set options refuseRepeatedSets accepts that resolve alike: each without
// the overrides a later one replaces (the same key, or a key within a later section).
inline std::vector<std::string> lastOfEachKey(const std::vector<std::string>& sets) {
  std::vector<std::string> out;
  for (size_t i = 0; i < sets.size(); ++i) {
    const std::string key = detail::setKey(sets[i]);
    bool replaced = false;
    for (size_t j = i + 1; j < sets.size() && !replaced; ++j) {
      const std::string later = detail::setKey(sets[j]);
      replaced = !key.empty() && (later == key || detail::within(key, later));
    }
    if (!replaced) out.push_back(sets[i]);
  }
  return out;
}

}  // namespace gpusc::cli
