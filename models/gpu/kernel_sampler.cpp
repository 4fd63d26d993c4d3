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

double LaunchSignature::distancePct(const LaunchSignature& o) const {
  if (!sameShape(o)) return std::numeric_limits<double>::infinity();
  double d = 0;
  if (o.warpInsts > 0)
    d = std::abs(double(warpInsts) / double(o.warpInsts) - 1.0);
  else if (warpInsts > 0)
    d = 1.0;
  if (o.memUnits > 0)
    d = std::max(d, std::abs(memUnits / o.memUnits - 1.0));
  else if (memUnits > 0)
    d = 1.0;
  for (size_t c = 0; c < mix.size(); ++c) d = std::max(d, std::abs(mix[c] - o.mix[c]));
  d = std::max(d, std::abs(activeLanes - o.activeLanes) / double(func::kWarpSize));
  return 100.0 * d;
}

bool KernelSampler::detailWhereverItJoins(const LaunchSignature& shape) const {
  for (const Group& g : groups_)
    if (g.first.sameShape(shape) && !detailAt(g.members)) return false;
  return true;
}

bool KernelSampler::detailAt(size_t index) const {
  return index == 1 || index % cfg_.detail_every == 0;
}

KernelSampler::Decision KernelSampler::decide(const LaunchSignature& sig) {
  Decision d;
  for (size_t k = 0; k < groups_.size(); ++k) {
    Group& g = groups_[k];
    if (sig.distancePct(g.first) > cfg_.tolerance_pct) continue;
    const size_t index = g.members++;  // this member's index in the group (the first: 0)
    d.group = k;
    d.detail = detailAt(index);
    return d;
  }
  Group g;
  g.first = sig;
  g.members = 1;
  groups_.push_back(std::move(g));
  cpis_.emplace_back();
  d.group = groups_.size() - 1;
  d.newGroup = true;
  d.detail = true;
  return d;
}

void KernelSampler::recordDetailed(size_t group, size_t launch, uint64_t warpInsts,
                                   uint64_t cycles) {
  Group& g = groups_.at(group);
  g.launches.push_back(launch);
  cpis_[group].push_back(warpInsts ? double(cycles) / double(warpInsts) : 0.0);
}

const char* KernelSampler::boundFromName(BoundFrom b) {
  switch (b) {
    case BoundFrom::Group:
      return "the spread of the group's warm detailed launches";
    case BoundFrom::Pooled:
      return "the spread of warm detailed launches pooled over the groups with two";
    case BoundFrom::ColdWarm:
      return "the difference between the group's cold and warm detailed launch";
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

KernelSampler::Estimate KernelSampler::estimate(size_t group, uint64_t warpInsts) const {
  const std::vector<double>& cpi = cpis_.at(group);
  Estimate e;
  e.detailedMembers = cpi.size();
  if (cpi.empty()) return e;
  e.cpi = warmCpi(cpi);
  e.cycles = e.cpi * double(warpInsts);
  e.bound = bound(cpis_, group);
  return e;
}

}  // namespace gpusc::gpu
