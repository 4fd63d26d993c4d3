// The parameters of each level of power-gating switch, derived from the platform: idle
// detection, timeout, wake latency, and the break-even time that follows from the switching
// energy and the leakage the gated block saves (both scaled to the supply voltage).
#pragma once

#include <cstdint>

#include "common/platform_config.hpp"
#include "power/power_gating_switch.hpp"
#include "power/voltage_scaling.hpp"

namespace gpusc::power {

// Leakage at the nominal voltage of everything a whole SM's switch cuts off: front end,
// register file, shared memory, SIMD lanes and units, SFU, LD/ST and the L1 data cache (a
// unified L1's array holds shared memory too).
inline double smLeakageNominalW(const PlatformConfig& c) {
  const SmPowerConfig& p = c.power.sm;
  return p.frontend_leakage_w + p.rf_leakage_w + (c.sm.unified_l1 ? 0.0 : p.shared_leakage_w) +
         c.sm.simd_units * (p.simd_unit_leakage_w + c.sm.simd_lanes * p.lane_leakage_w) +
         p.sfu_leakage_w + p.ldst_leakage_w + c.power.l1d.leakage_w;
}

inline SwitchParams switchParams(const PlatformConfig& c, const SwitchConfig& s,
                                 double nominalLeakageW) {
  const VoltageScaling v = voltageScaling(c.power);
  SwitchParams p;
  p.detect = parseIdleDetect(c.power.gating.idle_detect);
  p.timeout = s.timeout_cycles;
  p.wakeLatency = s.wake_latency;
  p.rtl = parseSwitchRtlMode(c.rtl.power_switch);
  p.switchPj = s.switch_pj * v.dynamic;
  p.leakageW = nominalLeakageW * v.leakage;
  p.gatedLeakageFraction = s.gated_leakage_fraction;
  p.breakEven =
      breakEvenCycles(p.switchPj, p.leakageW, p.gatedLeakageFraction, 1e-6 / c.gpu.clocks.core_mhz);
  return p;
}

inline SwitchParams smSwitchParams(const PlatformConfig& c) {
  return switchParams(c, c.power.gating.sm, smLeakageNominalW(c));
}
inline SwitchParams simdUnitSwitchParams(const PlatformConfig& c) {
  return switchParams(c, c.power.gating.simd_unit, c.power.sm.simd_unit_leakage_w);
}
inline SwitchParams laneSwitchParams(const PlatformConfig& c) {
  return switchParams(c, c.power.gating.lane, c.power.sm.lane_leakage_w);
}

}  // namespace gpusc::power
