// GLSL ES 3.10 source of lod_offset.frag.spv (ES 1.00 has no such sampling function), made with
// glslangValidator -G --aml --amb -Os -S frag -o lod_offset.frag.spv lod_offset.310.frag
#version 310 es
precision mediump float;
uniform sampler2D u_tex;
layout(location = 0) in vec2 v_uv;
layout(location = 0) out vec4 color;
void main() {
  color = textureLodOffset(u_tex, v_uv, 0.0, ivec2(7, 3));
}
