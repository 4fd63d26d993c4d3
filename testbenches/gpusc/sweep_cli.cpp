#include "sweep_cli.hpp"

#include <unistd.h>

#include <chrono>
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
#include "common/strings.hpp"
#include "run_pool.hpp"
#include "sweep_db.hpp"
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

Plan makePlan(const std::string& specPath, const std::string& out) {
  Plan p;
  p.spec = loadSweepSpec(specPath);
  p.points = expandPoints(p.spec);
  p.dir = out.empty() ? fs::path("results") / "sweeps" / p.spec.name : fs::path(out);
  return p;
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
nlohmann::json resultRow(const Plan& plan, const SweepPoint& p, const RunOutcome& o,
                         const fs::path& runDir) {
  nlohmann::json row = pointRow(plan, p);
  // A point killed by a signal (a user's kill, the OOM killer, a lost node) did not fail: it is
  // interrupted, like one a SIGTERM stopped, and runs again when the sweep resumes.
  const bool killed = o.exitCode >= 128;
  std::string status = o.exitCode == 0                              ? "ok"
                       : (o.exitCode == kExitInterrupted || killed) ? "interrupted"
                                                                    : "failed";
  std::string error = o.firstError;
  if (killed && error.empty()) error = fmt::format("killed by signal {}", o.exitCode - 128);
  if (o.exitCode == 1 && error.empty() && o.stats.is_object())
    error = "check: FAIL (" +
            o.stats["workload"]["check"].value("message", std::string("no message")) + ")";
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
  if (o.stats.is_object()) {
    row["stats_path"] = (fs::relative(runDir, plan.dir) / "stats.json").string();
    const nlohmann::json metrics = metricsOf(o.stats);
    row.update(metrics);
  }
  return row;
}

std::string duration(double s) {
  if (s < 120) return fmt::format("{:.0f} s", s);
  if (s < 7200) return fmt::format("{:.0f} min", s / 60);
  return fmt::format("{:.1f} h", s / 3600);
}

int sweepStatus(const Plan& plan) {
  std::map<std::string, size_t> counts;
  if (fs::exists(plan.dbPath())) {
    SweepDb db(plan.dbPath().string());
    const auto rows = rowsByLabel(db, plan.spec.name);
    for (const auto& p : plan.points) {
      const nlohmann::json* r = currentRow(rows, p);
      ++counts[r ? r->value("status", "pending") : "pending"];
    }
  } else {
    counts["pending"] = plan.points.size();
  }
  std::vector<std::string> parts;
  for (const char* s : {"ok", "failed", "interrupted", "running", "pending"})
    parts.push_back(fmt::format("{} {}", counts[s], s));
  fmt::print("sweep {}: {} points: {} ({})\n", plan.spec.name, plan.points.size(),
             join(parts, ", "), plan.dbPath().string());
  return 0;
}

int dryRun(const Plan& plan) {
  std::map<std::string, nlohmann::json> rows;
  if (fs::exists(plan.dbPath()))
    rows = rowsByLabel(SweepDb(plan.dbPath().string()), plan.spec.name);
  for (const auto& p : plan.points) {
    const nlohmann::json* r = currentRow(rows, p);
    fmt::print("{} {:<11} {}\n    gpusc run {}\n", p.hash.substr(0, 16),
               r ? r->value("status", "pending") : "pending", p.label, join(p.runArgs(), " "));
  }
  return 0;
}

}  // namespace

int cmdSweep(const SweepOptions& o, const std::atomic<bool>* interrupt) {
  const bool status = o.args.size() == 2 && o.args[0] == "status";
  if (!(o.args.size() == 1 || status))
    throw InputError(
        fmt::format("sweep {}: expected SPEC.yaml or status SPEC.yaml", join(o.args, " ")));
  const Plan plan = makePlan(o.args.back(), o.out);
  if (status) return sweepStatus(plan);
  if (o.dryRun) return dryRun(plan);

  std::error_code ec;
  fs::create_directories(plan.dir, ec);
  if (ec)
    throw InputError(
        fmt::format("--out {}: cannot create the folder: {}", plan.dir.string(), ec.message()));
  SweepDb db(plan.dbPath().string());
  const std::string& name = plan.spec.name;
  auto rows = rowsByLabel(db, name);

  // Points with the same configuration run once; each keeps its own row.
  std::vector<std::string> order;
  std::map<std::string, std::vector<size_t>> byHash;
  for (size_t i = 0; i < plan.points.size(); ++i) {
    auto& g = byHash[plan.points[i].hash];
    if (g.empty()) order.push_back(plan.points[i].hash);
    g.push_back(i);
  }
  size_t done = 0, failed = 0, reused = 0;
  std::vector<std::string> todo;
  for (const auto& h : order) {
    const std::optional<nlohmann::json> earlier = db.byHash(h);
    const std::string st = earlier ? earlier->value("status", "") : "";
    if (st == "ok" || (st == "failed" && !o.retryFailed)) {
      // Done before (in this sweep or another one in this database): copy the result into any
      // point of this sweep that does not have it yet.
      for (size_t i : byHash[h]) {
        const SweepPoint& p = plan.points[i];
        const nlohmann::json* r = currentRow(rows, p);
        if (!r || r->value("status", "") != st) {
          nlohmann::json row = *earlier;
          const nlohmann::json point = pointRow(plan, p);
          row.update(point);
          db.put(row);
        }
        (st == "ok" ? done : failed) += 1;
        reused += 1;
      }
    } else {
      todo.push_back(h);
    }
  }
  const size_t total = plan.points.size();
  unsigned jobs = o.jobs ? o.jobs : std::max(1u, std::thread::hardware_concurrency());
  if (!o.quiet)
    std::cerr << fmt::format(
        "gpusc: sweep {}: {} points, {} to run ({} ok and {} failed before), {} jobs, results "
        "in {}\n",
        name, total, total - reused, done, failed, jobs, plan.dbPath().string());

  const bool tty = isatty(STDERR_FILENO);
  const auto t0 = std::chrono::steady_clock::now();
  const auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  double lastPrint = -1;
  size_t ranHere = 0, interrupted = 0;

  RunPool pool(selfExecutable());
  size_t next = 0;
  bool stopping = false;
  const auto printProgress = [&](bool final) {
    if (o.quiet) return;
    const double e = elapsed();
    if (!final && e - lastPrint < (tty ? 0.5 : 10.0)) return;
    lastPrint = e;
    std::string line =
        fmt::format("gpusc: sweep {}: {}/{} done, {} running, {} failed{}, {} elapsed", name, done,
                    total, pool.running(), failed,
                    interrupted ? fmt::format(", {} interrupted", interrupted) : "", duration(e));
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
      if (!o.quiet)
        std::cerr << fmt::format("{}gpusc: sweep {}: interrupted; stopping {} running points\n",
                                 tty ? "\r\033[K" : "", name, pool.running());
    }
    while (!stopping && pool.running() < jobs && next < todo.size()) {
      const std::string& h = todo[next];
      const SweepPoint& p = plan.points[byHash[h].front()];
      RunSpec s;
      s.label = p.label;
      s.args = p.runArgs();
      s.outDir = (plan.dir / "points" / p.dirName()).string();
      for (size_t i : byHash[h]) {
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
      const std::string& h = todo[f->id];
      ++ranHere;
      for (size_t i : byHash[h]) {
        const SweepPoint& p = plan.points[i];
        const nlohmann::json row =
            resultRow(plan, p, f->outcome, plan.dir / "points" / p.dirName());
        db.put(row);
        const std::string st = row["status"];
        if (st == "ok") ++done;
        if (st == "failed") ++failed;
        if (st == "interrupted") ++interrupted;
      }
    }
    printProgress(false);
  }
  printProgress(true);
  if (stopping) return kExitInterrupted;
  return failed || interrupted ? kExitPointsFailed : 0;
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

int cmdResults(const ResultsOptions& o) {
  if (o.csv == o.json) throw InputError("results: give one of --csv and --json");
  const Plan plan = makePlan(o.spec, o.out);
  if (!fs::exists(plan.dbPath()))
    throw InputError(fmt::format("{}: no results database (run gpusc sweep {} first)",
                                 plan.dbPath().string(), o.spec));
  SweepDb db(plan.dbPath().string());
  const auto rows = rowsByLabel(db, plan.spec.name);
  // Every point of the spec, in spec order; one not run yet (or run with another
  // configuration) is "pending".
  std::vector<nlohmann::json> table;
  for (const auto& p : plan.points) {
    const nlohmann::json* r = currentRow(rows, p);
    nlohmann::json row = r ? *r : pointRow(plan, p);
    if (!r) row["status"] = "pending";
    table.push_back(row);
  }
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
