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
#pragma once

#include <cstdint>
#include <string>

#include "common/config.hpp"

namespace gpusc {

struct SamplingConfig : config::Section {
  std::string mode = "none";  // none | kernel
  double tolerance_pct = 5.0;
  uint32_t detail_every = 8;

  bool enabled() const { return mode != "none"; }

  template <class V>
  void visit(V& v) {
    v.field("mode", mode,
            "Sampled simulation in timing mode: none (every launch in detail) or kernel (a "
            "launch like an earlier detailed one of its group runs in the functional engine and "
            "its cycles and energy are extrapolated; docs/sampling.md)",
            config::OneOf{{"none", "kernel"}});
    v.field("tolerance_pct", tolerance_pct,
            "How far a launch's warp instructions, instruction mix and mean active lanes may "
            "differ from its group's first member, in %, for the launch to join the group",
            config::Range<double>{0.0, 100.0});
    v.field("detail_every", detail_every,
            "After a group's first two members (run in detail: cold, then warm), every this "
            "many-th member runs in detail too (the spread of the detailed members bounds the "
            "extrapolation's error; 1: all in detail)",
            config::Range<uint32_t>{1, 1000000});
    if (mode == "none") {
      v.unused("tolerance_pct", "sampling.mode is none (set it to kernel to sample)");
      v.unused("detail_every", "sampling.mode is none (set it to kernel to sample)");
    }
  }
};

}  // namespace gpusc
