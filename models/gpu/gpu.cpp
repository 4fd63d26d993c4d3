#include "gpu/gpu.hpp"

#include <cmath>

#include <fmt/format.h>

namespace gpusc::gpu {

namespace {
sc_core::sc_time periodOf(double mhz) {
  // Femtoseconds, so 700 MHz (1428571.4 fs) is off by a fraction of a femtosecond per cycle.
  return sc_core::sc_time::from_value(static_cast<uint64_t>(std::llround(1e9 / mhz)));
}
}  // namespace

Gpu::Gpu(const sc_core::sc_module_name& name, const PlatformConfig& cfg)
    : sc_core::sc_module(name), cfg_(cfg), period_(periodOf(cfg.gpu.clocks.core_mhz)) {
  for (uint32_t i = 0; i < cfg_.gpu.num_sms; ++i)
    sms_.push_back(
        std::make_unique<sm::Sm>(fmt::format("sm{}", i).c_str(), i, cfg_, pool_, period_));
  ctaScheduler_ = std::make_unique<CtaScheduler>("cta_scheduler", cfg_, sms(), period_);
  memory_ =
      std::make_unique<FixedLatencyMemory>("memory", period_ * double(cfg_.memory.fixed_latency));
  for (auto& s : sms_) s->memory_socket.bind(memory_->sm_sockets);
}

std::vector<sm::Sm*> Gpu::sms() const {
  std::vector<sm::Sm*> out;
  for (const auto& s : sms_) out.push_back(s.get());
  return out;
}

}  // namespace gpusc::gpu
