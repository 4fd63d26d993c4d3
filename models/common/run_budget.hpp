// What one run may still spend: the limits of a platform's `limits` section, the wall-clock
// deadline they imply and the caller's interrupt flag, against the cycles and warp instructions
// of the launches already finished. A Device owns one; the functional engine and the timing
// engine ask it between warp instructions and between simulation slices, and throw RunStopped
// (common/error.hpp) when it says stop.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "common/error.hpp"
#include "common/platform_config.hpp"

namespace gpusc {

class RunBudget {
 public:
  static constexpr uint64_t kUnlimited = ~0ull;

  explicit RunBudget(const LimitsConfig& limits = {}, const std::atomic<bool>* interrupt = nullptr)
      : limits_(limits), interrupt_(interrupt), start_(std::chrono::steady_clock::now()) {}

  // Set before the run starts: the flag a signal handler raises (null: none).
  void setInterruptFlag(const std::atomic<bool>* flag) { interrupt_ = flag; }
  const LimitsConfig& limits() const { return limits_; }

  // Whether anything may stop the run early (otherwise the engines skip their checks).
  bool active() const { return limits_.any() || interrupt_ != nullptr; }

  // Core cycles / warp instructions the current launch may still run, given what it has run.
  uint64_t cyclesLeft(uint64_t launchCycles) const {
    return left(limits_.max_cycles, cycles_ + launchCycles);
  }
  uint64_t instructionsLeft(uint64_t launchInsts) const {
    return left(limits_.max_warp_instructions, insts_ + launchInsts);
  }

  // The host-side reasons to stop (the interrupt flag, the wall-clock limit), or none.
  std::optional<StopReason> hostStop() const {
    if (interrupt_ != nullptr && interrupt_->load(std::memory_order_relaxed))
      return StopReason::Interrupted;
    if (limits_.timeout_seconds > 0 && elapsedSeconds() >= limits_.timeout_seconds)
      return StopReason::Timeout;
    return std::nullopt;
  }

  // Every reason to stop now, instructions first, for a launch that has run `launchCycles`
  // cycles and `launchInsts` warp instructions.
  std::optional<StopReason> check(uint64_t launchCycles, uint64_t launchInsts) const {
    if (limits_.max_warp_instructions && instructionsLeft(launchInsts) == 0)
      return StopReason::MaxInstructions;
    if (limits_.max_cycles && cyclesLeft(launchCycles) == 0) return StopReason::MaxCycles;
    return hostStop();
  }

  // A launch ended (completely or not): what it spent counts against the rest of the run.
  void spend(uint64_t cycles, uint64_t insts) {
    cycles_ += cycles;
    insts_ += insts;
  }

  double elapsedSeconds() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }

  // The one-line message of a stop, naming the limit and what the run had done.
  std::string message(StopReason r, uint64_t launchCycles, uint64_t launchInsts) const {
    const uint64_t cycles = cycles_ + launchCycles, insts = insts_ + launchInsts;
    switch (r) {
      case StopReason::MaxCycles:
        return fmt::format(
            "run stopped at the cycle limit (limits.max_cycles = {}) after {} warp "
            "instructions; partial results are marked incomplete",
            limits_.max_cycles, insts);
      case StopReason::MaxInstructions:
        return fmt::format(
            "run stopped at the instruction limit (limits.max_warp_instructions = {}) "
            "after {} warp instructions{}; partial results are marked incomplete",
            limits_.max_warp_instructions, insts,
            cycles ? fmt::format(" and {} cycles", cycles) : std::string());
      case StopReason::Timeout:
        return fmt::format(
            "run stopped at the time limit (limits.timeout_seconds = {:g}) after {:.1f} s, "
            "{} warp instructions; partial results are marked incomplete",
            limits_.timeout_seconds, elapsedSeconds(), insts);
      case StopReason::Interrupted:
        return fmt::format(
            "run interrupted after {:.1f} s, {} warp instructions; partial results are "
            "marked incomplete",
            elapsedSeconds(), insts);
    }
    return "run stopped";
  }

 private:
  static uint64_t left(uint64_t limit, uint64_t used) {
    if (limit == 0) return kUnlimited;
    return used >= limit ? 0 : limit - used;
  }

  LimitsConfig limits_;
  const std::atomic<bool>* interrupt_;
  std::chrono::steady_clock::time_point start_;
  uint64_t cycles_ = 0, insts_ = 0;
};

}  // namespace gpusc
