// A vertex program of the user's, compiled by gpusc with glslang (tests/CMakeLists.txt).
#version 100
attribute vec4 a_position;
attribute vec3 a_normal;
attribute vec2 a_texcoord;
uniform vec3 u_light;
varying vec2 v_uv;
varying float v_shade;
void main() {
  v_uv = a_texcoord;
  v_shade = max(dot(a_normal, u_light), 0.0);
  gl_Position = a_position;
}
