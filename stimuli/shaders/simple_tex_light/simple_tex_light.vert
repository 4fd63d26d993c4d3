// SimpleTexLight (You and Wang, Table V): per-vertex diffuse and specular lighting of one light.
#version 100
attribute vec4 a_position;
attribute vec3 a_normal;
attribute vec2 a_texcoord;
uniform mat4 u_mvp;
uniform mat4 u_model;
uniform vec3 u_light_pos;
uniform vec3 u_eye_pos;
varying vec2 v_uv;
varying vec2 v_light;
void main() {
  vec3 p = (u_model * a_position).xyz;
  vec3 n = normalize((u_model * vec4(a_normal, 0.0)).xyz);
  vec3 l = normalize(u_light_pos - p);
  vec3 e = normalize(u_eye_pos - p);
  float diff = max(dot(n, l), 0.0);
  float spec = 0.0;
  if (diff > 0.0) spec = pow(max(dot(reflect(-l, n), e), 0.0), 8.0);
  v_light = vec2(diff, spec);
  v_uv = a_texcoord;
  gl_Position = u_mvp * a_position;
}
