// POM: parallax occlusion mapping. A linear search steps along the view ray through the height
// field until it passes below the surface, then refines between the last two steps; many values
// stay live across the loop (the benchmark's high register requirement).
#version 100
precision highp float;
uniform sampler2D u_height;
uniform sampler2D u_diffuse;
uniform sampler2D u_normals;
uniform float u_scale;
uniform vec3 u_ambient;
varying vec2 v_uv;
varying vec3 v_view;
varying vec3 v_light;
void main() {
  vec3 view = normalize(v_view);
  float layers = mix(16.0, 6.0, abs(view.z));
  // (uv offset per layer, depth per layer) and the search state (uv, depth, height) of this step
  // and the previous one, packed as a hand-tuned shader keeps them.
  vec3 delta = vec3(view.xy * u_scale / (view.z * layers), 1.0 / layers);
  vec4 cur = vec4(v_uv, 0.0, 1.0 - texture2D(u_height, v_uv).r);
  vec4 prev = cur;
  for (int i = 0; i < 16; i++) {
    if (cur.z >= cur.w) break;
    prev = cur;
    cur.xyz += vec3(-delta.xy, delta.z);
    cur.w = 1.0 - texture2D(u_height, cur.xy).r;
  }
  float after = cur.w - cur.z;
  float before = prev.w - cur.z + delta.z;
  vec2 uv = mix(cur.xy, prev.xy, after / (after - before));
  if (uv.x < 0.0 || uv.x > 1.0 || uv.y < 0.0 || uv.y > 1.0) discard;
  vec3 n = normalize(texture2D(u_normals, uv).xyz * 2.0 - 1.0);
  float diff = max(dot(n, normalize(v_light)), 0.0);
  vec4 base = texture2D(u_diffuse, uv);
  gl_FragColor = vec4(base.rgb * (u_ambient + diff), 1.0);
}
