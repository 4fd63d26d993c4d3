// NormalMap (You and Wang, Table V): the vertex program builds the tangent frame and moves the
// light and view directions into it (the heavier half of this benchmark).
#version 100
attribute vec4 a_position;
attribute vec3 a_normal;
attribute vec3 a_tangent;
attribute vec2 a_texcoord;
uniform mat4 u_mvp;
uniform mat4 u_model;
uniform vec3 u_light_pos;
uniform vec3 u_eye_pos;
varying vec2 v_uv;
varying vec3 v_light;
varying vec3 v_view;
void main() {
  vec3 p = (u_model * a_position).xyz;
  vec3 n = normalize((u_model * vec4(a_normal, 0.0)).xyz);
  vec3 t = normalize((u_model * vec4(a_tangent, 0.0)).xyz);
  vec3 b = cross(n, t);
  vec3 l = u_light_pos - p;
  vec3 e = u_eye_pos - p;
  v_light = vec3(dot(l, t), dot(l, b), dot(l, n));
  v_view = vec3(dot(e, t), dot(e, b), dot(e, n));
  v_uv = a_texcoord;
  gl_Position = u_mvp * a_position;
}
