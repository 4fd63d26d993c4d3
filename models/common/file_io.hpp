// Files and external programs. Writing result files whole or not at all: the text goes to a
// temporary file beside the target and is renamed over it, so a run stopped at any moment (a
// signal, a crash, a full disk) leaves either the previous file or the new one, never half of one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpusc {

// Writes `data` to `path` (InputError naming the path when it cannot).
void writeFileAtomically(const std::string& path, std::string_view data);

// The most of one input file (a platform file, a launch or sweep spec, PTX) gpusc reads: a path
// that never ends (/dev/zero, a pipe left open) is refused at this size instead of filling memory.
inline constexpr uint64_t kInputFileLimit = uint64_t(1) << 30;

// The contents of the input file `path` (`what` names it in errors, e.g. "PTX file"), or none when
// it cannot be opened (the caller says so in its own words). One longer than `limit` bytes is an
// InputError naming the path, as is a read that fails part-way.
std::optional<std::string> readInputFile(const std::string& path, const std::string& what,
                                         uint64_t limit = kInputFileLimit);

// Text written through a bounded buffer into a file: the part StreamedFile and SpoolFile share.
// write() never throws, so it may be called from a simulation process; the first failed write
// is remembered (error_) for the owner to report.
class BufferedFile {
 public:
  BufferedFile(const BufferedFile&) = delete;
  BufferedFile& operator=(const BufferedFile&) = delete;

  void write(std::string_view text) {
    buf_.append(text);
    if (buf_.size() >= cap_) flush();
  }

 protected:
  explicit BufferedFile(size_t bufferBytes);
  ~BufferedFile() = default;
  void flush();                // writes what is buffered
  void fail();                 // remembers errno (EIO without one) unless an error came first
  std::FILE* file_ = nullptr;  // opened by the owner
  std::string buf_;
  size_t cap_;
  int error_ = 0;  // errno of the first failed write, 0 while all went well
};

// A result file written while a run goes, whole or not at all like writeFileAtomically: the text
// goes through a bounded buffer (`bufferBytes`) into a temporary file beside `path`, and commit()
// renames that over `path`. Destroyed without commit() (an error ended the run), it removes the
// temporary file. Opening throws InputError naming `path`; a failed write is remembered (write()
// never throws, so it may be called from a simulation process) and commit() throws it.
class StreamedFile : public BufferedFile {
 public:
  explicit StreamedFile(std::string path, size_t bufferBytes = size_t(1) << 16);
  ~StreamedFile();

  // Writes what is buffered, closes the file and renames it to path() (InputError naming it
  // when any of that, or an earlier write, failed). Once only.
  void commit();
  const std::string& path() const { return path_; }

 private:
  std::string path_, tmp_;
};

// Text set aside while a run goes, to be copied into a result file at its end: it goes through a
// bounded buffer (`bufferBytes`) into an unnamed temporary file (std::tmpfile: it leaves nothing
// behind, whatever ends the process). `what` names it in errors (InputError, e.g. "the launches
// of 'out/stats.json'"); a failed write is remembered like StreamedFile's and copyTo() throws it.
class SpoolFile : public BufferedFile {
 public:
  explicit SpoolFile(std::string what, size_t bufferBytes = size_t(1) << 16);
  ~SpoolFile();

  // Appends everything written so far to `out`, a buffer's size at a time.
  void copyTo(StreamedFile& out);

 private:
  std::string what_;
};

// Runs the program argv[0] (looked up on PATH) with `argv`, its stdout and stderr to the file
// `log`, and waits for it: its exit status (128 + the signal when one ended it), or -errno when
// it could not be started (e.g. -ENOENT: not installed).
int runProgram(const std::vector<std::string>& argv, const std::string& log);

}  // namespace gpusc
