#include "pdn/pdn.hpp"

#include <algorithm>

#include "common/error.hpp"

namespace gpusc::pdn {

namespace {
GridLayout layoutOf(const PdnNetwork& n) {
  GridLayout l;
  l.rows = n.rows();
  l.cols = n.cols();
  for (uint32_t s = 0; s < n.numSms(); ++s) l.nodeOfSm.push_back(n.nodeOfSm(s));
  return l;
}
}  // namespace

Pdn::Pdn(const sc_core::sc_module_name& name, const PlatformConfig& cfg, double idleSmAmps)
    : sc_core::sc_module(name),
      cfg_(cfg),
      numSms_(cfg.gpu.num_sms),
      net_(cfg.pdn, cfg.gpu.clocks.core_mhz * 1e6, cfg.gpu.num_sms),
      monitor_("voltage_monitor", cfg, layoutOf(net_)),
      supply_(cfg.power.supply_voltage),
      idleAmps_(idleSmAmps),
      amps_(numSms_, idleSmAmps),
      slotAmps_(2 * numSms_, idleSmAmps),
      slotEstimate_(2 * numSms_, 0.0),
      slotCycle_(2 * numSms_, ~0ull),
      slotEstimateCycle_(2 * numSms_, ~0ull),
      drop_(numSms_, 0.0),
      volts_(numSms_, 0.0),
      estimator_(cfg.smoothing.local,
                 sm::predictorWeights(power::EnergyTable(cfg), cfg.sm.warp_size)),
      estimate_(numSms_, 0.0),
      spread_(std::max<uint32_t>(cfg.pdn.current_spread_cycles, 1)),
      history_(size_t(numSms_) * std::max<uint32_t>(spread_, 1), idleSmAmps),
      historySum_(numSms_, idleSmAmps * double(spread_)),
      one_(numSms_, 0.0),
      contrib_(size_t(numSms_) * numSms_, 0.0) {}

void Pdn::beginLaunch(uint64_t firstCycle, double uncoreAmps) {
  uncoreAmps_ = cfg_.pdn.uncore_rail == "shared" ? uncoreAmps : 0.0;
  std::vector<double> idle(numSms_, idleAmps_);
  state_ = net_.steadyState(idle.data(), uncoreAmps_);
  perSm_.clear();
  if (monitor_.attribution()) {
    for (uint32_t s = 0; s < numSms_; ++s) {
      std::fill(one_.begin(), one_.end(), 0.0);
      one_[s] = idleAmps_;
      perSm_.push_back(net_.steadyState(one_.data(), 0.0));
    }
  }
  std::fill(slotCycle_.begin(), slotCycle_.end(), ~0ull);
  std::fill(slotEstimateCycle_.begin(), slotEstimateCycle_.end(), ~0ull);
  std::fill(history_.begin(), history_.end(), idleAmps_);
  std::fill(historySum_.begin(), historySum_.end(), idleAmps_ * double(spread_));
  monitor_.beginLaunch();
  next_ = firstCycle;
  active_ = true;
  end_ = ~0ull;
  lateReports_ = 0;
}

void Pdn::onSmActivity(uint32_t sm, uint64_t cycle, const sm::SmActivity& a) {
  if (!active_ || cycle < next_ || cycle >= end_) return;
  // As in onSmCurrent: earlier cycles are complete. Stepping them first keeps cycle c - 2's
  // estimate (same slot) from being overwritten before it is used.
  while (next_ < cycle) stepCycle(next_++);
  slotEstimate_[slot(sm, cycle)] = estimator_.estimate(a);
  slotEstimateCycle_[slot(sm, cycle)] = cycle;
}

void Pdn::onSmCurrent(uint32_t sm, uint64_t firstCycle, uint64_t cycles, double amps) {
  if (!active_ || firstCycle >= end_) return;
  if (firstCycle < next_ || cycles != 1) {
    // Idle stretches the SM skipped, reported when it wakes: the Pdn stepped them with the idle
    // current already. Anything else about a stepped cycle would be lost (a bug).
    if (amps != idleAmps_) ++lateReports_;
    return;
  }
  // A report of cycle c means simulated time has reached cycle c, so no SM can evaluate an
  // earlier cycle any more: those are complete and can be stepped.
  while (next_ < firstCycle) stepCycle(next_++);
  const size_t i = slot(sm, firstCycle);
  if (slotCycle_[i] != firstCycle && slotCycle_[i] != ~0ull && slotCycle_[i] >= next_)
    throw InternalError("Pdn: an SM reported a cycle two cycles ahead of the network");
  slotAmps_[i] = amps;
  slotCycle_[i] = firstCycle;
}

void Pdn::stepCycle(uint64_t c) {
  for (uint32_t s = 0; s < numSms_; ++s) {
    const size_t i = slot(s, c);
    double booked = idleAmps_;  // an SM that did not evaluate cycle c is idle
    estimate_[s] = 0.0;         // and dispatches nothing
    if (slotCycle_[i] == c) booked = slotAmps_[i];
    if (slotEstimateCycle_[i] == c) estimate_[s] = slotEstimate_[i];
    if (spread_ == 1) {
      amps_[s] = booked;
    } else {  // the moving average of the booked currents (pdn.current_spread_cycles)
      double& oldest = history_[size_t(s) * spread_ + c % spread_];
      historySum_[s] += booked - oldest;
      oldest = booked;
      amps_[s] = historySum_[s] / double(spread_);
    }
  }
  net_.step(state_, amps_.data(), uncoreAmps_, drop_.data());
  for (uint32_t s = 0; s < numSms_; ++s) volts_[s] = supply_ - drop_[s];
  monitor_.sample(c, volts_.data(), amps_.data(), estimate_.data());
  if (!perSm_.empty()) {
    for (uint32_t s = 0; s < numSms_; ++s) {
      std::fill(one_.begin(), one_.end(), 0.0);
      one_[s] = amps_[s];
      net_.step(perSm_[s], one_.data(), 0.0, &contrib_[size_t(s) * numSms_]);
    }
    monitor_.attribute(contrib_.data());
  }
}

VoltageReport Pdn::finishLaunch() {
  if (end_ == ~0ull) throw InternalError("Pdn::finishLaunch before endLaunchAt");
  while (next_ < end_) stepCycle(next_++);
  active_ = false;
  return monitor_.finishLaunch(net_.elements());
}

}  // namespace gpusc::pdn
