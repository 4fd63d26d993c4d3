// The shader compiler's driver: the code-motion variant for each buffer (by name), register
// allocation and bundling, keeping every stage's program for inspection
// (`gpusc shader compile --emit asm`).
#pragma once

#include <string>
#include <vector>

#include "common/registry.hpp"
#include "shader/backend.hpp"
#include "shader/code_motion.hpp"
#include "shader/shader_config.hpp"

namespace gpusc::shader {

struct CompileOptions {
  int temporaries = 8;
  int inputEntries = 8;
  int outputEntries = 8;
  std::string inputMotion = "none";  // a name in codeMotionVariants()
  std::string outputMotion = "none";
  std::string branchPolicy = "large-cluster";      // branchPointPolicies()
  std::string joinPolicy = "duplication-allowed";  // joinPointPolicies()
};

// The options a platform's core and compiler.* keys give.
CompileOptions compileOptionsOf(const ShaderPlatformConfig& cfg);

struct CompileStage {
  std::string name;  // lowered, input DTOs, input local motion, ..., allocated, bundled
  Program program;
};

struct CompileResult {
  Program program;  // allocated and bundled
  std::vector<CompileStage> stages;
  AllocationResult allocation;
};

// A code-motion variant applied to one buffer: none (the program as lowered), local (steps I
// and II), global (I, II and III), naive (naive code motion).
class CodeMotionVariant {
 public:
  virtual ~CodeMotionVariant() = default;
  // Appends the program after each step to `stages`. InputError when the variant cannot be
  // applied (naive code motion beyond the register count).
  virtual void run(Program& p, Buffer b, const CompileOptions& o,
                   std::vector<CompileStage>& stages) const = 0;
};
const Registry<CodeMotionVariant>& codeMotionVariants();

// InputError naming the program's file (and line) for a binding or register outside the buffers
// (checkProgram), or when a variant cannot be applied or registers cannot be allocated.
CompileResult compile(const Program& lowered, const CompileOptions& o);

}  // namespace gpusc::shader
