// The power-delivery network (PDN) section of a platform (seed 001, section 2 and Fig. 3).
//
// The network: an ideal voltage regulator, the board and package (series R2 + L2) to the
// package node with its decoupling capacitance C2 (with ESR), the C4 bumps and package planes
// (R1 + L1, one branch per grid node) to the die, and a shared on-chip grid of rows x cols nodes,
// each holding its share of the die's decoupling capacitance C1 (with ESR) and linked to its four
// neighbours by R + L. Every SM draws its current at one grid node.
//
// The architect states the network by its impedance as seen from the die: two resonance peaks,
// first order (die capacitance against bump and package inductance, ~100 MHz) and second order
// (package decap against board and package inductance, ~1 MHz), each by frequency, peak
// impedance and quality factor q. pdn::PdnNetwork derives the element values from them
// (Z0 = Z / q, L = Z0 / (2 pi f), C = 1 / (2 pi f Z0), damping resistance Z0 / q of which
// dc_resistance_mohm sits in the series path and the rest is the decap's ESR), then corrects them
// numerically until the exact impedance of the assembled network peaks at the configured
// frequencies and impedances (within 2 %). The derived values are in the run's results.
//
// Defaults: our calibration for the GTX480 (15 SMs at 700 MHz, 1.0 V, SMs drawing 3-9 A each),
// reproducing the qualitative behaviour of seed 001's GPUVolt setup: a 100 MHz first-order and a
// 1 MHz second-order peak, the first-order droop local and destroyed by one cycle of
// misalignment between SMs, the second-order droop global and tolerant of 20 cycles of it;
// platforms/gtx480.yaml states them with the measured figures behind them.
#pragma once

#include <algorithm>
#include <cstdint>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "common/config.hpp"
#include "common/monitor_config.hpp"

namespace gpusc {

// One resonance of the impedance seen from the die.
struct PdnStageConfig : config::Section {
  double frequency_mhz = 100.0;
  double impedance_mohm = 1.0;
  double q = 2.0;
  double dc_resistance_mohm = 0.1;

  PdnStageConfig() = default;
  PdnStageConfig(double f, double z, double q_, double r)
      : frequency_mhz(f), impedance_mohm(z), q(q_), dc_resistance_mohm(r) {}

  template <class V>
  void visit(V& v) {
    v.field("frequency_mhz", frequency_mhz, "Frequency of the impedance peak in MHz",
            config::Range<double>{1e-3, 1e4});
    v.field("impedance_mohm", impedance_mohm, "Impedance at the peak in milliohm",
            config::Range<double>{1e-3, 1e4});
    v.field("q", q, "Quality factor of the resonance: peak impedance / characteristic impedance",
            config::Range<double>{1.0, 50.0});
    v.field("dc_resistance_mohm", dc_resistance_mohm,
            "Series (DC) resistance of this stage in milliohm (the rest of the damping is the "
            "decap's ESR)",
            config::Range<double>{0.0, 1e4});
  }
};

// The shared on-chip grid.
struct PdnGridConfig : config::Section {
  uint32_t rows = 0, cols = 0;     // 0: derived from the SM count (resolvedShape)
  std::vector<uint32_t> sm_nodes;  // node (row-major index) of each SM; empty: SM k at node k
  double link_resistance_mohm = 4.0;
  double link_inductance_ph = 60.0;

  // rows x cols for `numSms` SMs: a 0 is derived (both 0: ceil(sqrt(n)) rows of as many
  // columns as needed; one 0: as many as the other needs). 15 SMs: 4 x 4; 110: 11 x 10.
  std::pair<uint32_t, uint32_t> resolvedShape(uint32_t numSms) const {
    const uint32_t n = std::max(1u, numSms);
    uint32_t r = rows, c = cols;
    if (r == 0 && c == 0) {
      r = 1;
      while (r * r < n) ++r;
    }
    if (r == 0) r = (n + c - 1) / c;
    if (c == 0) c = (n + r - 1) / r;
    return {r, c};
  }

  template <class V>
  void visit(V& v) {
    v.field("rows", rows, "Grid rows (0: derived from gpu.num_sms, as the most nearly square grid)",
            config::Range<uint32_t>{0, 64});
    v.field("cols", cols, "Grid columns (0: derived: the fewest that hold gpu.num_sms in rows)",
            config::Range<uint32_t>{0, 64});
    v.field("sm_nodes", sm_nodes,
            "Grid node (row-major index) of each SM, in SM order (empty: SM k at node k)");
    v.field("link_resistance_mohm", link_resistance_mohm,
            "Resistance of the grid between two neighbouring nodes in milliohm (a metal grid has "
            "some: 0 would leave its LC modes undamped)",
            config::Range<double>{1e-3, 1e6});
    v.field("link_inductance_ph", link_inductance_ph,
            "Inductance of the grid between two neighbouring nodes in picohenry",
            config::Range<double>{1e-3, 1e9});
    std::set<uint32_t> seen;
    // Whether each node exists depends on the SM count when the shape is derived: the
    // platform checks it (PlatformConfig::visit).
    for (size_t i = 0; i < sm_nodes.size(); ++i) {
      v.require(seen.insert(sm_nodes[i]).second, "sm_nodes",
                fmt::format("sm_nodes[{}] = {}: the node already holds an SM", i, sm_nodes[i]));
    }
  }
};

// The network by its elements (pdn.network: elements): a lumped board and package and the die's
// decap, the model Gupta et al. give for the Pentium 4 ("Understanding voltage variations in chip
// multiprocessors using a distributed power-delivery network", DATE 2007), which seed 001's
// GPUVolt scales to the GTX480 (section 2: "a conservative scaling 2x", against the 4x TDP ratio).
// Scaling a network by s parallels s copies of it: every R and L divided by s, every C multiplied
// by s, which halves the impedance at s = 2 and keeps the resonance frequencies.
//
// The circuit: regulator -> board R + L -> board node (decap C + ESR) -> package R + L -> package
// node -> bumps R + L -> die. The package node holds the package decap C in series with its ESR
// and ESL (its own branch to an inner node) and the package planes' capacitance, which Gupta et
// al.'s lumped model leaves out (our nodes hold a capacitor each; 1 nF moves the impedance peaks
// by less than 0.1 %). The die decap and the bumps are shared evenly by the pdn.grid nodes.
struct PdnElementsConfig : config::Section {
  double board_resistance_mohm = 0.094;
  double board_inductance_ph = 21.0;
  double board_capacitance_uf = 240.0;
  double board_esr_mohm = 0.1666;
  double package_resistance_mohm = 1.0;
  double package_inductance_ph = 120.0;
  double package_capacitance_uf = 26.0;
  double package_esr_mohm = 0.5415;
  double package_esl_ph = 5.61;
  double package_plane_capacitance_nf = 1.0;
  double bump_resistance_mohm = 0.3;  // all bumps together
  double bump_inductance_ph = 0.5;
  double die_capacitance_nf = 335.0;
  double die_esr_mohm = 0.1;
  double scale = 2.0;
  double first_order_scale = 1.0;  // sensitivity studies: the first-order peak's impedance

  template <class V>
  void visit(V& v) {
    const config::Range<double> r{1e-6, 1e4}, l{1e-6, 1e6}, c{1e-6, 1e9};
    v.field("board_resistance_mohm", board_resistance_mohm,
            "Board: series resistance, regulator to the board decap, in milliohm", r);
    v.field("board_inductance_ph", board_inductance_ph,
            "Board: series inductance, regulator to the board decap, in picohenry", l);
    v.field("board_capacitance_uf", board_capacitance_uf, "Board decap in microfarad", c);
    v.field("board_esr_mohm", board_esr_mohm, "Board decap's series resistance in milliohm", r);
    v.field("package_resistance_mohm", package_resistance_mohm,
            "Package: series resistance, board to the package node, in milliohm", r);
    v.field("package_inductance_ph", package_inductance_ph,
            "Package: series inductance, board to the package node, in picohenry", l);
    v.field("package_capacitance_uf", package_capacitance_uf, "Package decap in microfarad", c);
    v.field("package_esr_mohm", package_esr_mohm, "Package decap's series resistance in milliohm",
            r);
    v.field("package_esl_ph", package_esl_ph, "Package decap's series inductance in picohenry", l);
    v.field("package_plane_capacitance_nf", package_plane_capacitance_nf,
            "Capacitance of the package planes at the package node in nanofarad (not in the "
            "lumped Pentium 4 model; small)",
            c);
    v.field("bump_resistance_mohm", bump_resistance_mohm,
            "C4 bumps, all together: resistance in milliohm (each grid node's share in parallel)",
            r);
    v.field("bump_inductance_ph", bump_inductance_ph,
            "C4 bumps, all together: inductance in picohenry", l);
    v.field("die_capacitance_nf", die_capacitance_nf,
            "On-die decap in nanofarad, shared evenly by the grid nodes", c);
    v.field("die_esr_mohm", die_esr_mohm, "On-die decap's series resistance in milliohm", r);
    v.field("scale", scale,
            "Copies of this network in parallel: every R and L divided by it, every C multiplied "
            "(seed 001: 2 for the GTX480)",
            config::Range<double>{1e-3, 1e3});
    v.field("first_order_scale", first_order_scale,
            "Impedance of the first-order resonance relative to these values, at its frequency "
            "(for sensitivity studies; the R and L that ring in it multiplied, the die decap "
            "divided; a package variant multiplies it further)",
            config::Range<double>{0.05, 20.0});
  }
};

// The voltage regulator. `sense: none` is an ideal source at the board: the die sees the IR
// drop of the board, package, bumps and grid under its current. A regulator with remote sense
// (the usual arrangement for CPUs and GPUs: sense lines from the package or die back to the
// controller) raises its output until the sensed voltage is back at the supply, with the control
// loop's bandwidth: below it the sensed drop is regulated away (the IR drop to the sense point
// among it), above it the network's resonances ring as with an ideal source. Modelled as an
// integrating loop, dV/dt = 2 pi bandwidth x sensed drop, so the sensed drop is high-passed at the
// bandwidth. Regulator loops cross over at a tenth to a fifth of their switching frequency (a few
// hundred kHz to about 1 MHz for multiphase GPU regulators): 100 kHz, ten times below the
// second-order resonance, which it then leaves within 1 %.
struct PdnRegulatorConfig : config::Section {
  std::string sense = "none";  // none | package | die
  double bandwidth_khz = 100.0;

  template <class V>
  void visit(V& v) {
    v.field("sense", sense,
            "Where the regulator senses the supply: none (an ideal source at the board: the die "
            "sees the whole IR drop), package (the package node: the board's and package's IR "
            "drop regulated away) or die (the mean of the SMs' nodes)",
            config::OneOf{{"none", "package", "die"}});
    v.field("bandwidth_khz", bandwidth_khz,
            "Bandwidth of the regulator's control loop in kHz, with sense package or die (the "
            "sensed drop is regulated away below it); well below the second-order resonance "
            "(a loop fast enough to be unstable on the network is refused)",
            config::Range<double>{0.1, 10000.0});
  }
};

struct PdnConfig : config::Section {
  bool enabled = true;
  std::string network = "impedance";  // impedance (the targets below) | elements
  std::string package = "default";    // default | I | II | III (seed 001's package variants)
  // Calibration for GTX480: platforms/gtx480.yaml gives the basis.
  PdnStageConfig first_order{100.0, 6.5, 3.0, 0.05};
  PdnStageConfig second_order{1.0, 1.8, 2.0, 0.3};
  PdnElementsConfig elements;
  PdnGridConfig grid;
  PdnRegulatorConfig regulator;
  std::string uncore_rail = "separate";  // separate | shared
  // The SM's current seen by the network is the average of its last this many cycles of the
  // energy model's current (1: as the energy model streams it). The energy model already draws
  // each instruction's energy over its pipeline stages (power.sm.execute_stages), so 1; larger
  // values smooth it further, for sensitivity studies.
  uint32_t current_spread_cycles = 1;
  // A detail level: the network steps once per this many core cycles, driven by each SM's mean
  // current over them (discretised exactly for that step); the monitor gets every cycle's
  // voltage interpolated linearly between the steps. 1: every cycle.
  uint32_t step_cycles = 1;
  VoltageMonitorConfig monitor;

  // Seed 001's package variants: I doubles the impedance at both peaks, II at the second-order
  // peak only, III at the first-order peak only.
  double firstOrderScale() const { return package == "I" || package == "III" ? 2.0 : 1.0; }
  double secondOrderScale() const { return package == "I" || package == "II" ? 2.0 : 1.0; }

  template <class V>
  void visit(V& v) {
    v.field("enabled", enabled, "Simulate the power-delivery network (timing mode)");
    v.field("network", network,
            "How the network is given: impedance (by its two resonances, first_order and "
            "second_order: our calibration) or elements (by the board, package and die values "
            "in elements: seed 001's scaled Pentium 4 model)",
            config::OneOf{{"impedance", "elements"}});
    v.field("package", package,
            "Package variant (seed 001): default, I (2x impedance at both peaks), II (2x at the "
            "second-order peak), III (2x at the first-order peak)",
            config::OneOf{{"default", "I", "II", "III"}});
    v.field("first_order", first_order,
            "First-order resonance: die capacitance against bump and package inductance");
    v.field("second_order", second_order,
            "Second-order resonance: package decap against board and package inductance");
    v.field("elements", elements,
            "The network's elements, with network: elements (Gupta et al., DATE 2007, scaled)");
    v.field("grid", grid, "Shared on-chip grid: one node per position, SMs at nodes");
    v.field("regulator", regulator,
            "The voltage regulator: an ideal source at the board (sense: none) or a control loop "
            "that regulates the sensed voltage");
    v.field("uncore_rail", uncore_rail,
            "separate (the memory side is not on the core PDN, as seed 001) or shared (its "
            "current is drawn evenly at the nodes without an SM, or at every node if all hold "
            "one)",
            config::OneOf{{"separate", "shared"}});
    v.field("current_spread_cycles", current_spread_cycles,
            "Moving average of each SM's current over this many cycles before the network (1: "
            "the energy model's stage-distributed current as it is; more: extra smoothing for "
            "sensitivity studies)",
            config::Range<uint32_t>{1, 64});
    v.field("step_cycles", step_cycles,
            "Detail level: step the network once per this many core cycles, with each SM's "
            "mean current over them, and give the monitor each cycle's voltage interpolated "
            "between the steps (1: every cycle; more is faster and smooths droops faster than "
            "the step, docs/pdn.md)",
            config::Range<uint32_t>{1, 64});
    v.field("monitor", monitor, "Voltage monitor: droop events, classification, traces");
    v.require(step_cycles == 1 || monitor.vcd_file.empty(), {"step_cycles", "monitor.vcd_file"},
              fmt::format("step_cycles {} steps the network once per {} cycles, but a VCD file "
                          "traces the voltage as each cycle completes: use step_cycles 1 with "
                          "monitor.vcd_file",
                          step_cycles, step_cycles));
    // Settings of the network or regulator not chosen: refused on the command line.
    if (network == "elements") {
      for (const char* k : {"first_order", "second_order"})
        v.unused(k, "pdn.network is elements, which takes its resonances from pdn.elements");
    } else {
      v.unused("elements", "pdn.network is impedance (set pdn.network=elements to use them)");
    }
    if (regulator.sense == "none")
      v.unused("regulator.bandwidth_khz",
               "pdn.regulator.sense is none (set it to package or die to use the loop)");
    v.require(first_order.frequency_mhz >= 4.0 * second_order.frequency_mhz,
              {"first_order.frequency_mhz", "second_order.frequency_mhz"},
              fmt::format("first_order.frequency_mhz ({}) must be at least 4x "
                          "second_order.frequency_mhz ({}) for the two peaks to be separate",
                          first_order.frequency_mhz, second_order.frequency_mhz));
  }
};

}  // namespace gpusc
