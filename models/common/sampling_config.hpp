// Sampled simulation (docs/sampling.md): which parts of a timing-mode run the cycle-level model
// simulates in detail and which it extrapolates from them, the functional engine executing
// everything so that memory stays exact.
//
// mode kernel: launches are grouped by what the functional engine observes of them (the kernel,
// its grid and block shape, then its warp instructions, instruction mix and mean active lanes,
// each within tolerance_pct of the group's first member). The first two launches of a group run
// in detail (its caches cold, then warm); so does every detail_every-th member after them, which
// measures how much the group's cycles per warp instruction vary. The others run in the
// functional engine and get the group's warm cycles per warp instruction times their own warp
// instructions (energy scaled alike), with an error bound from the spread of the group's
// detailed members (gpu/kernel_sampler.hpp).
//
// mode wave: within a launch that runs in detail, CTA waves (as many CTAs as the GPU holds at
// once) run in the cycle-level model until the warp instructions per cycle of the last h waves
// agree within wave_stable_pct with the h waves before them, and their mean is known within it
// (h from wave_windows up; waves before the launch has turned the L2 over, if it would, are
// warm-up); then CTAs start only until whole waves are left, the started ones finish, and the
// functional engine runs the rest. Their warp instructions at the last h waves' rate give the
// launch's remaining cycles (gpu/wave_sampler.hpp).
//
// mode kernel+wave: both.
#pragma once

#include <cstdint>
#include <string>

#include "common/config.hpp"

namespace gpusc {

struct SamplingConfig : config::Section {
  std::string mode = "none";  // none | kernel | wave | kernel+wave
  double tolerance_pct = 5.0;
  uint32_t detail_every = 8;
  double wave_stable_pct = 2.0;
  // Kernel sampling: a launch that starts a group may borrow the CPI of a measured group of the
  // same kernel and block that behaves alike and differs in work by at most this (0: never;
  // gpu/kernel_sampler.hpp).
  double borrow_pct = 0.0;
  uint32_t wave_windows = 3;
  // What runs in the functional engine warms the L2 with its global accesses (docs/sampling.md).
  bool warm_l2 = true;

  bool enabled() const { return mode != "none"; }
  bool kernels() const { return mode == "kernel" || mode == "kernel+wave"; }
  bool waves() const { return mode == "wave" || mode == "kernel+wave"; }

  template <class V>
  void visit(V& v) {
    v.field("mode", mode,
            "Sampled simulation in timing mode: none (every launch in detail), kernel (a "
            "launch like an earlier detailed one of its group runs in the functional engine and "
            "its cycles and energy are extrapolated), wave (a launch's CTA waves run in detail "
            "until its rate is stable, the rest in the functional engine) or kernel+wave (both; "
            "docs/sampling.md)",
            config::OneOf{{"none", "kernel", "wave", "kernel+wave"}});
    v.field("tolerance_pct", tolerance_pct,
            "How far a launch's warp instructions, instruction mix and mean active lanes may "
            "differ from its group's first member, in %, for the launch to join the group",
            config::Range<double>{0.0, 100.0});
    v.field("detail_every", detail_every,
            "After a group's first two members (run in detail: cold, then warm), every this "
            "many-th member runs in detail too (the spread of the detailed members bounds the "
            "extrapolation's error; 1: all in detail)",
            config::Range<uint32_t>{1, 1000000});
    v.field("borrow_pct", borrow_pct,
            "Kernel sampling: a launch that fits no group may take the cycles per warp "
            "instruction of a measured group of the same kernel, block and dynamic shared memory "
            "whose first member has its instruction mix, mean active lanes and memory units per "
            "access within tolerance_pct and its warp instructions and CTAs within this, in %, "
            "and run in the functional engine; the first such launch of a kernel and every "
            "detail_every-th after it run in detail to check the borrowed CPI, and their errors "
            "bound the borrowed estimates (0: a new group always runs its first two members in "
            "detail)",
            config::Range<double>{0.0, 1000.0});
    v.field("wave_stable_pct", wave_stable_pct,
            "Wave sampling: a launch's rate is stable when the warp instructions per cycle of its "
            "last h CTA waves differ from those of the h waves before them by at most this, in "
            "%, and twice the standard error of their mean rate is within it too (h from "
            "wave_windows up, as the waves' spread needs; the warm-up waves are never compared: "
            "the first, and those before the launch has turned the L2 over where it would: "
            "docs/sampling.md)",
            config::Range<double>{0.01, 100.0});
    v.field("wave_windows", wave_windows,
            "Wave sampling: the least h, the number of consecutive CTA waves (the last) whose "
            "rate is compared with as many before them; when they agree, the rest of the "
            "launch's CTAs run in the functional engine at the last h waves' rate",
            config::Range<uint32_t>{2, 1000});
    v.field("warm_l2", warm_l2,
            "After an extrapolated launch or a launch's remaining CTA waves run in the functional "
            "engine, their latest global accesses (up to 8 times as many lines as the L2 holds) "
            "are placed in the L2 in order, as the cycle-level model would have left it (false: "
            "the L2 keeps what the detailed part left)");
    if (!enabled()) v.unused("warm_l2", "sampling.mode is none");
    if (!kernels()) {
      const std::string why = "sampling.mode is " + mode + " (kernel or kernel+wave use it)";
      v.unused("tolerance_pct", why);
      v.unused("detail_every", why);
      v.unused("borrow_pct", why);
    } else if (detail_every == 1 && borrow_pct > 0) {
      v.unused("borrow_pct",
               "sampling.detail_every is 1: every launch runs in detail, a borrowing one too");
    }
    if (!waves()) {
      const std::string why = "sampling.mode is " + mode + " (wave or kernel+wave use it)";
      v.unused("wave_stable_pct", why);
      v.unused("wave_windows", why);
    }
  }
};

}  // namespace gpusc
