// The voltage monitor's droop analysis (seed 001, sections 3.2, 3.3 and 3.5): droop event
// thresholds, the emergency margin, the low-pass cut-off that splits a droop into its first-order
// (~100 MHz, package/die resonance) and second-order (~1 MHz, board/package) components, the 60 %
// dominance rule, the spatial "sees the droop" rule, and the sizes of the recorded traces.
//
// All droops are percentages of the nominal supply: droop = 100 * (supply - V) / supply.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "common/config.hpp"

namespace gpusc {

struct VoltageMonitorConfig : config::Section {
  // Droop event thresholds, ascending: an event starts when any SM's droop exceeds the first;
  // the summary counts the events whose worst droop exceeds each one.
  std::vector<double> thresholds_pct{4.0, 5.0, 8.0};
  // An event ends when every SM is back above (first threshold - hysteresis).
  double hysteresis_pct = 0.25;
  // An emergency is an excursion of any SM below supply * (1 - margin); counted as excursions.
  double emergency_margin_pct = 8.0;
  // Events whose worst droop is at or above this are "large" (the paper's 8 %).
  double large_droop_pct = 8.0;
  // Cut-off of the zero-phase low-pass filter: what it passes is the second-order component.
  double lowpass_mhz = 10.0;
  // A component that contributes more than this share of the droop dominates it (60 % rule).
  double dominance = 0.6;
  // An SM sees an event if its own worst droop during the event is >= this x the event's worst.
  double see_fraction = 0.75;
  // Width of the bins of the histogram of event magnitudes.
  double histogram_bin_pct = 0.25;
  // Voltage trace: one row per this many cycles with each SM's minimum voltage (0: no trace).
  uint32_t trace_every = 100;
  // Cycles kept before and after a droop's worst cycle (classification and the worst-droop plot).
  uint32_t window_before = 1024;
  uint32_t window_after = 1024;
  // Events beyond this are counted and classified but not listed.
  uint32_t max_events = 100000;
  // Cycles on each side of a droop's worst cycle that the low-pass filter splitting it sees (at
  // most window_before and window_after).
  uint32_t classify_cycles = 256;
  // Cycles before a droop's worst cycle in which the local predictor's power rises are taken as
  // the droop's features (the training of smoothing.local.thresholds_w).
  uint32_t lead_cycles = 10;
  // Steps one network per SM as well, so each droop records how much of it each SM caused.
  bool attribution = false;
  // A VCD file of every SM's voltage and current (sc_trace); empty: none.
  std::string vcd_file;
  // What the VCD holds: these SMs (empty: all), these signals, these core cycles.
  std::vector<uint32_t> vcd_sms;
  std::string vcd_signals = "both";
  uint64_t vcd_start_cycle = 0, vcd_end_cycle = 0;

  template <class V>
  void visit(V& v) {
    const config::Range<double> pct{0.001, 100.0};
    v.field("thresholds_pct", thresholds_pct,
            "Droop event thresholds in % of the supply, ascending; an event starts above the "
            "first, and the summary counts events above each",
            pct);
    v.field("hysteresis_pct", hysteresis_pct,
            "An event ends when every SM's droop is below the first threshold minus this (%)",
            config::Range<double>{0.0, 100.0});
    v.field("emergency_margin_pct", emergency_margin_pct,
            "An emergency is an excursion of any SM's voltage below supply x (1 - this %)", pct);
    v.field("large_droop_pct", large_droop_pct,
            "Events with a worst droop at or above this (%) are large droops", pct);
    v.field("lowpass_mhz", lowpass_mhz,
            "Cut-off (MHz) of the zero-phase low-pass that separates the second-order droop "
            "component (passed, with the DC/IR drop) from the first-order one",
            config::Range<double>{0.001, 1e5});
    v.field("dominance", dominance,
            "A droop is first- (second-)order dominant when that component exceeds this share",
            config::Range<double>{0.5, 1.0});
    v.field("see_fraction", see_fraction,
            "An SM sees an event if its worst droop in it is at least this x the event's worst",
            config::Range<double>{0.0, 1.0});
    v.field("histogram_bin_pct", histogram_bin_pct,
            "Bin width (%) of the histogram of event magnitudes",
            config::Range<double>{0.01, 10.0});
    v.field("trace_every", trace_every,
            "Voltage trace: one row of per-SM minimum voltages per this many cycles (0: none)",
            config::Range<uint32_t>{0, 1u << 30});
    // Every SM's voltage and current over both windows is kept in a ring and copied whenever a
    // new worst droop matures: 65,536 cycles (94 us at 700 MHz, 65 periods of the 1 MHz
    // second-order resonance) keep that copy at 16 MB for 15 SMs.
    v.field("window_before", window_before,
            "Cycles kept before a droop's worst cycle (classification, worst-droop window)",
            config::Range<uint32_t>{0, 1u << 16});
    v.field("window_after", window_after,
            "Cycles kept after a droop's worst cycle (classification, worst-droop window)",
            config::Range<uint32_t>{0, 1u << 16});
    v.field("max_events", max_events,
            "Events listed in the event file; later events are counted but not listed",
            config::Range<uint32_t>{0, 1u << 30});
    v.field("classify_cycles", classify_cycles,
            "Cycles on each side of a droop that the first/second-order split filters (the "
            "10 MHz low-pass settles in about 100 cycles at 700 MHz)",
            config::Range<uint32_t>{16, 1u << 20});
    v.field("lead_cycles", lead_cycles,
            "Cycles before a droop's worst cycle whose predictor power rises are its features",
            config::Range<uint32_t>{1, 1u << 16});
    v.field("attribution", attribution,
            "Attribute each droop to the SMs that caused it (one network per SM; slower)");
    v.field("vcd_file", vcd_file,
            "VCD file of every SM's voltage and current (gpusc run --vcd sets it); empty: none");
    v.field("vcd_sms", vcd_sms,
            "SMs whose signals the VCD holds (gpusc run --vcd-sms); empty: every SM");
    v.field("vcd_signals", vcd_signals, "Signals the VCD holds per SM (gpusc run --vcd-signals)",
            config::OneOf{{"both", "volts", "amps"}});
    v.field("vcd_start_cycle", vcd_start_cycle,
            "First core cycle the VCD records (gpusc run --vcd-cycles START:END)");
    v.field("vcd_end_cycle", vcd_end_cycle,
            "Core cycle the VCD stops recording at, exclusive (0: the end of the run)");
    v.require(vcd_end_cycle == 0 || vcd_end_cycle > vcd_start_cycle,
              {"vcd_end_cycle", "vcd_start_cycle"},
              fmt::format("vcd_end_cycle ({}) must be above vcd_start_cycle ({}), or 0",
                          vcd_end_cycle, vcd_start_cycle));
    v.require(lead_cycles + 4 <= window_before, {"lead_cycles", "window_before"},
              fmt::format("lead_cycles ({}) + 4 must not exceed window_before ({})", lead_cycles,
                          window_before));
    v.require(!thresholds_pct.empty(), "thresholds_pct", "needs at least one threshold");
    for (size_t i = 1; i < thresholds_pct.size(); ++i)
      v.require(thresholds_pct[i] > thresholds_pct[i - 1], "thresholds_pct",
                fmt::format("thresholds must be strictly ascending ({} after {})",
                            thresholds_pct[i], thresholds_pct[i - 1]));
    v.require(thresholds_pct.empty() || hysteresis_pct < thresholds_pct.front(),
              {"hysteresis_pct", "thresholds_pct"},
              fmt::format("hysteresis {} must be below the first threshold", hysteresis_pct));
  }
};

}  // namespace gpusc
