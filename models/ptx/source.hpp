// Positions in PTX source text, for error messages of the form FILE:LINE:COL.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include <fmt/format.h>

namespace gpusc::ptx {

struct SourceLoc {
  std::shared_ptr<const std::string> file;  // shared by every location of one file
  uint32_t line = 0;                        // 1-based
  uint32_t col = 0;                         // 1-based

  std::string str() const {
    return fmt::format("{}:{}:{}", file ? *file : std::string("<ptx>"), line, col);
  }
};

}  // namespace gpusc::ptx
