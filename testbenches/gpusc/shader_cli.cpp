#include "shader_cli.hpp"

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli_options.hpp"
#include "common/config.hpp"
#include "common/error.hpp"
#include "common/file_io.hpp"
#include "common/strings.hpp"
#include "results_folder.hpp"
#include "shader/assembly.hpp"
#include "shader/compiler.hpp"
#include "shader/shader_cluster.hpp"
#include "shader_catalog.hpp"

#ifndef GPUSC_VERSION
#define GPUSC_VERSION "0.0.0"
#endif

namespace gpusc::cli {

namespace fs = std::filesystem;
using namespace gpusc::shader;

namespace {

constexpr int kExitCheckFailed = 1;

ShaderPlatformConfig resolvePlatform(const ShaderPlatformOptions& o) {
  refuseRepeatedSets(o.sets);
  ShaderPlatformConfig cfg = loadShaderPlatform(o.platform, o.sets);
  auto apply = [&](const char* flag, const char* key, const std::string& v, std::string& field) {
    if (v.empty()) return;
    refuseOptionAndSet(true, flag, key, o.sets);
    try {
      codeMotionVariants().create(v);
    } catch (const InputError& e) {
      throw InputError(fmt::format("{} {}: {}", flag, v, e.what()));
    }
    field = v;
  };
  apply("--input-motion", "compiler.input_motion", o.inputMotion, cfg.compiler.input_motion);
  apply("--output-motion", "compiler.output_motion", o.outputMotion, cfg.compiler.output_motion);
  return cfg;
}

// A benchmark name, or a file (a path that exists or names a shader file by its extension).
bool isFile(const std::string& s) {
  std::error_code ec;
  return fs::exists(s, ec) || s.find('/') != std::string::npos || s.find('.') != std::string::npos;
}

std::optional<Stage> parseStage(const std::string& s) {
  if (s.empty()) return std::nullopt;
  if (s == "vertex") return Stage::Vertex;
  if (s == "fragment") return Stage::Fragment;
  throw InputError(fmt::format("--stage {}: expected vertex or fragment{}", s,
                               didYouMean(s, {"vertex", "fragment"})));
}

nlohmann::json statsJson(const CoreStats& s, const ShaderPlatformConfig& cfg) {
  const CoreEnergy e = energyOf(s, cfg);
  return {{"invocations", s.invocations},
          {"killed", s.killed},
          {"cycles", s.cycles},
          {"bundles", s.bundles},
          {"words", s.words},
          {"stall_cycles", s.stallCycles},
          {"wake_cycles", s.wakeCycles},
          {"branch_penalty_cycles", s.branchPenaltyCycles},
          {"input_access_cycles", s.inputAccessCycles},
          {"output_access_cycles", s.outputAccessCycles},
          {"input_clocked_cycles", s.inputClockedCycles},
          {"output_clocked_cycles", s.outputClockedCycles},
          {"input_wakes", s.inputWakes},
          {"output_wakes", s.outputWakes},
          {"energy",
           {{"input_buffer", e.inputBuffer},
            {"output_buffer", e.outputBuffer},
            {"temporaries", e.temporaries},
            {"core", e.core},
            {"total", e.total()}}}};
}

// The first output of the cluster's that differs from the reference, or "".
std::string firstMismatch(const char* what, size_t k, const Program& p,
                          const std::vector<Vec4>& got, const std::vector<Vec4>& want) {
  for (const auto& b : p.outputs)
    for (uint16_t e = 0; e < b.entries; ++e) {
      const size_t o = size_t(b.index + e);
      for (size_t c = 0; c < 4; ++c)
        if (std::memcmp(&got[o][c], &want[o][c], sizeof(float)) != 0)
          return fmt::format("{} {} {} (o{}.{}): {} where the reference interpreter gives {}", what,
                             k, b.name, o, "xyzw"[c], got[o][c], want[o][c]);
    }
  return "";
}

struct DrawPrograms {
  std::string name;  // for the results folder and the summary
  DrawSpec draw;
  Program vertex, fragment;  // lowered
};

DrawPrograms loadDraw(const ShaderRunOptions& o) {
  DrawPrograms d;
  if (o.draw.empty()) {
    shaders::ShaderBenchmark b = shaders::load(o.shader.empty() ? kDefaultShader : o.shader);
    return {b.name, b.draw, std::move(b.vertex), std::move(b.fragment)};
  }
  if (!o.shader.empty()) throw InputError("--shader and --draw: give one, not both");
  const std::optional<std::string> text = readInputFile(o.draw, "draw spec");
  if (!text) throw InputError(fmt::format("--draw {}: cannot read the file", o.draw));
  d.draw = parseDrawSpec(*text, o.draw);
  d.name = fs::path(o.draw).stem().string();
  const fs::path dir = fs::path(o.draw).parent_path();
  auto program = [&](const std::string& file, const char* key, Stage want) {
    if (file.empty())
      throw InputError(fmt::format("{}: missing key '{}' (the {} program's file)", o.draw, key,
                                   stageName(want)));
    Program p = shaders::loadShaderFile((dir / file).string());
    if (p.stage != want)
      throw InputError(
          fmt::format("{}: {}: {} is a {} program", o.draw, key, file, stageName(p.stage)));
    return p;
  };
  d.vertex = program(d.draw.vertexFile, "vertex", Stage::Vertex);
  d.fragment = program(d.draw.fragmentFile, "fragment", Stage::Fragment);
  return d;
}

std::string pctOf(double part, double whole) {
  return fmt::format("{:.1f}%", whole > 0 ? 100.0 * part / whole : 0.0);
}

}  // namespace

int cmdShaderCompile(const ShaderCompileOptions& o) {
  const ShaderPlatformConfig cfg = resolvePlatform(o.platform);
  if (o.emit != "asm" && o.emit != "cfg")
    throw InputError(fmt::format("--emit {}: expected asm or cfg{}", o.emit,
                                 didYouMean(o.emit, {"asm", "cfg"})));
  const std::optional<Stage> stage = parseStage(o.stage);
  std::vector<Program> programs;
  if (isFile(o.shader)) {
    programs.push_back(shaders::loadShaderFile(o.shader));
    if (stage && programs[0].stage != *stage)
      throw InputError(fmt::format("--stage {}: {} is a {} program", o.stage, o.shader,
                                   stageName(programs[0].stage)));
  } else {
    shaders::ShaderBenchmark b = shaders::load(o.shader);
    if (!stage || *stage == Stage::Vertex) programs.push_back(std::move(b.vertex));
    if (!stage || *stage == Stage::Fragment) programs.push_back(std::move(b.fragment));
  }
  const CompileOptions opts = compileOptionsOf(cfg);
  for (const Program& p : programs) {
    const CompileResult r = compile(p, opts);
    for (size_t k = o.finalOnly ? r.stages.size() - 1 : 0; k < r.stages.size(); ++k) {
      const CompileStage& st = r.stages[k];
      const std::string title = fmt::format("{}: {}", p.name, st.name);
      if (o.emit == "cfg") {
        fmt::print("{}", printCfgDot(st.program, title, opts.temporaries));
      } else {
        fmt::print("; ==== {} ====\n{}\n", title, printAssembly(st.program));
      }
    }
    if (o.emit == "asm")
      fmt::print(
          "; {}: input motion {}, output motion {} ({}, {}); register requirement {}, {} "
          "spilled to the output buffer; {} words\n\n",
          p.name, opts.inputMotion, opts.outputMotion, opts.branchPolicy, opts.joinPolicy,
          r.allocation.requirement, r.allocation.spilled, r.program.instructionCount());
  }
  return 0;
}

int cmdShaderRun(const ShaderRunOptions& o) {
  const ShaderPlatformConfig cfg = resolvePlatform(o.platform);
  const DrawPrograms d = loadDraw(o);
  RemoveIfEmpty createdFolders;
  const fs::path outDir = resultsFolder(o.out, d.name, cfg.name, o.force, &createdFolders.folders);

  const CompileOptions opts = compileOptionsOf(cfg);
  const CompileResult cv = compile(d.vertex, opts), cf = compile(d.fragment, opts);
  const ClusterRun run = simulateDraw(cfg, d.draw, cv.program, cf.program);

  // The reference: the lowered programs in the interpreter, fragments from its vertex outputs.
  const DrawWork ref = prepareDraw(d.draw, d.vertex, d.fragment,
                                   BufferSizes{cfg.core.input_entries, cfg.core.output_entries});
  std::string mismatch;
  const auto& vr = run.phases[0].runs;
  for (size_t k = 0; k < vr.size() && mismatch.empty(); ++k)
    mismatch = firstMismatch("vertex", k, d.vertex, vr[k].outputs, ref.vertexOutputs[k]);
  const std::vector<Vec4> fconsts = constantFile(d.fragment, ref.fragmentUniforms);
  const auto& fr = run.phases[1].runs;
  for (size_t k = 0; k < fr.size() && mismatch.empty(); ++k) {
    const InterpretResult want =
        interpret(d.fragment, ref.fragments[k], fconsts, *ref.textures, cfg.core.output_entries);
    if (want.killed != fr[k].killed)
      mismatch = fmt::format("fragment {}: {} where the reference interpreter {}", k,
                             fr[k].killed ? "killed" : "not killed",
                             want.killed ? "kills it" : "keeps it");
    else if (!want.killed)
      mismatch = firstMismatch("fragment", k, d.fragment, fr[k].outputs, want.outputs);
  }
  const bool pass = mismatch.empty();

  const CoreStats& vs = run.stats[size_t(Stage::Vertex)];
  const CoreStats& fs = run.stats[size_t(Stage::Fragment)];
  CoreStats total = vs;
  total += fs;
  const CoreEnergy e = energyOf(total, cfg);
  const double us = double(run.cycles) / cfg.clock_mhz;

  nlohmann::json j;
  j["gpusc_version"] = GPUSC_VERSION;
  j["platform"] = cfg.name;
  j["workload"] = {{"shader", d.name},
                   {"paper", d.draw.paperName},
                   {"draw", d.draw.file},
                   {"grid", d.draw.grid},
                   {"fragments_per_cell", d.draw.fragmentsPerCell},
                   {"cells_per_fragment", d.draw.cellsPerFragment},
                   {"vertices", vr.size()},
                   {"fragments", fr.size()},
                   {"killed", fs.killed}};
  auto programJson = [](const CompileResult& r) {
    return nlohmann::json{{"name", r.program.name},
                          {"words", r.program.instructionCount()},
                          {"register_requirement", r.allocation.requirement},
                          {"spilled", r.allocation.spilled}};
  };
  j["compiler"] = {{"input_motion", opts.inputMotion},   {"output_motion", opts.outputMotion},
                   {"branch_policy", opts.branchPolicy}, {"join_policy", opts.joinPolicy},
                   {"vertex", programJson(cv)},          {"fragment", programJson(cf)}};
  j["stages"] = {{"vertex", statsJson(vs, cfg)},
                 {"fragment", statsJson(fs, cfg)},
                 {"total", statsJson(total, cfg)}};
  nlohmann::json phases = nlohmann::json::array();
  for (size_t k = 0; k < run.phases.size(); ++k) {
    const PhaseResult& p = run.phases[k];
    phases.push_back({{"program", k == 0 ? "vertex" : "fragment"},
                      {"invocations", p.runs.size()},
                      {"start_cycle", p.startCycle},
                      {"end_cycle", p.endCycle},
                      {"load_cycles", p.loadCycles},
                      {"fill_cycles", p.fillCycles}});
  }
  j["cluster"] = {{"cycles", run.cycles},
                  {"microseconds", us},
                  {"core_busy_cycles", run.coreBusy},
                  {"phases", phases}};
  j["check"] = {{"pass", pass}, {"message", pass ? "outputs bit-identical" : mismatch}};
  j["config"] = config::toJson(cfg);
  writeFile(outDir / "stats.json", j.dump(2) + "\n");
  writeFile(outDir / "config.yaml", configYaml(config::toYaml(cfg)));
  writeFile(outDir / "vertex.s", printAssembly(cv.program));
  writeFile(outDir / "fragment.s", printAssembly(cf.program));

  if (!o.quiet) {
    fmt::print("gpusc {} | platform {} | shader {}{}\n", GPUSC_VERSION, cfg.name, d.name,
               d.draw.description.empty() ? "" : " (" + d.draw.description + ")");
    fmt::print("  compiler           input buffer {}, output buffer {} ({}, {})\n",
               opts.inputMotion, opts.outputMotion, opts.branchPolicy, opts.joinPolicy);
    fmt::print("  clock gating       input buffer {}, output buffer {}\n", cfg.gating.input,
               cfg.gating.output);
    fmt::print(
        "  programs           vertex {} words (register requirement {}{}), fragment {} "
        "words (requirement {}{})\n",
        cv.program.instructionCount(), cv.allocation.requirement,
        cv.allocation.spilled ? fmt::format(", {} spilled", cv.allocation.spilled) : "",
        cf.program.instructionCount(), cf.allocation.requirement,
        cf.allocation.spilled ? fmt::format(", {} spilled", cf.allocation.spilled) : "");
    fmt::print("  draw               {} x {} cells: {} vertices, {} fragments ({} killed)\n",
               d.draw.grid, d.draw.grid, vr.size(), fr.size(), fs.killed);
    fmt::print("  core cycles        {} (vertex {}, fragment {}: {} of them)\n", total.cycles,
               vs.cycles, fs.cycles, pctOf(double(fs.cycles), double(total.cycles)));
    fmt::print("  stalls             {} operand, {} buffer wake-up, {} branch cycles\n",
               total.stallCycles, total.wakeCycles, total.branchPenaltyCycles);
    auto buffer = [&](const char* label, uint64_t access, uint64_t clocked, uint64_t wakes) {
      fmt::print(
          "  {:<18} accessed in {} cycles, clocked in {} ({} of the core cycles), {} "
          "wake-ups\n",
          label, access, clocked, pctOf(double(clocked), double(total.cycles)), wakes);
    };
    buffer("input buffer", total.inputAccessCycles, total.inputClockedCycles, total.inputWakes);
    buffer("output buffer", total.outputAccessCycles, total.outputClockedCycles, total.outputWakes);
    fmt::print(
        "  energy             {:.6g} units: input buffer {}, output buffer {}, temporaries "
        "{}, rest of the core {}\n",
        e.total(), pctOf(e.inputBuffer, e.total()), pctOf(e.outputBuffer, e.total()),
        pctOf(e.temporaries, e.total()), pctOf(e.core, e.total()));
    uint64_t busy = 0;
    for (uint64_t b : run.coreBusy) busy += b;
    fmt::print("  cluster            {} cycles ({:.1f} us at {:g} MHz), {} cores busy {}\n",
               run.cycles, us, cfg.clock_mhz, cfg.cores,
               pctOf(double(busy), double(run.cycles) * cfg.cores));
    fmt::print("check: {} ({})\n", pass ? "PASS" : "FAIL",
               pass ? "every output bit-identical to the reference interpreter's" : mismatch);
    fmt::print("results: {}/ (stats.json, config.yaml, vertex.s, fragment.s)\n", outDir.string());
  }
  return pass ? 0 : kExitCheckFailed;
}

void listShaders() {
  for (const auto& n : shaders::names()) {
    const shaders::ShaderBenchmark b = shaders::load(n);
    fmt::print("{:<18} {:<15} {}\n", n, b.draw.paperName.empty() ? "(ours)" : b.draw.paperName,
               b.draw.description);
  }
}

}  // namespace gpusc::cli
