#define varying in
#define texture2D texture
#define gl_FragColor es100_FragColor
layout(location = 0) out highp vec4 es100_FragColor;
