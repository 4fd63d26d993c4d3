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

}  // namespace gpusc::cli
