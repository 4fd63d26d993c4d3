// `gpusc shader compile | run` and `gpusc list shaders`: the shader-cluster platform (seed 004)
// from the command line.
#pragma once

#include <string>
#include <vector>

namespace gpusc::cli {

// What both commands share: the platform, its overrides and the code-motion variants.
struct ShaderPlatformOptions {
  std::string platform = "shader-cluster";
  std::vector<std::string> sets;
  std::string inputMotion, outputMotion;  // override compiler.input_motion / output_motion
};

struct ShaderCompileOptions {
  ShaderPlatformOptions platform;
  std::string shader;        // a benchmark name or a .vert / .frag / .spv / .s file
  std::string stage;         // vertex | fragment | "" (a benchmark's both)
  std::string emit = "asm";  // asm | cfg
  bool finalOnly = false;    // only the compiled program, not every pass's
};

struct ShaderRunOptions {
  ShaderPlatformOptions platform;
  std::string shader;  // a benchmark name ("" with --draw: the default benchmark)
  std::string draw;    // a draw file naming its vertex and fragment programs
  std::string out;
  bool quiet = false;
  bool force = false;  // replace an earlier run's results in --out
};

inline constexpr const char* kDefaultShader = "pom";

// Return the process exit code: 0, or 1 when the cluster's outputs differ from the reference
// interpreter's (run). InputError for bad input.
int cmdShaderCompile(const ShaderCompileOptions& o);
int cmdShaderRun(const ShaderRunOptions& o);

void listShaders();

}  // namespace gpusc::cli
