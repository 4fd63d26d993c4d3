// The verilated power-gating switch controller behind PowerGatingSwitchPins. No SystemC header
// may come before Verilator's here (see droop_predictor_pins.hpp).
#include "Vpower_gating_switch.h"
#include "rtl/power_gating_switch_pins.hpp"
#include "rtl/verilated_pins.hpp"

namespace gpusc::rtl {

namespace {

class PowerGatingSwitchBlock : public PowerGatingSwitchPins {
 public:
  void clock() override {
    m_.startCycle(cycle, [](Vpower_gating_switch& t) { t.acquire = 0; });
    Vpower_gating_switch& t = m_.top();
    t.rst = rst;
    t.use_i = use;
    t.acquire = acquire;
    t.cfg_timeout = timeout;
    t.cfg_wake_latency = wakeLatency;
    m_.clock();
    gated = t.gated;
    waking = t.waking;
    waitCycles = t.wait_cycles;
  }
  void trace(RtlWaves& waves, const std::string& scope, uint64_t periodFs) override {
    m_.trace(waves, scope, periodFs);
  }

 private:
  VerilatedModel<Vpower_gating_switch> m_;
};

}  // namespace

std::unique_ptr<PowerGatingSwitchPins> makePowerGatingSwitchBlock() {
  return std::make_unique<PowerGatingSwitchBlock>();
}

}  // namespace gpusc::rtl
