#include "run_pool.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <thread>
#include <tuple>

#include <fmt/format.h>

#include "common/error.hpp"

extern char** environ;

namespace gpusc::cli {

namespace fs = std::filesystem;

std::string selfExecutable() {
  std::error_code ec;
  fs::path p = fs::read_symlink("/proc/self/exe", ec);
  if (ec) throw InputError("cannot find the gpusc executable (/proc/self/exe)");
  return p.string();
}

namespace {

// The first and the last non-empty line of a file.
std::pair<std::string, std::string> firstAndLastLine(const std::string& path) {
  std::ifstream in(path);
  std::string line, first, last;
  while (std::getline(in, line))
    if (!line.empty()) {
      if (first.empty()) first = line;
      last = line;
    }
  return {first, last};
}

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

RunPool::~RunPool() {
  terminateAll();
  for (const auto& [pid, c] : running_) waitpid(pid, nullptr, 0);
}

void RunPool::start(size_t id, const RunSpec& s) {
  fs::create_directories(s.outDir);
  std::vector<std::string> argv = {self_};
  argv.insert(argv.end(), s.command.begin(), s.command.end());
  // The pool owns its work folders (its stderr.txt is already there): --force.
  argv.insert(argv.end(), {"--quiet", "--force", "--out", s.outDir});
  // The pool runs simulations side by side, about one per core: each on one host thread (an
  // option before the arguments: a program's come last, after "--").
  if ((s.command == std::vector<std::string>{"run"} ||
       s.command == std::vector<std::string>{"exec"}) &&
      std::find(s.args.begin(), s.args.end(), "--threads") == s.args.end())
    argv.insert(argv.end(), {"--threads", "1"});
  argv.insert(argv.end(), s.args.begin(), s.args.end());
  std::vector<char*> cargv;
  for (auto& a : argv) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  const std::string errPath = (fs::path(s.outDir) / "stderr.txt").string();
  const pid_t parent = getpid();
  // fork + exec rather than posix_spawn: the child must ask for SIGTERM on its parent's death.
  // Between fork and exec only async-signal-safe calls.
  const pid_t pid = fork();
  if (pid < 0) throw InputError(fmt::format("cannot start {}: {}", self_, std::strerror(errno)));
  if (pid == 0) {
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent) _exit(127);  // the parent died before prctl
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    const int err = open(errPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int devnull = open("/dev/null", O_RDWR);
    if (err < 0 || devnull < 0) _exit(127);
    dup2(devnull, STDIN_FILENO);
    dup2(devnull, STDOUT_FILENO);
    dup2(err, STDERR_FILENO);
    execve(self_.c_str(), cargv.data(), environ);
    _exit(127);
  }
  setpgid(pid, pid);  // also from the parent: no race with a terminateAll right after
  running_[pid] = Child{id, s, now()};
}

void RunPool::terminateAll() {
  for (auto& [pid, c] : running_)
    if (!c.terminated) {
      kill(pid, SIGTERM);
      c.terminated = true;
    }
}

std::optional<RunPool::Finished> RunPool::wait(int timeoutMs) {
  const double deadline = now() + timeoutMs / 1000.0;
  for (;;) {
    int status = 0;
    const pid_t pid = running_.empty() ? 0 : waitpid(-1, &status, WNOHANG);
    if (pid > 0) {
      auto it = running_.find(pid);
      if (it == running_.end()) continue;
      const Child c = it->second;
      running_.erase(it);
      RunOutcome o;
      o.seconds = now() - c.started;
      o.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      const fs::path statsPath = fs::path(c.spec.outDir) / "stats.json";
      // Results exist for a success, a failed check, a run limit and an interrupted run; the
      // child removed an earlier run's files before writing (--force).
      const bool results = o.exitCode == 0 || o.exitCode == 1 || o.exitCode == 5 || o.exitCode == 6;
      if (results && fs::exists(statsPath)) {
        o.statsPath = statsPath.string();
        if (readStats_) {
          std::ifstream in(statsPath);
          o.stats = nlohmann::json::parse(in, nullptr, false);
          if (o.stats.is_discarded()) o.stats = nlohmann::json();
        }
      }
      o.ok = o.exitCode == 0 && !o.statsPath.empty() && (!readStats_ || !o.stats.is_null());
      if (!o.ok)
        std::tie(o.firstError, o.error) =
            firstAndLastLine((fs::path(c.spec.outDir) / "stderr.txt").string());
      return Finished{c.id, std::move(o)};
    }
    if (pid < 0 && errno != EINTR && errno != ECHILD)
      throw InputError(fmt::format("waitpid failed: {}", std::strerror(errno)));
    const double left = deadline - now();
    if (left <= 0) return std::nullopt;
    // Children's ends are polled: a few milliseconds of latency per run, no signal handling.
    // A signal to this process ends the sleep early (the caller checks its flag).
    struct timespec ts {
      0, static_cast<long>(std::min(left, 0.005) * 1e9)
    };
    if (nanosleep(&ts, nullptr) != 0) return std::nullopt;
  }
}

std::vector<RunOutcome> runAll(const std::string& self, const std::vector<RunSpec>& specs,
                               unsigned jobs) {
  std::vector<RunOutcome> out(specs.size());
  RunPool pool(self);
  size_t next = 0, finished = 0;
  const auto t0 = std::chrono::steady_clock::now();
  while (finished < specs.size()) {
    while (pool.running() < std::max(1u, jobs) && next < specs.size()) {
      pool.start(next, specs[next]);
      ++next;
    }
    auto f = pool.wait(1000);
    if (!f) continue;
    ++finished;
    out[f->id] = std::move(f->outcome);
    const RunOutcome& o = out[f->id];
    const double secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::cerr << fmt::format("gpusc: [{}/{}] {:.0f}s {} {}\n", finished, specs.size(), secs,
                             specs[f->id].label, o.ok ? "" : "FAILED: " + o.error);
  }
  return out;
}

}  // namespace gpusc::cli
