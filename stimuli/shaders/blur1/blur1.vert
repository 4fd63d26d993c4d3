// Blur1 (You and Wang, Table V): a textured quad; position and texture coordinate pass through.
#version 100
attribute vec4 a_position;
attribute vec2 a_texcoord;
uniform mat4 u_mvp;
varying vec2 v_uv;
void main() {
  v_uv = a_texcoord;
  gl_Position = u_mvp * a_position;
}
