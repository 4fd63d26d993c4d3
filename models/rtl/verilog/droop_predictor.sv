// Local first-order droop predictor and throttle window of one SM (seed 001 section 5.2).
//
// Spec (the contract the C++ model sm::LocalDroopPredictor also meets; docs/rtl-cosim.md):
// - One clock per SM core cycle. `power` is the cycle's estimated SM power, unsigned fixed
//   point with POWER_FRAC fractional bits (watts x 2^POWER_FRAC, rounded).
// - At a rising edge with `push`, the power enters a 4-entry FIFO (the oldest drops out) and
//   the number of entries held grows up to 4. `clear` (synchronous) empties the FIFO.
// - With p0 the power pushed now and p1..p3 the older entries, the rise over k cycles
//   (k = 2, 3, 4) is p0 - min(p1 .. p(k-1)), defined when the FIFO then holds k entries.
//   A droop is predicted when `predict_en` is set and some defined rise is strictly greater
//   than cfg_thr[k-2]. `predict` is registered: high in the cycle after the push.
// - A prediction (re)loads the throttle counter with cfg_throttle_cycles; otherwise it counts
//   down once per clock. `throttle` is high while the counter is non-zero, so a prediction in
//   cycle c throttles cycles c+1 .. c+cfg_throttle_cycles, and a prediction inside a window
//   extends it.
// - The thresholds and the window length are configuration inputs (held constant after reset,
//   as a control register would be), so the platform's keys set them without re-verilating.
module droop_predictor #(
    parameter int POWER_BITS = 32,
    parameter bit RISE4 = 1'b1,  // 0: no comparator for the rise over 4 cycles (cfg_thr4 unused)
    parameter int COUNT_BITS = 21
) (
    input  logic                  clk,
    input  logic                  rst,  // synchronous, active high
    input  logic                  clear,
    input  logic                  push,
    input  logic                  predict_en,
    input  logic [POWER_BITS-1:0] power,
    input  logic [POWER_BITS-1:0] cfg_thr2,
    input  logic [POWER_BITS-1:0] cfg_thr3,
    input  logic [POWER_BITS-1:0] cfg_thr4,
    input  logic [COUNT_BITS-1:0] cfg_throttle_cycles,
    output logic                  predict,
    output logic                  throttle,
    output logic [COUNT_BITS-1:0] remaining,
    output logic [           2:0] held
);
  logic [POWER_BITS-1:0] p1, p2, p3;  // p1 the newest entry held before this push
  logic [2:0] count;

  // The rises the incoming power would make against the entries held now.
  logic [POWER_BITS-1:0] min2, min3, min4;
  logic [2:0] count_next;
  logic rise2, rise3, rise4, fire;
  always_comb begin
    count_next = (count == 3'd4) ? 3'd4 : count + 3'd1;
    min2 = p1;
    min3 = (p2 < min2) ? p2 : min2;
    min4 = (p3 < min3) ? p3 : min3;
    // power > min + thr, written without subtraction so no value can wrap.
    rise2 = (count_next >= 3'd2) && (power > min2) && (power - min2 > cfg_thr2);
    rise3 = (count_next >= 3'd3) && (power > min3) && (power - min3 > cfg_thr3);
    rise4 = RISE4 && (count_next >= 3'd4) && (power > min4) && (power - min4 > cfg_thr4);
    fire  = push && predict_en && (rise2 || rise3 || rise4);
  end

  always_ff @(posedge clk) begin
    if (rst) begin
      p1 <= '0;
      p2 <= '0;
      p3 <= '0;
      count <= '0;
      predict <= 1'b0;
      remaining <= '0;
    end else begin
      predict <= fire;
      if (fire) remaining <= cfg_throttle_cycles;
      else if (remaining != '0) remaining <= remaining - 1'b1;
      if (clear) begin
        count <= '0;
      end else if (push) begin
        p3 <= p2;
        p2 <= p1;
        p1 <= power;
        count <= count_next;
      end
    end
  end

  assign throttle = remaining != '0;
  assign held = count;
endmodule
