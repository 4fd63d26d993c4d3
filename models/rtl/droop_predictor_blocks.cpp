// The built-in droop-predictor blocks: each verilated class adapted to DroopPredictorPins.
// No SystemC header may come before Verilator's here (see droop_predictor_pins.hpp).
#include "Vdroop_predictor.h"
#include "Vdroop_predictor_3deep.h"
#include "rtl/droop_predictor_pins.hpp"
#include "rtl/fixed_point.hpp"
#include "rtl/verilated_pins.hpp"

#include <memory>

namespace gpusc::rtl {

uint32_t toFixedWatts(double watts) { return toFixed(watts, kPowerFracBits); }

namespace {

// A verilated block with droop_predictor.sv's ports.
template <class V>
class DroopPredictorBlock : public DroopPredictorPins {
 public:
  void clock() override {
    m_.startCycle(cycle, [](V& t) {
      t.push = 0;
      t.predict_en = 0;
      t.clear = 0;
    });
    V& t = m_.top();
    t.rst = rst;
    t.clear = clear;
    t.push = push;
    t.predict_en = predictEn;
    t.power = power;
    t.cfg_thr2 = thr2;
    t.cfg_thr3 = thr3;
    t.cfg_thr4 = thr4;
    t.cfg_throttle_cycles = throttleCycles;
    m_.clock();
    predict = t.predict;
    throttle = t.throttle;
    remaining = t.remaining;
  }
  void trace(RtlWaves& waves, const std::string& scope, uint64_t periodFs) override {
    m_.trace(waves, scope, periodFs);
  }

 private:
  VerilatedModel<V> m_;
};

template <class V>
Registry<DroopPredictorPins>::Entry block(const char* name, const char* doc) {
  return {name, doc, [] { return std::make_unique<DroopPredictorBlock<V>>(); }};
}

}  // namespace

const Registry<DroopPredictorPins>& droopPredictorBlocks() {
  static const Registry<DroopPredictorPins> r(
      "droop predictor RTL block",
      {block<Vdroop_predictor>("droop_predictor",
                               "models/rtl/verilog/droop_predictor.sv: the model's behaviour"),
       block<Vdroop_predictor_3deep>(
           "droop_predictor_3deep",
           "models/rtl/verilog/droop_predictor_3deep.sv: a cheaper variant without the 4-cycle "
           "rise (the worked example of docs/rtl-cosim.md; diverges from the model)")});
  return r;
}

}  // namespace gpusc::rtl
