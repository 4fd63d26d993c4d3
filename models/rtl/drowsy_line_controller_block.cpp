// The verilated drowsy-line controllers behind DrowsyLineControllerPins. No SystemC header may
// come before Verilator's here (see droop_predictor_pins.hpp).
#include <type_traits>

#include "Vdrowsy_line_controller.h"
#include "Vdrowsy_line_controller_1024.h"
#include "Vdrowsy_line_controller_512.h"
#include "Vdrowsy_line_controller_late.h"
#include "rtl/drowsy_line_controller_pins.hpp"
#include "rtl/verilated_pins.hpp"

namespace gpusc::rtl {

namespace {

// The `drowsy` output: a scalar for up to 64 frames, else Verilator's wide word array.
template <class T>
bool bitOf(const T& v, uint32_t f) {
  if constexpr (std::is_integral_v<T>)
    return (v >> f) & 1u;
  else
    return (v[f / 32] >> (f % 32)) & 1u;
}

template <class V, uint32_t kFrames>
class DrowsyLineControllerBlock : public DrowsyLineControllerPins {
 public:
  void clock() override {
    m_.startCycle(cycle, [](V& t) {
      t.access = 0;
      t.early = 0;
    });
    V& t = m_.top();
    t.rst = rst;
    t.access = access;
    t.frame = frame;
    t.early = early;
    t.cfg_timeout_policy = timeoutPolicy;
    t.cfg_timeout = timeout;
    t.cfg_wake_latency = wakeLatency;
    t.cfg_lookahead = lookahead;
    m_.clock([&] {
      wake = t.wake;
      waitCycles = t.wait_cycles;
    });
    quiet = t.quiet;
  }
  bool drowsy(uint32_t f) const override {
    return f < kFrames && bitOf(const_cast<VerilatedModel<V>&>(m_).top().drowsy, f);
  }
  uint32_t frames() const override { return kFrames; }
  void trace(RtlWaves& waves, const std::string& scope, uint64_t periodFs) override {
    m_.trace(waves, scope, periodFs);
  }

 private:
  VerilatedModel<V> m_;
};

}  // namespace

std::unique_ptr<DrowsyLineControllerPins> makeDrowsyLineControllerBlock(uint32_t frames) {
  if (frames <= 128)
    return std::make_unique<DrowsyLineControllerBlock<Vdrowsy_line_controller, 128>>();
  if (frames <= 512)
    return std::make_unique<DrowsyLineControllerBlock<Vdrowsy_line_controller_512, 512>>();
  if (frames <= 1024)
    return std::make_unique<DrowsyLineControllerBlock<Vdrowsy_line_controller_1024, 1024>>();
  return nullptr;
}

std::unique_ptr<DrowsyLineControllerPins> makeLateDrowsyLineControllerBlock() {
  return std::make_unique<DrowsyLineControllerBlock<Vdrowsy_line_controller_late, 128>>();
}

}  // namespace gpusc::rtl
