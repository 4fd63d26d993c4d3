// Toon (ours): diffuse intensity per vertex for cel shading.
#version 100
attribute vec4 a_position;
attribute vec3 a_normal;
uniform mat4 u_mvp;
uniform vec3 u_light_dir;
varying float v_intensity;
varying vec3 v_normal;
void main() {
  v_normal = a_normal;
  v_intensity = dot(normalize(a_normal), u_light_dir);
  gl_Position = u_mvp * a_position;
}
