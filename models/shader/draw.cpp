#include "shader/draw.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "common/error.hpp"
#include "common/rng.hpp"
#include "common/strings.hpp"

namespace gpusc::shader {

namespace {

constexpr int kTexSize = 64;

std::string where(const std::string& file, const YAML::Node& n) {
  const YAML::Mark m = n.Mark();
  return m.is_null() ? file : fmt::format("{}:{}:{}", file, m.line + 1, m.column + 1);
}

float height(int x, int y) {
  const double u = 2 * M_PI * x / kTexSize, v = 2 * M_PI * y / kTexSize;
  return float(0.5 + 0.25 * std::sin(3 * u) * std::cos(2 * v) + 0.2 * std::sin(5 * u + 2 * v));
}

}  // namespace

DrawSpec parseDrawSpec(const std::string& yaml, const std::string& file) {
  YAML::Node root;
  try {
    root = YAML::Load(yaml);
  } catch (const YAML::Exception& e) {
    throw InputError(
        fmt::format("{}:{}:{}: invalid YAML: {}", file, e.mark.line + 1, e.mark.column + 1, e.msg));
  }
  DrawSpec d;
  d.file = file;
  if (!root.IsMap()) throw InputError(fmt::format("{}: expected a map of keys", file));
  const std::vector<std::string> keys{"description",        "paper",    "vertex",
                                      "fragment",           "grid",     "fragments_per_cell",
                                      "cells_per_fragment", "uniforms", "textures"};
  for (const auto& kv : root) {
    const std::string k = kv.first.as<std::string>();
    bool known = false;
    for (const auto& x : keys) known = known || x == k;
    if (!known)
      throw InputError(
          fmt::format("{}: unknown key '{}'{}", where(file, kv.first), k, didYouMean(k, keys)));
  }
  auto integer = [&](const char* key, int lo, int hi, int& out) {
    if (!root[key]) throw InputError(fmt::format("{}: missing key '{}'", file, key));
    try {
      out = root[key].as<int>();
    } catch (const YAML::Exception&) {
      throw InputError(fmt::format("{}: {}: expected an integer", where(file, root[key]), key));
    }
    if (out < lo || out > hi)
      throw InputError(fmt::format("{}: {}: {} is out of range [{}, {}]", where(file, root[key]),
                                   key, out, lo, hi));
  };
  d.description = root["description"] ? root["description"].as<std::string>() : "";
  d.paperName = root["paper"] ? root["paper"].as<std::string>() : "";
  d.vertexFile = root["vertex"] ? root["vertex"].as<std::string>() : "";
  d.fragmentFile = root["fragment"] ? root["fragment"].as<std::string>() : "";
  integer("grid", 1, 256, d.grid);
  integer("fragments_per_cell", 1, 4096, d.fragmentsPerCell);
  if (root["cells_per_fragment"]) {
    integer("cells_per_fragment", 1, 4096, d.cellsPerFragment);
    if (d.cellsPerFragment > 1 && d.fragmentsPerCell != 1)
      throw InputError(
          fmt::format("{}: cells_per_fragment: {} needs fragments_per_cell: 1 (a mesh finer than "
                      "the fragments)",
                      where(file, root["cells_per_fragment"]), d.cellsPerFragment));
  }
  if (const YAML::Node u = root["uniforms"]) {
    if (!u.IsMap()) throw InputError(fmt::format("{}: uniforms: expected a map", where(file, u)));
    for (const auto& kv : u) {
      UniformValue v{kv.first.as<std::string>(), {}};
      if (!kv.second.IsSequence())
        throw InputError(fmt::format("{}: uniforms.{}: expected a list of numbers",
                                     where(file, kv.second), v.name));
      for (const auto& x : kv.second) {
        try {
          v.values.push_back(x.as<float>());
        } catch (const YAML::Exception&) {
          throw InputError(
              fmt::format("{}: uniforms.{}: expected a number", where(file, x), v.name));
        }
      }
      d.uniforms.push_back(v);
    }
  }
  if (const YAML::Node t = root["textures"]) {
    if (!t.IsMap()) throw InputError(fmt::format("{}: textures: expected a map", where(file, t)));
    for (const auto& kv : t) {
      const std::string kind = kv.second.as<std::string>();
      const auto& kinds = ProceduralTextures::kindNames();
      if (std::find(kinds.begin(), kinds.end(), kind) == kinds.end())
        throw InputError(fmt::format("{}: textures.{}: '{}' is not one of: {}{}",
                                     where(file, kv.second), kv.first.as<std::string>(), kind,
                                     join(kinds, ", "), didYouMean(kind, kinds)));
      d.textures.push_back({kv.first.as<std::string>(), kind});
    }
  }
  return d;
}

const std::vector<std::string>& ProceduralTextures::kindNames() {
  static const std::vector<std::string> k{"noise", "checker", "height", "normal"};
  return k;
}

ProceduralTextures::ProceduralTextures(std::vector<std::string> kinds) {
  for (const auto& kind : kinds) {
    std::vector<Vec4> t(kTexSize * kTexSize);
    Rng rng(0x5eed);
    for (int y = 0; y < kTexSize; ++y)
      for (int x = 0; x < kTexSize; ++x) {
        Vec4& c = t[size_t(y * kTexSize + x)];
        if (kind == "noise") {
          c = {rng.uniformf(0, 1), rng.uniformf(0, 1), rng.uniformf(0, 1), 1.0f};
        } else if (kind == "checker") {
          const float v = ((x / 8 + y / 8) % 2) ? 0.9f : 0.1f;
          c = {v, v, v, ((x / 16 + y / 16) % 2) ? 1.0f : 0.3f};
        } else if (kind == "height") {
          const float h = height(x, y);
          c = {h, h, h, 1.0f};
        } else {
          const float dx = height((x + 1) % kTexSize, y) - height((x + kTexSize - 1) % kTexSize, y);
          const float dy = height(x, (y + 1) % kTexSize) - height(x, (y + kTexSize - 1) % kTexSize);
          const float n[3] = {-dx * 4, -dy * 4, 1.0f};
          const float l = std::sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
          c = {0.5f + 0.5f * n[0] / l, 0.5f + 0.5f * n[1] / l, 0.5f + 0.5f * n[2] / l, 1.0f};
        }
      }
    texels_.push_back(std::move(t));
  }
}

Vec4 ProceduralTextures::sample(uint8_t unit, float u, float v) const {
  if (unit >= texels_.size()) return Vec4{0, 0, 0, 1};
  auto wrap = [](float f) {
    if (!std::isfinite(f)) return 0;
    const double t = double(f) - std::floor(double(f));
    return std::min(kTexSize - 1, int(t * kTexSize));
  };
  return texels_[unit][size_t(wrap(v) * kTexSize + wrap(u))];
}

namespace {

Vec4 attribute(const std::string& name, const std::string& file, const std::string& program,
               float u, float v) {
  const float x = 2 * u - 1, y = 2 * v - 1;
  if (name == "a_position") return {x, y, 0.25f * std::sin(3 * x) * std::cos(2 * y), 1};
  if (name == "a_normal") {
    const float nx = -0.3f * x, ny = -0.2f * y, l = std::sqrt(nx * nx + ny * ny + 1);
    return {nx / l, ny / l, 1 / l, 0};
  }
  if (name == "a_tangent") return {1, 0, 0, 0};
  if (name == "a_texcoord") return {u, v, 0, 1};
  if (name == "a_color") return {u, v, 0.5f + 0.5f * x * y, 0.5f + 0.5f * u};
  throw InputError(
      fmt::format("{}: vertex input '{}' ({}): no generator (known: a_position, a_normal, "
                  "a_tangent, a_texcoord, a_color)",
                  file, name, program));
}

}  // namespace

std::vector<Vec4> uniformValues(const DrawSpec& d, const Program& p) {
  std::vector<Vec4> out;
  for (const auto& b : p.uniforms) {
    const UniformValue* v = nullptr;
    for (const auto& u : d.uniforms)
      if (u.name == b.name) v = &u;
    if (!v)
      throw InputError(fmt::format("{}: uniforms: no value for '{}' ({})", d.file, b.name, p.name));
    const size_t need = size_t(b.entries) * b.components;
    if (v->values.size() != need)
      throw InputError(fmt::format("{}: uniforms.{}: expected {} numbers, got {}", d.file, b.name,
                                   need, v->values.size()));
    for (uint16_t e = 0; e < b.entries; ++e) {
      Vec4 r{0, 0, 0, 0};
      for (uint8_t c = 0; c < b.components; ++c) r[c] = v->values[size_t(e) * b.components + c];
      out.push_back(r);
    }
  }
  return out;
}

std::unique_ptr<TextureUnits> drawTextures(const DrawSpec& d, const Program& vs,
                                           const Program& fs) {
  // Texture units by the samplers' bindings; both programs must agree on a name's kind.
  std::vector<std::string> kinds;
  for (const Program* p : {&vs, &fs})
    for (const auto& s : p->samplers) {
      std::string kind;
      for (const auto& [name, k] : d.textures)
        if (name == s.name) kind = k;
      if (kind.empty())
        throw InputError(fmt::format("{}: textures: no texture for sampler '{}'", d.file, s.name));
      if (kinds.size() <= s.index) kinds.resize(s.index + 1u, "noise");
      kinds[s.index] = kind;
    }
  return std::make_unique<ProceduralTextures>(kinds);
}

std::vector<Invocation> vertexInvocations(const DrawSpec& d, const Program& vs,
                                          uint32_t inputEntries) {
  checkProgram(vs, BufferSizes{inputEntries, UINT32_MAX});
  std::vector<Invocation> out;
  const int n = d.grid;
  for (int j = 0; j <= n; ++j)
    for (int i = 0; i <= n; ++i) {
      const float u = float(i) / float(n), v = float(j) / float(n);
      Invocation in(inputEntries, Vec4{0, 0, 0, 0});
      for (const auto& b : vs.inputs) in[b.index] = attribute(b.name, d.file, vs.name, u, v);
      out.push_back(in);
    }
  return out;
}

std::vector<uint16_t> varyingSources(const DrawSpec& d, const Program& vs, const Program& fs) {
  std::vector<uint16_t> source(fs.inputs.size(), 0);
  for (size_t k = 0; k < fs.inputs.size(); ++k) {
    const Binding* from = nullptr;
    for (const auto& o : vs.outputs)
      if (o.name == fs.inputs[k].name) from = &o;
    if (!from)
      throw InputError(
          fmt::format("{}: fragment input '{}' ({}) is not an output of the vertex "
                      "program ({})",
                      d.file, fs.inputs[k].name, fs.name, vs.name));
    if (from->entries < fs.inputs[k].entries)
      throw InputError(fmt::format(
          "{}: fragment input '{}' ({}) takes {} entries, the vertex "
          "output ({}) {}",
          d.file, fs.inputs[k].name, fs.name, fs.inputs[k].entries, vs.name, from->entries));
    source[k] = from->index;
  }
  return source;
}

std::vector<Invocation> fragmentInvocations(const DrawSpec& d, const Program& vs, const Program& fs,
                                            const std::vector<std::vector<Vec4>>& vout,
                                            uint32_t inputEntries) {
  const int n = d.grid;
  if (vout.size() != size_t((n + 1) * (n + 1)))
    throw InternalError(
        fmt::format("{}: {} vertex results for a {} x {} mesh", d.file, vout.size(), n, n));
  checkProgram(fs, BufferSizes{inputEntries, UINT32_MAX});
  // Each fragment input: the vertex output of the same name.
  const std::vector<uint16_t> source = varyingSources(d, vs, fs);
  std::vector<Invocation> out;
  int side = 1;
  while (side * side < d.fragmentsPerCell) ++side;
  for (int cj = 0; cj < n; ++cj)
    for (int ci = 0; ci < n; ++ci)
      for (int f = 0; f < d.fragmentsPerCell && (cj * n + ci) % d.cellsPerFragment == 0; ++f) {
        const float a = (float(f % side) + 0.5f) / float(side),
                    b = (float(f / side) + 0.5f) / float(side);
        const auto& v00 = vout[size_t(cj * (n + 1) + ci)];
        const auto& v10 = vout[size_t(cj * (n + 1) + ci + 1)];
        const auto& v01 = vout[size_t((cj + 1) * (n + 1) + ci)];
        const auto& v11 = vout[size_t((cj + 1) * (n + 1) + ci + 1)];
        Invocation in(inputEntries, Vec4{0, 0, 0, 0});
        for (size_t k = 0; k < fs.inputs.size(); ++k)
          for (uint16_t e = 0; e < fs.inputs[k].entries; ++e) {
            const size_t o = size_t(source[k] + e);
            if (o >= v00.size())
              throw InternalError(
                  fmt::format("{}: vertex output o{} beyond the output buffer", d.file, o));
            for (size_t c = 0; c < 4; ++c)
              in[fs.inputs[k].index + e][c] = (1 - a) * (1 - b) * v00[o][c] +
                                              a * (1 - b) * v10[o][c] + (1 - a) * b * v01[o][c] +
                                              a * b * v11[o][c];
          }
        out.push_back(in);
      }
  return out;
}

DrawWork prepareDraw(const DrawSpec& d, const Program& vs, const Program& fs,
                     const BufferSizes& sizes) {
  checkProgram(vs, sizes);
  checkProgram(fs, sizes);
  DrawWork w;
  w.textures = drawTextures(d, vs, fs);
  w.vertexUniforms = uniformValues(d, vs);
  w.fragmentUniforms = uniformValues(d, fs);
  const std::vector<Vec4> vertexConstants = constantFile(vs, w.vertexUniforms);
  w.vertices = vertexInvocations(d, vs, sizes.input);
  for (const Invocation& in : w.vertices)
    w.vertexOutputs.push_back(
        interpret(vs, in, vertexConstants, *w.textures, sizes.output).outputs);
  w.fragments = fragmentInvocations(d, vs, fs, w.vertexOutputs, sizes.input);
  return w;
}

}  // namespace gpusc::shader
