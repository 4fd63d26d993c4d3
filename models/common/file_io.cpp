#include "common/file_io.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <utility>

#include <fmt/format.h>

#include "common/error.hpp"

extern char** environ;

namespace gpusc {

std::optional<std::string> readInputFile(const std::string& path, const std::string& what,
                                         uint64_t limit) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::string text;
  char buf[1 << 16];
  while (in) {
    in.read(buf, sizeof buf);
    const auto n = static_cast<uint64_t>(in.gcount());
    if (n == 0) break;
    if (text.size() + n > limit)
      throw InputError(
          fmt::format("{}: the {} is longer than {} bytes, the most gpusc reads of one input file",
                      path, what, limit));
    text.append(buf, n);
  }
  if (in.bad()) throw InputError(fmt::format("{}: reading the {} failed", path, what));
  return text;
}

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

BufferedFile::BufferedFile(size_t bufferBytes) : cap_(std::max<size_t>(bufferBytes, 1)) {
  buf_.reserve(cap_);
}

void BufferedFile::fail() {
  if (error_ == 0) error_ = errno ? errno : EIO;
}

void BufferedFile::flush() {
  if (!buf_.empty() && error_ == 0 &&
      std::fwrite(buf_.data(), 1, buf_.size(), file_) != buf_.size())
    fail();
  buf_.clear();
}

StreamedFile::StreamedFile(std::string path, size_t bufferBytes)
    : BufferedFile(bufferBytes),
      path_(std::move(path)),
      tmp_(fmt::format("{}.tmp-{}", path_, ::getpid())) {
  file_ = std::fopen(tmp_.c_str(), "wb");
  if (!file_) throw InputError(fmt::format("cannot write '{}': {}", path_, std::strerror(errno)));
}

StreamedFile::~StreamedFile() {
  if (!file_) return;
  std::fclose(file_);
  std::remove(tmp_.c_str());
}

void StreamedFile::commit() {
  if (!file_) throw InternalError(fmt::format("StreamedFile '{}': committed twice", path_));
  flush();
  if (std::fflush(file_) != 0) fail();
  if (std::fclose(file_) != 0) fail();
  file_ = nullptr;
  if (error_ == 0 && std::rename(tmp_.c_str(), path_.c_str()) != 0) error_ = errno;
  if (error_ != 0) {
    std::remove(tmp_.c_str());
    throw InputError(fmt::format("cannot write '{}': {}", path_, std::strerror(error_)));
  }
}

SpoolFile::SpoolFile(std::string what, size_t bufferBytes)
    : BufferedFile(bufferBytes), what_(std::move(what)) {
  file_ = std::tmpfile();
  if (!file_)
    throw InputError(
        fmt::format("cannot write {}: no temporary file: {}", what_, std::strerror(errno)));
}

SpoolFile::~SpoolFile() { std::fclose(file_); }

void SpoolFile::copyTo(StreamedFile& out) {
  flush();
  if (error_ == 0 && (std::fflush(file_) != 0 || std::fseek(file_, 0, SEEK_SET) != 0)) fail();
  std::string chunk(cap_, '\0');
  while (error_ == 0) {
    const size_t n = std::fread(chunk.data(), 1, chunk.size(), file_);
    out.write(std::string_view(chunk.data(), n));
    if (n < chunk.size()) {
      if (std::ferror(file_)) fail();
      break;
    }
  }
  if (error_ != 0)
    throw InputError(fmt::format("cannot write {}: {}", what_, std::strerror(error_)));
  std::fseek(file_, 0, SEEK_END);  // later writes add to what there is
}

int runProgram(const std::vector<std::string>& argv, const std::string& log) {
  std::vector<std::string> args = argv;
  std::vector<char*> cargv;
  for (auto& a : args) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0644);
  posix_spawn_file_actions_adddup2(&fa, STDOUT_FILENO, STDERR_FILENO);
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, cargv[0], &fa, nullptr, cargv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) return -rc;
  int status = 0;
  if (waitpid(pid, &status, 0) < 0) return -errno;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace gpusc
