#include "pdn/droop_analyzer.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <optional>
#include <ostream>
#include <string>

#include <fmt/compile.h>
#include <fmt/format.h>

#include "common/error.hpp"

namespace gpusc::pdn {

namespace {

constexpr double kPi = 3.14159265358979323846;

// Runs the configuration's own field constraints and requirements on a configuration that did
// not come through the YAML reader (e.g. one built in code).
class Checker {
 public:
  template <class T, class... C>
  void field(const char* key, const T& value, const char*, const C&... checks) {
    std::optional<std::string> err;
    ((err = err ? err : config::check(value, checks)), ...);
    if (err) throw InputError(fmt::format("voltage monitor: {}: {}", key, *err));
  }
  void require(bool ok, const char* key, const std::string& message) {
    if (!ok) throw InputError(fmt::format("voltage monitor: {}: {}", key, message));
  }
  void require(bool ok, std::initializer_list<const char*> keys, const std::string& message) {
    if (!ok) require(ok, *keys.begin(), message);
  }
};

std::string num(double v) {
  std::string s;
  DroopAnalyzer::appendNum(s, v);
  return s;
}

}  // namespace

void DroopAnalyzer::appendNum(std::string& out, double v) {
  fmt::format_to(std::back_inserter(out), FMT_COMPILE("{:.9g}"), v);
}

const char* toString(DroopClass c) {
  switch (c) {
    case DroopClass::FirstOrder:
      return "first-order";
    case DroopClass::SecondOrder:
      return "second-order";
    case DroopClass::Balanced:
      return "balanced";
  }
  return "?";
}

DroopAnalyzer::DroopAnalyzer(const VoltageMonitorConfig& cfg, uint32_t numSms, double supplyV,
                             double coreClockHz, GridLayout layout)
    : cfg_(cfg), n_(numSms), supply_(supplyV), clockHz_(coreClockHz), layout_(std::move(layout)) {
  Checker check;
  cfg_.visit(check);
  if (n_ == 0) throw InputError("voltage monitor: no SMs to monitor");
  if (!(supply_ > 0.0))
    throw InputError(fmt::format("voltage monitor: supply voltage {} V is not positive", supply_));
  if (!(clockHz_ > 0.0))
    throw InputError(fmt::format("voltage monitor: core clock {} Hz is not positive", clockHz_));
  const double fc = cfg_.lowpass_mhz * 1e6;
  if (fc >= 0.45 * clockHz_)
    throw InputError(fmt::format(
        "voltage monitor: lowpass_mhz: {} MHz is not below 0.45 x the core clock ({} MHz)",
        cfg_.lowpass_mhz, 0.45 * clockHz_ / 1e6));

  // Layout.
  if (layout_.rows == 0 || layout_.cols == 0)
    throw InputError(
        fmt::format("voltage monitor: the SM grid is {}x{}", layout_.rows, layout_.cols));
  const uint64_t nodes = uint64_t(layout_.rows) * layout_.cols;
  if (layout_.nodeOfSm.empty()) {
    layout_.nodeOfSm.resize(n_);
    std::iota(layout_.nodeOfSm.begin(), layout_.nodeOfSm.end(), 0u);
  }
  if (layout_.nodeOfSm.size() != n_)
    throw InputError(fmt::format("voltage monitor: the layout places {} SMs, the GPU has {}",
                                 layout_.nodeOfSm.size(), n_));
  for (uint32_t s = 0; s < n_; ++s)
    if (layout_.nodeOfSm[s] >= nodes)
      throw InputError(fmt::format("voltage monitor: SM {} is at node {}, outside the {}x{} grid",
                                   s, layout_.nodeOfSm[s], layout_.rows, layout_.cols));

  invSupply_ = 1.0 / supply_;
  // Thresholds as fractions of the supply.
  for (double t : cfg_.thresholds_pct) thr_.push_back(t / 100.0);
  endBelow_ = (cfg_.thresholds_pct.front() - cfg_.hysteresis_pct) / 100.0;
  emergency_ = cfg_.emergency_margin_pct / 100.0;
  emergencyEnd_ = (cfg_.emergency_margin_pct - cfg_.hysteresis_pct) / 100.0;

  // 2nd-order Butterworth low-pass by the bilinear transform, pre-warped at fc.
  const double k = std::tan(kPi * fc / clockHz_);
  const double norm = 1.0 / (1.0 + std::sqrt(2.0) * k + k * k);
  b0_ = k * k * norm;
  b1_ = 2.0 * b0_;
  b2_ = b0_;
  a1_ = 2.0 * (k * k - 1.0) * norm;
  a2_ = (1.0 - std::sqrt(2.0) * k + k * k) * norm;
  // The poles decay as exp(-wc t / sqrt(2)); 14 / wc cycles leave < 1e-4 of a step.
  pad_ = uint32_t(std::ceil(14.0 * clockHz_ / (2.0 * kPi * fc))) + 8;

  ring_ = cfg_.window_before + cfg_.window_after + 2;
  ringV_.assign(size_t(ring_) * n_, supply_);
  ringI_.assign(size_t(ring_) * n_, 0.0);
  ringE_.assign(size_t(ring_) * n_, 0.0);
  work_.assign(size_t(ring_) + pad_, 0.0);
  droop_.assign(n_, 0.0);
  smWorst_.assign(n_, 0.0);
  attrColumn_.assign(n_, 0.0);
  const size_t windowRows = size_t(cfg_.window_before) + cfg_.window_after + 1;
  window_.volts.reserve(windowRows * n_);
  window_.amps.reserve(windowRows * n_);
  cyclesAbove_.assign(thr_.size(), 0);
  perThreshold_.assign(thr_.size(), Counts{});
  histogram_.assign(size_t(std::ceil(100.0 / cfg_.histogram_bin_pct)) + 1, 0);
  traceCur_.assign(n_, 0.0);
  minV_ = std::numeric_limits<double>::infinity();
  worst_ = -std::numeric_limits<double>::infinity();
}

uint64_t DroopAnalyzer::eventsAbove(size_t k) const {
  if (k >= perThreshold_.size())
    throw InternalError(fmt::format("droop threshold index {} out of range", k));
  return perThreshold_[k].events;
}

uint64_t DroopAnalyzer::cyclesAbove(size_t k) const {
  if (k >= cyclesAbove_.size())
    throw InternalError(fmt::format("droop threshold index {} out of range", k));
  return cyclesAbove_[k];
}

uint64_t DroopAnalyzer::classCount(size_t k, DroopClass c) const {
  if (k >= perThreshold_.size())
    throw InternalError(fmt::format("droop threshold index {} out of range", k));
  return perThreshold_[k].byClass[size_t(c)];
}

uint64_t DroopAnalyzer::localCount(size_t k) const {
  if (k >= perThreshold_.size())
    throw InternalError(fmt::format("droop threshold index {} out of range", k));
  return perThreshold_[k].local;
}

// ---- per cycle --------------------------------------------------------------------------------

void DroopAnalyzer::sample(uint64_t cycle, const double* smVolts, const double* smAmps,
                           const double* smEstimateW) {
  if (finished_) throw InternalError("DroopAnalyzer::sample after finish()");
  if (started_ && cycle != lastCycle_ + 1)
    throw InternalError(
        fmt::format("DroopAnalyzer::sample: cycle {} does not follow cycle {}", cycle, lastCycle_));
  if (!started_) {
    started_ = true;
    firstCycle_ = cycle;
    ringPos_ = slot(cycle);
  } else if (++ringPos_ == ring_) {
    ringPos_ = 0;  // = slot(cycle), without a division per cycle
  }
  lastCycle_ = cycle;
  ++samples_;
  wantAttr_ = false;

  const size_t base = ringPos_ * n_;
  std::copy(smVolts, smVolts + n_, ringV_.begin() + long(base));
  std::copy(smAmps, smAmps + n_, ringI_.begin() + long(base));
  if (smEstimateW) std::copy(smEstimateW, smEstimateW + n_, ringE_.begin() + long(base));

  double maxD = -std::numeric_limits<double>::infinity();
  uint32_t maxSm = 0;
  for (uint32_t s = 0; s < n_; ++s) {
    const double d = (supply_ - smVolts[s]) * invSupply_;
    droop_[s] = d;
    if (d > maxD) {
      maxD = d;
      maxSm = s;
    }
  }
  if (!std::isfinite(maxD))
    throw InternalError(
        fmt::format("DroopAnalyzer::sample: no finite SM voltage at cycle {}", cycle));
  minV_ = std::min(minV_, smVolts[maxSm]);  // the SM with the largest droop

  // Voltage trace: per-SM minima over bins aligned to multiples of trace_every.
  if (cfg_.trace_every != 0) {
    if (!traceOpen_ || cycle >= traceBinStart_ + cfg_.trace_every) {
      if (traceOpen_) flushTraceRow();
      traceOpen_ = true;
      traceBinStart_ = cycle - cycle % cfg_.trace_every;
      traceBinCycles_ = 0;
      std::fill(traceCur_.begin(), traceCur_.end(), std::numeric_limits<double>::infinity());
    }
    for (uint32_t s = 0; s < n_; ++s) traceCur_[s] = std::min(traceCur_[s], smVolts[s]);
    ++traceBinCycles_;
  }

  // The overall worst droop.
  if (maxD > worst_) {
    worst_ = maxD;
    worstSm_ = maxSm;
    worstCycle_ = cycle;
    windowPending_ = true;
  }

  for (size_t k = 0; k < thr_.size() && maxD > thr_[k]; ++k) ++cyclesAbove_[k];

  if (maxD > emergency_) {
    ++emergencyCycles_;
    if (!inEmergency_) {
      inEmergency_ = true;
      ++emergencies_;
    }
  } else if (inEmergency_ && maxD < emergencyEnd_) {
    inEmergency_ = false;
  }

  // Droop events.
  auto newWorst = [&] {
    curWorst_ = maxD;
    cur_.worstCycle = cycle;
    cur_.worstSm = maxSm;
    // The predictor's rises before the worst cycle are in the buffers now; an event can last
    // longer than the buffers hold.
    leadRises(cur_);
    wantAttr_ = true;
    attrValid_ = false;
    curDecomposed_ = false;
  };
  if (!open_) {
    if (maxD > thr_.front()) {
      open_ = true;
      cur_ = DroopEvent{};
      cur_.start = cycle;
      std::copy(droop_.begin(), droop_.end(), smWorst_.begin());
      newWorst();
    }
  } else if (maxD < endBelow_) {
    closeEvent(cycle - 1);
  } else {
    for (uint32_t s = 0; s < n_; ++s) smWorst_[s] = std::max(smWorst_[s], droop_[s]);
    if (maxD > curWorst_) newWorst();
  }

  processMaturities(cycle);
}

void DroopAnalyzer::attribute(const double* contrib) {
  if (finished_) throw InternalError("DroopAnalyzer::attribute after finish()");
  if (!wantAttr_) return;  // not the worst cycle of the open event: nothing to keep
  for (uint32_t src = 0; src < n_; ++src)
    attrColumn_[src] = contrib[size_t(src) * n_ + cur_.worstSm];
  attrValid_ = true;
  wantAttr_ = false;
}

void DroopAnalyzer::processMaturities(uint64_t cycle) {
  const uint64_t after = cfg_.window_after;
  if (open_ && !curDecomposed_ && cycle >= cur_.worstCycle + after) {
    curTruncated_ = decompose(cur_.worstSm, cur_.worstCycle, curFirst_, curSecond_);
    curDecomposed_ = true;
  }
  while (!pending_.empty()) {
    Pending& p = pending_.front();
    if (!p.decomposed && cycle < p.ev.worstCycle + after) break;
    finalize(p);
    pending_.pop_front();
  }
  if (windowPending_ && cycle >= worstCycle_ + after) captureWorstWindow();
}

void DroopAnalyzer::finish() {
  if (finished_) return;
  finished_ = true;
  wantAttr_ = false;
  if (!started_) return;
  if (open_) closeEvent(lastCycle_);
  for (Pending& p : pending_) finalize(p);
  pending_.clear();
  if (windowPending_) captureWorstWindow();
  if (traceOpen_) {
    flushTraceRow();
    traceOpen_ = false;
  }
}

// ---- events -----------------------------------------------------------------------------------

void DroopAnalyzer::closeEvent(uint64_t end) {
  cur_.end = end;
  cur_.droopPct = 100.0 * curWorst_;
  spatial(cur_);
  Pending p;
  p.ev = cur_;
  p.frac = curWorst_;
  if (curDecomposed_) {
    p.ev.truncated = curTruncated_;
    classify(p.ev, curFirst_, curSecond_);
    p.decomposed = true;
  }
  pending_.push_back(p);
  open_ = false;
  wantAttr_ = false;
  attrValid_ = false;
  curDecomposed_ = false;
}

bool DroopAnalyzer::decompose(uint32_t sm, uint64_t worst, double& first, double& second) {
  // The filter settles in about a hundred cycles: classify_cycles on each side are enough.
  const uint64_t before = std::min<uint64_t>(cfg_.classify_cycles, cfg_.window_before),
                 after = std::min<uint64_t>(cfg_.classify_cycles, cfg_.window_after);
  const uint64_t lo = worst - firstCycle_ > before ? worst - before : firstCycle_;
  const uint64_t hi = std::min(lastCycle_, worst + after);
  if (worst < lo || worst > hi || lo + ring_ <= lastCycle_)
    throw InternalError(fmt::format(
        "droop decomposition window [{}, {}] around cycle {} is not in the buffer (last {})", lo,
        hi, worst, lastCycle_));
  const size_t len = size_t(hi - lo + 1);
  for (size_t t = 0; t < len; ++t)
    work_[t] = (supply_ - ringV_[slot(lo + t) * n_ + sm]) * invSupply_;
  const double total = work_[size_t(worst - lo)];
  const double last = work_[len - 1];

  // Forward pass from the steady state of the first sample, on through pad_ copies of the last.
  double x1 = work_[0], x2 = x1, y1 = x1, y2 = x1;
  const size_t ext = len + pad_;
  for (size_t t = 0; t < ext; ++t) {
    const double x = t < len ? work_[t] : last;
    const double y = b0_ * x + b1_ * x1 + b2_ * x2 - a1_ * y1 - a2_ * y2;
    x2 = x1;
    x1 = x;
    y2 = y1;
    y1 = y;
    work_[t] = y;
  }
  // Backward pass from the steady state of the forward output's end, down to the worst cycle
  // (the only value needed).
  x1 = x2 = y1 = y2 = work_[ext - 1];
  const size_t at = size_t(worst - lo);
  for (size_t t = ext; t-- > at;) {
    const double x = work_[t];
    const double y = b0_ * x + b1_ * x1 + b2_ * x2 - a1_ * y1 - a2_ * y2;
    x2 = x1;
    x1 = x;
    y2 = y1;
    y1 = y;
    work_[t] = y;
  }
  second = work_[size_t(worst - lo)];
  first = total - second;
  return worst - lo < before || hi - worst < after;
}

void DroopAnalyzer::classify(DroopEvent& e, double first, double second) const {
  const double total = first + second;
  e.secondOrderPct = 100.0 * second;
  e.firstOrderPct = e.droopPct - e.secondOrderPct;
  if (total > 0.0 && first / total > cfg_.dominance)
    e.cls = DroopClass::FirstOrder;
  else if (total > 0.0 && second / total > cfg_.dominance)
    e.cls = DroopClass::SecondOrder;
  else
    e.cls = DroopClass::Balanced;
}

bool DroopAnalyzer::inBlock(uint32_t node, uint32_t r0, uint32_t c0, uint32_t h, uint32_t w) const {
  const uint32_t r = node / layout_.cols, c = node % layout_.cols;
  return r >= r0 && r < r0 + h && c >= c0 && c < c0 + w;
}

// Calls f(r0, c0, h, w) for every 2x2 block (clipped to 1 row or column on a grid that narrow)
// that contains `node`.
template <class F>
void DroopAnalyzer::forEachBlock(uint32_t node, F&& f) const {
  const uint32_t r = node / layout_.cols, c = node % layout_.cols;
  const uint32_t h = std::min(2u, layout_.rows), w = std::min(2u, layout_.cols);
  const uint32_t rLo = r >= h - 1 ? r - (h - 1) : 0, rHi = std::min(r, layout_.rows - h);
  const uint32_t cLo = c >= w - 1 ? c - (w - 1) : 0, cHi = std::min(c, layout_.cols - w);
  for (uint32_t r0 = rLo; r0 <= rHi; ++r0)
    for (uint32_t c0 = cLo; c0 <= cHi; ++c0) f(r0, c0, h, w);
}

void DroopAnalyzer::spatial(DroopEvent& e) const {
  const double need = cfg_.see_fraction * curWorst_;
  const uint32_t worstNode = layout_.nodeOfSm[e.worstSm];
  uint32_t seeing = 0;
  for (uint32_t s = 0; s < n_; ++s)
    if (s == e.worstSm || smWorst_[s] >= need) ++seeing;
  e.smsSeeing = seeing;
  if (seeing == 1) {
    e.cluster = 1;
  } else {
    bool fits = false;
    forEachBlock(worstNode, [&](uint32_t r0, uint32_t c0, uint32_t h, uint32_t w) {
      bool all = true;
      for (uint32_t s = 0; s < n_ && all; ++s)
        if ((s == e.worstSm || smWorst_[s] >= need) && !inBlock(layout_.nodeOfSm[s], r0, c0, h, w))
          all = false;
      fits = fits || all;
    });
    e.cluster = fits ? 4 : 0;
  }
  e.local = e.cluster != 0;

  e.attributed = attrValid_;
  if (attrValid_) {
    const double drop = curWorst_ * supply_;
    double all = 0.0;
    for (uint32_t s = 0; s < n_; ++s) all += attrColumn_[s];
    double best = -std::numeric_limits<double>::infinity();
    forEachBlock(worstNode, [&](uint32_t r0, uint32_t c0, uint32_t h, uint32_t w) {
      double sum = 0.0;
      for (uint32_t s = 0; s < n_; ++s)
        if (inBlock(layout_.nodeOfSm[s], r0, c0, h, w)) sum += attrColumn_[s];
      best = std::max(best, sum);
    });
    e.shareSelf = attrColumn_[e.worstSm] / drop;
    e.shareCluster = best / drop;
    e.shareAll = all / drop;
  }
}

void DroopAnalyzer::Counts::add(const DroopEvent& e) {
  const size_t c = size_t(e.cls);
  ++events;
  ++byClass[c];
  if (e.local) ++local;
  worstPct[c] = std::max(worstPct[c], e.droopPct);
  if (e.attributed) {
    ++attributed[c];
    sumSelf[c] += e.shareSelf;
    sumCluster[c] += e.shareCluster;
    sumAll[c] += e.shareAll;
  }
}

void DroopAnalyzer::leadRises(DroopEvent& e) const {
  // The predictor at cycle c compares its newest entry with the lowest of the k - 1 before it.
  const uint64_t lead = cfg_.lead_cycles;
  const uint64_t from = e.worstCycle > firstCycle_ + lead ? e.worstCycle - lead : firstCycle_;
  const auto est = [&](uint64_t c) { return ringE_[slot(c) * n_ + e.worstSm]; };
  for (double& r : e.rise) r = 0.0;
  for (uint64_t c = from; c < e.worstCycle; ++c) {
    double lowest = std::numeric_limits<double>::infinity();
    for (uint64_t k = 2; k <= 4; ++k) {
      if (c < firstCycle_ + (k - 1)) break;
      lowest = std::min(lowest, est(c - (k - 1)));
      e.rise[k - 2] = std::max(e.rise[k - 2], est(c) - lowest);
    }
  }
}

void DroopAnalyzer::finalize(Pending& p) {
  if (!p.decomposed) {  // split at its worst cycle (with a truncated window at the run's end)
    double first = 0, second = 0;
    p.ev.truncated = decompose(p.ev.worstSm, p.ev.worstCycle, first, second);
    classify(p.ev, first, second);
    p.decomposed = true;
  }
  const DroopEvent& e = p.ev;
  ++finalized_;
  const double bin = std::floor(e.droopPct / cfg_.histogram_bin_pct);
  const size_t b = bin <= 0.0 ? 0 : std::min(size_t(bin), histogram_.size() - 1);
  ++histogram_[b];
  for (size_t k = 0; k < thr_.size() && p.frac > thr_[k]; ++k) perThreshold_[k].add(e);
  if (p.frac >= cfg_.large_droop_pct / 100.0) large_.add(e);
  if (listed_ < cfg_.max_events) {
    ++listed_;
    if (sink_)
      sink_->droopEvent(e);
    else
      events_.push_back(e);
  }
}

// ---- traces -----------------------------------------------------------------------------------

void DroopAnalyzer::captureWorstWindow() {
  const uint64_t before = cfg_.window_before, after = cfg_.window_after;
  const uint64_t lo = worstCycle_ - firstCycle_ > before ? worstCycle_ - before : firstCycle_;
  const uint64_t hi = std::min(lastCycle_, worstCycle_ + after);
  if (lo + ring_ <= lastCycle_)
    throw InternalError("worst-droop window is no longer in the buffer");
  const size_t len = size_t(hi - lo + 1);
  window_.firstCycle = lo;
  window_.length = uint32_t(len);
  window_.volts.resize(len * n_);
  window_.amps.resize(len * n_);
  for (size_t t = 0; t < len; ++t) {
    const size_t src = slot(lo + t) * n_;
    std::copy_n(ringV_.begin() + long(src), n_, window_.volts.begin() + long(t * n_));
    std::copy_n(ringI_.begin() + long(src), n_, window_.amps.begin() + long(t * n_));
  }
  windowPending_ = false;
}

void DroopAnalyzer::flushTraceRow() {
  if (sink_) {
    sink_->traceRow(traceBinStart_, traceBinCycles_, traceCur_.data());
    return;
  }
  traceStart_.push_back(traceBinStart_);
  traceCycles_.push_back(traceBinCycles_);
  traceMin_.insert(traceMin_.end(), traceCur_.begin(), traceCur_.end());
}

// ---- output -----------------------------------------------------------------------------------

nlohmann::json DroopAnalyzer::Counts::toJson(double thresholdPct) const {
  using nlohmann::json;
  json j = json::object();
  j["threshold_pct"] = thresholdPct;
  j["events"] = events;
  json classes = json::object();
  for (size_t c = 0; c < kNumDroopClasses; ++c) {
    json k = json::object();
    k["count"] = byClass[c];
    k["share"] = events ? double(byClass[c]) / double(events) : 0.0;
    k["worst_pct"] = worstPct[c];
    if (attributed[c]) {
      const double n = double(attributed[c]);
      k["attributed"] = attributed[c];
      k["mean_share_self"] = sumSelf[c] / n;
      k["mean_share_cluster"] = sumCluster[c] / n;
      k["mean_share_all"] = sumAll[c] / n;
    }
    classes[toString(DroopClass(c))] = k;
  }
  j["classes"] = classes;
  j["local"] = local;
  j["global"] = events - local;
  return j;
}

nlohmann::json DroopAnalyzer::summary() const {
  using nlohmann::json;
  json j = json::object();
  j["supply_v"] = supply_;
  j["cycles"] = samples_;
  j["min_voltage_v"] = minVoltage();
  json worst = json::object();
  worst["droop_pct"] = worstDroopPct();
  worst["sm"] = worstSm_;
  worst["cycle"] = worstCycle_;
  j["worst"] = worst;
  j["lowpass_mhz"] = cfg_.lowpass_mhz;
  j["dominance"] = cfg_.dominance;
  j["events"] = finalized_;
  j["events_listed"] = listed_;
  json thresholds = json::array();
  for (size_t k = 0; k < thr_.size(); ++k) {
    json t = perThreshold_[k].toJson(cfg_.thresholds_pct[k]);
    t["cycles_above"] = cyclesAbove_[k];
    thresholds.push_back(t);
  }
  j["thresholds"] = thresholds;
  j["large"] = large_.toJson(cfg_.large_droop_pct);
  json em = json::object();
  em["margin_pct"] = cfg_.emergency_margin_pct;
  em["events"] = emergencies_;
  em["cycles"] = emergencyCycles_;
  j["emergencies"] = em;
  json hist = json::object();
  hist["bin_pct"] = cfg_.histogram_bin_pct;
  json bins = json::array();
  for (size_t b = 0; b < histogram_.size(); ++b)
    if (histogram_[b])
      bins.push_back(
          json{{"lo_pct", double(b) * cfg_.histogram_bin_pct}, {"count", histogram_[b]}});
  hist["bins"] = bins;
  j["histogram"] = hist;
  return j;
}

std::string DroopAnalyzer::eventsCsvHeader() {
  return "start,end,worst_cycle,worst_sm,droop_pct,first_order_pct,second_order_pct,class,"
         "sms_seeing,cluster,scope,share_self,share_cluster,share_all,truncated,rise2_w,rise3_w,"
         "rise4_w\n";
}

void DroopAnalyzer::appendEventCsvRow(std::string& out, const DroopEvent& e) {
  auto o = std::back_inserter(out);
  fmt::format_to(o, FMT_COMPILE("{},{},{},{},"), e.start, e.end, e.worstCycle, e.worstSm);
  appendNum(out, e.droopPct);
  out += ',';
  appendNum(out, e.firstOrderPct);
  out += ',';
  appendNum(out, e.secondOrderPct);
  out += ',';
  out += toString(e.cls);
  fmt::format_to(o, FMT_COMPILE(",{},"), e.smsSeeing);
  if (e.cluster == 0)
    out += "all";
  else
    fmt::format_to(o, FMT_COMPILE("{}"), e.cluster);
  out += e.local ? ",local," : ",global,";
  if (e.attributed) {
    appendNum(out, e.shareSelf);
    out += ',';
    appendNum(out, e.shareCluster);
    out += ',';
    appendNum(out, e.shareAll);
  } else {
    out += ",,";
  }
  out += e.truncated ? ",1" : ",0";
  for (double r : e.rise) {
    out += ',';
    appendNum(out, r);
  }
  out += '\n';
}

std::string DroopAnalyzer::traceCsvHeader(uint32_t numSms) {
  std::string h = "start_cycle,cycles,min_v";
  for (uint32_t s = 0; s < numSms; ++s) h += fmt::format(",sm{}_v", s);
  return h + '\n';
}

void DroopAnalyzer::appendTraceCsvRow(std::string& out, uint64_t startCycle, uint32_t cycles,
                                      const double* smMinVolts, uint32_t numSms) {
  fmt::format_to(std::back_inserter(out), FMT_COMPILE("{},{},"), startCycle, cycles);
  appendNum(out, *std::min_element(smMinVolts, smMinVolts + numSms));
  for (uint32_t s = 0; s < numSms; ++s) {
    out += ',';
    appendNum(out, smMinVolts[s]);
  }
  out += '\n';
}

std::string DroopAnalyzer::windowCsvHeader(uint32_t numSms) {
  std::string h = "cycle,offset";
  for (uint32_t s = 0; s < numSms; ++s) h += fmt::format(",sm{}_v", s);
  for (uint32_t s = 0; s < numSms; ++s) h += fmt::format(",sm{}_a", s);
  return h + '\n';
}

void DroopAnalyzer::appendWindowCsvRow(std::string& out, uint64_t cycle, uint64_t worstCycle) {
  fmt::format_to(std::back_inserter(out), FMT_COMPILE("{},{}"), cycle,
                 int64_t(cycle) - int64_t(worstCycle));
}

void DroopAnalyzer::writeEventsCsv(std::ostream& os) const {
  std::string out = eventsCsvHeader();
  for (const DroopEvent& e : events_) appendEventCsvRow(out, e);
  os << out;
}

void DroopAnalyzer::writeTraceCsv(std::ostream& os) const {
  std::string out = traceCsvHeader(n_);
  for (size_t r = 0; r < traceStart_.size(); ++r)
    appendTraceCsvRow(out, traceStart_[r], traceCycles_[r], traceMin_.data() + r * n_, n_);
  os << out;
}

void DroopAnalyzer::writeWorstWindowCsv(std::ostream& os) const {
  os << windowCsv(
      n_, window_.firstCycle, window_.length, worstCycle_,
      [&](uint32_t t, uint32_t s) { return window_.volts[size_t(t) * n_ + s]; },
      [&](uint32_t t, uint32_t s) { return window_.amps[size_t(t) * n_ + s]; });
}

void DroopAnalyzer::writeHistogramCsv(std::ostream& os) const {
  os << "lo_pct,hi_pct,count\n";
  size_t first = histogram_.size(), last = 0;
  for (size_t b = 0; b < histogram_.size(); ++b)
    if (histogram_[b]) {
      first = std::min(first, b);
      last = b;
    }
  for (size_t b = first; b <= last && b < histogram_.size(); ++b)
    os << num(double(b) * cfg_.histogram_bin_pct) << ','
       << num(double(b + 1) * cfg_.histogram_bin_pct) << ',' << histogram_[b] << '\n';
}

}  // namespace gpusc::pdn
