; Vertex program reading an attribute no draw generates.
.shader vertex
.input v0 a_pos 1 4
.output o0 gl_Position 1 4
.output o1 v_x 1 4
L0:
  mov o0, v0
  mov o1, v0
  end
