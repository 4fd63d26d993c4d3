// Files and external programs. Writing result files whole or not at all: the text goes to a
// temporary file beside the target and is renamed over it, so a run stopped at any moment (a
// signal, a crash, a full disk) leaves either the previous file or the new one, never half of one.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace gpusc {

// Writes `data` to `path` (InputError naming the path when it cannot).
void writeFileAtomically(const std::string& path, std::string_view data);

// Runs the program argv[0] (looked up on PATH) with `argv`, its stdout and stderr to the file
// `log`, and waits for it: its exit status (128 + the signal when one ended it), or -errno when
// it could not be started (e.g. -ENOENT: not installed).
int runProgram(const std::vector<std::string>& argv, const std::string& log);

}  // namespace gpusc
