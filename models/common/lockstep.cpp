#include "common/lockstep.hpp"

#include <fmt/format.h>
#include <systemc>

#include "common/error.hpp"

namespace gpusc {

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
