// A cheaper variant of droop_predictor.sv, the worked example of docs/rtl-cosim.md ("Bring your
// own block"): the same ports and FIFO, but no comparator for the rise over 4 cycles (cfg_thr4
// is ignored, and the oldest FIFO entry, which only that comparator reads, is optimized away).
// Lockstep against the model reports the first cycle where only the model's 4-cycle rise
// predicts a droop.
module droop_predictor_3deep (
    input  logic        clk,
    input  logic        rst,
    input  logic        clear,
    input  logic        push,
    input  logic        predict_en,
    input  logic [31:0] power,
    input  logic [31:0] cfg_thr2,
    input  logic [31:0] cfg_thr3,
    /* verilator lint_off UNUSEDSIGNAL */
    input  logic [31:0] cfg_thr4,
    /* verilator lint_on UNUSEDSIGNAL */
    input  logic [20:0] cfg_throttle_cycles,
    output logic        predict,
    output logic        throttle,
    output logic [20:0] remaining,
    output logic [ 2:0] held
);
  droop_predictor #(
      .RISE4(1'b0)
  ) core (
      .clk,
      .rst,
      .clear,
      .push,
      .predict_en,
      .power,
      .cfg_thr2,
      .cfg_thr3,
      .cfg_thr4,
      .cfg_throttle_cycles,
      .predict,
      .throttle,
      .remaining,
      .held
  );
endmodule
