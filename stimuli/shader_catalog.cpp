#include "shader_catalog.hpp"

#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "common/embedded.hpp"
#include "common/error.hpp"
#include "common/file_io.hpp"
#include "common/strings.hpp"
#include "shader/assembly.hpp"
#include "shader/spirv_lowering.hpp"

namespace gpusc {
extern const EmbeddedBinary kEmbeddedSpirv[];
extern const EmbeddedFile kEmbeddedDraws[];
extern const EmbeddedFile kEmbeddedGlslPreludes[];
}  // namespace gpusc

namespace gpusc::shaders {

namespace {

std::string readFile(const std::string& path) {
  std::optional<std::string> text = readInputFile(path, "file");
  if (!text) throw InputError(fmt::format("{}: cannot read the file", path));
  return std::move(*text);
}

std::string folderOf(const std::string& path) {
  // stimuli/shaders/<name>/<file>
  auto parts = split(path, '/');
  return parts.size() >= 2 ? std::string(parts[parts.size() - 2]) : "";
}

}  // namespace

std::vector<std::string> names() {
  std::vector<std::string> out;
  for (const EmbeddedFile* f = kEmbeddedDraws; f->path; ++f) out.push_back(folderOf(f->path));
  return out;
}

ShaderBenchmark load(const std::string& name) {
  ShaderBenchmark b;
  b.name = name;
  const EmbeddedFile* draw = nullptr;
  for (const EmbeddedFile* f = kEmbeddedDraws; f->path; ++f)
    if (folderOf(f->path) == name) draw = f;
  if (!draw)
    throw InputError(fmt::format("--shader {}: no such shader benchmark{} (known: {})", name,
                                 didYouMean(name, names()), join(names(), ", ")));
  b.draw = shader::parseDrawSpec(draw->text, draw->path);
  bool haveV = false, haveF = false;
  for (const EmbeddedBinary* f = kEmbeddedSpirv; f->path; ++f) {
    if (folderOf(f->path) != name) continue;
    const std::string bytes(reinterpret_cast<const char*>(f->data), f->size);
    shader::Program p = shader::lowerSpirv(shader::spirvWords(bytes, f->path), f->path);
    if (endsWith(f->path, ".vert.spv")) {
      b.vertex = std::move(p);
      haveV = true;
    } else if (endsWith(f->path, ".frag.spv")) {
      b.fragment = std::move(p);
      haveF = true;
    }
  }
  if (!haveV || !haveF)
    throw InputError(
        fmt::format("shader benchmark {}: missing {}.vert.spv or {}.frag.spv "
                    "(stimuli/shaders/regen_spirv.sh makes them)",
                    name, name, name));
  return b;
}

shader::Program loadSpirvFile(const std::string& path) {
  return shader::lowerSpirv(shader::spirvWords(readFile(path), path), path);
}

namespace {

// Runs glslangValidator with `args` (its stdout and stderr to `log`); InputError when it cannot
// be started. Returns whether it succeeded and, when not, its first error line.
std::pair<bool, std::string> runGlslang(const std::string& path, std::vector<std::string> args,
                                        const std::string& log) {
  const int rc = runProgram(args, log);
  if (rc < 0)
    throw InputError(
        fmt::format("{}: compiling GLSL needs glslangValidator (Debian package glslang-tools): {}",
                    path, std::strerror(-rc)));
  if (rc == 0) return {true, ""};
  for (const auto& l : split(readFile(log), '\n'))
    if (startsWith(std::string(trim(l)), "ERROR: ")) return {false, std::string(trim(l)).substr(7)};
  return {false, ""};
}

}  // namespace

std::vector<uint32_t> compileGlsl(const std::string& path) {
  namespace fs = std::filesystem;
  const std::string stage = endsWith(path, ".vert")   ? "vert"
                            : endsWith(path, ".frag") ? "frag"
                                                      : "";
  if (stage.empty()) throw InputError(fmt::format("{}: GLSL files end in .vert or .frag", path));
  std::string prelude;
  for (const EmbeddedFile* f = kEmbeddedGlslPreludes; f->path; ++f)
    if (endsWith(f->path, "." + stage)) prelude = f->text;
  // The source with its own #version line blank, numbered from line 1.
  std::string source = readFile(path), body;
  int line = 0;
  for (const auto& l : split(source, '\n')) {
    ++line;
    const std::string t(trim(l));
    if (startsWith(t, "#") && startsWith(std::string(trim(t.substr(1))), "version")) {
      if (t.find("100") == std::string::npos)
        throw InputError(
            fmt::format("{}:{}: expected GLSL ES 1.00 ('#version 100'), got '{}'", path, line, t));
      body += "\n";
      continue;
    }
    body += std::string(l) + "\n";
  }
  std::error_code ec;
  const fs::path tmp = fs::temp_directory_path(ec) / fmt::format("gpusc-glsl-{}", getpid());
  fs::create_directories(tmp, ec);
  if (ec)
    throw InputError(fmt::format("{}: cannot create a temporary folder: {}", path, ec.message()));
  const std::string name = fs::path(path).filename().string();
  const fs::path es100 = tmp / ("es100-" + name), src = tmp / name, out = tmp / "out.spv",
                 log = tmp / "log.txt";
  // First the source as GLSL ES 1.00, checked alone (glslang makes no SPIR-V of it): what ES
  // 1.00 does not have (textureLod, texelFetch, integer operators, ...) is refused here. Then,
  // as regen_spirv.sh does, "#version 310 es", the ES 1.00 prelude and the source, to SPIR-V.
  {
    std::ofstream o(es100);
    o << "#version 100\n#line 1\n" << body;
  }
  {
    std::ofstream o(src);
    o << "#version 310 es\n" << prelude << "#line 1\n" << body;
  }
  std::pair<bool, std::string> r;
  std::string bytes;
  try {
    r = runGlslang(path, {"glslangValidator", "-S", stage, es100.string()}, log.string());
    if (!r.first) {
      // "0:6: 'textureLod' : no matching overloaded function found" -> "<path>:6: ..."
      if (startsWith(r.second, "0:")) r.second = path + r.second.substr(1);
      r.second += " (glslang, GLSL ES 1.00)";
    } else {
      r = runGlslang(path,
                     {"glslangValidator", "-G", "--aml", "--amb", "-Os", "-S", stage, "-o",
                      out.string(), src.string()},
                     log.string());
      // glslang names the temporary file: ours in its place.
      const size_t at = r.second.find(src.string());
      if (at != std::string::npos) r.second.replace(at, src.string().size(), path);
      if (!r.second.empty()) r.second += " (glslang)";
      if (r.first) bytes = readFile(out.string());
    }
  } catch (...) {
    fs::remove_all(tmp, ec);
    throw;
  }
  fs::remove_all(tmp, ec);
  if (!r.first)
    throw InputError(r.second.empty() ? fmt::format("{}: glslang rejected the shader", path)
                                      : r.second);
  return shader::spirvWords(bytes, path);
}

shader::Program loadShaderFile(const std::string& path) {
  if (endsWith(path, ".vert") || endsWith(path, ".frag"))
    return shader::lowerSpirv(compileGlsl(path), path);
  if (endsWith(path, ".spv")) return loadSpirvFile(path);
  if (endsWith(path, ".s")) return shader::parseAssembly(readFile(path), path);
  throw InputError(fmt::format(
      "{}: expected a GLSL ES 1.00 (.vert, .frag), SPIR-V (.spv) or shader assembly (.s) file",
      path));
}

}  // namespace gpusc::shaders
