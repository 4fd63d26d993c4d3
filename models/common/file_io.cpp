#include "common/file_io.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>

#include <fmt/format.h>

#include "common/error.hpp"

namespace gpusc {

void writeFileAtomically(const std::string& path, std::string_view data) {
  // The process id keeps concurrent writers (a run pool) off each other's temporary files.
  const std::string tmp = fmt::format("{}.tmp-{}", path, ::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw InputError(fmt::format("cannot write '{}': {}", path, std::strerror(errno)));
    out.write(data.data(), static_cast<std::streamsize>(data.size()));
    out.close();
    if (!out) {
      std::remove(tmp.c_str());
      throw InputError(fmt::format("cannot write '{}': write failed", path));
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    std::remove(tmp.c_str());
    throw InputError(fmt::format("cannot write '{}': {}", path, std::strerror(err)));
  }
}

}  // namespace gpusc
