#include "shader/compiler.hpp"

#include <fmt/format.h>

#include "common/error.hpp"
#include "shader/analysis.hpp"

namespace gpusc::shader {

namespace {

std::string stepName(Buffer b, const char* step) {
  return fmt::format("{} {}", bufferName(b), step);
}

class NoMotion : public CodeMotionVariant {
 public:
  void run(Program&, Buffer, const CompileOptions&, std::vector<CompileStage>&) const override {}
};

class LocalMotion : public CodeMotionVariant {
 public:
  explicit LocalMotion(bool global) : global_(global) {}
  void run(Program& p, Buffer b, const CompileOptions& o,
           std::vector<CompileStage>& stages) const override {
    insertDtos(p, b);
    stages.push_back({stepName(b, "DTO insertion"), p});
    localCodeMotion(p, b, o.temporaries);
    stages.push_back({stepName(b, "local code motion"), p});
    if (!global_) return;
    auto branch = branchPointPolicies().create(o.branchPolicy);
    auto join = joinPointPolicies().create(o.joinPolicy);
    globalCodeMotion(p, b, o.temporaries, *branch, *join);
    stages.push_back({stepName(b, "global code motion"), p});
  }

 private:
  bool global_;
};

class NaiveMotion : public CodeMotionVariant {
 public:
  void run(Program& p, Buffer b, const CompileOptions& o,
           std::vector<CompileStage>& stages) const override {
    if (!naiveCodeMotion(p, b, o.temporaries))
      throw InputError(fmt::format(
          "{}: naive code motion of the {} buffer (compiler.{}_motion naive) needs more than the "
          "core's {} temporaries (core.temporaries; the paper's compiler fails on such "
          "programs)",
          p.name, bufferName(b), bufferName(b), o.temporaries));
    stages.push_back({stepName(b, "naive code motion"), p});
  }
};

}  // namespace

const Registry<CodeMotionVariant>& codeMotionVariants() {
  static const Registry<CodeMotionVariant> r(
      "code-motion variant",
      {{"none", "the program as lowered", [] { return std::make_unique<NoMotion>(); }},
       {"local", "DTO insertion and local code motion (steps I and II)",
        [] { return std::make_unique<LocalMotion>(false); }},
       {"global", "DTO insertion, local and global code motion (steps I, II and III)",
        [] { return std::make_unique<LocalMotion>(true); }},
       {"naive", "naive code motion: inputs to temporaries at the start, outputs at the end",
        [] { return std::make_unique<NaiveMotion>(); }}});
  return r;
}

CompileOptions compileOptionsOf(const ShaderPlatformConfig& cfg) {
  CompileOptions o;
  o.temporaries = int(cfg.core.temporaries);
  o.inputEntries = int(cfg.core.input_entries);
  o.outputEntries = int(cfg.core.output_entries);
  o.inputMotion = cfg.compiler.input_motion;
  o.outputMotion = cfg.compiler.output_motion;
  o.branchPolicy = cfg.compiler.branch_policy;
  o.joinPolicy = cfg.compiler.join_policy;
  return o;
}

CompileResult compile(const Program& lowered, const CompileOptions& o) {
  checkProgram(lowered, BufferSizes{uint32_t(o.inputEntries), uint32_t(o.outputEntries)});
  CompileResult r;
  Program p = lowered;
  r.stages.push_back({"lowered", p});
  // Both policies are checked by name even when no global code motion runs.
  branchPointPolicies().create(o.branchPolicy);
  joinPointPolicies().create(o.joinPolicy);
  codeMotionVariants().create(o.inputMotion)->run(p, Buffer::Input, o, r.stages);
  codeMotionVariants().create(o.outputMotion)->run(p, Buffer::Output, o, r.stages);
  r.allocation = allocateRegisters(p, o.temporaries, o.outputEntries);
  r.stages.push_back({"register allocation", p});
  bundle(p);
  r.stages.push_back({"bundling", p});
  r.program = std::move(p);
  return r;
}

}  // namespace gpusc::shader
