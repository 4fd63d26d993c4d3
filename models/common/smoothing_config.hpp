// Hierarchical voltage smoothing (seed 001 section 5): a local first-order droop predictor in
// each SM that throttles it for a few cycles (5.2), and a global second-order droop detector
// in the CTA scheduler that staggers the SMs when many of them wake up together (5.3).
//
// Local (5.2, Fig. 18a): every cycle the SM estimates its power from the instructions it
// dispatched (integer, FP, SFU, LD/ST) and its register-file accesses, and keeps the last four
// estimates. Let p0 be the newest and pi the one i cycles older; the rise over k cycles
// (k = 2, 3, 4) is p0 - min(p1 .. p(k-1)), the largest increase that ends now and starts
// within the k-cycle window (defined only once k estimates are held). A large droop is
// predicted when any rise exceeds (>) thresholds_w[k-2]; the SM is then throttled for
// throttle_cycles cycles: at most issue_limit warp instructions issued per cycle (throttle:
// dispatch), at most rf_read_limit register-file reads per cycle (throttle: rf), or at most
// issue_limit more dispatches than the cycle before (throttle: ramp, which bounds the rise of
// the current rather than its level, so that releasing the throttle is no new surge).
//
// Global (5.3): every report_interval cycles each SM reports its active warps to the CTA
// scheduler. An SM "transitions" at a report where its count is at least 1 and was 0 at the
// previous report (0 before the first). At a report at cycle c a global droop is detected when
// at least min_sms SMs have a transition observed at a report in (c - window_cycles, c]: with
// reports every 10 cycles and a 30-cycle window, the reports at c - 20, c - 10 and c. The SMs
// of that set, in SM-id order, are delayed by 0, stagger_cycles, 2 x stagger_cycles, ...: the
// paper "delays each SM's execution by 50 cycles" so that they no longer align, and Fig. 9b
// measures alignment as consecutive cores offset by k cycles; the first SM is not delayed
// because only the relative offsets break the alignment. The set's transitions are then
// consumed (they cannot trigger again) and transitions are ignored for holdoff_cycles cycles
// (0: the longest delay just imposed), so the detector does not react to its own staggering.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/config.hpp"

namespace gpusc {

struct LocalSmoothingConfig : config::Section {
  // From `gpusc experiment seed001-train --size small` on gtx480 (the Pareto point with the
  // smallest sum of false negatives, 22.8%, and false positives, 22.6%;
  // docs/validation/seed001-training.md).
  std::vector<double> thresholds_w{0.616, 0.605, 0.878};
  uint32_t throttle_cycles = 4;
  std::string throttle = "ramp";  // dispatch | rf | ramp
  uint32_t issue_limit = 1;
  uint32_t rf_read_limit = 2;

  template <class V>
  void visit(V& v) {
    v.field("thresholds_w", thresholds_w,
            "W of estimated SM power rise over 2, 3 and 4 cycles above which a large first-order "
            "droop is predicted",
            config::Range<double>{0.0, 1e6}, config::Positive{});
    v.require(thresholds_w.size() == 3, "thresholds_w",
              fmt::format("thresholds_w needs 3 values (2, 3 and 4 cycles), got {}",
                          thresholds_w.size()));
    v.field("throttle_cycles", throttle_cycles, "Cycles an SM stays throttled after a prediction",
            config::Range<uint32_t>{1, 1u << 20});
    v.field("throttle", throttle,
            "What a throttled SM limits: dispatch (warp instructions issued per cycle) or rf "
            "(register-file reads per cycle)",
            config::OneOf{{"dispatch", "rf", "ramp"}});
    v.field("issue_limit", issue_limit, "Warp instructions a throttled SM issues per cycle",
            config::Range<uint32_t>{1, 64});
    v.field("rf_read_limit", rf_read_limit, "Register-file reads per cycle of a throttled SM",
            config::Range<uint32_t>{1, 1024});
  }
};

struct GlobalSmoothingConfig : config::Section {
  uint32_t report_interval = 10;
  uint32_t min_sms = 9;
  uint32_t window_cycles = 30;
  uint32_t stagger_cycles = 50;
  uint32_t holdoff_cycles = 0;  // 0: the longest delay imposed by the detection

  template <class V>
  void visit(V& v) {
    v.field("report_interval", report_interval,
            "Cycles between the SMs' active-warp reports to the CTA scheduler",
            config::Range<uint32_t>{1, 1u << 20});
    v.field("min_sms", min_sms,
            "SMs that must go from 0 to at least 1 active warp within window_cycles for a "
            "global droop",
            config::Range<uint32_t>{1, 1024});
    v.field("window_cycles", window_cycles,
            "Cycles in which the transitions count: reports at cycles in (c - window, c]",
            config::Range<uint32_t>{1, 1u << 20});
    v.field("stagger_cycles", stagger_cycles,
            "Delay step: the j-th SM (from 0, in SM order) of a detection waits j x this",
            config::Range<uint32_t>{0, 1u << 20});
    v.field("holdoff_cycles", holdoff_cycles,
            "Cycles after a detection in which transitions are ignored (0: the longest delay "
            "imposed)",
            config::Range<uint32_t>{0, 1u << 30});
  }
};

struct SmoothingConfig : config::Section {
  std::string mode = "none";  // none | local | global | hierarchical
  LocalSmoothingConfig local;
  GlobalSmoothingConfig global;

  bool localEnabled() const { return mode == "local" || mode == "hierarchical"; }
  bool globalEnabled() const { return mode == "global" || mode == "hierarchical"; }

  template <class V>
  void visit(V& v) {
    v.field("mode", mode,
            "Voltage smoothing (seed 001 section 5): none, local (per-SM first-order droop "
            "predictor and throttle), global (staggering SMs that wake together), hierarchical "
            "(both)",
            config::OneOf{{"none", "local", "global", "hierarchical"}});
    v.field("local", local, "Local first-order droop predictor and throttle of each SM");
    v.field("global", global, "Global second-order droop detector in the CTA scheduler");
  }
};

}  // namespace gpusc
