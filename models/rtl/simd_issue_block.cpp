// The verilated SIMD issue-control state machine behind SimdIssuePins. No SystemC header may
// come before Verilator's here (see droop_predictor_pins.hpp).
#include "Vsimd_issue_control.h"
#include "rtl/simd_issue_pins.hpp"
#include "rtl/verilated_pins.hpp"

namespace gpusc::rtl {

namespace {

class SimdIssueBlock : public SimdIssuePins {
 public:
  void clock() override {
    m_.startCycle(cycle, [](Vsimd_issue_control& t) { t.slice_end = 0; });
    Vsimd_issue_control& t = m_.top();
    t.rst = rst;
    t.slice_end = sliceEnd;
    t.util = util;
    t.cfg_down1 = down[0];
    t.cfg_down2 = down[1];
    t.cfg_down3 = down[2];
    t.cfg_up2 = up[0];
    t.cfg_up3 = up[1];
    t.cfg_up4 = up[2];
    m_.clock();
    state = t.state;
  }

  void trace(RtlWaves& waves, const std::string& scope, uint64_t periodFs) override {
    m_.trace(waves, scope, periodFs);
  }

 private:
  VerilatedModel<Vsimd_issue_control> m_;
};

}  // namespace

std::unique_ptr<SimdIssuePins> makeSimdIssueBlock() { return std::make_unique<SimdIssueBlock>(); }

}  // namespace gpusc::rtl
