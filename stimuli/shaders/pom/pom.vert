// POM (You and Wang, Table V): parallax occlusion mapping; the vertex program moves the view
// direction into tangent space.
#version 100
attribute vec4 a_position;
attribute vec3 a_normal;
attribute vec3 a_tangent;
attribute vec2 a_texcoord;
uniform mat4 u_mvp;
uniform vec3 u_eye_pos;
uniform vec3 u_light_dir;
varying vec2 v_uv;
varying vec3 v_view;
varying vec3 v_light;
void main() {
  vec3 b = cross(a_normal, a_tangent);
  vec3 e = u_eye_pos - a_position.xyz;
  v_view = vec3(dot(e, a_tangent), dot(e, b), dot(e, a_normal));
  v_light = vec3(dot(u_light_dir, a_tangent), dot(u_light_dir, b), dot(u_light_dir, a_normal));
  v_uv = a_texcoord;
  gl_Position = u_mvp * a_position;
}
