// What a shader benchmark draws: a mesh of grid x grid cells in the xy plane (its vertices run
// the vertex program), fragments_per_cell fragments in each cell (they run the fragment program
// with the vertex outputs interpolated bilinearly across the cell), the uniforms' values and a
// procedural texture per sampler. Read from the benchmark's <name>.yaml.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "shader/interpreter.hpp"

namespace gpusc::shader {

struct UniformValue {
  std::string name;
  std::vector<float> values;
};

struct DrawSpec {
  std::string file;
  std::string description;
  std::string paperName;  // the benchmark's name in the paper's Table V ("" for ours)
  int grid = 4;
  int fragmentsPerCell = 16;
  std::vector<UniformValue> uniforms;
  std::vector<std::pair<std::string, std::string>> textures;  // sampler -> kind
};

DrawSpec parseDrawSpec(const std::string& yaml, const std::string& file);

// Procedural 64 x 64 textures sampled nearest with wrapping: "noise", "checker", "height"
// (smooth bumps) and "normal" (the normal map of "height").
class ProceduralTextures : public TextureUnits {
 public:
  // kinds[unit]
  explicit ProceduralTextures(std::vector<std::string> kinds);
  Vec4 sample(uint8_t unit, float u, float v) const override;
  static const std::vector<std::string>& kindNames();

 private:
  std::vector<std::vector<Vec4>> texels_;
};

// One invocation's input buffer.
using Invocation = std::vector<Vec4>;

struct DrawWork {
  std::vector<Invocation> vertices, fragments;
  // One value per uniform register (constantFile(program, uniforms) gives a compiled program's
  // constant file: code motion may add literals).
  std::vector<Vec4> vertexUniforms, fragmentUniforms;
  std::unique_ptr<TextureUnits> textures;  // shared by both programs (units by sampler binding)
};

// The draw's invocations. Vertex inputs come from the attributes' names (a_position, a_normal,
// a_tangent, a_texcoord, a_color); fragment inputs interpolate the vertex program's outputs
// (run in the reference interpreter) of the same name. InputError names the file and the key for
// a missing uniform value, an unknown attribute or texture kind, or a varying no vertex output
// provides.
DrawWork prepareDraw(const DrawSpec& d, const Program& vertex, const Program& fragment);

}  // namespace gpusc::shader
