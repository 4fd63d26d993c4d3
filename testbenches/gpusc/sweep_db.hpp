// The results database of a sweep: one SQLite table, one row per point (docs/sweeps.md lists the
// columns). Many processes may write it at once (a local pool's parent, Slurm array tasks, a
// test's writers): WAL journal, a busy timeout, and each row written in one transaction, so a
// row is either all there or not at all.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

struct sqlite3;

namespace gpusc::cli {

struct DbColumn {
  std::string name;
  std::string type;  // INTEGER, REAL, TEXT, or JSON (stored as text, read back as JSON)
  std::string doc;
};
// Every column of the `points` table, in order.
const std::vector<DbColumn>& resultColumns();

class SweepDb {
 public:
  // Wal: the sweep's database, written by several processes on one machine. Rollback: a
  // Slurm task's shard, one writer, on any shared file system (WAL needs shared memory).
  enum class Journal { Wal, Rollback };
  // Opens (creating) the database file and its table; missing columns are added.
  explicit SweepDb(const std::string& path, Journal journal = Journal::Wal);
  ~SweepDb();
  SweepDb(const SweepDb&) = delete;
  SweepDb& operator=(const SweepDb&) = delete;

  // Writes the row of (row.sweep, row.label), replacing an earlier one, in one transaction.
  // Keys are column names; a key that is not one is an InternalError.
  void put(const nlohmann::json& row);
  // Every row of a sweep, ordered by label.
  std::vector<nlohmann::json> rows(const std::string& sweep) const;
  // A row with this configuration hash, preferring status ok; none: nullopt.
  std::optional<nlohmann::json> byHash(const std::string& hash) const;
  // Copies the rows of another database (a Slurm task's shard) into this one, in one
  // transaction; a row never replaces an ok row of the same point and hash with a worse one.
  void mergeFrom(const std::string& shard);
  const std::string& path() const { return path_; }

 private:
  void exec(const std::string& sql) const;
  std::vector<nlohmann::json> query(const std::string& sql,
                                    const std::vector<std::string>& params) const;
  std::string path_;
  sqlite3* db_ = nullptr;
};

// The headline-metric columns of a point from its stats.json (`run` totals and the launches'
// memory statistics); absent figures (functional mode, power off) are null.
nlohmann::json metricsOf(const nlohmann::json& stats);
// The parts of a stats.json file metricsOf reads (the run totals, the workload and each
// launch's memory totals), without the per-SM and per-slice statistics a large platform's file
// is mostly made of (tens of MB). Null when the file is missing or not JSON.
nlohmann::json readStatsForMetrics(const std::string& path);

}  // namespace gpusc::cli
