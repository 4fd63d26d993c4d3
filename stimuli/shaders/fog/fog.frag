// Fog (ours): textured surface blended into the fog colour.
#version 100
precision mediump float;
uniform sampler2D u_tex;
uniform vec3 u_fog_color;
varying vec2 v_uv;
varying float v_fog;
void main() {
  vec4 t = texture2D(u_tex, v_uv);
  gl_FragColor = vec4(mix(u_fog_color, t.rgb, v_fog), t.a);
}
