// Phong (ours): Blinn-Phong lighting from three point lights with distance attenuation; a light
// out of range is skipped.
#version 100
precision mediump float;
uniform vec4 u_light0;
uniform vec4 u_light1;
uniform vec4 u_light2;
uniform vec3 u_eye_pos;
uniform vec3 u_albedo;
varying vec3 v_pos;
varying vec3 v_normal;
vec3 light(vec4 l, vec3 n, vec3 e) {
  vec3 d = l.xyz - v_pos;
  float dist = length(d);
  if (dist > l.w) return vec3(0.0);
  vec3 ld = d / dist;
  float att = 1.0 - dist / l.w;
  float diff = max(dot(n, ld), 0.0);
  float spec = pow(max(dot(n, normalize(ld + e)), 0.0), 32.0);
  return (u_albedo * diff + vec3(spec)) * att;
}
void main() {
  vec3 n = normalize(v_normal);
  vec3 e = normalize(u_eye_pos - v_pos);
  vec3 c = light(u_light0, n, e) + light(u_light1, n, e) + light(u_light2, n, e);
  gl_FragColor = vec4(c, 1.0);
}
