#include "rtl/drowsy_line_controller_rtl.hpp"

#include <fmt/format.h>

#include "common/error.hpp"
#include "common/platform_config.hpp"
#include "common/rtl_mode.hpp"

namespace gpusc::rtl {

DrowsyLineControllerTransactor::DrowsyLineControllerTransactor(const DrowsyLineSettings& s,
                                                               uint32_t sets, uint32_t ways,
                                                               uint32_t banks,
                                                               BlockFactory makeBlock)
    : settings_(s), ways_(ways), bankShift_(0) {
  if (banks == 0 || (banks & (banks - 1)) != 0 || banks > sets)
    throw InputError(fmt::format(
        "the RTL drowsy-line controller needs a power-of-two number of banks up to the sets "
        "({} banks, {} sets)",
        banks, sets));
  while ((1u << bankShift_) < banks) ++bankShift_;
  const uint32_t frames = sets / banks * ways;
  for (uint32_t b = 0; b < banks; ++b) {
    Bank bank;
    bank.pins = makeBlock(frames);
    if (!bank.pins)
      throw InputError(fmt::format(
          "the RTL drowsy-line controller holds at most 1024 frames per bank, not {}", frames));
    DrowsyLineControllerPins& p = *bank.pins;
    p.timeoutPolicy = s.timeoutPolicy;
    p.timeout = s.timeout;
    p.wakeLatency = s.wakeLatency;
    p.lookahead = s.lookahead;
    banks_.push_back(std::move(bank));
  }
  powerOn(0);
}

void DrowsyLineControllerTransactor::clock(Bank& b) {
  b.pins->cycle = b.cycle;
  b.pins->clock();
  ++b.cycle;
  ++clocks_;
}

void DrowsyLineControllerTransactor::powerOn(uint64_t cycle) {
  for (Bank& b : banks_) {
    b.pins->rst = true;
    b.pins->access = false;
    b.pins->cycle = cycle;
    b.pins->clock();
    b.pins->rst = false;
    b.cycle = cycle;
  }
}

cache::DrowsyLineController::Touch DrowsyLineControllerTransactor::touch(uint32_t set, uint32_t way,
                                                                         uint64_t cycle,
                                                                         bool early) {
  Bank& b = banks_[bankOf(set)];
  if (cycle < b.cycle)
    throw InternalError(fmt::format(
        "drowsy-line controller: a touch of bank {} at cycle {} after the bank's cycle {}",
        bankOf(set), cycle, b.cycle));
  // Idle clocks while a frame is still ON (its counter counts); once quiet, none can change.
  while (b.cycle < cycle && !b.pins->quiet) clock(b);
  b.cycle = cycle;
  DrowsyLineControllerPins& p = *b.pins;
  p.access = true;
  p.frame = indexOf(set, way);
  p.early = early;
  clock(b);
  p.access = false;
  p.early = false;
  return cache::DrowsyLineController::Touch{p.wake, p.waitCycles};
}

void DrowsyLineControllerTransactor::trace(RtlWaves& w, const std::string& scope,
                                           uint64_t periodFs) {
  for (size_t b = 0; b < banks_.size(); ++b)
    banks_[b].pins->trace(w, fmt::format("{}.bank{}", scope, b), periodFs);
}

bool DrowsyLineControllerTransactor::drowsy(uint32_t set, uint32_t way) const {
  return banks_[bankOf(set)].pins->drowsy(indexOf(set, way));
}

void VerilatedDrowsyLineController::powerOn(uint64_t cycle) {
  DrowsyLineController::powerOn(cycle);
  rtl_.powerOn(cycle);
}

cache::DrowsyLineController::Touch VerilatedDrowsyLineController::touch(uint32_t set, uint32_t way,
                                                                        uint64_t cycle,
                                                                        bool early) {
  modelTouch(set, way, cycle, early);  // the last touch, for the accounting
  return rtl_.touch(set, way, cycle, early);
}

void LockstepDrowsyLineController::powerOn(uint64_t cycle) {
  DrowsyLineController::powerOn(cycle);
  rtl_.powerOn(cycle);
}

cache::DrowsyLineController::Touch LockstepDrowsyLineController::touch(uint32_t set, uint32_t way,
                                                                       uint64_t cycle, bool early) {
  const Touch m = modelTouch(set, way, cycle, early);
  const Touch r = rtl_.touch(set, way, cycle, early);
  if (m.wake != r.wake || m.waitCycles != r.waitCycles) {
    const std::string where = fmt::format("{}, bank {}", instance_, rtl_.bankOf(set));
    if (lockstep_.check("drowsy_line_controller", where, cycle, "wake", m.wake, r.wake))
      lockstep_.check("drowsy_line_controller", where, cycle, "wait_cycles", m.waitCycles,
                      r.waitCycles);
  }
  return m;
}

}  // namespace gpusc::rtl

namespace gpusc::cache {

std::unique_ptr<DrowsyLineController> makeDrowsyLineController(
    const DrowsyConfig& drowsy, DrowsyPolicy policy, bool lookahead, const CacheConfig& cache,
    const std::string& rtlMode, const std::string& instance, const std::string& block) {
  const DrowsyLineController::Params p =
      DrowsyLineController::paramsOf(drowsy, policy, lookahead, cache);
  const RtlMode mode = parseRtlMode("rtl.drowsy_controller", rtlMode);
  // A disabled cache is never touched: nothing to co-simulate either.
  if (mode == RtlMode::Model || policy == DrowsyPolicy::None || !cache.enabled)
    return std::make_unique<DrowsyLineController>(p);
  rtl::DrowsyLineSettings s;
  s.timeoutPolicy = policy == DrowsyPolicy::Timeout;
  s.timeout = drowsy.timeout_cycles;
  s.wakeLatency = drowsy.wake_latency;
  s.lookahead = p.lookahead;
  const bool late = block == "drowsy_line_controller_late";
  if (!late && block != "drowsy_line_controller")
    throw InputError(fmt::format("rtl.drowsy_controller_block: no block named '{}'", block));
  const auto lateBlock = [](uint32_t frames) -> std::unique_ptr<rtl::DrowsyLineControllerPins> {
    return frames <= 128 ? rtl::makeLateDrowsyLineControllerBlock() : nullptr;
  };
  rtl::DrowsyLineControllerTransactor t(
      s, cache.sets, cache.ways, cache.banks,
      late ? rtl::DrowsyLineControllerTransactor::BlockFactory(lateBlock)
           : &rtl::makeDrowsyLineControllerBlock);
  if (mode == RtlMode::Verilated)
    return std::make_unique<rtl::VerilatedDrowsyLineController>(p, std::move(t));
  return std::make_unique<rtl::LockstepDrowsyLineController>(p, std::move(t), instance);
}

}  // namespace gpusc::cache
