#include "run_pool.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>

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

std::string lastLine(const std::string& path) {
  std::ifstream in(path);
  std::string line, last;
  while (std::getline(in, line))
    if (!line.empty()) last = line;
  return last;
}

}  // namespace

std::vector<RunOutcome> runAll(const std::string& self, const std::vector<RunSpec>& specs,
                               unsigned jobs) {
  std::vector<RunOutcome> out(specs.size());
  std::map<pid_t, size_t> running;
  size_t next = 0, finished = 0;
  const auto t0 = std::chrono::steady_clock::now();
  auto start = [&](size_t i) {
    const RunSpec& s = specs[i];
    fs::create_directories(s.outDir);
    std::vector<std::string> argv = {self};
    argv.insert(argv.end(), s.command.begin(), s.command.end());
    // The pool owns its work folders (its stderr.txt is already there): --force.
    argv.insert(argv.end(), {"--quiet", "--force", "--out", s.outDir});
    argv.insert(argv.end(), s.args.begin(), s.args.end());
    std::vector<char*> cargv;
    for (auto& a : argv) cargv.push_back(a.data());
    cargv.push_back(nullptr);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    const std::string errPath = (fs::path(s.outDir) / "stderr.txt").string();
    posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, errPath.c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
    pid_t pid = 0;
    int rc = posix_spawn(&pid, self.c_str(), &fa, nullptr, cargv.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) throw InputError(fmt::format("cannot start {}: {}", self, std::strerror(rc)));
    running[pid] = i;
  };
  while (finished < specs.size()) {
    while (running.size() < std::max(1u, jobs) && next < specs.size()) start(next++);
    int status = 0;
    pid_t pid = waitpid(-1, &status, 0);
    if (pid < 0) throw InputError("waitpid failed while running experiments");
    auto it = running.find(pid);
    if (it == running.end()) continue;
    const size_t i = it->second;
    running.erase(it);
    ++finished;
    RunOutcome& o = out[i];
    o.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    const fs::path statsPath = fs::path(specs[i].outDir) / "stats.json";
    if (o.exitCode == 0 && fs::exists(statsPath)) {
      std::ifstream in(statsPath);
      o.stats = nlohmann::json::parse(in);
      o.ok = true;
    } else {
      o.error = lastLine((fs::path(specs[i].outDir) / "stderr.txt").string());
    }
    const double secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::cerr << fmt::format("gpusc: [{}/{}] {:.0f}s {} {}\n", finished, specs.size(), secs,
                             specs[i].label, o.ok ? "" : "FAILED: " + o.error);
  }
  return out;
}

}  // namespace gpusc::cli
