// Checks the command-line front ends (gpusc run and exec, gpusc shader run) share.
#pragma once

#include <exception>
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

// A value given twice to a repeatable option (`option`, e.g. --kernel): it would be measured or
// run twice and its rows repeat, so InputError names it.
template <class T>
void refuseRepeatedValues(const std::vector<T>& values, const std::string& option) {
  for (size_t j = 1; j < values.size(); ++j)
    for (size_t i = 0; i < j; ++i)
      if (values[i] == values[j])
        throw InputError(fmt::format("{} {}: given twice; give each once", option, values[j]));
}

// Host-thread counts given to `option` as comma-separated lists (repeatable: "1,2" or "1 --threads
// 2"), each a whole number from 1 to 1024, none empty and none twice.
inline std::vector<unsigned> parseThreadCounts(const std::vector<std::string>& lists,
                                               const std::string& option) {
  std::vector<unsigned> counts;
  for (const std::string& list : lists) {
    size_t from = 0;
    while (true) {
      const size_t comma = list.find(',', from);
      const std::string item(trim(std::string_view(list).substr(
          from, comma == std::string::npos ? std::string::npos : comma - from)));
      if (item.empty())
        throw InputError(fmt::format("{} {}: an empty count in the list; give counts such as 1,2",
                                     option, list));
      unsigned long v = 0;
      size_t used = 0;
      try {
        v = std::stoul(item, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used != item.size() || item[0] == '-' || item[0] == '+' || v < 1 || v > 1024)
        throw InputError(
            fmt::format("{} {}: '{}' is not a host-thread count (a whole number from 1 to 1024)",
                        option, list, item));
      counts.push_back(static_cast<unsigned>(v));
      if (comma == std::string::npos) break;
      from = comma + 1;
    }
  }
  refuseRepeatedValues(counts, option);
  return counts;
}

}  // namespace gpusc::cli
