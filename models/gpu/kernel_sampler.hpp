// KernelSampler: kernel-level sampled simulation (sampling.mode: kernel, docs/sampling.md).
//
// Each launch has a signature: what the functional engine observed of it (its warp instructions,
// instruction mix, mean active lanes, and memory units per memory instruction: sectors touched,
// or for atomics the lanes on one address) and its shape (the kernel, grid, block and dynamic
// shared memory). Launches join groups: a launch belongs to the first group of the same shape
// whose first member's warp instructions, memory units per access, every instruction class's
// share and mean active lanes are within `tolerance_pct` of its own (instructions and units
// relative to the first member's; shares and lanes as fractions of their range: a share of 1,
// 32 lanes); a launch that fits none starts a new group. A group's first
// member runs in detail, and so does every `detail_every`-th later one; the others are
// extrapolated.
//
// Warm-up. A group's first member runs with its data not yet in the caches; the ones after it
// find the data the group's earlier launches left there. So the second member runs in detail
// too, and then every `detail_every`-th later one (counting from the first).
//
// Estimates. A group's warm detailed members (all but the first; the first while it is the only
// one) give its cycles per warp instruction (CPI, their mean); an extrapolated launch gets CPI x
// its warp instructions. Its error bound is a 95 % prediction interval for one more launch of
// the group, t x s x sqrt(1 + 1/n): s the relative spread of the warm CPIs (the sample standard
// deviation over the mean) with its degrees of freedom, t Student's t quantile for them, n the
// warm CPIs the estimate averages (1 with only the cold one). s is the group's own with two warm
// members, else pooled over every group that has two (each CPI relative to its group's mean);
// else s is the spread of the group's cold and warm CPI (one degree of freedom), else there is
// no bound (the estimate is then reported without one).
// Pure logic: the Device runs the launches and reports each detailed one's figures here.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/sampling_config.hpp"
#include "func/executor.hpp"
#include "func/state.hpp"

namespace gpusc::gpu {

struct LaunchSignature {
  std::string kernel;  // the kernel's identity (e.g. module file and entry)
  func::Dim3 grid, block;
  uint32_t dynamicShared = 0;
  uint64_t warpInsts = 0;
  std::array<double, func::kNumInstClasses> mix{};  // share of the warp instructions per class
  double activeLanes = 0;                           // mean active lanes per warp instruction
  double memUnits = 0;  // memory units per memory warp instruction (ExecStats::memUnits)

  static LaunchSignature of(std::string kernel, const func::Dim3& grid, const func::Dim3& block,
                            uint32_t dynamicShared, const func::ExecStats& stats);
  bool sameShape(const LaunchSignature& o) const;
  // The largest difference from `o` in % (warp instructions relative to o's; shares and lanes
  // as fractions of their range); infinite for another shape.
  double distancePct(const LaunchSignature& o) const;
};

class KernelSampler {
 public:
  explicit KernelSampler(const SamplingConfig& cfg) : cfg_(cfg) {}

  struct Decision {
    bool detail = true;
    size_t group = 0;
    bool newGroup = false;
  };
  // Which group `sig` joins and whether it runs in detail. Call once per launch, in order.
  Decision decide(const LaunchSignature& sig);
  // Whether a launch of this shape runs in detail whichever of the shape's groups it joins (each
  // is due for a detailed member next), or a new one: its signature then need not be measured
  // before it runs. True when no group has the shape.
  bool detailWhereverItJoins(const LaunchSignature& shape) const;
  // A detailed member of `group` (launch index `launch`) took `cycles`.
  void recordDetailed(size_t group, size_t launch, uint64_t warpInsts, uint64_t cycles);

  enum class BoundFrom { None, Group, Pooled, ColdWarm };
  struct Bound {
    std::optional<double> pct;  // the error bound, in % of the estimate
    BoundFrom from = BoundFrom::None;
  };
  static const char* boundFromName(BoundFrom b);
  // The bound for an extrapolated member of group `g`, given every group's detailed members'
  // CPIs in the order they ran (the first cold).
  static Bound bound(const std::vector<std::vector<double>>& cpis, size_t g);
  // The CPI an extrapolated member gets from its group's detailed CPIs (the warm ones' mean).
  static double warmCpi(const std::vector<double>& cpi);

  struct Estimate {
    double cycles = 0;
    double cpi = 0;  // the group's warm cycles per warp instruction
    Bound bound;
    size_t detailedMembers = 0;
  };
  // The estimate for an extrapolated member of `group` with `warpInsts` (the group has at least
  // one detailed member).
  Estimate estimate(size_t group, uint64_t warpInsts) const;

  size_t groups() const { return groups_.size(); }
  size_t members(size_t group) const { return groups_.at(group).members; }
  const std::vector<size_t>& detailedLaunches(size_t group) const {
    return groups_.at(group).launches;
  }

 private:
  struct Group {
    LaunchSignature first;
    size_t members = 0;
    std::vector<size_t> launches;  // the detailed members' launch indices
  };

  // Whether a group's member number `index` (the first: 0) runs in detail.
  bool detailAt(size_t index) const;

  SamplingConfig cfg_;
  std::vector<Group> groups_;
  // Per group, its detailed members' cycles per warp instruction in the order they ran (bound()'s
  // argument as it is).
  std::vector<std::vector<double>> cpis_;
};

}  // namespace gpusc::gpu
