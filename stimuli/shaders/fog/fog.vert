// Fog (ours): exponential fog factor computed per vertex.
#version 100
attribute vec4 a_position;
attribute vec2 a_texcoord;
uniform mat4 u_mvp;
uniform mat4 u_modelview;
uniform float u_density;
varying vec2 v_uv;
varying float v_fog;
void main() {
  vec4 eye = u_modelview * a_position;
  float d = length(eye.xyz);
  v_fog = clamp(exp(-u_density * d * d), 0.0, 1.0);
  v_uv = a_texcoord;
  gl_Position = u_mvp * a_position;
}
