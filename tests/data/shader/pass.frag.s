; Fragment program: writes its varying.
.shader fragment
.input v0 v_x 1 4
.output o0 gl_FragColor 1 4
L0:
  mov o0, v0
  end
