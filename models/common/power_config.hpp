// The power section of a platform: per-event energies, leakage powers, supply voltage and its
// scaling laws, drowsy and divided-word-line (DWL) cache lines (seed 000), power-gating switches
// and their idle detection (seed 002), and the warp-issue policies that make gating pay.
//
// Units: energies in picojoules per event at power.nominal_voltage, powers in watts at
// power.nominal_voltage. Defaults are our estimates for the 40 nm GTX480 at 700 MHz and 1.0 V
// (docs/power.md gives the derivation of each: GPUWattch's reported breakdown, CACTI-style SRAM
// figures, Keckler et al. 2011 for datapath and wire energies, GDDR5 datasheet currents); a
// platform file states its own values with a comment naming their source.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/config.hpp"

namespace gpusc {

// When one execution unit's lanes draw a warp instruction's lane energy: evenly over `cycles`
// core cycles, the first of them `delay` cycles after the instruction entered the unit (its
// dispatch).
struct ExecuteStageConfig : config::Section {
  uint32_t delay = 1;
  uint32_t cycles = 4;

  ExecuteStageConfig() = default;
  ExecuteStageConfig(uint32_t d, uint32_t c) : delay(d), cycles(c) {}

  template <class V>
  void visit(V& v) {
    v.field("delay", delay, "Core cycles from the dispatch to the first cycle the lanes draw",
            config::Range<uint32_t>{0, 16});
    v.field("cycles", cycles, "Core cycles over which the lanes draw the energy, evenly",
            config::Range<uint32_t>{1, 32});
  }
};

// The stage split of an instruction's energy, i.e. when the supply sees it. Every event an
// instruction causes is drawn in the cycle the timing model performs it: the I-cache access at
// fetch; decode and scheduling at issue; each register read in the cycle its bank delivers it;
// the operand collector at dispatch; the LD/ST unit's address generation and coalescing at
// dispatch, its shared-memory and constant-cache accesses when they happen; the result's
// register write at writeback. Only the lanes' work is not an event of the timing model: it is
// spread over the execution pipeline's stages, per unit, as configured here (docs/power.md).
struct ExecuteStagesConfig : config::Section {
  ExecuteStageConfig simd{1, 4};  // integer and FP32 lane operations
  ExecuteStageConfig sfu{1, 7};   // special-function lane operations
  ExecuteStageConfig dp{1, 7};    // FP64 lane operations, wherever dp_path runs them

  template <class V>
  void visit(V& v) {
    v.field("simd", simd, "Integer and FP32 lane operations on the SIMD units");
    v.field("sfu", sfu, "Special-function lane operations on the SFUs");
    v.field("dp", dp, "FP64 lane operations (DP units, or where sm.dp_path runs them)");
  }
};

// Energies and leakage of one SM's blocks (the L1D is separate: CachePowerConfig).
struct SmPowerConfig : config::Section {
  // dynamic, pJ per event
  double fetch_decode_pj = 60.0;    // per instruction fetched and decoded (I-cache access aside)
  double icache_access_pj = 40.0;   // per instruction-cache access
  double scheduler_pj = 40.0;       // per warp instruction issued (scoreboard, arbitration)
  double rf_read_pj = 200.0;        // per warp operand read (32 lanes x 4 B from one bank)
  double rf_write_pj = 220.0;       // per warp result written
  double collector_pj = 60.0;       // per instruction passing an operand collector
  double int_lane_pj = 12.0;        // per lane of an integer/logic/shuffle/branch operation
  double fp_lane_pj = 40.0;         // per lane of an FP32 operation
  double dp_lane_pj = 90.0;         // per lane of an FP64 operation
  double sfu_lane_pj = 80.0;        // per lane of a special-function operation
  double ldst_pj = 150.0;           // per memory instruction (address generation, coalescing)
  double shared_access_pj = 400.0;  // per shared-memory access (all banks of one warp access)
  double const_access_pj = 40.0;    // per constant-cache access
  double tensor_cycle_pj = 0.0;     // per busy cycle of one tensor core (sm.tensor)
  double clock_w = 1.2;             // clock tree and pipeline latches of an SM that is not gated
  // leakage, W per SM (per lane / per unit where named)
  double frontend_leakage_w = 0.30;    // fetch, decode, I-cache, schedulers, scoreboard, collectors
  double rf_leakage_w = 0.40;          // 128 KB register file
  double shared_leakage_w = 0.15;      // shared memory (without a unified L1: see l1d)
  double lane_leakage_w = 0.028;       // one SIMD lane
  double simd_unit_leakage_w = 0.05;   // one SIMD unit's shared control and pipeline latches
  double sfu_leakage_w = 0.06;         // the SFUs (and the DP path on them)
  double ldst_leakage_w = 0.10;        // the LD/ST unit and coalescer
  ExecuteStagesConfig execute_stages;  // when the lanes draw their energy
  // staged: the lanes draw over execute_stages; activity: as GPUWattch's per-cycle power from
  // activity counts (seed 001's current), every unit's energy in the cycle of its accesses, the
  // lanes' in their dispatch cycle.
  std::string current_model = "staged";

  template <class V>
  void visit(V& v) {
    const config::Range<double> e{0.0, 1e7}, w{0.0, 1e4};
    v.field("fetch_decode_pj", fetch_decode_pj, "pJ per instruction fetched and decoded", e);
    v.field("icache_access_pj", icache_access_pj, "pJ per instruction-cache access", e);
    v.field("scheduler_pj", scheduler_pj, "pJ per warp instruction issued", e);
    v.field("rf_read_pj", rf_read_pj, "pJ per warp register operand read", e);
    v.field("rf_write_pj", rf_write_pj, "pJ per warp register result written", e);
    v.field("collector_pj", collector_pj, "pJ per instruction through an operand collector", e);
    v.field("int_lane_pj", int_lane_pj, "pJ per lane of an integer operation", e);
    v.field("fp_lane_pj", fp_lane_pj, "pJ per lane of an FP32 operation", e);
    v.field("dp_lane_pj", dp_lane_pj, "pJ per lane of an FP64 operation", e);
    v.field("sfu_lane_pj", sfu_lane_pj, "pJ per lane of a special-function operation", e);
    v.field("ldst_pj", ldst_pj, "pJ per memory instruction in the LD/ST unit", e);
    v.field("shared_access_pj", shared_access_pj, "pJ per shared-memory warp access", e);
    v.field("const_access_pj", const_access_pj, "pJ per constant-cache access", e);
    v.field("tensor_cycle_pj", tensor_cycle_pj,
            "pJ per cycle a tensor core is busy (sm.tensor), whatever its input type", e);
    v.field("clock_w", clock_w, "W of clock tree and latches while the SM is not gated", w);
    v.field("frontend_leakage_w", frontend_leakage_w,
            "W leakage of fetch, decode, I-cache, schedulers and collectors", w);
    v.field("rf_leakage_w", rf_leakage_w, "W leakage of the register file", w);
    v.field("shared_leakage_w", shared_leakage_w, "W leakage of shared memory", w);
    v.field("lane_leakage_w", lane_leakage_w, "W leakage of one SIMD lane", w);
    v.field("simd_unit_leakage_w", simd_unit_leakage_w,
            "W leakage of one SIMD unit outside its lanes", w);
    v.field("sfu_leakage_w", sfu_leakage_w, "W leakage of the SFUs", w);
    v.field("ldst_leakage_w", ldst_leakage_w, "W leakage of the LD/ST unit", w);
    v.field("execute_stages", execute_stages,
            "When each unit's lanes draw an instruction's lane energy (the rest is drawn in the "
            "cycle of its event: fetch, issue, register reads, dispatch, memory access, "
            "writeback)");
    v.field("current_model", current_model,
            "When the supply sees the energy: staged (the lanes over execute_stages) or activity "
            "(GPUWattch-style activity counts, as seed 001: every unit in the cycle of its "
            "accesses, the lanes in the dispatch cycle; execute_stages unused)",
            config::OneOf{{"staged", "activity"}});
  }
};

// Drowsy lines (seed 000): a line is ON or DROWSY (retention voltage); an access to a drowsy
// line wakes it first.
struct DrowsyConfig : config::Section {
  std::string policy = "none";      // none | drowsy-after-access | timeout
  uint32_t timeout_cycles = 1000;   // policy timeout: a line idle this long turns drowsy
  uint32_t wake_latency = 1;        // extra cycles of an access to a drowsy line
  double wake_pj = 2.0;             // energy to raise one line to full voltage
  double leakage_fraction = 0.075;  // drowsy leakage / full leakage (seed 000 Table 3: < 8 %)
  bool lookahead = false;         // the warp scheduler wakes the next warp's lines early (L1D only)
  uint32_t lookahead_cycles = 2;  // how early: hides min(wake_latency, lookahead_cycles)

  template <class V>
  void visit(V& v) {
    v.field("policy", policy,
            "none (always ON), drowsy-after-access (drowsy right after each access), timeout "
            "(drowsy after timeout_cycles without access)",
            config::OneOf{{"none", "drowsy-after-access", "timeout"}});
    v.field("timeout_cycles", timeout_cycles, "Idle cycles before a line turns drowsy (timeout)",
            config::Range<uint32_t>{1, 1u << 30});
    v.field("wake_latency", wake_latency, "Extra cycles of an access to a drowsy line",
            config::Range<uint32_t>{0, 64});
    v.field("wake_pj", wake_pj, "pJ to wake one line", config::Range<double>{0.0, 1e6});
    v.field("leakage_fraction", leakage_fraction,
            "Leakage of a drowsy line as a fraction of an ON line's",
            config::Range<double>{0.0, 1.0});
    v.field("lookahead", lookahead,
            "The warp scheduler wakes the lines of the next warp's memory instruction early (L1D)");
    v.field("lookahead_cycles", lookahead_cycles, "Cycles ahead the look-ahead wakes a line",
            config::Range<uint32_t>{0, 64});
    // Settings of a policy not chosen: refused on the command line.
    if (policy == "none") {
      for (const char* k : {"timeout_cycles", "wake_latency", "wake_pj", "leakage_fraction",
                            "lookahead", "lookahead_cycles"})
        v.unused(k, "drowsy.policy is none: every line stays on");
    } else {
      if (policy != "timeout")
        v.unused("timeout_cycles", "drowsy.policy is " + policy + " (timeout uses it)");
      if (!lookahead) v.unused("lookahead_cycles", "drowsy.lookahead is false");
    }
  }
};

// One data cache's energy (the L1D of an SM, or one L2 slice).
struct CachePowerConfig : config::Section {
  double tag_pj = 5.0;         // per lookup (tag array, comparators)
  double read_pj = 120.0;      // per line read (data array, whole line)
  double write_pj = 130.0;     // per line written by a store
  double fill_pj = 130.0;      // per line filled from the next level
  double data_share = 0.9;     // share of read/write energy in the sub-word-lines (DWL scales it)
  double leakage_w = 0.05;     // the whole cache
  double line_share = 0.9;     // share of the leakage in the lines (drowsy-capable cells)
  bool dwl = false;            // divided word lines: only the accessed sub-word-lines switch
  uint32_t subword_bytes = 4;  // bytes per sub-word-line (seed 000: 4)
  DrowsyConfig drowsy;

  CachePowerConfig() = default;
  CachePowerConfig(double tag, double read, double write, double fill, double leak)
      : tag_pj(tag), read_pj(read), write_pj(write), fill_pj(fill), leakage_w(leak) {}

  template <class V>
  void visit(V& v) {
    const config::Range<double> e{0.0, 1e7};
    v.field("tag_pj", tag_pj, "pJ per lookup (tags and comparators)", e);
    v.field("read_pj", read_pj, "pJ per full-line read", e);
    v.field("write_pj", write_pj, "pJ per full-line write", e);
    v.field("fill_pj", fill_pj, "pJ per line fill from the next level", e);
    v.field("data_share", data_share,
            "Share of read/write energy spent in the sub-word-lines (what DWL scales)",
            config::Range<double>{0.0, 1.0});
    v.field("leakage_w", leakage_w, "W leakage of the whole cache (per SM or per slice)",
            config::Range<double>{0.0, 1e4});
    v.field("line_share", line_share, "Share of the leakage in the lines (drowsy-capable)",
            config::Range<double>{0.0, 1.0});
    v.field("dwl", dwl, "Divided word lines: read/write energy scales with active sub-word-lines");
    v.field("subword_bytes", subword_bytes, "Bytes per sub-word-line",
            config::Range<uint32_t>{1, 256}, config::PowerOfTwo{});
    v.field("drowsy", drowsy, "Drowsy line power state");
  }
};

struct NocPowerConfig : config::Section {
  double router_flit_pj = 50.0;    // per flit through a router (buffer, allocators, switch)
  double link_flit_pj = 100.0;     // per flit over a link
  double router_leakage_w = 0.02;  // per router (crossbar: the switch counts as one router per
                                   // node)

  template <class V>
  void visit(V& v) {
    v.field("router_flit_pj", router_flit_pj, "pJ per flit through a router",
            config::Range<double>{0.0, 1e7});
    v.field("link_flit_pj", link_flit_pj, "pJ per flit over a link",
            config::Range<double>{0.0, 1e7});
    v.field("router_leakage_w", router_leakage_w, "W leakage per network node",
            config::Range<double>{0.0, 1e4});
  }
};

// DRAM energies per channel (all chips of a partition together).
struct DramPowerConfig : config::Section {
  double controller_request_pj = 100.0;  // per request through the memory controller
  double controller_leakage_w = 0.10;    // per memory controller
  double activate_pj = 2000.0;           // per ACT
  double precharge_pj = 1000.0;          // per PRE
  double read_burst_pj = 9000.0;         // per read burst (core and I/O)
  double write_burst_pj = 9500.0;        // per write burst
  double refresh_pj = 30000.0;           // per REF
  double background_w = 1.5;             // per channel: standby and termination

  template <class V>
  void visit(V& v) {
    const config::Range<double> e{0.0, 1e9}, w{0.0, 1e4};
    v.field("controller_request_pj", controller_request_pj, "pJ per request through a controller",
            e);
    v.field("controller_leakage_w", controller_leakage_w, "W leakage per memory controller", w);
    v.field("activate_pj", activate_pj, "pJ per activate (ACT)", e);
    v.field("precharge_pj", precharge_pj, "pJ per precharge (PRE)", e);
    v.field("read_burst_pj", read_burst_pj, "pJ per read burst", e);
    v.field("write_burst_pj", write_burst_pj, "pJ per write burst", e);
    v.field("refresh_pj", refresh_pj, "pJ per refresh (REF)", e);
    v.field("background_w", background_w, "W background power per channel", w);
  }
};

// One level of power-gating switches (SMs, SIMD units or lanes).
struct SwitchConfig : config::Section {
  uint32_t timeout_cycles = 20;  // idle_detect timeout: idle cycles before the block is gated
  uint32_t wake_latency = 3;     // cycles from wake-up to usable
  double switch_pj = 4000.0;     // energy of one gate-and-wake cycle of the sleep transistor
  double gated_leakage_fraction = 0.0;  // leakage left while gated

  SwitchConfig() = default;
  SwitchConfig(uint32_t timeout, uint32_t wake, double sw)
      : timeout_cycles(timeout), wake_latency(wake), switch_pj(sw) {}

  template <class V>
  void visit(V& v) {
    v.field("timeout_cycles", timeout_cycles, "Idle cycles before gating (idle_detect timeout)",
            config::Range<uint32_t>{0, 1u << 30});
    v.field("wake_latency", wake_latency, "Cycles from wake-up until the block can be used",
            config::Range<uint32_t>{0, 100000});
    v.field("switch_pj", switch_pj, "pJ of one gating (sleep and wake)",
            config::Range<double>{0.0, 1e12});
    v.field("gated_leakage_fraction", gated_leakage_fraction,
            "Leakage of a gated block as a fraction of its full leakage",
            config::Range<double>{0.0, 1.0});
  }
};

struct GatingConfig : config::Section {
  // When a switch gates its block: never, ideally (an oracle gates every idle period of at
  // least the break-even time and wakes the block just in time: seed 002's assumption), or
  // after timeout_cycles of idleness (waking then costs wake_latency cycles).
  std::string idle_detect = "none";
  SwitchConfig sm{200, 50, 150000.0};
  SwitchConfig simd_unit{50, 5, 20000.0};
  SwitchConfig lane{20, 3, 4000.0};  // BET 100 cycles at 0.028 W and 700 MHz (seed 002)

  template <class V>
  void visit(V& v) {
    v.field("idle_detect", idle_detect, "When switches gate: none | ideal | timeout",
            config::OneOf{{"none", "ideal", "timeout"}});
    v.field("sm", sm, "Switch of a whole SM");
    v.field("simd_unit", simd_unit, "Switch of one SIMD unit's shared logic");
    v.field("lane", lane, "Switch of one SIMD lane");
  }
};

// SIMD issue control (seed 002 section 3.2.1): four states with decreasing lanes in use,
//   1: both units, all lanes   2: unit 1 split (half its lanes, warps in two halves)
//   3: unit 0 only             4: unit 0 only, split
// chosen every slice_cycles from the lane utilisation of the last slice (lane operations /
// (all lanes x cycles), gated lanes included), with hysteresis: from state s go down when the
// utilisation is below down_thresholds[s-1], go up when it is at least up_thresholds[s-2].
struct SimdIssueConfig : config::Section {
  std::string policy = "none";  // none | utilisation
  uint32_t slice_cycles = 500;
  std::vector<double> down_thresholds{0.5, 0.3, 0.15};  // leave state 1, 2, 3 downwards
  std::vector<double> up_thresholds{0.65, 0.42, 0.2};   // leave state 2, 3, 4 upwards

  template <class V>
  void visit(V& v) {
    v.field("policy", policy,
            "none (every unit, every lane) or utilisation (seed 002's four-state control)",
            config::OneOf{{"none", "utilisation"}});
    v.field("slice_cycles", slice_cycles, "Cycles of one time slice",
            config::Range<uint32_t>{1, 1u << 24});
    v.field("down_thresholds", down_thresholds, "Utilisation below which states 1, 2, 3 step down",
            config::Range<double>{0.0, 1.0});
    v.field("up_thresholds", up_thresholds, "Utilisation from which states 2, 3, 4 step up",
            config::Range<double>{0.0, 1.0});
    if (policy == "none")
      for (const char* k : {"slice_cycles", "down_thresholds", "up_thresholds"})
        v.unused(k, "simd_issue.policy is none (utilisation uses it)");
    v.require(down_thresholds.size() == 3, "down_thresholds",
              fmt::format("down_thresholds needs 3 values, got {}", down_thresholds.size()));
    v.require(up_thresholds.size() == 3, "up_thresholds",
              fmt::format("up_thresholds needs 3 values, got {}", up_thresholds.size()));
  }
};

// Congestion-aware core count (seed 002 section 3.1.2), for gpu.cta_placement
// congestion-aware: while the first CTAs run (until the first finishes, or observe_cycles at
// most), metric = alpha x (interconnect
// injection-stall cycles per SM-cycle) + beta x (1 / SIMD lane utilisation). The predicted
// slowdown of running on k of n SMs is (n / k - 1) x min(1, metric_reference / metric): a
// compute-bound kernel (metric near metric_reference) slows down in proportion, a congested or
// memory-bound one (large metric) hardly at all. The smallest k >= min_sms whose predicted
// slowdown is within slowdown_budget is kept for the rest of the kernel.
struct CoreCountConfig : config::Section {
  double alpha = 0.5;
  double beta = 1.0;
  double metric_reference = 1.5;
  double slowdown_budget = 0.05;
  uint32_t min_sms = 8;
  uint32_t observe_cycles = 20000;

  template <class V>
  void visit(V& v) {
    v.field("alpha", alpha, "Weight of the injection-stall rate", config::Range<double>{0.0, 1e6});
    v.field("beta", beta, "Weight of 1 / lane utilisation", config::Range<double>{0.0, 1e6});
    v.field("metric_reference", metric_reference,
            "Metric of a kernel whose runtime scales with 1 / SMs",
            config::Range<double>{1e-6, 1e6});
    v.field("slowdown_budget", slowdown_budget, "Allowed predicted slowdown (0.05: 5 %)",
            config::Range<double>{0.0, 100.0});
    v.field("min_sms", min_sms, "Fewest SMs the policy may keep", config::Range<uint32_t>{1, 1024});
    v.field("observe_cycles", observe_cycles,
            "Most cycles the first CTAs are observed (the decision comes when the first CTA "
            "finishes, or after this)",
            config::Range<uint32_t>{1, 1u << 30});
  }
};

struct PowerConfig : config::Section {
  bool enabled = true;                      // the energy model (timing mode)
  double nominal_voltage = 1.0;             // V at which the energies and powers are given
  double supply_voltage = 1.0;              // V the chip runs at
  std::string leakage_law = "exponential";  // linear | quadratic | cubic | exponential
  double leakage_exponent = 3.0;            // per volt, for exponential: P ~ V e^(k (V - Vnom))
  double constant_w = 20.0;       // chip-level constant power (PLLs, I/O, global clock, ...)
  uint32_t sample_cycles = 1000;  // power time series period in core cycles (0: none)
  SmPowerConfig sm;
  CachePowerConfig l1d{5.0, 120.0, 130.0, 130.0, 0.05};
  CachePowerConfig l2{8.0, 250.0, 270.0, 270.0, 0.25};
  NocPowerConfig noc;
  DramPowerConfig dram;
  GatingConfig gating;
  SimdIssueConfig simd_issue;
  bool thread_compaction = false;  // pack a divergent warp's active threads onto the low lanes

  template <class V>
  void visit(V& v) {
    v.field("enabled", enabled, "Compute energy and power (timing mode)");
    v.field("nominal_voltage", nominal_voltage, "Supply voltage (V) the energies are given at",
            config::Range<double>{0.1, 5.0});
    v.field("supply_voltage", supply_voltage,
            "Supply voltage (V): dynamic energy scales with its square, leakage by leakage_law",
            config::Range<double>{0.1, 5.0});
    v.field("leakage_law", leakage_law,
            "Leakage power versus supply: linear (V), quadratic (V^2), cubic (V^3), exponential "
            "(V e^(k (V - Vnom)))",
            config::OneOf{{"linear", "quadratic", "cubic", "exponential"}});
    v.field("leakage_exponent", leakage_exponent, "k of the exponential leakage law, per volt",
            config::Range<double>{0.0, 100.0});
    v.field("constant_w", constant_w, "W of chip-level constant power",
            config::Range<double>{0.0, 1e5});
    v.field("sample_cycles", sample_cycles,
            "Core cycles per sample of the power time series (0: no time series)",
            config::Range<uint32_t>{0, 1u << 30});
    v.require(sample_cycles == 0 || sample_cycles >= 10, "sample_cycles",
              fmt::format("sample_cycles = {}: a power sample needs at least 10 cycles (0: no time "
                          "series; CurrentSinks see every cycle)",
                          sample_cycles));
    v.field("sm", sm, "Energies and leakage of each SM");
    v.field("l1d", l1d, "L1 data cache of each SM");
    v.field("l2", l2, "Each L2 slice");
    v.field("noc", noc, "Interconnect");
    v.field("dram", dram, "Memory controllers and DRAM channels");
    v.field("gating", gating, "Power-gating switches of SMs, SIMD units and lanes");
    v.field("simd_issue", simd_issue, "SIMD issue control for lane and unit gating");
    v.field("thread_compaction", thread_compaction,
            "Pack the active threads of divergent warps onto the lowest lanes");
  }
};

}  // namespace gpusc
