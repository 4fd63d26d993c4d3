// Blur0: a 5-tap box blur at high precision.
#version 100
precision highp float;
uniform sampler2D u_image;
uniform vec2 u_texel;
varying vec2 v_uv;
void main() {
  vec4 sum = texture2D(u_image, v_uv);
  sum += texture2D(u_image, v_uv + vec2(u_texel.x, 0.0));
  sum += texture2D(u_image, v_uv - vec2(u_texel.x, 0.0));
  sum += texture2D(u_image, v_uv + vec2(0.0, u_texel.y));
  sum += texture2D(u_image, v_uv - vec2(0.0, u_texel.y));
  gl_FragColor = sum * 0.2;
}
