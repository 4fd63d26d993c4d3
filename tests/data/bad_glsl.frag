// A fragment shader glslang rejects: 'u_colour' is not declared (tests/CMakeLists.txt).
#version 100
precision mediump float;
uniform vec4 u_color;
void main() {
  gl_FragColor = u_colour;
}
