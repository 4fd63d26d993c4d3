// RTL co-simulation (docs/rtl-cosim.md): per block, which implementation runs.
//   model      the C++ model alone (the default; no RTL is evaluated)
//   verilated  the block's Verilog, verilated, in place of the model
//   lockstep   both on the same inputs every cycle; the run fails (exit code 7) at the first
//              cycle where their outputs differ, naming the block, the SM, the cycle and both
//              values
#pragma once

#include <string>

#include "common/config.hpp"

namespace gpusc {

struct RtlConfig : config::Section {
  std::string droop_predictor = "model";
  std::string droop_predictor_block = "droop_predictor";
  std::string power_switch = "model";
  std::string simd_issue = "model";
  std::string droop_detector = "model";
  std::string drowsy_controller = "model";
  std::string drowsy_controller_block = "drowsy_line_controller";

  static bool isModel(const std::string& mode) { return mode == "model"; }

  template <class V>
  void visit(V& v) {
    const config::OneOf modes{{"model", "verilated", "lockstep"}};
    v.field("droop_predictor", droop_predictor,
            "Local droop predictor of each SM (smoothing.mode local or hierarchical): model, "
            "verilated (models/rtl/verilog/droop_predictor.sv) or lockstep (both, compared every "
            "cycle)",
            modes);
    // The names of rtl::droopPredictorBlocks() (a test checks that the two lists agree).
    v.field("droop_predictor_block", droop_predictor_block,
            "The verilated block rtl.droop_predictor verilated or lockstep runs: droop_predictor "
            "(the model's behaviour) or droop_predictor_3deep (a variant without the 4-cycle "
            "rise; docs/rtl-cosim.md)",
            config::OneOf{{"droop_predictor", "droop_predictor_3deep"}});
    v.field("power_switch", power_switch,
            "Power-gating switch controllers of the SMs, SIMD units and lanes "
            "(power.gating.idle_detect timeout): model, verilated "
            "(models/rtl/verilog/power_gating_switch.sv) or lockstep (both, compared in every "
            "cycle the platform reads them)",
            modes);
    v.field("simd_issue", simd_issue,
            "SIMD issue-control state machine of each SM (power.simd_issue.policy utilisation): "
            "model, verilated (models/rtl/verilog/simd_issue_control.sv) or lockstep (both, "
            "compared at every slice end)",
            modes);
    v.field("droop_detector", droop_detector,
            "Global droop detector of the CTA scheduler (smoothing.mode global or hierarchical, "
            "at most 128 SMs): model, verilated (models/rtl/verilog/global_droop_detector.sv) or "
            "lockstep (both, compared at every report)",
            modes);
    v.field("drowsy_controller", drowsy_controller,
            "Drowsy-line controller of each bank of the L1 data caches and L2 slices whose "
            "power.l1d/l2.drowsy.policy is not none: model, verilated "
            "(models/rtl/verilog/drowsy_line_controller.sv) or lockstep (both, compared at every "
            "hit and fill)",
            modes);
    v.field("drowsy_controller_block", drowsy_controller_block,
            "The verilated block rtl.drowsy_controller verilated or lockstep runs: "
            "drowsy_line_controller (the model's behaviour) or drowsy_line_controller_late (a "
            "broken variant whose timeout is one cycle late, at most 128 frames per bank; "
            "docs/rtl-cosim.md)",
            config::OneOf{{"drowsy_line_controller", "drowsy_line_controller_late"}});
  }
};

}  // namespace gpusc
