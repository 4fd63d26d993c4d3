// The drowsy-line controller of a data cache (seed 000): the decisions of cache::LinePower
// behind the platform key rtl.drowsy_controller (docs/rtl-cosim.md). This class is the C++
// model (`model`): one last-touch cycle per line frame. models/rtl derives the verilated RTL
// (`verilated`, one models/rtl/verilog/drowsy_line_controller.sv per bank) and both in lockstep
// (`lockstep`) from it. The model's last-touch cycles are kept in every mode: LinePower's
// accounting (drowsy line-cycles, inter-access histogram) reads them, as statistics, not
// hardware.
//
// A touch is a hit or a fill of frame (set, way) at a cycle. Each bank serves one access per
// cycle (CacheCore::claimBank), so the touches of one bank come in increasing cycle order; the
// RTL relies on it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/lockstep.hpp"

namespace gpusc {
struct CacheConfig;
struct DrowsyConfig;
}  // namespace gpusc

namespace gpusc::rtl {
class RtlWaves;  // rtl/rtl_waves.hpp
}

namespace gpusc::cache {

enum class DrowsyPolicy : uint8_t { None, AfterAccess, Timeout };

class DrowsyLineController {
 public:
  // What a touch finds: whether its frame was DROWSY (the touch wakes it) and the cycles the
  // access waits for it (with `early`, the warp scheduler's look-ahead hides part of them).
  struct Touch {
    bool wake = false;
    uint32_t waitCycles = 0;
  };
  static constexpr uint64_t kNever = ~0ull;

  struct Params {
    DrowsyPolicy policy = DrowsyPolicy::None;
    uint64_t onCycles = 1;  // cycles a frame stays ON from a touch (timeout; 1: after-access)
    uint32_t wakeLatency = 0, hiddenLatency = 0;  // the wait of a touch, of an early touch
    uint32_t lookahead = 0;                       // look-ahead cycles (0: look-ahead off)
    uint32_t sets = 1, ways = 1;
  };
  // A cache's parameters: its drowsy settings with `policy` and `lookahead` (drowsy.lookahead),
  // its geometry.
  static Params paramsOf(const DrowsyConfig& drowsy, DrowsyPolicy policy, bool lookahead,
                         const CacheConfig& cache);

  explicit DrowsyLineController(const Params& p);
  virtual ~DrowsyLineController() = default;
  DrowsyLineController(const DrowsyLineController&) = delete;
  DrowsyLineController& operator=(const DrowsyLineController&) = delete;

  // Power-on at `cycle` (a new Device): every frame untouched, DROWSY.
  virtual void powerOn(uint64_t cycle);
  // A touch of frame (set, way) at `cycle`.
  virtual Touch touch(uint32_t set, uint32_t way, uint64_t cycle, bool early) {
    return modelTouch(set, way, cycle, early);
  }

  const Params& params() const { return p_; }
  DrowsyPolicy policy() const { return p_.policy; }
  size_t frames() const { return lastTouch_.size(); }
  // The model's cycle of the last touch of a frame (set x ways + way), or kNever.
  uint64_t lastTouch(size_t frame) const { return lastTouch_[frame]; }
  // The first DROWSY cycle after a touch at `last` (0 if never touched).
  uint64_t drowsyFrom(uint64_t last) const { return last == kNever ? 0 : last + p_.onCycles; }
  // Whether frame (set, way) is DROWSY in `cycle` as far as the touches so far go (model).
  bool drowsyAt(uint32_t set, uint32_t way, uint64_t cycle) const;

  // Lockstep: the first divergence between the model and the RTL (empty: none).
  const std::string& divergence() const { return lockstep_.divergence(); }
  // gpusc run --vcd: the RTL's signals into `waves` under `scope` (rtl/rtl_waves.hpp), clocks
  // of platform cycle c at c x `periodFs`. The model has none.
  virtual void traceWaves(rtl::RtlWaves& waves, const std::string& scope, uint64_t periodFs) {
    (void)waves;
    (void)scope;
    (void)periodFs;
  }

 protected:
  // The model's decision, recorded (the frame's last touch moves to `cycle`).
  Touch modelTouch(uint32_t set, uint32_t way, uint64_t cycle, bool early);

  LockstepMonitor lockstep_;

 private:
  Params p_;
  std::vector<uint64_t> lastTouch_;  // per frame: cycle of its last touch, or kNever
};

// The implementation rtl.drowsy_controller (`rtlMode`) names for one cache: its geometry
// `cache`, its drowsy settings `drowsy` with `policy`, `lookahead` (drowsy.lookahead is on),
// `instance` naming it in lockstep messages ("L1 of sm3", "L2 slice 5"), `block` the verilated
// block (rtl.drowsy_controller_block). Policy none and a disabled cache always get the model
// (nothing to co-simulate). Defined in models/rtl/drowsy_line_controller_rtl.cpp.
std::unique_ptr<DrowsyLineController> makeDrowsyLineController(
    const DrowsyConfig& drowsy, DrowsyPolicy policy, bool lookahead, const CacheConfig& cache,
    const std::string& rtlMode, const std::string& instance,
    const std::string& block = "drowsy_line_controller");

}  // namespace gpusc::cache
