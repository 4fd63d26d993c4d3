// SimpleTexLight: texture modulated by the interpolated lighting, with the texture environment
// and alpha test of SimpleTex: small blocks, many branches.
#version 100
precision mediump float;
uniform sampler2D u_tex;
uniform float u_mode;
uniform float u_alpha_ref;
uniform vec3 u_ambient;
varying vec2 v_uv;
varying vec2 v_light;
void main() {
  vec4 t = texture2D(u_tex, v_uv);
  vec3 light = u_ambient + vec3(v_light.x);
  vec4 c;
  if (u_mode < 0.5) {
    c = vec4(t.rgb * light, t.a);
  } else {
    c = vec4(t.rgb * light + vec3(v_light.y), t.a);
  }
  if (c.a < u_alpha_ref) discard;
  if (c.r > 1.0) c.r = 1.0;
  if (c.g > 1.0) c.g = 1.0;
  if (c.b > 1.0) c.b = 1.0;
  gl_FragColor = c;
}
