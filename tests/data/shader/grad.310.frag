// GLSL ES 3.10 source of grad.frag.spv (ES 1.00 has no such sampling function), made with
// glslangValidator -G --aml --amb -Os -S frag -o grad.frag.spv grad.310.frag
#version 310 es
precision mediump float;
uniform sampler2D u_tex;
layout(location = 0) in vec2 v_uv;
layout(location = 0) out vec4 color;
void main() {
  color = textureGrad(u_tex, v_uv, vec2(1.0), vec2(2.0));
}
