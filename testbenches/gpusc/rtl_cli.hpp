// `gpusc rtl area`: the hardware cost of the RTL blocks (models/rtl/verilog, compiled into the
// tool), each synthesized with yosys to generic gates, as a Markdown table of cell counts
// (docs/rtl-cosim.md "Area").
#pragma once

#include <string>
#include <vector>

namespace gpusc::cli {

struct RtlAreaOptions {
  std::string yosys = "yosys";      // the yosys executable (found on PATH)
  std::vector<std::string> blocks;  // empty: every block
  std::string work;                 // keep the Verilog, scripts and yosys logs here (empty: a
                                    // temporary folder, removed afterwards)
};

// The names of the built-in blocks (the embedded models/rtl/verilog/<name>.sv).
std::vector<std::string> rtlBlockNames();
int cmdRtlArea(const RtlAreaOptions& o);

}  // namespace gpusc::cli
