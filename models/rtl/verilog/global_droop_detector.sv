// Global second-order droop detector of the CTA scheduler (seed 001 section 5.3): the hardware
// of pdn::GlobalDroopDetector (docs/pdn.md "Smoothing").
//
// Spec (the C++ model's behaviour; one clock per core cycle):
// - `report` is high in a cycle where the SMs report their active warps: `active[i]` is high
//   when SM i has at least one. A rise of SM i is a report with `active[i]` high after a report
//   with it low (before a launch's first report every SM counts as low). Rises are ignored
//   while a holdoff runs (`hold_left` > 0); the previous value is always updated.
// - A rise stays recent for cfg_window cycles: it counts at reports in [rise, rise + window).
// - At a report outside a holdoff with at least cfg_min_sms recent rises, the detector fires
//   (`detect`, registered): the j-th SM of the recent set in SM order (j from 0) gets
//   `delay` j x cfg_stagger, the others 0; those rises are consumed, and a holdoff of
//   cfg_holdoff cycles (0: the longest delay given) starts: `hold_left` counts down from it.
// - `rst` (synchronous): a new launch; every SM low, no rise, no holdoff.
// - `quiet`: no register changes on a clock without `report` (no recent rise, no holdoff), so
//   such clocks may be skipped.
module global_droop_detector #(
    parameter int N  = 128,  // the largest number of SMs
    parameter int CW = 21    // window and stagger widths (values up to 2^20)
) (
    input  logic            clk,
    input  logic            rst,
    input  logic            report,
    input  logic [   N-1:0] active,
    input  logic [    10:0] cfg_min_sms,
    input  logic [  CW-1:0] cfg_window,
    input  logic [  CW-1:0] cfg_stagger,
    input  logic [    30:0] cfg_holdoff,
    output logic            detect,
    output logic [N*32-1:0] delay,
    output logic [    31:0] hold_left,
    output logic            quiet
);
  logic [N-1:0] prev, recent;
  logic [N*CW-1:0] age;  // SM i's cycles since its rise (while recent): bits i*CW +: CW

  // This report's recent set, its delays and the longest one (combinational).
  logic [N-1:0] rise, set;
  logic [N*32-1:0] delays;
  logic [31:0] acc, longest;
  logic [10:0] count;
  logic holdoff, fire;
  logic [31:0] holdoffLength;  // of a detection in this cycle

  assign holdoff = hold_left != 0;
  assign quiet = recent == '0 && !holdoff;

  always_comb begin
    acc = '0;
    count = '0;
    delays = '0;
    for (int i = 0; i < N; i++) begin
      rise[i] = report && !holdoff && !prev[i] && active[i];
      set[i] = recent[i] || rise[i];
      if (set[i]) begin
        delays[i*32+:32] = acc;
        acc = acc + {{(32 - CW) {1'b0}}, cfg_stagger};
        count = count + 11'd1;
      end
    end
    longest = count != 0 ? acc - {{(32 - CW) {1'b0}}, cfg_stagger} : '0;
    fire = report && !holdoff && count >= cfg_min_sms;
    holdoffLength = cfg_holdoff != 0 ? {1'b0, cfg_holdoff} : longest;
  end

  always_ff @(posedge clk) begin
    if (rst) begin
      prev <= '0;
      recent <= '0;
      hold_left <= '0;
      detect <= 1'b0;
      delay <= '0;
      age <= '0;
    end else begin
      detect <= fire;
      if (fire) delay <= delays;
      if (report) prev <= active;
      // The holdoff: a new one from a detection, else one cycle less.
      if (fire) hold_left <= holdoffLength != 0 ? holdoffLength - 32'd1 : '0;
      else if (holdoff) hold_left <= hold_left - 32'd1;
      for (int i = 0; i < N; i++) begin
        if (rise[i]) begin
          // A rise in this cycle (again, if already recent): age 0 now, 1 at the next cycle.
          recent[i] <= !fire && cfg_window > 1;
          age[i*CW+:CW] <= {{(CW - 1) {1'b0}}, 1'b1};
        end else if (recent[i]) begin
          // Consumed by a detection, or no longer recent once its age reaches the window.
          recent[i] <= !fire && (age[i*CW+:CW] + 1'b1 < cfg_window);
          age[i*CW+:CW] <= age[i*CW+:CW] + 1'b1;
        end
      end
    end
  end
endmodule
