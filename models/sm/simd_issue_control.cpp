#include "sm/simd_issue_control.hpp"

#include <memory>

#include "common/bits.hpp"

namespace gpusc::sm {

namespace {

class NoIssueControl : public SimdIssuePolicy {
 public:
  bool adaptive() const override { return false; }
  uint32_t next(uint32_t, double) const override { return 1; }
};

class UtilisationIssueControl : public SimdIssuePolicy {
 public:
  explicit UtilisationIssueControl(const SimdIssueConfig& c)
      : down_{c.down_thresholds[0], c.down_thresholds[1], c.down_thresholds[2]},
        up_{c.up_thresholds[0], c.up_thresholds[1], c.up_thresholds[2]} {}
  bool adaptive() const override { return true; }
  uint32_t next(uint32_t state, double u) const override {
    if (state < kIssueStates && u < down_[state - 1]) return state + 1;
    if (state > 1 && u >= up_[state - 2]) return state - 1;
    return state;
  }

 private:
  double down_[kIssueStates - 1], up_[kIssueStates - 1];
};

}  // namespace

const Registry<SimdIssuePolicy, const SimdIssueConfig&>& simdIssuePolicies() {
  static const Registry<SimdIssuePolicy, const SimdIssueConfig&> registry(
      "SIMD issue control policy",
      {{"none", "every SIMD unit with all its lanes",
        [](const SimdIssueConfig&) { return std::make_unique<NoIssueControl>(); }},
       {"utilisation",
        "seed 002's four states (split, one unit, both) chosen per slice from the lane "
        "utilisation, with hysteresis",
        [](const SimdIssueConfig& c) { return std::make_unique<UtilisationIssueControl>(c); }}});
  return registry;
}

SimdUnitMode simdUnitMode(uint32_t state, uint32_t unit) {
  SimdUnitMode m;
  switch (state) {
    case 2:
      m.split = unit > 0;
      break;
    case 3:
      m.enabled = unit == 0;
      break;
    case 4:
      m.enabled = unit == 0;
      m.split = true;
      break;
    default:
      break;
  }
  return m;
}

uint64_t simdLaneMask(uint32_t executed, uint32_t lanes, uint32_t warpSize, bool compact) {
  if (lanes == 0) return 0;
  const uint32_t passes = (warpSize + lanes - 1) / lanes;
  if (compact) {
    const uint32_t k = popcount32(executed);
    const uint32_t used = (k + passes - 1) / passes;
    return used >= 64 ? ~0ull : (1ull << used) - 1;
  }
  if (lanes >= 32) return executed;
  const uint64_t low = (1ull << lanes) - 1;
  uint64_t m = 0;
  for (uint32_t p = 0; p < passes; ++p) m |= (uint64_t(executed) >> (p * lanes)) & low;
  return m;
}

}  // namespace gpusc::sm
