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
//
// Borrowing (`borrow_pct` above 0). A launch that starts a group may instead take the cycles per
// warp instruction of a measured group of its family (the same kernel, block and dynamic shared
// memory) whose first member behaves alike per instruction (memory units, mix and lanes within
// tolerance_pct) and differs in the amount of work (warp instructions, the grid's CTAs) by at
// most borrow_pct: its lender is the nearest such group (the latest of equals). It then runs in
// the functional engine. The borrowing is checked: the first such group of a family, and every
// detail_every-th after it, runs its first member in detail anyway, and the error the lender's
// CPI would have made on it is kept. A check that misses by more than tolerance_pct makes the
// family's next such group a check too. A borrowed group runs members detail_every,
// 2 x detail_every, ... in detail (warm: its first detailed member is then treated as a cold
// one); until it has one, its members get the lender's current warm CPI. Their bound is a 95 %
// prediction interval from the checks' errors: t x the root mean square of the family's (pooled
// over the families with none) with as many degrees of freedom as errors; with no check yet, a
// group does not borrow.
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
  // The same kernel, block and dynamic shared memory (the grid may differ).
  bool sameFamily(const LaunchSignature& o) const;
  // The largest difference from `o` in % (warp instructions relative to o's; shares and lanes
  // as fractions of their range); infinite for another shape.
  double distancePct(const LaunchSignature& o) const;
  // The largest difference in behaviour per instruction: memory units (relative to o's), class
  // shares and active lanes (as fractions of their range), in %.
  double behaviourPct(const LaunchSignature& o) const;
  // The larger difference in the amount of work: warp instructions and the grid's CTAs, each
  // relative to o's, in %.
  double workPct(const LaunchSignature& o) const;
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
  // A detailed member of `group` (launch index `launch`) took `cycles`. When it checks borrowing,
  // the error its lender's CPI would have made on it (relative: lender's / its own - 1).
  std::optional<double> recordDetailed(size_t group, size_t launch, uint64_t warpInsts,
                                       uint64_t cycles);

  enum class BoundFrom { None, Group, Pooled, ColdWarm, Borrowed };
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
  // The estimate for an extrapolated member of `group` with `warpInsts` (the group, or the group
  // it borrows from, has at least one detailed member).
  Estimate estimate(size_t group, uint64_t warpInsts) const;
  // The group whose detailed launches an extrapolated member of `group` is estimated from: its
  // own once it has one, else its lender's.
  size_t estimatedFrom(size_t group) const;
  // The group `group` borrows from, if it does.
  std::optional<size_t> lender(size_t group) const { return groups_.at(group).lender; }

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
    std::optional<size_t> lender;  // borrows its CPI from this group
    // A check of borrowing: the CPI the lender had when this group started, to compare with
    // this group's first detailed member's.
    std::optional<double> checkCpi;
    size_t family = 0;  // index in families_
  };
  // Per family (kernel, block, dynamic shared memory): borrowing's state.
  struct Family {
    LaunchSignature shape;
    size_t candidates = 0;  // new groups that had a lender, since the last failed check
    std::vector<double> errors;
  };

  // Whether a group's member number `index` (the first: 0) runs in detail.
  bool detailAt(const Group& g, size_t index) const;
  size_t familyOf(const LaunchSignature& sig);
  // Whether the next new group of family `f` borrows, given it has a lender.
  bool borrows(const Family& f) const;
  // The measured group of `sig`'s family nearest to it within borrow_pct (the latest of equals).
  std::optional<size_t> lenderFor(const LaunchSignature& sig) const;
  KernelSampler::Bound borrowBound(size_t family) const;

  SamplingConfig cfg_;
  std::vector<Group> groups_;
  // Per group, its detailed members' cycles per warp instruction in the order they ran (bound()'s
  // argument as it is).
  std::vector<std::vector<double>> cpis_;
  std::vector<Family> families_;
  std::vector<double> checkErrors_;
};

}  // namespace gpusc::gpu
