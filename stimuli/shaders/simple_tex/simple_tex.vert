// SimpleTex (You and Wang, Table V): transformed position, texture coordinates with a texture
// matrix and a vertex colour.
#version 100
attribute vec4 a_position;
attribute vec2 a_texcoord;
attribute vec4 a_color;
uniform mat4 u_mvp;
uniform mat4 u_texmat;
varying vec2 v_uv;
varying vec4 v_color;
void main() {
  v_uv = (u_texmat * vec4(a_texcoord, 0.0, 1.0)).xy;
  v_color = a_color;
  gl_Position = u_mvp * a_position;
}
