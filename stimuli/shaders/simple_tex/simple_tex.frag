// SimpleTex: texturing with the fixed-function texture environment chosen by uniforms (modulate,
// decal or add, as an ES 1.1 emulation layer does), alpha test and clamping: small blocks, many
// branches.
#version 100
precision mediump float;
uniform sampler2D u_tex;
uniform float u_mode;
uniform float u_alpha_ref;
uniform vec4 u_env_color;
varying vec2 v_uv;
varying vec4 v_color;
void main() {
  vec4 t = texture2D(u_tex, v_uv);
  vec4 c;
  if (u_mode < 0.5) {
    c = t * v_color;
  } else if (u_mode < 1.5) {
    c = vec4(mix(v_color.rgb, t.rgb, t.a), v_color.a);
  } else {
    c = vec4(v_color.rgb + t.rgb * u_env_color.rgb, v_color.a * t.a);
  }
  if (c.a < u_alpha_ref) discard;
  if (c.r > 1.0) c.r = 1.0;
  if (c.g > 1.0) c.g = 1.0;
  if (c.b > 1.0) c.b = 1.0;
  gl_FragColor = c;
}
