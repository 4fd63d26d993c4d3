; Fragment program that never ends: a loop of a block without instructions.
.shader fragment
.input v0 v_x 1 4
.output o0 gl_FragColor 1 4
L0:
  mov o0, v0
L1:
  bra L1
