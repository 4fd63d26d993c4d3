// Power-gating switch controller with timeout idle detection (seed 002): the hardware of
// power::PowerGatingSwitch with power.gating.idle_detect: timeout (docs/power-gating.md).
//
// Spec (the C++ model's timing behaviour; its accounting counters stay in the model):
// - One clock per cycle of the gated block's clock. `use` is high in every cycle the block is
//   busy; `acquire` is high in a cycle where a use asks for the block.
// - `idle` counts the cycles since the block was last busy or woke up (saturating above
//   cfg_timeout). The block is gated in a cycle (`gated`) when it is not waking and has been
//   idle for more than cfg_timeout cycles: after a busy cycle c it is gated from cycle
//   c + 1 + cfg_timeout + 1 on, so a request exactly cfg_timeout idle cycles later finds it on.
// - An `acquire` while gated starts a wake-up of cfg_wake_latency cycles: the block is usable
//   cfg_wake_latency cycles after the request. `wait_cycles` is, for a request in this cycle,
//   the cycles until the block is usable: cfg_wake_latency when gated, the rest of a wake-up
//   under way, else 0. A request during a wake-up does not restart it.
// - A busy cycle, or a wake-up, resets the idle count.
module power_gating_switch #(
    parameter int TIMEOUT_BITS = 20,
    parameter int WAKE_BITS = 16
) (
    input  logic                    clk,
    input  logic                    rst,  // synchronous, active high: on and idle
    input  logic                    use_i,
    input  logic                    acquire,
    input  logic [TIMEOUT_BITS-1:0] cfg_timeout,
    input  logic [   WAKE_BITS-1:0] cfg_wake_latency,
    output logic                    gated,
    output logic                    waking,
    output logic [   WAKE_BITS-1:0] wait_cycles
);
  logic [TIMEOUT_BITS:0] idle;  // one bit wider: saturates at cfg_timeout + 1
  logic [WAKE_BITS-1:0] wake_left;

  assign waking = wake_left != '0;
  assign gated = !waking && (idle > {1'b0, cfg_timeout});
  assign wait_cycles = gated ? cfg_wake_latency : wake_left;

  always_ff @(posedge clk) begin
    if (rst) begin
      idle <= '0;
      wake_left <= '0;
    end else if (acquire && gated) begin
      // Usable cfg_wake_latency cycles from now; with no latency it is on at once.
      wake_left <= (cfg_wake_latency == '0) ? '0 : cfg_wake_latency - 1'b1;
      idle <= (use_i || cfg_wake_latency != '0) ? '0 : {{TIMEOUT_BITS{1'b0}}, 1'b1};
    end else if (waking) begin
      wake_left <= wake_left - 1'b1;
      idle <= '0;
    end else if (use_i) begin
      idle <= '0;
    end else if (!gated) begin
      idle <= idle + 1'b1;
    end
  end
endmodule
