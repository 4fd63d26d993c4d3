// Writing result files whole or not at all: the text goes to a temporary file beside the target
// and is renamed over it, so a run stopped at any moment (a signal, a crash, a full disk) leaves
// either the previous file or the new one, never half of one.
#pragma once

#include <string>
#include <string_view>

namespace gpusc {

// Writes `data` to `path` (InputError naming the path when it cannot).
void writeFileAtomically(const std::string& path, std::string_view data);

}  // namespace gpusc
