// WaterWave (You and Wang, Table V): a small vertex program; the waves are in the fragments.
#version 100
attribute vec4 a_position;
attribute vec2 a_texcoord;
uniform mat4 u_mvp;
varying vec2 v_uv;
void main() {
  v_uv = a_texcoord;
  gl_Position = u_mvp * a_position;
}
