#version 100
precision mediump float;
varying vec4 v0;
varying vec4 v7;
void main() { gl_FragColor = v0 + v7; }
