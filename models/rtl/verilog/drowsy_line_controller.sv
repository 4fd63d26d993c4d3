// Drowsy-line controller of one cache bank (seed 000): the hardware of cache::LinePower's
// decisions (docs/cache-power.md "Drowsy lines", docs/rtl-cosim.md). One instance per bank of an
// L1 data cache or an L2 slice; it holds the power state of the bank's line frames.
//
// Spec (the C++ model's decisions; the accounting counters stay in the model):
// - One clock per cycle of the cache's clock. `access` is high in a cycle where the bank serves a
//   touch (a hit or a fill) of frame `frame`; a bank serves at most one access per cycle.
// - Each frame is ON or DROWSY. After reset every frame is DROWSY (never touched). A touch makes
//   its frame ON in the touch's cycle and for the next cycles the policy keeps it on:
//     cfg_timeout_policy = 0 (drowsy-after-access): none, DROWSY again from the next cycle;
//     cfg_timeout_policy = 1 (timeout): cfg_timeout - 1 more cycles, so a frame touched in
//     cycle c is DROWSY from cycle c + cfg_timeout on (an access exactly cfg_timeout cycles
//     later wakes it again, one a cycle earlier finds it ON).
// - `wake` (combinational): this cycle's access finds its frame DROWSY and wakes it;
//   `wait_cycles` the extra cycles the access waits for it: cfg_wake_latency, or for an access
//   the warp scheduler announced early (`early`: look-ahead) cfg_wake_latency - cfg_lookahead
//   (0 if the look-ahead covers the whole wake-up). An access to a frame that is still waking
//   (touched less than cfg_wake_latency cycles ago) finds it ON: the wake-up is charged to the
//   access that started it, as in the model.
// - `drowsy[f]` is frame f's state in this cycle before this cycle's access (the supply select
//   of its cells); `quiet`: no frame is ON after this cycle, so a clock without an access
//   changes no register (the transactor skips such clocks).
//
// Each frame keeps a down-counter of the ON cycles it has left; the bank keeps the largest of
// them (the latest touch's, since every counter counts down together) for `quiet`.
module drowsy_line_controller #(
    parameter int FRAMES = 128,
    parameter int INDEX_BITS = $clog2(FRAMES),
    parameter int COUNT_BITS = 20,
    parameter int WAKE_BITS = 7
) (
    input  logic                  clk,
    input  logic                  rst,                 // synchronous: every frame DROWSY
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
  logic [COUNT_BITS-1:0] latest_left;  // the largest on_left (the latest touch's)
  logic [COUNT_BITS-1:0] keep_on;  // a touched frame's ON cycles left, from the next one on
  logic [ WAKE_BITS-1:0] hidden_wait;

  assign keep_on = (cfg_timeout_policy && cfg_timeout != '0) ? cfg_timeout - 1'b1 : '0;
  assign hidden_wait = (cfg_wake_latency > cfg_lookahead) ? cfg_wake_latency - cfg_lookahead : '0;

  logic [COUNT_BITS-1:0] on_left[FRAMES];  // per frame: ON cycles left from the next one on
  logic [COUNT_BITS-1:0] on_left_next[FRAMES];

  always_comb begin
    for (int f = 0; f < FRAMES; f++) begin
      drowsy[f] = on_left[f] == '0;
      if (rst) on_left_next[f] = '0;
      else if (access && frame == INDEX_BITS'(f)) on_left_next[f] = keep_on;
      else if (on_left[f] != '0) on_left_next[f] = on_left[f] - 1'b1;
      else on_left_next[f] = '0;
    end
  end

  for (genvar g = 0; g < FRAMES; g++) begin : frame_counter
    always_ff @(posedge clk) on_left[g] <= on_left_next[g];
  end

  assign wake = access && drowsy[frame];
  assign wait_cycles = !wake ? '0 : early ? hidden_wait : cfg_wake_latency;
  assign quiet = latest_left == '0;

  always_ff @(posedge clk) begin
    if (rst) latest_left <= '0;
    else if (access) latest_left <= keep_on;
    else if (latest_left != '0) latest_left <= latest_left - 1'b1;
  end
endmodule
