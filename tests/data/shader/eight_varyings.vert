#version 100
// Legal GLSL ES 1.00 (eight varying vectors), but gl_Position takes o0 of the core's 8-entry
// output buffer: room for seven.
attribute vec4 a_position;
varying vec4 v0; varying vec4 v1; varying vec4 v2; varying vec4 v3;
varying vec4 v4; varying vec4 v5; varying vec4 v6; varying vec4 v7;
void main() {
  v0 = a_position; v1 = a_position * 2.0; v2 = a_position * 3.0; v3 = a_position * 4.0;
  v4 = a_position * 5.0; v5 = a_position * 6.0; v6 = a_position * 7.0; v7 = a_position * 8.0;
  gl_Position = a_position;
}
