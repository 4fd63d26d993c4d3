#include "exec_cli.hpp"

#include <elf.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>

#include <fmt/format.h>

#include "cudart/server.hpp"
#include "cudart/wire.hpp"

extern char** environ;

namespace gpusc::cli {

namespace fs = std::filesystem;

namespace {

// The descriptor the program finds its end of the socket on (GPUSC_CUDART_FD), and the one whose
// lock claims it (GPUSC_CUDART_CLAIM_FD).
constexpr int kProgramFd = 3;
constexpr int kClaimFd = 4;

// The program file argv[0] names: a path, or a name on PATH.
std::string findProgram(const std::string& name) {
  if (name.find('/') != std::string::npos) return name;
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/bin:/bin";
  for (size_t at = 0; at <= dirs.size();) {
    const size_t colon = std::min(dirs.find(':', at), dirs.size());
    const std::string dir = colon > at ? dirs.substr(at, colon - at) : ".";
    const std::string candidate = dir + "/" + name;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
    at = colon + 1;
  }
  return name;
}

// The shared libraries an ELF executable names (DT_NEEDED); nullopt when it is not a 64-bit ELF
// file (a script, say), whose interpreter is left to find its libraries.
std::optional<std::vector<std::string>> neededLibraries(const std::string& path,
                                                        bool* hasCudaRuntime) {
  std::ifstream in(path, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  *hasCudaRuntime = false;
  if (bytes.size() < sizeof(Elf64_Ehdr) || std::memcmp(bytes.data(), ELFMAG, SELFMAG) != 0 ||
      bytes[EI_CLASS] != ELFCLASS64)
    return std::nullopt;
  Elf64_Ehdr eh;
  std::memcpy(&eh, bytes.data(), sizeof eh);
  const auto section = [&](size_t i) {
    Elf64_Shdr sh{};
    const uint64_t at = eh.e_shoff + uint64_t(i) * eh.e_shentsize;
    if (at + sizeof sh <= bytes.size()) std::memcpy(&sh, bytes.data() + at, sizeof sh);
    return sh;
  };
  std::vector<std::string> needed;
  for (size_t i = 0; i < eh.e_shnum; ++i) {
    const Elf64_Shdr sh = section(i);
    if (sh.sh_type != SHT_DYNAMIC || sh.sh_link >= eh.e_shnum) continue;
    const Elf64_Shdr strtab = section(sh.sh_link);
    for (uint64_t off = sh.sh_offset; off + sizeof(Elf64_Dyn) <= sh.sh_offset + sh.sh_size &&
                                      off + sizeof(Elf64_Dyn) <= bytes.size();
         off += sizeof(Elf64_Dyn)) {
      Elf64_Dyn d;
      std::memcpy(&d, bytes.data() + off, sizeof d);
      if (d.d_tag == DT_NULL) break;
      if (d.d_tag != DT_NEEDED) continue;
      const uint64_t s = strtab.sh_offset + d.d_un.d_val;
      if (s < bytes.size()) needed.emplace_back(bytes.data() + s);
    }
  }
  // CUDA's runtime compiled in (nvcc's default, -cudart static) carries its registration
  // function's name among its strings.
  static const char kRegister[] = "__cudaRegisterFatBinary";
  *hasCudaRuntime = std::search(bytes.begin(), bytes.end(), kRegister,
                                kRegister + sizeof kRegister - 1) != bytes.end();
  return needed;
}

std::string statusText(int status) {
  if (WIFEXITED(status)) return fmt::format("exited with status {}", WEXITSTATUS(status));
  if (WIFSIGNALED(status))
    return fmt::format("killed by signal {} ({})", WTERMSIG(status), strsignal(WTERMSIG(status)));
  return "ended";
}

ProgramRun serve(Device& dev, int fd, const std::string& name, pid_t child,
                 const std::string& resultsFolder) {
  cudart::ProgramServer server(dev, name, std::cerr);
  server.setResultsFolder(resultsFolder);
  try {
    server.serve(fd);
  } catch (...) {
    ::close(fd);
    if (child > 0) {
      ::kill(child, SIGKILL);
      ::waitpid(child, nullptr, 0);
    }
    throw;
  }
  ::close(fd);
  ProgramRun r;
  if (child > 0) {
    int status = 0;
    while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
    }
    r.status = statusText(status);
    r.exitCode = WIFEXITED(status) ? WEXITSTATUS(status)
                                   : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
    r.work["exit_status"] = r.exitCode;
  }
  r.stopped = server.stopped();
  r.work["status"] = r.status;
  r.work["kernel_faults"] = server.faults();
  r.work["failed_calls"] = server.failures();
  if (!server.protocolError().empty())
    throw InputError(
        fmt::format("{}: the program's CUDA runtime library sent {}: use the "
                    "library installed with this gpusc ({})",
                    name, server.protocolError(), cudartLibraryDir()));
  return r;
}

}  // namespace

std::string cudartLibraryDir() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    for (const fs::path& dir :
         {exe.parent_path() / "cudart", exe.parent_path() / ".." / "lib" / "gpusc"})
      if (fs::exists(dir / "libcudart.so.13", ec)) return fs::weakly_canonical(dir, ec).string();
  }
  throw InputError(fmt::format(
      "gpusc exec: the CUDA runtime library libcudart.so.13 is not beside {} (cudart/ in a "
      "build tree, lib/gpusc/ in an installation): build the target gpusc_cudart",
      exe.string()));
}

StartedProgram::~StartedProgram() {
  if (pid_ <= 0) return;  // served
  ::close(fd_);
  ::kill(pid_, SIGKILL);
  ::waitpid(pid_, nullptr, 0);
}

std::unique_ptr<StartedProgram> startProgram(const std::vector<std::string>& argv,
                                             const std::vector<EnvSetting>& settings) {
  if (argv.empty())
    throw InputError("gpusc exec: no program given (gpusc exec [options] -- PROGRAM ARGS...)");
  const std::string libDir = cudartLibraryDir();
  const std::string file = findProgram(argv[0]);
  if (file.find('/') != std::string::npos) {
    std::error_code ec;
    if (!fs::exists(file, ec)) throw InputError(fmt::format("gpusc exec: {}: no such file", file));
    if (!fs::is_regular_file(file, ec))
      throw InputError(fmt::format("gpusc exec: {}: not a program (not a regular file)", file));
    bool hasRuntime = false;
    if (auto needed = neededLibraries(file, &hasRuntime)) {
      const bool dynamic = std::any_of(needed->begin(), needed->end(), [](const std::string& n) {
        return n.rfind("libcudart.so", 0) == 0;
      });
      if (hasRuntime && !dynamic)
        throw InputError(fmt::format(
            "gpusc exec: {} has CUDA's runtime linked in statically (nvcc's default), so gpusc "
            "cannot serve its calls: rebuild it with `nvcc -cudart shared` (docs/cuda-programs.md)",
            file));
      // NVIDIA's libraries carry a runtime of their own, which asks the GPU driver (libcuda)
      // directly: gpusc never sees their calls, which fail. Said now, not left to the library's
      // status code.
      for (const std::string& n : *needed)
        for (const char* lib : {"libcublas", "libcufft", "libcurand", "libcusparse", "libcusolver",
                                "libcudnn", "libnpp", "libnvjpeg", "libcutensor", "libnccl"})
          if (n.rfind(lib, 0) == 0)
            std::cerr << fmt::format(
                "gpusc exec: warning: {} links {}: NVIDIA's libraries call the GPU driver "
                "(libcuda) through a runtime of their own, which gpusc does not serve, so their "
                "calls will fail (docs/cuda-programs.md, \"What does not run\")\n",
                file, n);
      // The driver API (cuInit, cuModuleLoadData, cuLaunchKernel) is libcuda's, which gpusc
      // does not provide: without a GPU driver the program does not even start.
      for (const std::string& n : *needed)
        if (n.rfind("libcuda.so", 0) == 0)
          std::cerr << fmt::format(
              "gpusc exec: warning: {} links {}: it calls the CUDA driver API, which gpusc does "
              "not serve (only the runtime API, libcudart); its driver calls will fail, or the "
              "program will not start where no GPU driver is installed (docs/cuda-programs.md, "
              "\"What does not run\")\n",
              file, n);
    }
  }
  int pair[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0)
    throw InputError(fmt::format("gpusc exec: socketpair: {}", std::strerror(errno)));
  // The claim: an empty memory file, which the program's processes lock (a POSIX lock: one
  // process's, released when it exits) before they use the socket. Its descriptor and the
  // program's end of the socket are moved above the two the program finds them on, so that
  // neither dup2 below overwrites the other.
  const int memfd = ::memfd_create("gpusc-claim", MFD_CLOEXEC);
  const int claim = memfd >= 0 ? ::fcntl(memfd, F_DUPFD_CLOEXEC, 10) : -1;
  const int programEnd = ::fcntl(pair[1], F_DUPFD_CLOEXEC, 10);
  if (memfd >= 0) ::close(memfd);
  ::close(pair[1]);
  pair[1] = programEnd;
  if (claim < 0 || programEnd < 0) {
    const std::string why = std::strerror(errno);
    for (int fd : {pair[0], claim, programEnd})
      if (fd >= 0) ::close(fd);
    throw InputError(fmt::format("gpusc exec: cannot make the program's descriptors: {}", why));
  }
  // Buffers that hold a large copy's bytes in a few system calls.
  for (int fd : pair)
    for (int opt : {SO_SNDBUF, SO_RCVBUF}) {
      const int bytes = 4 << 20;
      ::setsockopt(fd, SOL_SOCKET, opt, &bytes, sizeof bytes);
    }
  // The environment: the socket, the runtime library found first, and this run's settings.
  std::vector<std::string> env;
  std::string libraryPath = libDir;
  const auto replaced = [&](const std::string& v) {
    if (v.rfind(std::string(cudart::wire::kSocketEnv) + "=", 0) == 0 ||
        v.rfind(std::string(cudart::wire::kClaimEnv) + "=", 0) == 0)
      return true;
    return std::any_of(settings.begin(), settings.end(),
                       [&](const EnvSetting& s) { return v.rfind(s.name + "=", 0) == 0; });
  };
  for (char** e = environ; *e; ++e) {
    const std::string v = *e;
    if (v.rfind("LD_LIBRARY_PATH=", 0) == 0) {
      if (v.size() > 16) libraryPath += ":" + v.substr(16);
    } else if (!replaced(v)) {
      env.push_back(v);
    }
  }
  for (const EnvSetting& s : settings)
    if (!s.value.empty()) env.push_back(s.name + "=" + s.value);
  env.push_back("LD_LIBRARY_PATH=" + libraryPath);
  env.push_back(fmt::format("{}={}", cudart::wire::kSocketEnv, kProgramFd));
  env.push_back(fmt::format("{}={}", cudart::wire::kClaimEnv, kClaimFd));
  std::vector<char*> envp, args;
  for (auto& v : env) envp.push_back(v.data());
  envp.push_back(nullptr);
  std::vector<std::string> argvCopy = argv;
  for (auto& a : argvCopy) args.push_back(a.data());
  args.push_back(nullptr);
  // posix_spawn (a vfork: the simulator's page tables are not copied) with the program's end of
  // the socket as descriptor kProgramFd, which dup2 leaves open across exec.
  std::fflush(stdout);
  std::cerr.flush();
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pair[1], kProgramFd);
  posix_spawn_file_actions_adddup2(&actions, claim, kClaimFd);
  pid_t pid = -1;
  const int err = ::posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  ::close(pair[1]);
  ::close(claim);
  if (err != 0) {
    ::close(pair[0]);
    throw InputError(fmt::format("gpusc exec: cannot run {}: {}", argv[0], std::strerror(err)));
  }
  return std::make_unique<StartedProgram>(pid, pair[0], argv);
}

ProgramRun serveProgram(Device& dev, StartedProgram& program, const std::string& resultsFolder) {
  const pid_t pid = program.pid_;
  program.pid_ = -1;  // served from here on: serve waits for it (or kills it)
  ProgramRun r =
      serve(dev, program.fd_, fs::path(program.argv_[0]).filename().string(), pid, resultsFolder);
  r.work["program"] = program.argv_;
  return r;
}

ProgramRun serveProgram(Device& dev, int fd, const std::string& programName,
                        const std::string& resultsFolder) {
  if (::fcntl(fd, F_GETFD) < 0)
    throw InputError(fmt::format("--attach-fd {}: not an open descriptor", fd));
  ::fcntl(fd, F_SETFD, FD_CLOEXEC);
  ProgramRun r = serve(dev, fd, programName, -1, resultsFolder);
  r.status = "ended";
  r.work["program"] = std::vector<std::string>{programName};
  r.work["status"] = r.status;
  return r;
}

}  // namespace gpusc::cli
