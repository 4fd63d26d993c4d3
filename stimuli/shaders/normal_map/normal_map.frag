// NormalMap: per-pixel lighting with the normal read from a normal map.
#version 100
precision mediump float;
uniform sampler2D u_diffuse;
uniform sampler2D u_normals;
uniform vec3 u_light_color;
varying vec2 v_uv;
varying vec3 v_light;
varying vec3 v_view;
void main() {
  vec3 n = normalize(texture2D(u_normals, v_uv).xyz * 2.0 - 1.0);
  vec3 l = normalize(v_light);
  vec3 h = normalize(l + normalize(v_view));
  float diff = max(dot(n, l), 0.0);
  float spec = pow(max(dot(n, h), 0.0), 16.0);
  vec4 base = texture2D(u_diffuse, v_uv);
  gl_FragColor = vec4(base.rgb * u_light_color * diff + vec3(spec), base.a);
}
