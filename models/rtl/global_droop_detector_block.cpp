// The verilated global droop detector behind GlobalDroopDetectorPins. No SystemC header may
// come before Verilator's here (see droop_predictor_pins.hpp).
#include "Vglobal_droop_detector.h"
#include "rtl/global_droop_detector_pins.hpp"
#include "rtl/verilated_pins.hpp"

namespace gpusc::rtl {

namespace {

class GlobalDroopDetectorBlock : public GlobalDroopDetectorPins {
 public:
  void clock() override {
    m_.startCycle(cycle, [](Vglobal_droop_detector& t) { t.report = 0; });
    Vglobal_droop_detector& t = m_.top();
    t.rst = rst;
    t.report = report;
    for (uint32_t w = 0; w < kMaxSms / 32; ++w) t.active[w] = active[w];
    t.cfg_min_sms = minSms;
    t.cfg_window = window;
    t.cfg_stagger = stagger;
    t.cfg_holdoff = holdoff;
    m_.clock();
    detect = t.detect;
    quiet = t.quiet;
    holdLeft = t.hold_left;
    if (detect)
      for (uint32_t i = 0; i < kMaxSms; ++i) delay[i] = t.delay[i];
  }
  void trace(RtlWaves& waves, const std::string& scope, uint64_t periodFs) override {
    m_.trace(waves, scope, periodFs);
  }

 private:
  VerilatedModel<Vglobal_droop_detector> m_;
};

}  // namespace

std::unique_ptr<GlobalDroopDetectorPins> makeGlobalDroopDetectorBlock() {
  return std::make_unique<GlobalDroopDetectorBlock>();
}

}  // namespace gpusc::rtl
