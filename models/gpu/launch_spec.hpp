// Launch specs: run any PTX file from a YAML description of its buffers and launches.
//
//   ptx: kernels/bfs.ptx              # relative to the spec file
//   buffers:
//     nodes:   {type: u32, file: graph_nodes.bin}        # count from the file size
//     mask:    {type: u32, count: 4096, init: zeros}
//     cost:    {type: s32, count: 4096, init: {constant: -1}}
//     x:       {type: f32, count: 1024, init: {uniform: [0, 1], seed: 7}}
//     idx:     {type: u32, count: 1024, init: {iota: [0, 1]}}          # start, step
//   launches:
//     - kernel: bfs_step
//       grid: [16]                     # 1 to 3 dimensions
//       block: [256]
//       shared: 0                      # dynamic shared memory in bytes
//       args: [nodes, mask, cost, {u32: 4096}, {buffer: x, offset: 64}]
//       repeat: 1                      # a fixed count, or:
//       until_zero: changed            # repeat until buffer `changed` is all zero
//       max_iterations: 1000           # bound for until_zero (exceeding it is an error)
//     - loop:                          # several launches repeated together
//         until_zero: frontier         # (or repeat: N), max_iterations as above
//         launches: [{kernel: expand, ...}, {kernel: advance, ...}]
//   textures:                          # texture and surface objects over buffers
//     img: {buffer: x, width: 32, height: 32, filter: linear, address: border, normalized: true}
//   (an argument {texture: img} passes the object's handle)
//   dump:
//     cost: cost.bin                   # written to the output folder after the run
//   expect:                            # compared after the run: check PASS or FAIL
//     cost: cost_ref.bin               # the buffer's exact contents, or:
//     x: {file: x_ref.bin, tolerance: 1e-5, relative_tolerance: 1e-6}
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpu/device.hpp"

namespace gpusc {

struct BufferSpec {
  std::string name;
  ptx::Type type = ptx::Type::U32;
  uint64_t count = 0;
  enum class Init { Zeros, Iota, Uniform, Constant, File } init = Init::Zeros;
  double a = 0, b = 1;  // iota: start, step; uniform: min, max; constant: value
  // The same for an integer type, exactly: the values' 64-bit two's complement (a double holds
  // integers only up to 2^53).
  uint64_t ia = 0, ib = 1;
  uint64_t seed = 1;
  std::string file;   // resolved path
  std::string where;  // "spec.yaml:12:5", for messages
};

struct ArgSpec {
  bool isBuffer = false;
  std::string buffer;
  std::string texture;  // a texture or surface object's name: its handle is passed
  uint64_t offset = 0;
  ptx::Type type = ptx::Type::U32;
  uint64_t bits = 0;  // scalar value, as the type's bytes
  std::string where;
};

// One launch, or (when `body` is not empty) a loop over several launches.
struct LaunchEntry {
  std::string kernel;
  std::vector<LaunchEntry> body;
  Dim3 grid, block;
  uint32_t sharedBytes = 0;
  bool cooperative = false;  // every block resident at once; the grid may sync
  std::vector<ArgSpec> args;
  uint32_t repeat = 1;
  std::string untilZero;  // buffer name, or empty
  uint32_t maxIterations = 1000;
  std::string where;
};

// A texture or surface object over a buffer (the spec's `textures` section): the descriptor
// without its base, which is the buffer's address at run time.
struct TextureSpec {
  std::string name, buffer;
  func::TextureDescriptor desc;
  bool surface = false;
  std::string where;
};

// A buffer's expected contents after the run (the spec's `expect` section).
struct ExpectSpec {
  std::string buffer;
  std::string file;              // resolved path: the buffer's elements, same type and count
  double tolerance = 0;          // |got - want| <= tolerance + relative_tolerance x |want|
  double relativeTolerance = 0;  // (NaN matches NaN)
  std::string where;
};

struct LaunchSpec {
  std::string file;
  std::string ptxPath;
  std::string ptxWhere;  // "spec.yaml:1:6" of the ptx key, for messages
  std::vector<BufferSpec> buffers;
  std::vector<TextureSpec> textures;
  std::vector<LaunchEntry> launches;
  std::vector<std::pair<std::string, std::string>> dumps;  // buffer -> file (relative to out dir)
  std::vector<ExpectSpec> expects;
};

// Reads and validates a spec. Throws InputError "FILE:LINE:COL: KEY: message".
LaunchSpec loadLaunchSpec(const std::string& path);
LaunchSpec parseLaunchSpec(const std::string& text, const std::string& fileName,
                           const std::string& baseDir);

struct LaunchSpecResult {
  uint64_t launches = 0;
  std::vector<std::string> dumped;  // files written
  // The `expect` comparisons (none: nothing to check).
  struct Check {
    std::string buffer;
    bool pass = true;
    uint64_t mismatches = 0;
    std::string message;  // "all 4096 elements match" or the first mismatch
  };
  std::vector<Check> checks;
  bool pass() const {
    for (const auto& c : checks)
      if (!c.pass) return false;
    return true;
  }
};

// Allocates the buffers, runs the launches in order and dumps buffers into `outDir`.
LaunchSpecResult runLaunchSpec(Device& dev, const LaunchSpec& spec, const std::string& outDir);

}  // namespace gpusc
