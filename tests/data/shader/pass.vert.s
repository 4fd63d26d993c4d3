; Vertex program: passes a_position through as gl_Position and v_x.
.shader vertex
.input v0 a_position 1 4
.output o0 gl_Position 1 4
.output o1 v_x 1 4
L0:
  mov o0, v0
  mov o1, v0
  end
