// VGaussianBlur (You and Wang, Table V): a full-screen pass; the vertex program only passes on
// the position and the texture coordinate.
#version 100
attribute vec4 a_position;
attribute vec2 a_texcoord;
varying vec2 v_uv;
void main() {
  v_uv = a_texcoord;
  gl_Position = a_position;
}
