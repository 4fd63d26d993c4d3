#include "cache/drowsy_line_controller.hpp"

#include <algorithm>

#include "common/platform_config.hpp"

namespace gpusc::cache {

DrowsyLineController::Params DrowsyLineController::paramsOf(const DrowsyConfig& drowsy,
                                                            DrowsyPolicy policy, bool lookahead,
                                                            const CacheConfig& cache) {
  Params p;
  p.policy = policy;
  p.onCycles = policy == DrowsyPolicy::Timeout ? drowsy.timeout_cycles : 1;
  p.wakeLatency = drowsy.wake_latency;
  p.hiddenLatency = drowsy.wake_latency > drowsy.lookahead_cycles
                        ? drowsy.wake_latency - drowsy.lookahead_cycles
                        : 0;
  p.lookahead = lookahead ? drowsy.lookahead_cycles : 0;
  p.sets = cache.sets;
  p.ways = cache.ways;
  return p;
}

DrowsyLineController::DrowsyLineController(const Params& p)
    : p_(p), lastTouch_(size_t(p.sets) * p.ways, kNever) {}

void DrowsyLineController::powerOn(uint64_t cycle) {
  (void)cycle;
  std::fill(lastTouch_.begin(), lastTouch_.end(), kNever);
}

DrowsyLineController::Touch DrowsyLineController::modelTouch(uint32_t set, uint32_t way,
                                                             uint64_t cycle, bool early) {
  uint64_t& last = lastTouch_[size_t(set) * p_.ways + way];
  Touch t;
  if (p_.policy != DrowsyPolicy::None && (last == kNever || cycle >= last + p_.onCycles)) {
    t.wake = true;
    t.waitCycles = early ? p_.hiddenLatency : p_.wakeLatency;
  }
  last = last == kNever ? cycle : std::max(last, cycle);
  return t;
}

bool DrowsyLineController::drowsyAt(uint32_t set, uint32_t way, uint64_t cycle) const {
  if (p_.policy == DrowsyPolicy::None) return false;
  const uint64_t last = lastTouch_[size_t(set) * p_.ways + way];
  return last == kNever || cycle >= last + p_.onCycles;
}

}  // namespace gpusc::cache
