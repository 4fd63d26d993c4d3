#include "sweep_db.hpp"

#include <sqlite3.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <fstream>
#include <set>
#include <thread>

#include <fmt/format.h>

#include "common/error.hpp"

namespace gpusc::cli {

const std::vector<DbColumn>& resultColumns() {
  static const std::vector<DbColumn> cols{
      {"sweep", "TEXT", "the sweep's name"},
      {"label", "TEXT", "the point: kernel@size/variant/axis=value,..."},
      {"hash", "TEXT", "SHA-256 of the point's resolved configuration and work"},
      {"kernel", "TEXT", "catalog kernel, or the launch spec's name"},
      {"size", "TEXT", "catalog size (empty for a launch spec)"},
      {"launch", "TEXT", "launch spec path (empty for a catalog kernel)"},
      {"variant", "TEXT", "the variant's name"},
      {"platform", "TEXT", "base platform (name or file)"},
      {"mode", "TEXT", "timing or functional"},
      {"axes", "JSON", "the axis values, {key: value}"},
      {"status", "TEXT", "ok, failed, interrupted or running"},
      {"exit_code", "INTEGER", "gpusc run's exit code"},
      {"error", "TEXT", "the first error line of a failed point"},
      {"host_seconds", "REAL", "wall-clock seconds of the point's run"},
      {"finished_at", "TEXT", "UTC time the row was written"},
      {"stats_path", "TEXT", "the point's stats.json"},
      {"check_pass", "INTEGER", "1 the result check passed, 0 failed, null none"},
      {"complete", "INTEGER", "1 the run finished, 0 a limit or signal stopped it"},
      {"cycles", "INTEGER", "core cycles over all launches (timing mode)"},
      {"sampled", "TEXT",
       "sampled simulation's method when the run was sampled: its cycles and energy are "
       "estimates and its hit rates cover the detailed part; null: simulated in full"},
      {"cycles_bound", "REAL", "a sampled run's error bound on its cycles (95 %)"},
      {"launches_extrapolated", "INTEGER", "a sampled run's launches extrapolated"},
      {"ipc", "REAL", "warp instructions per cycle"},
      {"warp_instructions", "INTEGER", "warp instructions executed"},
      {"thread_instructions", "INTEGER", "thread instructions executed"},
      {"simulated_seconds", "REAL", "simulated time"},
      {"energy_j", "REAL", "energy (power.enabled)"},
      {"dynamic_energy_j", "REAL", "dynamic energy"},
      {"static_energy_j", "REAL", "static energy"},
      {"sm_energy_j", "REAL", "energy of the SMs"},
      {"average_power_w", "REAL", "average power"},
      {"energy_by_block_j", "JSON", "energy by block, {block: J}"},
      {"power_by_block_w", "JSON", "average power by block, {block: W}"},
      {"worst_droop_pct", "REAL", "worst supply droop in percent (pdn.enabled)"},
      {"min_voltage", "REAL", "lowest SM supply voltage"},
      {"voltage_emergencies", "INTEGER", "voltage emergencies"},
      {"droop_events", "JSON", "droop events above each threshold, {percent: count}"},
      {"sm_gated_share", "REAL", "share of SM cycles power-gated"},
      {"simd_unit_gated_share", "REAL", "share of SIMD-unit cycles power-gated"},
      {"lane_gated_share", "REAL", "share of lane cycles power-gated"},
      {"lane_net_gated_share", "REAL", "lanes' net gated share (seed 002)"},
      {"gatings", "INTEGER", "gating events of SMs, SIMD units and lanes"},
      {"wake_stall_cycles", "INTEGER", "cycles stalled waking gated units"},
      {"l1d_hit_rate", "REAL", "L1D hits per access over all SMs and launches"},
      {"l2_hit_rate", "REAL", "L2 hits per access"},
      {"dram_bytes", "INTEGER", "bytes moved by DRAM"},
      {"dram_bandwidth_gbs", "REAL", "DRAM bytes per simulated second, in GB/s"},
  };
  return cols;
}

namespace {

bool isJson(const DbColumn& c) { return c.type == "JSON"; }

class Statement {
 public:
  Statement(sqlite3* db, const std::string& sql) : db_(db) {
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &st_, nullptr) != SQLITE_OK) {
      // A file that is no database, or a damaged one, is the user's to replace.
      const int code = sqlite3_extended_errcode(db) & 0xff;
      if (code == SQLITE_NOTADB || code == SQLITE_CORRUPT) {
        const char* file = sqlite3_db_filename(db, "main");
        throw InputError(fmt::format("{}: {} (remove it to start the results database afresh)",
                                     file && *file ? file : "results database",
                                     sqlite3_errmsg(db)));
      }
      throw InternalError(fmt::format("sqlite: {}: {}", sql, sqlite3_errmsg(db)));
    }
  }
  ~Statement() { sqlite3_finalize(st_); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  void bind(int i, const nlohmann::json& v, bool json) {
    int rc = SQLITE_OK;
    if (v.is_null()) {
      rc = sqlite3_bind_null(st_, i);
    } else if (json || v.is_object() || v.is_array()) {
      const std::string s = v.dump();
      rc = sqlite3_bind_text(st_, i, s.c_str(), int(s.size()), SQLITE_TRANSIENT);
    } else if (v.is_string()) {
      const std::string& s = v.get_ref<const std::string&>();
      rc = sqlite3_bind_text(st_, i, s.c_str(), int(s.size()), SQLITE_TRANSIENT);
    } else if (v.is_boolean()) {
      rc = sqlite3_bind_int(st_, i, v.get<bool>() ? 1 : 0);
    } else if (v.is_number_integer()) {
      rc = sqlite3_bind_int64(st_, i, v.get<int64_t>());
    } else {
      rc = sqlite3_bind_double(st_, i, v.get<double>());
    }
    if (rc != SQLITE_OK) throw InternalError(fmt::format("sqlite bind: {}", sqlite3_errmsg(db_)));
  }
  // SQLITE_ROW or SQLITE_DONE; anything else is an error.
  int step() {
    const int rc = sqlite3_step(st_);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
      throw InputError(fmt::format("results database: {}", sqlite3_errmsg(db_)));
    return rc;
  }
  sqlite3_stmt* get() { return st_; }

 private:
  sqlite3* db_;
  sqlite3_stmt* st_ = nullptr;
};

nlohmann::json columnValue(sqlite3_stmt* st, int i) {
  switch (sqlite3_column_type(st, i)) {
    case SQLITE_INTEGER:
      return sqlite3_column_int64(st, i);
    case SQLITE_FLOAT:
      return sqlite3_column_double(st, i);
    case SQLITE_TEXT:
      return std::string(reinterpret_cast<const char*>(sqlite3_column_text(st, i)),
                         size_t(sqlite3_column_bytes(st, i)));
    default:
      return nullptr;
  }
}

}  // namespace

SweepDb::SweepDb(const std::string& path, Journal journal) : path_(path) {
  if (sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) !=
      SQLITE_OK) {
    const std::string msg = db_ ? sqlite3_errmsg(db_) : "out of memory";
    sqlite3_close(db_);
    throw InputError(fmt::format("{}: cannot open the results database: {}", path, msg));
  }
  // Writers wait for each other (up to a minute) instead of failing with "database is locked".
  sqlite3_busy_timeout(db_, 60000);
  try {
    // Another program's database is refused, not given a table of ours.
    const auto tables = query("SELECT name FROM sqlite_master WHERE type = 'table'", {});
    if (!tables.empty() && std::none_of(tables.begin(), tables.end(),
                                        [](const auto& t) { return t["name"] == "points"; }))
      throw InputError(fmt::format(
          "{}: not a gpusc results database (it has tables, none of them 'points')", path_));
    // Switching the journal mode needs the database to itself, and SQLite answers "database is
    // locked" at once, without the busy handler, while another process opening the same new
    // file holds it (eight sweep workers starting together): retry for the same minute.
    const std::string want = journal == Journal::Wal ? "wal" : "delete";
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    for (int attempt = 0;; ++attempt) {
      char* err = nullptr;
      const int rc = sqlite3_exec(db_, fmt::format("PRAGMA journal_mode={}", want).c_str(), nullptr,
                                  nullptr, &err);
      const std::string msg = err ? err : sqlite3_errmsg(db_);
      sqlite3_free(err);
      if (rc == SQLITE_OK) break;  // the mode SQLite could set (a file system without WAL: delete)
      if ((rc & 0xff) != SQLITE_BUSY || std::chrono::steady_clock::now() >= deadline)
        throw InputError(
            fmt::format("{}: results database: PRAGMA journal_mode={}: {}", path_, want, msg));
      std::this_thread::sleep_for(std::chrono::milliseconds(1 + attempt % 20));
    }
    exec("PRAGMA synchronous=NORMAL");
    std::string cols;
    for (const auto& c : resultColumns())
      cols += fmt::format("{} {}, ", c.name, isJson(c) ? "TEXT" : c.type);
    exec(fmt::format("CREATE TABLE IF NOT EXISTS points ({}PRIMARY KEY (sweep, label))", cols));
    exec("CREATE INDEX IF NOT EXISTS points_hash ON points (hash)");
    // A database an older gpusc wrote: add the columns it lacks.
    std::set<std::string> have;
    for (const auto& r : query("PRAGMA table_info(points)", {})) have.insert(r["name"]);
    for (const auto& c : resultColumns())
      if (!have.count(c.name))
        exec(fmt::format("ALTER TABLE points ADD COLUMN {} {}", c.name,
                         isJson(c) ? "TEXT" : c.type));
  } catch (...) {
    sqlite3_close(db_);
    throw;
  }
}

SweepDb::~SweepDb() { sqlite3_close(db_); }

void SweepDb::exec(const std::string& sql) const {
  char* err = nullptr;
  if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
    const std::string msg = err ? err : sqlite3_errmsg(db_);
    sqlite3_free(err);
    throw InputError(fmt::format("{}: results database: {}: {}", path_, sql, msg));
  }
}

std::vector<nlohmann::json> SweepDb::query(const std::string& sql,
                                           const std::vector<std::string>& params) const {
  Statement st(db_, sql);
  for (size_t i = 0; i < params.size(); ++i) st.bind(int(i) + 1, params[i], false);
  std::vector<nlohmann::json> out;
  while (st.step() == SQLITE_ROW) {
    nlohmann::json row = nlohmann::json::object();
    const int n = sqlite3_column_count(st.get());
    for (int i = 0; i < n; ++i) row[sqlite3_column_name(st.get(), i)] = columnValue(st.get(), i);
    out.push_back(std::move(row));
  }
  return out;
}

void SweepDb::put(const nlohmann::json& row) {
  std::vector<std::string> names;
  std::vector<bool> json;
  for (const auto& item : row.items()) {
    const std::string& k = item.key();  // not a structured binding: clang 14 cannot capture one
    const auto& cols = resultColumns();
    auto it =
        std::find_if(cols.begin(), cols.end(), [&](const DbColumn& c) { return c.name == k; });
    if (it == cols.end()) throw InternalError(fmt::format("results database: no column '{}'", k));
    names.push_back(k);
    json.push_back(isJson(*it));
  }
  std::string placeholders;
  for (size_t i = 0; i < names.size(); ++i) placeholders += i ? ", ?" : "?";
  // Every column the row does not name is null: a row replaces the earlier one whole.
  Statement st(db_, fmt::format("INSERT OR REPLACE INTO points ({}) VALUES ({})",
                                fmt::join(names, ", "), placeholders));
  for (size_t i = 0; i < names.size(); ++i) st.bind(int(i) + 1, row[names[i]], json[i]);
  exec("BEGIN IMMEDIATE");
  try {
    st.step();
    exec("COMMIT");
  } catch (...) {
    sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    throw;
  }
}

void SweepDb::mergeFrom(const std::string& shard) {
  std::vector<std::string> names;
  for (const auto& c : resultColumns()) names.push_back(c.name);
  const std::string cols = fmt::format("{}", fmt::join(names, ", "));
  Statement attach(db_, "ATTACH DATABASE ? AS shard");
  attach.bind(1, shard, false);
  attach.step();
  exec("BEGIN IMMEDIATE");
  try {
    exec(fmt::format(
        "INSERT OR REPLACE INTO main.points ({0}) SELECT {0} FROM shard.points AS s WHERE NOT "
        "EXISTS (SELECT 1 FROM main.points AS m WHERE m.sweep = s.sweep AND m.label = s.label "
        "AND m.hash = s.hash AND m.status = 'ok' AND s.status != 'ok')",
        cols));
    exec("COMMIT");
  } catch (...) {
    sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    sqlite3_exec(db_, "DETACH DATABASE shard", nullptr, nullptr, nullptr);
    throw;
  }
  exec("DETACH DATABASE shard");
}

namespace {
void parseJsonColumns(nlohmann::json& row) {
  for (const auto& c : resultColumns())
    if (isJson(c) && row.contains(c.name) && row[c.name].is_string())
      row[c.name] = nlohmann::json::parse(row[c.name].get<std::string>(), nullptr, false);
}
}  // namespace

std::vector<nlohmann::json> SweepDb::rows(const std::string& sweep) const {
  auto out = query("SELECT * FROM points WHERE sweep = ? ORDER BY label", {sweep});
  for (auto& r : out) parseJsonColumns(r);
  return out;
}

std::optional<nlohmann::json> SweepDb::byHash(const std::string& hash) const {
  auto out = query(
      "SELECT * FROM points WHERE hash = ? ORDER BY (status = 'ok') DESC, finished_at DESC "
      "LIMIT 1",
      {hash});
  if (out.empty()) return std::nullopt;
  parseJsonColumns(out[0]);
  return out[0];
}

nlohmann::json readStatsForMetrics(const std::string& path) {
  std::ifstream in(path);
  if (!in) return nullptr;
  // keys[d - 1]: the key at depth d on the way to the current value.
  std::vector<std::string> keys;
  const nlohmann::json::parser_callback_t keep =
      [&keys](int depth, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
        if (event != nlohmann::json::parse_event_t::key) return true;
        const size_t d = size_t(depth);
        keys.resize(d);
        keys[d - 1] = parsed.get<std::string>();
        const std::string& k = keys[d - 1];
        if (d == 1) return k == "complete" || k == "workload" || k == "run" || k == "launches";
        if (keys[0] != "launches") return true;
        // launches[i] (depth 2) . timing (3) . memory (4) . unit (5) . totals (6)
        if (d == 3) return k == "timing";
        if (d == 4) return k == "memory";
        if (d == 6) return k == "totals";
        return true;
      };
  nlohmann::json j = nlohmann::json::parse(in, keep, false);
  return j.is_discarded() ? nlohmann::json() : j;
}

nlohmann::json metricsOf(const nlohmann::json& stats) {
  nlohmann::json m = nlohmann::json::object();
  const nlohmann::json& run = stats.value("run", nlohmann::json::object());
  const auto copy = [&](const char* to, const nlohmann::json& from, const char* key) {
    m[to] = from.is_object() && from.contains(key) ? from[key] : nlohmann::json();
  };
  m["complete"] = stats.value("complete", true);
  const auto& work = stats.value("workload", nlohmann::json::object());
  m["check_pass"] =
      work.contains("check") ? work["check"].value("pass", nlohmann::json()) : nlohmann::json();
  // Columns copied from the run totals: column, section of `run` ("" for itself), key.
  static const std::array<std::array<const char*, 3>, 20> fromRun{{
      {"cycles", "", "cycles"},
      {"ipc", "", "ipc"},
      {"warp_instructions", "", "warp_instructions"},
      {"thread_instructions", "", "thread_instructions"},
      {"simulated_seconds", "", "simulated_seconds"},
      {"average_power_w", "", "average_power_w"},
      {"energy_j", "energy", "total_j"},
      {"dynamic_energy_j", "energy", "dynamic_j"},
      {"static_energy_j", "energy", "static_j"},
      {"sm_energy_j", "energy", "sm_j"},
      {"energy_by_block_j", "energy", "by_block_j"},
      {"worst_droop_pct", "voltage", "worst_droop_pct"},
      {"min_voltage", "voltage", "min_voltage"},
      {"voltage_emergencies", "voltage", "emergencies"},
      {"droop_events", "voltage", "droop_events_above_pct"},
      {"sm_gated_share", "power_gating", "sm_gated_share"},
      {"simd_unit_gated_share", "power_gating", "simd_unit_gated_share"},
      {"lane_gated_share", "power_gating", "lane_gated_share"},
      {"lane_net_gated_share", "power_gating", "lane_net_gated_share"},
      {"wake_stall_cycles", "power_gating", "wake_stall_cycles"},
  }};
  for (const auto& [column, section, key] : fromRun)
    copy(column, *section ? run.value(section, nlohmann::json()) : run, key);
  // Sampled simulation (stats.json's run.sampling): how, and how far the cycles may be off.
  const nlohmann::json sampling = run.value("sampling", nlohmann::json());
  m["sampled"] = sampling.is_object() ? sampling.value("mode", nlohmann::json()) : nlohmann::json();
  copy("cycles_bound", sampling, "cycles_bound");
  copy("launches_extrapolated", sampling, "launches_extrapolated");
  const nlohmann::json energy = run.value("energy", nlohmann::json());
  const double seconds = run.value("simulated_seconds", 0.0);
  if (energy.is_object() && seconds > 0) {
    nlohmann::json p = nlohmann::json::object();
    for (const auto& [b, j] : energy["by_block_j"].items()) p[b] = j.get<double>() / seconds;
    m["power_by_block_w"] = p;
  } else {
    m["power_by_block_w"] = nullptr;
  }
  const nlohmann::json pg = run.value("power_gating", nlohmann::json());
  m["gatings"] = pg.is_object() ? nlohmann::json(pg.value("sm_gatings", uint64_t(0)) +
                                                 pg.value("simd_unit_gatings", uint64_t(0)) +
                                                 pg.value("lane_gatings", uint64_t(0)))
                                : nlohmann::json();
  // The memory system over all launches (timing mode).
  uint64_t l1a = 0, l1h = 0, l2a = 0, l2h = 0, bytes = 0;
  bool memory = false;
  for (const auto& l : stats.value("launches", nlohmann::json::array())) {
    if (!l.contains("timing") || !l["timing"].contains("memory")) continue;
    const auto& mem = l["timing"]["memory"];
    if (!mem.contains("l1d")) continue;
    memory = true;
    const auto total = [&](const char* unit, const char* key) {
      return mem.contains(unit) ? mem[unit]["totals"].value(key, uint64_t(0)) : uint64_t(0);
    };
    l1a += total("l1d", "accesses");
    l1h += total("l1d", "hits");
    l2a += total("l2", "accesses");
    l2h += total("l2", "hits");
    bytes += total("dram", "bytes");
  }
  const auto rate = [](uint64_t h, uint64_t a) {
    return a ? nlohmann::json(double(h) / double(a)) : nlohmann::json();
  };
  m["l1d_hit_rate"] = memory ? rate(l1h, l1a) : nlohmann::json();
  m["l2_hit_rate"] = memory ? rate(l2h, l2a) : nlohmann::json();
  m["dram_bytes"] = memory ? nlohmann::json(bytes) : nlohmann::json();
  m["dram_bandwidth_gbs"] =
      memory && seconds > 0 ? nlohmann::json(double(bytes) / seconds / 1e9) : nlohmann::json();
  return m;
}

}  // namespace gpusc::cli
