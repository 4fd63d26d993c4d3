#include "shader_catalog.hpp"

#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "common/embedded.hpp"
#include "common/error.hpp"
#include "common/strings.hpp"
#include "shader/spirv_lowering.hpp"

namespace gpusc {
extern const EmbeddedBinary kEmbeddedSpirv[];
extern const EmbeddedFile kEmbeddedDraws[];
}  // namespace gpusc

namespace gpusc::shaders {

namespace {

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
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(fmt::format("{}: cannot read the file", path));
  std::stringstream ss;
  ss << in.rdbuf();
  return shader::lowerSpirv(shader::spirvWords(ss.str(), path), path);
}

}  // namespace gpusc::shaders
