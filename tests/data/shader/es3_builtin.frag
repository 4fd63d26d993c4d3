#version 100
precision mediump float;
uniform sampler2D u_tex;
varying vec2 v_uv;
void main() {
  // textureLodOffset and textureGrad are GLSL ES 3.00: not in ES 1.00.
  gl_FragColor = textureLodOffset(u_tex, v_uv, 0.0, ivec2(7, 3)) + textureGrad(u_tex, v_uv, vec2(1.0), vec2(2.0));
}
