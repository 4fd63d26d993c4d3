// A deliberately broken variant of drowsy_line_controller.sv, for the lockstep tests
// (docs/rtl-cosim.md): the same ports, but its timeout is one cycle late (it keeps a touched
// frame ON for cfg_timeout + 1 cycles). Lockstep against the model reports the first access
// that comes exactly cfg_timeout cycles after the previous touch of its frame: the model wakes
// the line, this block finds it still ON.
module drowsy_line_controller_late #(
    parameter int FRAMES = 128,
    parameter int INDEX_BITS = $clog2(FRAMES),
    parameter int COUNT_BITS = 20,
    parameter int WAKE_BITS = 7
) (
    input  logic                  clk,
    input  logic                  rst,
    input  logic                  access,
    input  logic [INDEX_BITS-1:0] frame,
    input  logic                  early,
    input  logic                  cfg_timeout_policy,
    input  logic [COUNT_BITS-1:0] cfg_timeout,
    input  logic [ WAKE_BITS-1:0] cfg_wake_latency,
    input  logic [ WAKE_BITS-1:0] cfg_lookahead,
    output logic                  wake,
    output logic [ WAKE_BITS-1:0] wait_cycles,
    output logic [    FRAMES-1:0] drowsy,
    output logic                  quiet
);
  drowsy_line_controller #(
      .FRAMES(FRAMES),
      .INDEX_BITS(INDEX_BITS),
      .COUNT_BITS(COUNT_BITS),
      .WAKE_BITS(WAKE_BITS)
  ) core (
      .clk,
      .rst,
      .access,
      .frame,
      .early,
      .cfg_timeout_policy,
      .cfg_timeout(cfg_timeout + 1'b1),
      .cfg_wake_latency,
      .cfg_lookahead,
      .wake,
      .wait_cycles,
      .drowsy,
      .quiet
  );
endmodule
