#include "common/lockstep.hpp"

#include <fmt/format.h>
#include <systemc>

#include "common/error.hpp"
#include "common/rtl_mode.hpp"

namespace gpusc {

RtlMode parseRtlMode(const char* key, const std::string& value) {
  if (value == "model") return RtlMode::Model;
  if (value == "verilated") return RtlMode::Verilated;
  if (value == "lockstep") return RtlMode::Lockstep;
  throw InputError(fmt::format("{}: '{}' is not one of: model, verilated, lockstep", key, value));
}

void LockstepMonitor::diverged(const char* block, const std::string& instance, uint64_t cycle,
                               const char* signal, uint64_t model, uint64_t rtl) {
  if (!divergence_.empty()) return;  // the first one is reported
  divergence_ = fmt::format(
      "rtl lockstep: block {} of {} diverged at cycle {}: {} is {} in the model, {} in the RTL",
      block, instance, cycle, signal, model, rtl);
  if (!sc_core::sc_is_running()) throw LockstepDivergence(divergence_);
  sc_core::sc_pause();  // the timing engine throws it when sc_start returns
}

}  // namespace gpusc
