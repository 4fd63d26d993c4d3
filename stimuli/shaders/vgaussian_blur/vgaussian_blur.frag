// VGaussianBlur: a vertical 7-tap Gaussian blur (binomial weights).
#version 100
precision mediump float;
uniform sampler2D u_image;
uniform float u_dy;
varying vec2 v_uv;
void main() {
  vec4 c = texture2D(u_image, v_uv) * 0.3125;
  c += texture2D(u_image, v_uv + vec2(0.0, u_dy)) * 0.234375;
  c += texture2D(u_image, v_uv - vec2(0.0, u_dy)) * 0.234375;
  c += texture2D(u_image, v_uv + vec2(0.0, 2.0 * u_dy)) * 0.09375;
  c += texture2D(u_image, v_uv - vec2(0.0, 2.0 * u_dy)) * 0.09375;
  c += texture2D(u_image, v_uv + vec2(0.0, 3.0 * u_dy)) * 0.015625;
  c += texture2D(u_image, v_uv - vec2(0.0, 3.0 * u_dy)) * 0.015625;
  gl_FragColor = c;
}
