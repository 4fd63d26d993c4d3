// Toon (ours): cel shading with four bands and a silhouette test: a branchy fragment program.
#version 100
precision mediump float;
uniform vec3 u_color;
uniform vec3 u_view_dir;
varying float v_intensity;
varying vec3 v_normal;
void main() {
  float edge = abs(dot(normalize(v_normal), u_view_dir));
  vec3 c;
  if (edge < 0.2) {
    c = vec3(0.0);
  } else if (v_intensity > 0.95) {
    c = u_color;
  } else if (v_intensity > 0.5) {
    c = u_color * 0.6;
  } else if (v_intensity > 0.25) {
    c = u_color * 0.4;
  } else {
    c = u_color * 0.2;
  }
  gl_FragColor = vec4(c, 1.0);
}
