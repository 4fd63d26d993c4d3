#include "gpu/kernel_sampler.hpp"

#include <cmath>
#include <limits>
#include <numeric>

#include "common/statistics.hpp"

namespace gpusc::gpu {

LaunchSignature LaunchSignature::of(std::string kernel, const func::Dim3& grid,
                                    const func::Dim3& block, uint32_t dynamicShared,
                                    const func::ExecStats& stats) {
  LaunchSignature s;
  s.kernel = std::move(kernel);
  s.grid = grid;
  s.block = block;
  s.dynamicShared = dynamicShared;
  s.warpInsts = stats.warpInsts;
  if (stats.warpInsts > 0) {
    for (int c = 0; c < func::kNumInstClasses; ++c)
      s.mix[size_t(c)] = double(stats.byClass[c]) / double(stats.warpInsts);
    s.activeLanes = double(stats.threadInsts) / double(stats.warpInsts);
  }
  if (stats.memInsts > 0) s.memUnits = double(stats.memUnits) / double(stats.memInsts);
  return s;
}

bool LaunchSignature::sameShape(const LaunchSignature& o) const {
  return kernel == o.kernel && grid.x == o.grid.x && grid.y == o.grid.y && grid.z == o.grid.z &&
         block.x == o.block.x && block.y == o.block.y && block.z == o.block.z &&
         dynamicShared == o.dynamicShared;
}

bool LaunchSignature::sameFamily(const LaunchSignature& o) const {
  return kernel == o.kernel && block.x == o.block.x && block.y == o.block.y &&
         block.z == o.block.z && dynamicShared == o.dynamicShared;
}

double LaunchSignature::behaviourPct(const LaunchSignature& o) const {
  double d = 0;
  if (o.memUnits > 0)
    d = std::abs(memUnits / o.memUnits - 1.0);
  else if (memUnits > 0)
    d = 1.0;
  for (size_t c = 0; c < mix.size(); ++c) d = std::max(d, std::abs(mix[c] - o.mix[c]));
  d = std::max(d, std::abs(activeLanes - o.activeLanes) / double(func::kWarpSize));
  return 100.0 * d;
}

double LaunchSignature::workPct(const LaunchSignature& o) const {
  double d = 0;
  if (o.warpInsts > 0)
    d = std::abs(double(warpInsts) / double(o.warpInsts) - 1.0);
  else if (warpInsts > 0)
    d = 1.0;
  const uint64_t ctas = grid.count(), oCtas = o.grid.count();
  if (oCtas > 0) d = std::max(d, std::abs(double(ctas) / double(oCtas) - 1.0));
  return 100.0 * d;
}

double LaunchSignature::distancePct(const LaunchSignature& o) const {
  if (!sameShape(o)) return std::numeric_limits<double>::infinity();
  return std::max(workPct(o), behaviourPct(o));
}

bool KernelSampler::detailWhereverItJoins(const LaunchSignature& shape) const {
  for (const Group& g : groups_)
    if (g.first.sameShape(shape) && !detailAt(g, g.members)) return false;
  // A new group of the family might borrow.
  if (cfg_.borrow_pct > 0)
    for (const Family& f : families_)
      if (f.shape.sameFamily(shape) && borrows(f)) return false;
  return true;
}

bool KernelSampler::detailAt(const Group& g, size_t index) const {
  if (g.lender) return index > 0 && index % cfg_.detail_every == 0;
  return index == 1 || index % cfg_.detail_every == 0;
}

size_t KernelSampler::familyOf(const LaunchSignature& sig) {
  for (size_t k = 0; k < families_.size(); ++k)
    if (families_[k].shape.sameFamily(sig)) return k;
  Family f;
  f.shape = sig;
  families_.push_back(std::move(f));
  return families_.size() - 1;
}

bool KernelSampler::borrows(const Family& f) const {
  // Some check has measured borrowing's error, and this is not the family's check.
  return !checkErrors_.empty() && f.candidates % cfg_.detail_every != 0;
}

std::optional<size_t> KernelSampler::lenderFor(const LaunchSignature& sig) const {
  // The same behaviour per instruction (mix, lanes, memory units) within tolerance_pct, as a
  // group's members; only the amount of work (warp instructions, CTAs) may differ more.
  std::optional<size_t> best;
  double bestPct = std::numeric_limits<double>::infinity();
  for (size_t k = 0; k < groups_.size(); ++k) {
    const LaunchSignature& o = groups_[k].first;
    if (cpis_[k].empty() || !sig.sameFamily(o)) continue;  // lend measured CPIs only
    const double behaviour = sig.behaviourPct(o), work = sig.workPct(o);
    if (behaviour > cfg_.tolerance_pct || work > cfg_.borrow_pct) continue;
    const double pct = std::max(behaviour, work);
    if (pct <= bestPct) {  // the latest of equals
      best = k;
      bestPct = pct;
    }
  }
  return best;
}

KernelSampler::Decision KernelSampler::decide(const LaunchSignature& sig) {
  Decision d;
  for (size_t k = 0; k < groups_.size(); ++k) {
    Group& g = groups_[k];
    if (sig.distancePct(g.first) > cfg_.tolerance_pct) continue;
    const size_t index = g.members++;  // this member's index in the group (the first: 0)
    d.group = k;
    d.detail = detailAt(g, index);
    return d;
  }
  Group g;
  g.first = sig;
  g.members = 1;
  g.family = familyOf(sig);
  d.detail = true;
  if (cfg_.borrow_pct > 0) {
    if (const std::optional<size_t> lender = lenderFor(sig)) {
      Family& f = families_[g.family];
      if (borrows(f)) {
        g.lender = lender;
        d.detail = false;
      } else {
        g.checkCpi = warmCpi(cpis_[*lender]);
      }
      ++f.candidates;
    }
  }
  groups_.push_back(std::move(g));
  cpis_.emplace_back();
  d.group = groups_.size() - 1;
  d.newGroup = true;
  return d;
}

std::optional<double> KernelSampler::recordDetailed(size_t group, size_t launch, uint64_t warpInsts,
                                                    uint64_t cycles) {
  Group& g = groups_.at(group);
  g.launches.push_back(launch);
  const double cpi = warpInsts ? double(cycles) / double(warpInsts) : 0.0;
  cpis_[group].push_back(cpi);
  if (g.checkCpi && *g.checkCpi > 0 && cpi > 0 && cpis_[group].size() == 1) {
    // A check: the error the lender's CPI would have made on this group's first member.
    const double e = *g.checkCpi / cpi - 1.0;
    Family& f = families_[g.family];
    f.errors.push_back(e);
    checkErrors_.push_back(e);
    if (100.0 * std::abs(e) > cfg_.tolerance_pct) f.candidates = 0;  // the next one checks too
    return e;
  }
  return std::nullopt;
}

const char* KernelSampler::boundFromName(BoundFrom b) {
  switch (b) {
    case BoundFrom::Group:
      return "the spread of the group's warm detailed launches";
    case BoundFrom::Pooled:
      return "the spread of warm detailed launches pooled over the groups with two";
    case BoundFrom::ColdWarm:
      return "the difference between the group's cold and warm detailed launch";
    case BoundFrom::Borrowed:
      return "the errors of borrowed CPIs measured at the checks of borrowing";
    case BoundFrom::None:
      break;
  }
  return "none: the group has one detailed launch and no group has two warm ones";
}

double KernelSampler::warmCpi(const std::vector<double>& cpi) {
  if (cpi.empty()) return 0;
  if (cpi.size() == 1) return cpi[0];
  return std::accumulate(cpi.begin() + 1, cpi.end(), 0.0) / double(cpi.size() - 1);
}

namespace {

// The warm CPIs' sum of squared relative deviations from their mean, and its degrees of freedom.
std::pair<double, size_t> warmDeviations(const std::vector<double>& cpi) {
  if (cpi.size() < 3) return {0.0, 0};
  const double mean = KernelSampler::warmCpi(cpi);
  if (!(mean > 0)) return {0.0, 0};
  double ss = 0;
  for (size_t k = 1; k < cpi.size(); ++k) ss += (cpi[k] / mean - 1) * (cpi[k] / mean - 1);
  return {ss, cpi.size() - 2};
}

}  // namespace

KernelSampler::Bound KernelSampler::bound(const std::vector<std::vector<double>>& cpis, size_t g) {
  Bound b;
  const std::vector<double>& own = cpis.at(g);
  // The estimate is the mean of the group's n warm CPIs (the cold one's while it is alone): a
  // launch it stands for lies within t x s x sqrt(1 + 1/n) of it, 95 % of the time, for normal
  // scatter of spread s estimated with dof degrees of freedom (a prediction interval).
  const size_t n = own.size() >= 2 ? own.size() - 1 : 1;
  auto interval = [&](double ss, size_t dof) {
    return 100.0 * studentT95(dof) * std::sqrt(ss / double(dof)) * std::sqrt(1.0 + 1.0 / double(n));
  };
  if (const auto [ss, dof] = warmDeviations(own); dof > 0) {
    b.pct = interval(ss, dof);
    b.from = BoundFrom::Group;
    return b;
  }
  double ss = 0;
  size_t dof = 0;
  for (const auto& c : cpis) {
    const auto [s, d] = warmDeviations(c);
    ss += s;
    dof += d;
  }
  if (dof > 0) {
    b.pct = interval(ss, dof);
    b.from = BoundFrom::Pooled;
    return b;
  }
  if (own.size() == 2 && own[1] > 0) {
    // The cold and the warm CPI are the only two the group has: their spread, |d| / sqrt(2)
    // relative to the warm one, with one degree of freedom (the cold launch's colder caches make
    // it the larger, if anything).
    const double d = own[0] / own[1] - 1.0;
    b.pct = interval(d * d / 2.0, 1);
    b.from = BoundFrom::ColdWarm;
  }
  return b;
}

size_t KernelSampler::estimatedFrom(size_t group) const {
  const Group& g = groups_.at(group);
  return cpis_[group].empty() && g.lender ? *g.lender : group;
}

KernelSampler::Bound KernelSampler::borrowBound(size_t family) const {
  const std::vector<double>& own = families_.at(family).errors;
  const std::vector<double>& errors = own.empty() ? checkErrors_ : own;
  Bound b;
  if (errors.empty()) return b;
  // The checks' errors are those of one more borrowed estimate: a 95 % prediction interval of
  // t x their root mean square (about zero: a borrowed CPI is meant to be unbiased), with as
  // many degrees of freedom as errors.
  double ss = 0;
  for (double e : errors) ss += e * e;
  b.pct = 100.0 * studentT95(errors.size()) * std::sqrt(ss / double(errors.size()));
  b.from = BoundFrom::Borrowed;
  return b;
}

KernelSampler::Estimate KernelSampler::estimate(size_t group, uint64_t warpInsts) const {
  const size_t from = estimatedFrom(group);
  const std::vector<double>& cpi = cpis_.at(from);
  Estimate e;
  e.detailedMembers = cpi.size();
  if (cpi.empty()) return e;
  e.cpi = warmCpi(cpi);
  e.cycles = e.cpi * double(warpInsts);
  e.bound = from == group ? bound(cpis_, group) : borrowBound(groups_[group].family);
  return e;
}

}  // namespace gpusc::gpu
