// Phong (ours): a small vertex program feeding per-pixel lighting.
#version 100
attribute vec4 a_position;
attribute vec3 a_normal;
uniform mat4 u_mvp;
uniform mat4 u_model;
varying vec3 v_pos;
varying vec3 v_normal;
void main() {
  v_pos = (u_model * a_position).xyz;
  v_normal = (u_model * vec4(a_normal, 0.0)).xyz;
  gl_Position = u_mvp * a_position;
}
