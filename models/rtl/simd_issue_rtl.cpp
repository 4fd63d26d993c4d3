#include "rtl/simd_issue_rtl.hpp"

#include <fmt/format.h>

#include "common/error.hpp"
#include "common/platform_config.hpp"
#include "common/rtl_mode.hpp"
#include "rtl/fixed_point.hpp"

namespace gpusc::rtl {

namespace {

constexpr uint32_t kOne = 1u << kUtilFracBits;  // 1.0, the largest utilisation and threshold

uint32_t toFixedFraction(double v) { return toFixed(v, kUtilFracBits, kOne); }

}  // namespace

SimdIssueTransactor::SimdIssueTransactor(const SimdIssueConfig& cfg) : pins_(makeSimdIssueBlock()) {
  if (cfg.down_thresholds.size() != 3 || cfg.up_thresholds.size() != 3)
    throw InputError("power.simd_issue: the RTL needs 3 down and 3 up thresholds");
  for (int i = 0; i < 3; ++i) {
    pins_->down[i] = toFixedFraction(cfg.down_thresholds[size_t(i)]);
    pins_->up[i] = toFixedFraction(cfg.up_thresholds[size_t(i)]);
  }
  reset();
}

void SimdIssueTransactor::reset() {
  pins_->rst = true;
  pins_->sliceEnd = false;
  pins_->clock();
  pins_->rst = false;
  ++clocks_;
}

uint32_t SimdIssueTransactor::sliceEnd(double utilisation, uint64_t cycle) {
  pins_->cycle = cycle;
  pins_->sliceEnd = true;
  pins_->util = toFixedFraction(utilisation);
  pins_->clock();
  pins_->sliceEnd = false;
  ++clocks_;
  return pins_->state;
}

RtlSimdIssuePolicy::RtlSimdIssuePolicy(std::unique_ptr<sm::SimdIssuePolicy> model,
                                       SimdIssueTransactor rtl, bool lockstep, std::string instance)
    : model_(std::move(model)),
      rtl_(std::move(rtl)),
      lockstep_on_(lockstep),
      instance_(std::move(instance)) {}

uint32_t RtlSimdIssuePolicy::nextAt(uint64_t end, uint32_t state, double utilisation) {
  const uint32_t r = rtl_.sliceEnd(utilisation, end);
  if (!lockstep_on_) return r;
  const uint32_t m = model_->next(state, utilisation);
  lockstep_.check("simd_issue_control", instance_, end, "state", m, r);
  return m;
}

}  // namespace gpusc::rtl

namespace gpusc::sm {

std::unique_ptr<SimdIssuePolicy> makeSimdIssuePolicy(const PlatformConfig& cfg, uint32_t smId,
                                                     const SimdIssueRegistry& registry) {
  const SimdIssueConfig& c = cfg.power.simd_issue;
  auto model = registry.create(c.policy, c);
  const RtlMode mode = parseRtlMode("rtl.simd_issue", cfg.rtl.simd_issue);
  if (mode == RtlMode::Model) return model;
  return std::make_unique<rtl::RtlSimdIssuePolicy>(std::move(model), rtl::SimdIssueTransactor(c),
                                                   mode == RtlMode::Lockstep,
                                                   fmt::format("sm{}", smId));
}

}  // namespace gpusc::sm
