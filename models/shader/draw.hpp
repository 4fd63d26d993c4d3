// What a shader benchmark draws: a mesh of grid x grid cells in the xy plane (its vertices run
// the vertex program), fragments_per_cell fragments in each cell (they run the fragment program
// with the vertex outputs interpolated bilinearly across the cell), the uniforms' values and a
// procedural texture per sampler. Read from the benchmark's <name>.yaml (or a user's draw file,
// which also names the two programs' files).
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
  // The programs, for a draw of the user's (`gpusc shader run --draw`): files as written in the
  // YAML (GLSL, SPIR-V or assembly). A benchmark's draw leaves them empty.
  std::string vertexFile, fragmentFile;
  int grid = 4;
  int fragmentsPerCell = 16;
  // A mesh finer than the fragments: only every cells_per_fragment-th cell (row by row) covers
  // a fragment (fragments_per_cell is then 1).
  int cellsPerFragment = 1;
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
  std::vector<std::vector<Vec4>> vertexOutputs;  // the reference interpreter's, by vertex
  // One value per uniform register (constantFile(program, uniforms) gives a compiled program's
  // constant file: code motion may add literals).
  std::vector<Vec4> vertexUniforms, fragmentUniforms;
  std::unique_ptr<TextureUnits> textures;  // shared by both programs (units by sampler binding)
};

// The draw's parts, for a platform that runs the vertex program itself (ShaderCluster):
// the value of every uniform register of `p`, in binding order (InputError naming the file and
// the key for a missing or mis-sized value); the textures of both programs' samplers; the vertex
// invocations (one per mesh vertex, row by row, each an input buffer of `inputEntries`; inputs
// from the attributes' names: a_position, a_normal, a_tangent, a_texcoord, a_color; InputError
// for another name or a binding outside the buffer); the vertex output each fragment input
// interpolates (InputError when the vertex program has none of its name); and the fragment
// invocations, whose inputs interpolate the vertex outputs of the same name (`vertexOutputs[k]`:
// vertex k's output buffer) bilinearly across each cell.
std::vector<Vec4> uniformValues(const DrawSpec& d, const Program& p);
std::unique_ptr<TextureUnits> drawTextures(const DrawSpec& d, const Program& vertex,
                                           const Program& fragment);
std::vector<Invocation> vertexInvocations(const DrawSpec& d, const Program& vertex,
                                          uint32_t inputEntries);
std::vector<uint16_t> varyingSources(const DrawSpec& d, const Program& vertex,
                                     const Program& fragment);
std::vector<Invocation> fragmentInvocations(const DrawSpec& d, const Program& vertex,
                                            const Program& fragment,
                                            const std::vector<std::vector<Vec4>>& vertexOutputs,
                                            uint32_t inputEntries);

// All of the above, with the vertex outputs from the reference interpreter, for buffers of
// `sizes` (core.input_entries, core.output_entries). InputError names the file and the key for a
// missing uniform value, an unknown attribute or texture kind, or a varying no vertex output
// provides, and the program's file for a binding or register outside the buffers.
DrawWork prepareDraw(const DrawSpec& d, const Program& vertex, const Program& fragment,
                     const BufferSizes& sizes);

}  // namespace gpusc::shader
