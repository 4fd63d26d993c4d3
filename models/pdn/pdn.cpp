#include "pdn/pdn.hpp"

#if defined(__x86_64__)
#include <emmintrin.h>
#endif

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "common/error.hpp"

namespace gpusc::pdn {

namespace {
// Copies n 8-byte values from src to dst without taking dst's cache lines into this core's cache
// (non-temporal stores, MOVNTI: SSE2, in every x86-64). The ring's slots were last read by the
// worker on another core: plain stores would wait for each line to come back, and the stores
// after them in the store buffer (the SMs' next evaluations') would wait behind them. Copied a
// line-aligned block at a time, the stores fill whole write-combining buffers. They are weakly
// ordered: streamFence() comes before the store that publishes them.
template <class T>
void streamCopy(T* dst, const T* src, size_t n) {
  static_assert(sizeof(T) == 8, "8-byte values");
#if defined(__x86_64__)
  for (size_t i = 0; i < n; ++i) {
    long long bits;
    std::memcpy(&bits, &src[i], sizeof bits);
    _mm_stream_si64(reinterpret_cast<long long*>(&dst[i]), bits);
  }
#else
  std::copy(src, src + n, dst);
#endif
}
void streamFence() {
#if defined(__x86_64__)
  _mm_sfence();
#endif
}

// n values in v, starting at a 64-byte boundary (the returned pointer).
template <class T>
T* lineAligned(std::vector<T>& v, size_t n) {
  v.assign(n + 64 / sizeof(T), T{});
  const uintptr_t p = reinterpret_cast<uintptr_t>(v.data());
  return reinterpret_cast<T*>((p + 63) & ~uintptr_t(63));
}

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
      stepCycles_(std::max<uint32_t>(cfg.pdn.step_cycles, 1)),
      net_(cfg.pdn, cfg.gpu.clocks.core_mhz * 1e6 / stepCycles_, cfg.gpu.num_sms),
      monitor_("voltage_monitor", cfg, layoutOf(net_)),
      supply_(cfg.power.supply_voltage),
      idleAmps_(idleSmAmps),
      slotAmps_(2 * numSms_, idleSmAmps),
      slotEstimate_(2 * numSms_, 0.0),
      slotCycle_(2 * numSms_, ~0ull),
      volts_(numSms_, 0.0),
      estimator_(cfg.smoothing.local,
                 sm::predictorWeights(power::EnergyTable(cfg), cfg.sm.warp_size)),
      spread_(std::max<uint32_t>(cfg.pdn.current_spread_cycles, 1)),
      history_(size_t(numSms_) * std::max<uint32_t>(spread_, 1), idleSmAmps),
      historySum_(numSms_, idleSmAmps * double(spread_)),
      one_(numSms_, 0.0),
      contrib_(size_t(numSms_) * numSms_, 0.0),
      drops_(size_t(PdnNetwork::kStepCycles) * numSms_, 0.0),
      batchCycles_(steppedAsTimePasses() ? 1 : kBatchCycles),
      batchCycle_(batchCycles_, 0),
      batchAmps_(size_t(batchCycles_) * numSms_, 0.0),
      batchEstimates_(size_t(batchCycles_) * numSms_, 0.0) {
  if (stepCycles_ > 1) {
    windowCycle_.assign(stepCycles_, 0);
    windowAmps_.assign(size_t(stepCycles_) * numSms_, 0.0);
    windowEstimates_.assign(size_t(stepCycles_) * numSms_, 0.0);
    windowSum_.assign(numSms_, 0.0);
    windowMean_.assign(numSms_, 0.0);
    dropBefore_.assign(numSms_, 0.0);
    dropAfter_.assign(numSms_, 0.0);
    nodeScratch_.assign(net_.numNodes(), 0.0);
    if (monitor_.attribution()) {
      contribBefore_.assign(size_t(numSms_) * numSms_, 0.0);
      contribAfter_.assign(size_t(numSms_) * numSms_, 0.0);
    }
  }
}

Pdn::~Pdn() {
  if (workers_) workers_->setBackground(nullptr);
}

void Pdn::setWorkers(HostWorkers* workers) {
  if (active_) throw InternalError("Pdn::setWorkers during a launch");
  if (steppedAsTimePasses()) workers = nullptr;
  if (workers_) workers_->setBackground(nullptr);
  workers_ = workers;
  if (!workers_) return;
  // A ring of at most 256 KB, 64 to 1,024 cycles: the workers keep up within far fewer.
  const size_t perCycle = size_t(numSms_) * 2 * sizeof(double);
  ringCycles_ = 1024;
  while (ringCycles_ > 64 && size_t(ringCycles_) * perCycle > (256u << 10)) ringCycles_ /= 2;
  wakeDepth_ = ringCycles_ / 8;
  ringCycle_ = lineAligned(ringCycleStore_, ringCycles_);
  ringAmps_ = lineAligned(ringAmpsStore_, size_t(ringCycles_) * numSms_);
  ringEstimates_ = lineAligned(ringEstimatesStore_, size_t(ringCycles_) * numSms_);
  stageCycle_.assign(kPublish, 0);
  stageAmps_.assign(size_t(kPublish) * numSms_, 0.0);
  stageEstimates_.assign(size_t(kPublish) * numSms_, 0.0);
  gather_.next = 0;
  settleRing();
  workers_->setBackground(this);
}

void Pdn::beginLaunch(uint64_t firstCycle, double uncoreAmps) {
  // A launch that failed may have left cycles in the ring, and a worker may still step them.
  const std::unique_lock<std::mutex> lock = takeStepping();
  settleRing();
  consume_.error = nullptr;
  produce_.failed.store(false);
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
  if (stepCycles_ > 1) startWindows(idle);
  std::fill(slotCycle_.begin(), slotCycle_.end(), ~0ull);
  std::fill(slotAmps_.begin(), slotAmps_.end(), idleAmps_);  // a failed launch may have left some
  std::fill(slotEstimate_.begin(), slotEstimate_.end(), 0.0);
  std::fill(history_.begin(), history_.end(), idleAmps_);
  std::fill(historySum_.begin(), historySum_.end(), idleAmps_ * double(spread_));
  monitor_.beginLaunch();
  batched_ = 0;
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

void Pdn::gatherCycle(uint64_t c, double* __restrict amps, double* __restrict estimates) {
  // An SM that did not evaluate cycle c is idle and dispatches nothing: its slots hold the idle
  // values. They are left so for cycle c + 2.
  double* __restrict booked = &slotAmps_[slot(0, c)];
  double* __restrict estimate = &slotEstimate_[slot(0, c)];
  const double idle = idleAmps_;
  const uint32_t n = numSms_;
  if (spread_ == 1) {
    for (uint32_t s = 0; s < n; ++s) {
      amps[s] = booked[s];
      booked[s] = idle;
      estimates[s] = estimate[s];
      estimate[s] = 0.0;
    }
    return;
  }
  for (uint32_t s = 0; s < n; ++s) {
    // The moving average of the booked currents (pdn.current_spread_cycles).
    const double b = booked[s];
    double& oldest = history_[size_t(s) * spread_ + c % spread_];
    historySum_[s] += b - oldest;
    oldest = b;
    amps[s] = historySum_[s] / double(spread_);
    booked[s] = idle;
    estimates[s] = estimate[s];
    estimate[s] = 0.0;
  }
}

void Pdn::stepCycle(uint64_t c) {
  if (!workers_) {
    gatherCycle(c, &batchAmps_[size_t(batched_) * numSms_],
                &batchEstimates_[size_t(batched_) * numSms_]);
    batchCycle_[batched_] = c;
    if (++batched_ == batchCycles_) stepBatch();
    return;
  }
  const uint64_t h = gather_.next;
  if (h - gather_.tailSeen == ringCycles_) {
    gather_.tailSeen = consume_.tail.load(std::memory_order_acquire);
    if (h - gather_.tailSeen == ringCycles_) stepRing();  // the workers are behind
  }
  if (produce_.failed.load(std::memory_order_relaxed)) stepRing();  // rethrows
  // Into the block of kPublish cycles on this core, copied into the ring when it is published.
  const size_t k = size_t(h % kPublish);
  gatherCycle(c, &stageAmps_[k * numSms_], &stageEstimates_[k * numSms_]);
  stageCycle_[k] = c;
  gather_.next = h + 1;
  if ((h + 1) % kPublish == 0) {
    flushStage();
    // A release store: a sequentially consistent one would wait for every store before it.
    produce_.head.store(h + 1, std::memory_order_release);
    if (h + 1 - gather_.tailSeen >= wakeDepth_) {
      gather_.tailSeen = consume_.tail.load(std::memory_order_acquire);
      if (h + 1 - gather_.tailSeen >= wakeDepth_) {
        // The head's store before the load of the sleepers (a sleeping worker counts itself
        // before it reads the head): one of the two sees the other.
        std::atomic_thread_fence(std::memory_order_seq_cst);
        workers_->wakeForBackground();
      }
    }
  }
}

void Pdn::stepBatch() {
  advance(batchCycle_.data(), batchAmps_.data(), batchEstimates_.data(), batched_);
  batched_ = 0;
}

void Pdn::advance(const uint64_t* cycles, const double* amps, const double* estimates, uint32_t n) {
  consume_.stepped.store(consume_.stepped.load(std::memory_order_relaxed) + n,
                         std::memory_order_relaxed);
  if (stepCycles_ > 1) {
    advanceWindows(cycles, amps, estimates, n);
    return;
  }
  for (uint32_t first = 0; first < n; first += PdnNetwork::kStepCycles) {
    const uint32_t m = std::min(n - first, PdnNetwork::kStepCycles);
    const double* a = amps + size_t(first) * numSms_;
    net_.stepCycles(state_, m, a, numSms_, uncoreAmps_, drops_.data());
    for (uint32_t i = 0; i < m; ++i, a += numSms_) {
      const double* drop = &drops_[size_t(i) * numSms_];
      for (uint32_t s = 0; s < numSms_; ++s) volts_[s] = supply_ - drop[s];
      monitor_.sample(cycles[first + i], volts_.data(), a, estimates + size_t(first + i) * numSms_);
      if (!perSm_.empty()) {
        stepAttribution(a, contrib_.data());
        monitor_.attribute(contrib_.data());
      }
    }
  }
}

void Pdn::stepAttribution(const double* amps, double* contrib) {
  for (uint32_t s = 0; s < numSms_; ++s) {
    std::fill(one_.begin(), one_.end(), 0.0);
    one_[s] = amps[s];
    net_.step(perSm_[s], one_.data(), 0.0, &contrib[size_t(s) * numSms_]);
  }
}

void Pdn::startWindows(const std::vector<double>& idle) {
  windowFill_ = 0;
  std::fill(windowSum_.begin(), windowSum_.end(), 0.0);
  net_.nodeDrops(state_, idle.data(), uncoreAmps_, nodeScratch_.data());
  for (uint32_t s = 0; s < numSms_; ++s) dropBefore_[s] = nodeScratch_[net_.nodeOfSm(s)];
  for (uint32_t src = 0; src < perSm_.size(); ++src) {
    std::fill(one_.begin(), one_.end(), 0.0);
    one_[src] = idleAmps_;
    net_.nodeDrops(perSm_[src], one_.data(), 0.0, nodeScratch_.data());
    for (uint32_t s = 0; s < numSms_; ++s)
      contribBefore_[size_t(src) * numSms_ + s] = nodeScratch_[net_.nodeOfSm(s)];
  }
}

void Pdn::advanceWindows(const uint64_t* cycles, const double* amps, const double* estimates,
                         uint32_t n) {
  for (uint32_t i = 0; i < n; ++i) {
    const double* a = amps + size_t(i) * numSms_;
    const size_t k = size_t(windowFill_) * numSms_;
    windowCycle_[windowFill_] = cycles[i];
    std::copy(a, a + numSms_, &windowAmps_[k]);
    std::copy(estimates + size_t(i) * numSms_, estimates + size_t(i + 1) * numSms_,
              &windowEstimates_[k]);
    for (uint32_t s = 0; s < numSms_; ++s) windowSum_[s] += a[s];
    if (++windowFill_ == stepCycles_) closeWindow(stepCycles_);
  }
}

void Pdn::closeWindow(uint32_t filled) {
  const double n = double(stepCycles_);
  const double rest = double(stepCycles_ - filled) * idleAmps_;
  for (uint32_t s = 0; s < numSms_; ++s) windowMean_[s] = (windowSum_[s] + rest) / n;
  net_.step(state_, windowMean_.data(), uncoreAmps_, dropAfter_.data());
  if (!perSm_.empty()) stepAttribution(windowMean_.data(), contribAfter_.data());
  // Cycle j of the window ends (j + 1) / n of the way from the last step to this one.
  for (uint32_t j = 0; j < filled; ++j) {
    const double f = double(j + 1) / n;
    for (uint32_t s = 0; s < numSms_; ++s)
      volts_[s] = supply_ - (dropBefore_[s] + f * (dropAfter_[s] - dropBefore_[s]));
    monitor_.sample(windowCycle_[j], volts_.data(), &windowAmps_[size_t(j) * numSms_],
                    &windowEstimates_[size_t(j) * numSms_]);
    if (!perSm_.empty()) {
      for (size_t i = 0; i < contrib_.size(); ++i)
        contrib_[i] = contribBefore_[i] + f * (contribAfter_[i] - contribBefore_[i]);
      monitor_.attribute(contrib_.data());
    }
  }
  dropBefore_.swap(dropAfter_);
  contribBefore_.swap(contribAfter_);
  std::fill(windowSum_.begin(), windowSum_.end(), 0.0);
  windowFill_ = 0;
}

bool Pdn::runSome(const HostWorkers::Interrupt& interrupted) {
  if (produce_.head.load(std::memory_order_acquire) ==
          consume_.tail.load(std::memory_order_relaxed) ||
      produce_.failed.load(std::memory_order_relaxed))
    return false;
  std::unique_lock<std::mutex> lock(stepping_, std::try_to_lock);
  if (!lock.owns_lock()) return false;  // the simulation thread is stepping them
  uint64_t t = consume_.tail.load(std::memory_order_relaxed), stepped = 0;
  try {
    for (;;) {
      if (t == consume_.headSeen) {
        consume_.headSeen = produce_.head.load(std::memory_order_acquire);
        if (t == consume_.headSeen) break;
      }
      if (interrupted()) break;
      // At most what the network steps at once: a batch for the workers waits no longer.
      const uint32_t n = uint32_t(
          std::min<uint64_t>({consume_.headSeen - t, PdnNetwork::kStepCycles,
                              ringCycles_ - (t & (ringCycles_ - 1)), kPublish - t % kPublish}));
      advanceSlots(t, n);
      t += n;
      stepped += n;
      if (t % kPublish == 0) {
        consume_.tail.store(t, std::memory_order_release);
        if (produce_.waiting.load(std::memory_order_relaxed)) break;  // it steps the rest
      }
    }
  } catch (...) {  // the simulation thread rethrows it
    consume_.error = std::current_exception();
    produce_.failed.store(true);
  }
  consume_.tail.store(t, std::memory_order_release);
  consume_.byWorkers.fetch_add(stepped, std::memory_order_relaxed);
  return stepped > 0;
}

bool Pdn::wantsWorker() const {
  return produce_.head.load(std::memory_order_seq_cst) -
                 consume_.tail.load(std::memory_order_acquire) >=
             wakeDepth_ &&
         !produce_.failed.load(std::memory_order_relaxed);
}

void Pdn::advanceSlots(uint64_t t, uint32_t n) {
  const size_t k = size_t(t & (ringCycles_ - 1));
  advance(&ringCycle_[k], &ringAmps_[k * numSms_], &ringEstimates_[k * numSms_], n);
}

std::unique_lock<std::mutex> Pdn::takeStepping() {
  produce_.waiting.store(true, std::memory_order_relaxed);
  std::unique_lock<std::mutex> lock(stepping_);  // a worker stepping stops within kPublish cycles
  produce_.waiting.store(false, std::memory_order_relaxed);
  return lock;
}

void Pdn::flushStage() {
  // [flushed, next) lies within one block of kPublish cycles (a block is flushed when it fills),
  // and so within the staging block and, the ring being a multiple of kPublish, the ring.
  const uint64_t from = gather_.flushed, n = gather_.next - from;
  if (n == 0) return;
  const size_t s = size_t(from % kPublish), r = size_t(from & (ringCycles_ - 1));
  streamCopy(&ringCycle_[r], &stageCycle_[s], n);
  streamCopy(&ringAmps_[r * numSms_], &stageAmps_[s * numSms_], n * numSms_);
  streamCopy(&ringEstimates_[r * numSms_], &stageEstimates_[s * numSms_], n * numSms_);
  streamFence();
  gather_.flushed = gather_.next;
}

void Pdn::settleRing() {
  const uint64_t h = gather_.next;
  gather_.flushed = h;  // staged cycles are stepped or dropped with the ring's
  produce_.head.store(h, std::memory_order_release);
  consume_.tail.store(h, std::memory_order_release);
  consume_.headSeen = gather_.tailSeen = h;
}

void Pdn::stepRing() {
  const std::unique_lock<std::mutex> lock = takeStepping();
  if (consume_.error) std::rethrow_exception(consume_.error);
  flushStage();
  for (uint64_t t = consume_.tail.load(std::memory_order_relaxed); t != gather_.next;) {
    const uint32_t n =
        uint32_t(std::min<uint64_t>(gather_.next - t, ringCycles_ - (t & (ringCycles_ - 1))));
    advanceSlots(t, n);
    t += n;
  }
  settleRing();  // everything gathered is stepped, as if the workers had
}

void Pdn::abandonLaunch() noexcept {
  if (!active_) return;
  active_ = false;
  batched_ = 0;  // what waits is dropped, as the ring's is
  if (!workers_) return;
  const std::unique_lock<std::mutex> lock = takeStepping();
  settleRing();  // drop what waits, as if it had been stepped
}

VoltageReport Pdn::finishLaunch() {
  if (end_ == ~0ull) throw InternalError("Pdn::finishLaunch before endLaunchAt");
  while (next_ < end_) stepCycle(next_++);
  if (workers_)
    stepRing();
  else
    stepBatch();
  if (stepCycles_ > 1 && windowFill_ > 0) closeWindow(windowFill_);
  active_ = false;
  nlohmann::json network = net_.elements();
  if (stepCycles_ > 1) {  // the network is discretised for its step, the monitor sees cycles
    network["clock_mhz"] = cfg_.gpu.clocks.core_mhz;
    network["step_cycles"] = stepCycles_;
  }
  return monitor_.finishLaunch(network);
}

}  // namespace gpusc::pdn
