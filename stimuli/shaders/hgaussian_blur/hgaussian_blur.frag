// HGaussianBlur: a horizontal 7-tap Gaussian blur (binomial weights).
#version 100
precision mediump float;
uniform sampler2D u_image;
uniform float u_dx;
varying vec2 v_uv;
void main() {
  vec4 c = texture2D(u_image, v_uv) * 0.3125;
  c += texture2D(u_image, v_uv + vec2(u_dx, 0.0)) * 0.234375;
  c += texture2D(u_image, v_uv - vec2(u_dx, 0.0)) * 0.234375;
  c += texture2D(u_image, v_uv + vec2(2.0 * u_dx, 0.0)) * 0.09375;
  c += texture2D(u_image, v_uv - vec2(2.0 * u_dx, 0.0)) * 0.09375;
  c += texture2D(u_image, v_uv + vec2(3.0 * u_dx, 0.0)) * 0.015625;
  c += texture2D(u_image, v_uv - vec2(3.0 * u_dx, 0.0)) * 0.015625;
  gl_FragColor = c;
}
