// A fragment program of the user's: texture times the interpolated shade.
#version 100
precision mediump float;
uniform sampler2D u_tex;
varying vec2 v_uv;
varying float v_shade;
void main() {
  vec4 t = texture2D(u_tex, v_uv);
  if (t.a < 0.5) discard;
  gl_FragColor = vec4(t.rgb * v_shade, 1.0);
}
