#include "sweep_cli.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include <fmt/format.h>

#include "common/error.hpp"
#include "common/file_io.hpp"
#include "common/host_workers.hpp"
#include "common/strings.hpp"
#include "run_pool.hpp"
#include "sweep_db.hpp"
#include "sweep_report.hpp"
#include "sweep_spec.hpp"

namespace gpusc::cli {

namespace fs = std::filesystem;

namespace {

constexpr int kExitPointsFailed = 1;
constexpr int kExitInterrupted = 6;

struct Plan {
  SweepSpec spec;
  std::vector<SweepPoint> points;
  fs::path dir;  // the sweep's folder: results.sqlite, points/<hash>/
  fs::path dbPath() const { return dir / "results.sqlite"; }
};

Plan makePlan(SweepSpec spec, const std::string& out) {
  Plan p;
  p.spec = std::move(spec);
  p.points = expandPoints(p.spec);
  p.dir = out.empty() ? fs::path("results") / "sweeps" / p.spec.name : fs::path(out);
  return p;
}

Plan makePlan(const std::string& specPath, const std::string& out) {
  return makePlan(loadSweepSpec(specPath), out);
}

std::string utcNow() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// The columns that name the point (not its results).
nlohmann::json pointRow(const Plan& plan, const SweepPoint& p) {
  return {{"sweep", plan.spec.name}, {"label", p.label},       {"hash", p.hash},
          {"kernel", p.kernel},      {"size", p.size},         {"launch", p.launch},
          {"variant", p.variant},    {"platform", p.platform}, {"mode", p.mode},
          {"axes", p.axes}};
}

// The row a point has for its current configuration, if any.
const nlohmann::json* currentRow(const std::map<std::string, nlohmann::json>& rows,
                                 const SweepPoint& p) {
  auto it = rows.find(p.label);
  if (it == rows.end() || it->second.value("hash", "") != p.hash) return nullptr;
  return &it->second;
}

std::map<std::string, nlohmann::json> rowsByLabel(const SweepDb& db, const std::string& sweep) {
  std::map<std::string, nlohmann::json> out;
  for (auto& r : db.rows(sweep)) out[r["label"].get<std::string>()] = r;
  return out;
}

std::string readText(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A finished run's row: status, exit code, first error line, metrics.
// `stats`: the run's stats.json as readStatsForMetrics reads it (null: none).
nlohmann::json resultRow(const Plan& plan, const SweepPoint& p, const RunOutcome& o,
                         const nlohmann::json& stats, const fs::path& runDir) {
  nlohmann::json row = pointRow(plan, p);
  // A point killed by a signal (a user's kill, the OOM killer, a lost node) did not fail: it is
  // interrupted, like one a SIGTERM stopped, and runs again when the sweep resumes.
  const bool killed = o.exitCode >= 128;
  std::string status = o.exitCode == 0                              ? "ok"
                       : (o.exitCode == kExitInterrupted || killed) ? "interrupted"
                                                                    : "failed";
  std::string error = o.firstError;
  if (killed && error.empty()) error = fmt::format("killed by signal {}", o.exitCode - 128);
  if (o.exitCode == 1 && error.empty() && stats.is_object())
    error = "check: FAIL (" +
            stats["workload"]["check"].value("message", std::string("no message")) + ")";
  if (status == "ok" && !stats.is_object()) {
    status = "failed";
    error = "gpusc: cannot read the run's stats.json";
  }
  // The run resolved the same configuration as the sweep hashed (one code path: loadPlatform
  // and config.yaml); a difference would make the hash a lie.
  if (status == "ok" && readText(runDir / "config.yaml") != p.configYaml) {
    status = "failed";
    error =
        "gpusc: internal error: the run's config.yaml differs from the configuration the "
        "sweep hashed";
  }
  row["status"] = status;
  row["exit_code"] = o.exitCode;
  row["error"] = error;
  row["host_seconds"] = o.seconds;
  row["finished_at"] = utcNow();
  if (stats.is_object()) {
    row["stats_path"] = (fs::relative(runDir, plan.dir) / "stats.json").string();
    const nlohmann::json metrics = metricsOf(stats);
    row.update(metrics);
  }
  return row;
}

std::string duration(double s) {
  if (s < 120) return fmt::format("{:.0f} s", s);
  if (s < 7200) return fmt::format("{:.0f} min", s / 60);
  return fmt::format("{:.1f} h", s / 3600);
}

// `rows`: the database's rows by label (none when the sweep has not run: its folder is absent).
void sweepStatus(const Plan& plan, const std::map<std::string, nlohmann::json>& rows) {
  std::map<std::string, size_t> counts;
  for (const auto& p : plan.points) {
    const nlohmann::json* r = currentRow(rows, p);
    ++counts[r ? r->value("status", "pending") : "pending"];
  }
  std::vector<std::string> parts;
  for (const char* s : {"ok", "failed", "interrupted", "running", "pending"})
    parts.push_back(fmt::format("{} {}", counts[s], s));
  fmt::print("sweep {}: {} points: {} ({}{})\n", plan.spec.name, plan.points.size(),
             join(parts, ", "), fs::exists(plan.dbPath()) ? "" : "not run yet: no ",
             plan.dbPath().string());
}

int dryRun(const Plan& plan, const std::map<std::string, nlohmann::json>& rows) {
  for (const auto& p : plan.points) {
    const nlohmann::json* r = currentRow(rows, p);
    fmt::print("{} {:<11} {}\n    gpusc {} {}\n", p.hash.substr(0, 16),
               r ? r->value("status", "pending") : "pending", p.label, p.command()[0],
               join(p.runArgs(), " "));
  }
  return 0;
}

}  // namespace

namespace {

// Points with the same configuration run once; each keeps its own row.
struct Groups {
  std::vector<std::string> order;  // hashes in spec order
  std::map<std::string, std::vector<size_t>> byHash;
};

Groups groupByHash(const Plan& plan) {
  Groups g;
  for (size_t i = 0; i < plan.points.size(); ++i) {
    auto& v = g.byHash[plan.points[i].hash];
    if (v.empty()) g.order.push_back(plan.points[i].hash);
    v.push_back(i);
  }
  return g;
}

struct Counts {
  size_t done = 0, failed = 0, interrupted = 0;
};

// The hashes still to run: not ok, and not failed unless `retryFailed`. Points whose
// configuration has a result under another label get a copy of it.
std::vector<std::string> pointsToRun(const Plan& plan, SweepDb& db, const Groups& g,
                                     bool retryFailed, Counts& before) {
  const auto rows = rowsByLabel(db, plan.spec.name);
  std::vector<std::string> todo;
  for (const auto& h : g.order) {
    const std::optional<nlohmann::json> earlier = db.byHash(h);
    const std::string st = earlier ? earlier->value("status", "") : "";
    if (st == "ok" || (st == "failed" && !retryFailed)) {
      for (size_t i : g.byHash.at(h)) {
        const SweepPoint& p = plan.points[i];
        const nlohmann::json* r = currentRow(rows, p);
        if (!r || r->value("status", "") != st) {
          nlohmann::json row = *earlier;
          const nlohmann::json point = pointRow(plan, p);
          row.update(point);
          db.put(row);
        }
        (st == "ok" ? before.done : before.failed) += 1;
      }
    } else {
      todo.push_back(h);
    }
  }
  return todo;
}

// Runs the `todo` hashes in a pool of `jobs` children, writing each point's row into `db` when
// it starts and when it ends. Returns the sweep's exit code.
int runPoints(const Plan& plan, SweepDb& db, const Groups& g, const std::vector<std::string>& todo,
              unsigned jobs, bool quiet, const std::atomic<bool>* interrupt, Counts c,
              size_t total) {
  const std::string& name = plan.spec.name;
  const bool tty = isatty(STDERR_FILENO);
  const auto t0 = std::chrono::steady_clock::now();
  const auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  double lastPrint = -1;
  size_t ranHere = 0, next = 0;
  bool stopping = false;
  RunPool pool(selfExecutable(), false);  // the sweep reads only what its metrics need
  const auto printProgress = [&](bool final) {
    if (quiet) return;
    const double e = elapsed();
    if (!final && e - lastPrint < (tty ? 0.5 : 10.0)) return;
    lastPrint = e;
    std::string line = fmt::format(
        "gpusc: sweep {}: {}/{} done, {} running, {} failed{}, {} elapsed", name, c.done, total,
        pool.running(), c.failed,
        c.interrupted ? fmt::format(", {} interrupted", c.interrupted) : "", duration(e));
    const size_t left = todo.size() - ranHere;
    if (ranHere > 0 && left > 0 && !stopping)
      line += fmt::format(", about {} left", duration(e / double(ranHere) * double(left)));
    std::cerr << (tty ? "\r\033[K" : "") << line << (tty && !final ? "" : "\n") << std::flush;
  };
  while (true) {
    if (!stopping && interrupt && interrupt->load()) {
      // Stop launching; the running points stop cleanly (exit 6) and are marked interrupted.
      stopping = true;
      pool.terminateAll();
      if (!quiet)
        std::cerr << fmt::format("{}gpusc: sweep {}: interrupted; stopping {} running points\n",
                                 tty ? "\r\033[K" : "", name, pool.running());
    }
    while (!stopping && pool.running() < jobs && next < todo.size()) {
      const std::string& h = todo[next];
      const SweepPoint& p = plan.points[g.byHash.at(h).front()];
      RunSpec s;
      s.label = p.label;
      s.command = p.command();
      s.args = p.runArgs();
      s.outDir = (plan.dir / "points" / p.dirName()).string();
      for (size_t i : g.byHash.at(h)) {
        nlohmann::json row = pointRow(plan, plan.points[i]);
        row["status"] = "running";
        row["finished_at"] = utcNow();
        db.put(row);
      }
      pool.start(next, s);
      ++next;
    }
    if (pool.running() == 0 && (stopping || next == todo.size())) break;
    auto f = pool.wait(200);
    if (f) {
      ++ranHere;
      const nlohmann::json stats = f->outcome.statsPath.empty()
                                       ? nlohmann::json()
                                       : readStatsForMetrics(f->outcome.statsPath);
      for (size_t i : g.byHash.at(todo[f->id])) {
        const SweepPoint& p = plan.points[i];
        const nlohmann::json row =
            resultRow(plan, p, f->outcome, stats, plan.dir / "points" / p.dirName());
        db.put(row);
        const std::string st = row["status"];
        if (st == "ok") ++c.done;
        if (st == "failed") ++c.failed;
        if (st == "interrupted") ++c.interrupted;
      }
    }
    printProgress(false);
  }
  printProgress(true);
  if (stopping) return kExitInterrupted;
  return c.failed || c.interrupted ? kExitPointsFailed : 0;
}

// ---- Slurm ----------------------------------------------------------------------------------

fs::path slurmDir(const Plan& plan) { return plan.dir / "slurm"; }
fs::path shardDir(const Plan& plan) { return slurmDir(plan) / "shards"; }

// Rows the array tasks wrote into their shards, merged into the sweep's database. A finished
// task's shard (it left a .done file) is removed once merged; a running task's is merged again
// later (merging is idempotent).
void mergeShards(const Plan& plan, SweepDb& db) {
  std::error_code ec;
  if (!fs::is_directory(shardDir(plan), ec)) return;
  std::vector<fs::path> shards;
  for (const auto& e : fs::directory_iterator(shardDir(plan), ec))
    if (e.path().extension() == ".sqlite") shards.push_back(e.path());
  std::sort(shards.begin(), shards.end());
  for (const auto& s : shards) {
    const fs::path done = s.string() + ".done";
    const bool finished = fs::exists(done, ec);
    db.mergeFrom(s.string());
    if (finished) {
      fs::remove(s, ec);
      fs::remove(s.string() + "-journal", ec);
      fs::remove(done, ec);
    }
  }
}

std::string shellQuote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// Runs a command (no shell), returns its exit code and standard output.
std::pair<int, std::string> capture(const std::vector<std::string>& argv) {
  int fds[2];
  if (pipe(fds) != 0) throw InputError("pipe failed");
  std::vector<char*> cargv;
  std::vector<std::string> copy = argv;
  for (auto& a : copy) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  const pid_t pid = fork();
  if (pid < 0) throw InputError(fmt::format("cannot start {}", argv[0]));
  if (pid == 0) {
    dup2(fds[1], STDOUT_FILENO);
    close(fds[0]);
    close(fds[1]);
    execvp(cargv[0], cargv.data());
    _exit(127);
  }
  close(fds[1]);
  std::string out;
  char buf[4096];
  ssize_t n;
  while ((n = read(fds[0], buf, sizeof buf)) > 0) out.append(buf, size_t(n));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), out};
}

// Submits the points still to run as one Slurm job array; each task runs a slice of them.
int submitSlurm(const SweepOptions& o, const Plan& plan, const std::vector<std::string>& todo) {
  const std::string& name = plan.spec.name;
  if (todo.empty()) {
    if (!o.quiet) std::cerr << fmt::format("gpusc: sweep {}: nothing to run\n", name);
    return 0;
  }
  const size_t tasks = std::min<size_t>(o.tasks ? o.tasks : 1000, todo.size());
  const std::string stamp = fmt::format("{}-{}", utcNow(), getpid());
  const fs::path dir = fs::absolute(slurmDir(plan) / stamp);
  fs::create_directories(dir);
  fs::create_directories(shardDir(plan));
  // The submitted points, expanded: the tasks run them without expanding the spec again.
  const std::set<std::string> submitted(todo.begin(), todo.end());
  nlohmann::json points = nlohmann::json::array();
  for (const auto& p : plan.points)
    if (submitted.count(p.hash)) points.push_back(pointToJson(p));
  writeFileAtomically((dir / "todo.json").string(),
                      nlohmann::json{{"sweep", name}, {"points", points}}.dump() + "\n");
  std::string cmd = fmt::format(
      "exec {} sweep {} --out {} --worker --task \"$SLURM_ARRAY_TASK_ID\" --tasks {} --todo {}",
      shellQuote(selfExecutable()), shellQuote(fs::absolute(plan.spec.file).string()),
      shellQuote(fs::absolute(plan.dir).string()), tasks, shellQuote((dir / "todo.json").string()));
  writeFileAtomically((dir / "job.sh").string(), "#!/bin/sh\n# gpusc sweep " + name +
                                                     ": one task of the array\n" + cmd + "\n");
  std::vector<std::string> argv{
      "sbatch",
      "--parsable",
      "--job-name=gpusc-" + name,
      fmt::format("--array=0-{}{}", tasks - 1,
                  o.arrayThrottle ? fmt::format("%{}", o.arrayThrottle) : ""),
      "--output=" + (dir / "task-%a.log").string(),
      "--chdir=" + fs::current_path().string()};
  if (!o.partition.empty()) argv.push_back("--partition=" + o.partition);
  if (!o.time.empty()) argv.push_back("--time=" + o.time);
  if (!o.mem.empty()) argv.push_back("--mem=" + o.mem);
  argv.push_back((dir / "job.sh").string());
  const auto [rc, out] = capture(argv);
  if (rc != 0) {
    // Nothing was submitted: the submission's folder goes (and the folders made for it, if
    // empty), so `sweep status` and the next submission see no trace of it.
    std::error_code ec;
    fs::remove_all(dir, ec);
    fs::remove(shardDir(plan), ec);
    fs::remove(slurmDir(plan), ec);
    throw InputError(fmt::format("sbatch failed (exit code {}): {}", rc,
                                 rc == 127 ? "is Slurm installed?" : std::string(trim(out))));
  }
  const std::string jobId = split(std::string(trim(out)), ';').at(0);
  std::ofstream(slurmDir(plan) / "jobs.txt", std::ios::app) << jobId << "\n";
  if (!o.quiet)
    std::cerr << fmt::format(
        "gpusc: sweep {}: submitted Slurm job {}: {} points in {} array tasks (logs in {}); "
        "`gpusc sweep status {}` shows progress\n",
        name, jobId, todo.size(), tasks, dir.string(), plan.spec.file);
  return 0;
}

// One task of a Slurm array: its slice of the submitted points, rows into its own shard.
int runWorker(const SweepOptions& o, const std::atomic<bool>* interrupt) {
  if (o.tasks == 0 || o.task >= o.tasks || o.todo.empty() || o.out.empty())
    throw InputError("--worker needs --task I, --tasks N (I < N), --todo FILE and --out DIR");
  std::ifstream in(o.todo);
  const nlohmann::json todo = nlohmann::json::parse(in, nullptr, false);
  if (!in || todo.is_discarded() || !todo.contains("points"))
    throw InputError(fmt::format("--todo {}: cannot read the submitted points", o.todo));
  Plan plan;
  plan.spec.name = todo.value("sweep", "");
  plan.spec.file = o.args.back();
  plan.dir = o.out;
  for (const auto& p : todo["points"]) plan.points.push_back(pointFromJson(p));
  const Groups g = groupByHash(plan);
  // Task I runs the submitted configurations I, I + N, I + 2N, ...
  std::vector<std::string> mine;
  for (size_t i = o.task; i < g.order.size(); i += o.tasks) mine.push_back(g.order[i]);
  const std::string base =
      fmt::format("{}-task{}", fs::path(o.todo).parent_path().filename().string(), o.task);
  const fs::path shard = shardDir(plan) / (base + ".sqlite");
  int rc = 0;
  {
    SweepDb db(shard.string(), SweepDb::Journal::Rollback);
    const char* cpus = std::getenv("SLURM_CPUS_PER_TASK");
    const unsigned jobs = cpus ? std::max(1, std::atoi(cpus)) : 1;
    rc = runPoints(plan, db, g, mine, jobs, o.quiet, interrupt, Counts{}, mine.size());
  }
  writeFileAtomically(shard.string() + ".done", "");
  return rc;
}

// The last submitted array's tasks by Slurm state, or "" when none was submitted.
std::string slurmState(const Plan& plan) {
  std::ifstream in(slurmDir(plan) / "jobs.txt");
  std::string id, last;
  while (std::getline(in, id))
    if (!id.empty()) last = id;
  if (last.empty()) return "";
  const auto [rc, out] = capture({"squeue", "-h", "-r", "-j", last, "-o", "%T"});
  if (rc != 0) return fmt::format("Slurm job {}: squeue failed (exit code {})", last, rc);
  std::map<std::string, size_t> states;
  for (const auto& s : split(out, '\n'))
    if (!trim(s).empty()) ++states[std::string(trim(s))];
  if (states.empty()) return fmt::format("Slurm job {}: no task in the queue", last);
  std::vector<std::string> parts;
  for (const auto& [s, n] : states) parts.push_back(fmt::format("{} {}", n, s));
  return fmt::format("Slurm job {}: {}", last, join(parts, ", "));
}

}  // namespace

int cmdSweep(const SweepOptions& o, const std::atomic<bool>* interrupt) {
  const bool status = o.args.size() == 2 && o.args[0] == "status";
  if (!(o.args.size() == 1 || status))
    throw InputError(
        fmt::format("sweep {}: expected SPEC.yaml or status SPEC.yaml", join(o.args, " ")));
  if (o.backend != "local" && o.backend != "slurm")
    throw InputError(fmt::format("--backend {}: expected local or slurm{}", o.backend,
                                 didYouMean(o.backend, {"local", "slurm"})));
  if (o.backend == "local" && !o.worker &&
      (!o.partition.empty() || !o.time.empty() || !o.mem.empty() || o.arrayThrottle || o.tasks))
    throw InputError(
        "--partition, --time, --mem, --array-throttle and --tasks are for --backend slurm");
  if (!o.worker && (o.task != 0 || !o.todo.empty()))
    throw InputError("--task and --todo are the Slurm job script's options (with --worker)");
  if (status && (o.jobs || o.retryFailed || o.dryRun))
    throw InputError(
        "sweep status runs nothing: --jobs, --retry-failed and --dry-run are for "
        "sweep SPEC.yaml");
  if (o.backend == "slurm" && o.jobs)
    throw InputError(
        "--jobs is for --backend local (a Slurm task runs as many points at once "
        "as sbatch --cpus-per-task gives it)");
  if (o.worker) return runWorker(o, interrupt);
  return runSweep(loadSweepSpec(o.args.back()), o, interrupt);
}

int runSweep(SweepSpec spec, const SweepOptions& o, const std::atomic<bool>* interrupt) {
  const bool status = o.args.size() == 2 && o.args[0] == "status";
  const Plan plan = makePlan(std::move(spec), o.out);
  std::error_code ec;
  // A status or a dry run of a sweep that has not run (its folder absent) creates nothing.
  if ((status || o.dryRun) && !fs::exists(plan.dir, ec)) {
    const std::map<std::string, nlohmann::json> none;
    if (status) sweepStatus(plan, none);
    return status ? 0 : dryRun(plan, none);
  }
  fs::create_directories(plan.dir, ec);
  if (ec)
    throw InputError(
        fmt::format("--out {}: cannot create the folder: {}", plan.dir.string(), ec.message()));
  SweepDb db(plan.dbPath().string());
  mergeShards(plan, db);
  if (status) {
    sweepStatus(plan, rowsByLabel(db, plan.spec.name));
    const std::string slurm = slurmState(plan);
    if (!slurm.empty()) fmt::print("{}\n", slurm);
    return 0;
  }
  if (o.dryRun) return dryRun(plan, rowsByLabel(db, plan.spec.name));

  const Groups g = groupByHash(plan);
  Counts before;
  const std::vector<std::string> todo = pointsToRun(plan, db, g, o.retryFailed, before);
  const size_t total = plan.points.size();
  if (o.backend == "slurm") return submitSlurm(o, plan, todo);
  const unsigned jobs = o.jobs ? o.jobs : HostWorkers::available();
  if (!o.quiet)
    std::cerr << fmt::format(
        "gpusc: sweep {}: {} points, {} to run ({} ok and {} failed before), {} jobs, results "
        "in {}\n",
        plan.spec.name, total, total - before.done - before.failed, before.done, before.failed,
        jobs, plan.dbPath().string());
  return runPoints(plan, db, g, todo, jobs, o.quiet, interrupt, before, total);
}

namespace {

std::string csvField(const nlohmann::json& v) {
  if (v.is_null()) return "";
  std::string s = v.is_string() ? v.get<std::string>() : v.dump();
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

}  // namespace

// Every point of the spec, in spec order, with its row in the database; one not run yet (or run
// with another configuration) is "pending".
std::vector<nlohmann::json> currentTable(const Plan& plan, const std::string& specArg) {
  if (!fs::exists(plan.dbPath()))
    throw InputError(fmt::format("{}: no results database (run gpusc sweep {} first)",
                                 plan.dbPath().string(), specArg));
  SweepDb db(plan.dbPath().string());
  mergeShards(plan, db);
  const auto rows = rowsByLabel(db, plan.spec.name);
  std::vector<nlohmann::json> table;
  for (const auto& p : plan.points) {
    const nlohmann::json* r = currentRow(rows, p);
    nlohmann::json row = r ? *r : pointRow(plan, p);
    if (!r) row["status"] = "pending";
    table.push_back(row);
  }
  return table;
}

std::vector<nlohmann::json> sweepTable(SweepSpec spec, const std::string& out) {
  const Plan plan = makePlan(std::move(spec), out);
  return currentTable(plan, plan.spec.file);
}

int cmdSweepReport(const SweepReportOptions& o) {
  const Plan plan = makePlan(o.spec, o.out);
  SweepReportInput in;
  in.name = plan.spec.name;
  in.specFile = o.spec;
  in.axisKeys = plan.spec.axisKeys;
  for (const auto& v : plan.spec.variants) in.variants.push_back(v.name);
  in.rows = currentTable(plan, o.spec);
  const fs::path page = o.output.empty() ? plan.dir / "report.html" : fs::path(o.output);
  in.statsBase = plan.dir.string();
  in.reportDir = page.parent_path().empty() ? "." : page.parent_path().string();
  writeFileAtomically(page.string(), sweepReportHtml(in));
  fmt::print("gpusc: wrote {}\n", page.string());
  return 0;
}

int cmdResults(const ResultsOptions& o) {
  if (o.csv == o.json) throw InputError("results: give one of --csv and --json");
  const Plan plan = makePlan(o.spec, o.out);
  const std::vector<nlohmann::json> table = currentTable(plan, o.spec);
  std::string text;
  if (o.json) {
    text = nlohmann::json(table).dump(2) + "\n";
  } else {
    // One column per axis key after the point's columns, and each JSON object column
    // flattened into COLUMN.KEY columns.
    std::vector<std::string> header;
    std::vector<std::function<nlohmann::json(const nlohmann::json&)>> get;
    for (const auto& c : resultColumns()) {
      if (c.name == "axes") {
        for (const auto& k : plan.spec.axisKeys) {
          if (k == "platform") continue;  // the platform column holds it
          header.push_back(k);
          get.push_back([k](const nlohmann::json& r) {
            return r.contains("axes") && r["axes"].is_object() && r["axes"].contains(k)
                       ? r["axes"][k]
                       : nlohmann::json();
          });
        }
      } else if (c.type == "JSON") {
        std::set<std::string> keys;
        for (const auto& r : table)
          if (r.contains(c.name) && r[c.name].is_object())
            for (const auto& [k, v] : r[c.name].items()) keys.insert(k);
        for (const auto& k : keys) {
          header.push_back(c.name + "." + k);
          const std::string col = c.name;
          get.push_back([col, k](const nlohmann::json& r) {
            return r.contains(col) && r[col].is_object() && r[col].contains(k) ? r[col][k]
                                                                               : nlohmann::json();
          });
        }
      } else {
        header.push_back(c.name);
        const std::string col = c.name;
        get.push_back(
            [col](const nlohmann::json& r) { return r.contains(col) ? r[col] : nlohmann::json(); });
      }
    }
    text = join(header, ",") + "\n";
    for (const auto& r : table) {
      std::vector<std::string> fields;
      for (const auto& g : get) fields.push_back(csvField(g(r)));
      text += join(fields, ",") + "\n";
    }
  }
  if (o.output.empty()) {
    std::cout << text;
  } else {
    writeFileAtomically(o.output, text);
  }
  return 0;
}

}  // namespace gpusc::cli
