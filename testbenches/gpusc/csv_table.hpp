// Reading back the CSV files gpusc writes (comma-separated, a header row, no quoted fields), for
// the reports.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "common/error.hpp"
#include "common/strings.hpp"

namespace gpusc::cli {

struct CsvTable {
  std::string path;
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;

  // The index of column `name`, or nullopt.
  std::optional<size_t> column(const std::string& name) const {
    for (size_t i = 0; i < header.size(); ++i)
      if (header[i] == name) return i;
    return std::nullopt;
  }
  // The index of column `name`; InputError naming the file when it has none.
  size_t requireColumn(const std::string& name) const {
    if (auto c = column(name)) return *c;
    throw InputError(fmt::format("{}: no column '{}'", path, name));
  }
  // Row r's cell in column c as a number; InputError naming the file, line and column when it
  // is not one.
  double number(size_t r, size_t c) const {
    const std::string& s = rows.at(r).at(c);
    char* end = nullptr;
    const double v = std::strtod(s.c_str(), &end);
    if (s.empty() || !end || *end != '\0')
      throw InputError(
          fmt::format("{}:{}: column '{}': '{}' is not a number", path, r + 2, header.at(c), s));
    return v;
  }
};

// The CSV file at `path`, or nullopt when there is no such file. InputError (file and line) on a
// row with a different number of fields than the header.
inline std::optional<CsvTable> readCsv(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  CsvTable t;
  t.path = path.string();
  std::string line;
  size_t lineNo = 0;
  while (std::getline(in, line)) {
    ++lineNo;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    std::vector<std::string> fields = split(line, ',');
    if (t.header.empty()) {
      t.header = std::move(fields);
      continue;
    }
    if (fields.size() != t.header.size())
      throw InputError(fmt::format("{}:{}: {} fields, the header has {}", t.path, lineNo,
                                   fields.size(), t.header.size()));
    t.rows.push_back(std::move(fields));
  }
  return t;
}

}  // namespace gpusc::cli
