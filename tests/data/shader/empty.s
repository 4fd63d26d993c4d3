; A program with directives but no code.
.shader fragment
.input v0 v_x 1 4
