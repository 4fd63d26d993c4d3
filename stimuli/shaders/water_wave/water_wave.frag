// WaterWave: ripples from three drops, each adding a damped wave only inside its radius, which
// displace the texture lookup; then a highlight on the crests.
#version 100
precision mediump float;
uniform sampler2D u_tex;
uniform vec4 u_drop0;
uniform vec4 u_drop1;
uniform vec4 u_drop2;
uniform float u_time;
varying vec2 v_uv;
void main() {
  vec2 offset = vec2(0.0);
  float crest = 0.0;
  vec2 d = v_uv - u_drop0.xy;
  float r = length(d);
  if (r < u_drop0.z) {
    float w = sin(r * 40.0 - u_time) * (1.0 - r / u_drop0.z) * u_drop0.w;
    offset += d / max(r, 0.001) * w;
    crest = max(crest, w);
  }
  d = v_uv - u_drop1.xy;
  r = length(d);
  if (r < u_drop1.z) {
    float w = sin(r * 40.0 - u_time) * (1.0 - r / u_drop1.z) * u_drop1.w;
    offset += d / max(r, 0.001) * w;
    crest = max(crest, w);
  }
  d = v_uv - u_drop2.xy;
  r = length(d);
  if (r < u_drop2.z) {
    float w = sin(r * 40.0 - u_time) * (1.0 - r / u_drop2.z) * u_drop2.w;
    offset += d / max(r, 0.001) * w;
    crest = max(crest, w);
  }
  vec4 c = texture2D(u_tex, v_uv + offset);
  if (crest > 0.01) c.rgb += vec3(crest * 4.0);
  gl_FragColor = c;
}
