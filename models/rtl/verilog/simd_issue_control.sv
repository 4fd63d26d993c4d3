// SIMD issue-control state machine (seed 002 section 3.2.1): the hardware of
// sm::SimdIssuePolicy "utilisation" (docs/power-gating.md), which picks the SIMD units and lanes
// an SM's SIMD instructions may use for the next time slice.
//
// Spec (the C++ model's behaviour):
// - Four states with decreasing lanes in use, `state` 1 .. 4 (1: every unit, all lanes;
//   2: units 1.. split; 3: unit 0 only; 4: unit 0 only, split). Reset: state 1.
// - `slice_end` is high in the cycle a time slice ends, with `util` its lane utilisation in
//   fixed point (x 2^FRAC_BITS, 0 .. 1.0). At that edge, with hysteresis and at most one step:
//   from state s step down (s + 1) when util < the down threshold of s (cfg_down[s]), else
//   step up (s - 1) when util >= the up threshold of s (cfg_up[s]); else stay.
// - Thresholds are configuration inputs (power.simd_issue.down_thresholds and up_thresholds,
//   same fixed point): cfg_down1..3 leave states 1..3 downwards, cfg_up2..4 leave states 2..4
//   upwards.
module simd_issue_control #(
    parameter int FRAC_BITS = 16
) (
    input  logic               clk,
    input  logic               rst,        // synchronous, active high: state 1
    input  logic               slice_end,
    input  logic [FRAC_BITS:0] util,
    input  logic [FRAC_BITS:0] cfg_down1,
    input  logic [FRAC_BITS:0] cfg_down2,
    input  logic [FRAC_BITS:0] cfg_down3,
    input  logic [FRAC_BITS:0] cfg_up2,
    input  logic [FRAC_BITS:0] cfg_up3,
    input  logic [FRAC_BITS:0] cfg_up4,
    output logic [        2:0] state
);
  logic [1:0] s;  // state - 1
  logic [FRAC_BITS:0] down, up;

  always_comb begin
    case (s)
      2'd0: down = cfg_down1;
      2'd1: down = cfg_down2;
      default: down = cfg_down3;
    endcase
    case (s)
      2'd1: up = cfg_up2;
      2'd2: up = cfg_up3;
      default: up = cfg_up4;
    endcase
  end

  always_ff @(posedge clk) begin
    if (rst) s <= 2'd0;
    else if (slice_end) begin
      if (s != 2'd3 && util < down) s <= s + 2'd1;
      else if (s != 2'd0 && util >= up) s <= s - 2'd1;
    end
  end

  assign state = {1'b0, s} + 3'd1;
endmodule
