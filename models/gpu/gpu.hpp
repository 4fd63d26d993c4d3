// The GPU top: SMs, the CTA scheduler and the memory behind the SMs' sockets, built from a
// platform configuration.
#pragma once

#include <memory>
#include <vector>

#include <systemc>

#include "common/mem_access.hpp"
#include "common/platform_config.hpp"
#include "gpu/cta_scheduler.hpp"
#include "gpu/fixed_latency_memory.hpp"
#include "sm/sm.hpp"

namespace gpusc::gpu {

class Gpu : public sc_core::sc_module {
 public:
  Gpu(const sc_core::sc_module_name& name, const PlatformConfig& cfg);

  const PlatformConfig& config() const { return cfg_; }
  sc_core::sc_time corePeriod() const { return period_; }
  std::vector<sm::Sm*> sms() const;
  CtaScheduler& ctaScheduler() { return *ctaScheduler_; }
  FixedLatencyMemory& memory() { return *memory_; }

 private:
  PlatformConfig cfg_;
  sc_core::sc_time period_;
  PayloadPool pool_;
  std::vector<std::unique_ptr<sm::Sm>> sms_;
  std::unique_ptr<CtaScheduler> ctaScheduler_;
  std::unique_ptr<FixedLatencyMemory> memory_;
};

}  // namespace gpusc::gpu
