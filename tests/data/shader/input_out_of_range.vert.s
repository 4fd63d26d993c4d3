; Vertex program whose attribute lies beyond the 8-entry input buffer.
.shader vertex
.input v300 a_position 1 4
.output o0 gl_Position 1 4
.output o1 v_x 1 4
L0:
  mov o0, v300
  mov o1, v300
  end
