// How the supply voltage scales the energies and powers of a platform, which are given at
// power.nominal_voltage: dynamic energy as C V^2, leakage power by power.leakage_law.
#pragma once

#include <cmath>

#include "common/power_config.hpp"

namespace gpusc::power {

struct VoltageScaling {
  double dynamic = 1.0;  // multiplies every per-event energy (and switching energies)
  double leakage = 1.0;  // multiplies every leakage power
};

inline VoltageScaling voltageScaling(const PowerConfig& p) {
  const double r = p.supply_voltage / p.nominal_voltage;
  VoltageScaling s;
  s.dynamic = r * r;
  if (p.leakage_law == "linear") {
    s.leakage = r;
  } else if (p.leakage_law == "quadratic") {
    s.leakage = r * r;
  } else if (p.leakage_law == "cubic") {
    s.leakage = r * r * r;
  } else {  // exponential: subthreshold leakage current grows exponentially with V (DIBL)
    s.leakage = r * std::exp(p.leakage_exponent * (p.supply_voltage - p.nominal_voltage));
  }
  return s;
}

}  // namespace gpusc::power
