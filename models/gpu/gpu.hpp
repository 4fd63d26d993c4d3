// The GPU top, built from a platform configuration: SMs, the CTA scheduler, and the memory
// system behind the SMs' sockets, which is either the hierarchy of docs/memory-system.md
// (per-SM L1 data caches, the interconnect, per-partition L2 slices and memory controllers)
// or, with memory.model: fixed-latency, a target answering after a fixed number of cycles.
// With gpu.check_protocol, a ProtocolChecker sits on every memory connection.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <systemc>

#include "cache/l1_data_cache.hpp"
#include "cache/l2_slice.hpp"
#include "common/address_map.hpp"
#include "common/mem_access.hpp"
#include "common/platform_config.hpp"
#include "common/protocol_checker.hpp"
#include "dram/memory_controller.hpp"
#include "func/access_log.hpp"
#include "gpu/core_clock_domain.hpp"
#include "gpu/cta_scheduler.hpp"
#include "gpu/fixed_latency_memory.hpp"
#include "noc/interconnect.hpp"
#include "pdn/pdn.hpp"
#include "power/energy_model.hpp"
#include "rtl/rtl_waves.hpp"
#include "sm/sm.hpp"

namespace gpusc::gpu {

class Gpu : public sc_core::sc_module {
 public:
  Gpu(const sc_core::sc_module_name& name, const PlatformConfig& cfg);
  ~Gpu() override;

  const PlatformConfig& config() const { return cfg_; }
  sc_core::sc_time corePeriod() const { return period_; }
  std::vector<sm::Sm*> sms() const;
  CtaScheduler& ctaScheduler() { return *ctaScheduler_; }
  // The process that evaluates the SMs' cycles, on one or more host threads.
  CoreClockDomain& coreClockDomain() { return *coreDomain_; }
  // Host threads (1: the simulation thread alone) for the SMs and the mesh's routers; results do
  // not depend on it.
  void setHostThreads(unsigned n, ThreadPolicy policy);
  bool hierarchy() const { return fixed_ == nullptr; }

  // The memory system's statistics: totals and per unit (L1 per SM, interconnect, L2 and DRAM
  // per slice, DRAM per partition), or the fixed-latency target's request count.
  nlohmann::json memoryStatsJson() const;
  void resetMemoryStats();
  // Empties caches and queues (a new run); the memory system must be idle.
  void resetMemoryState();
  // The line power window of every L1 data cache and L2 slice (cache/line_power.hpp): begin
  // opens it at the current time, close ends it after the cycle in progress, each cache in
  // cycles of its own clock. resetMemoryStats() and resetMemoryState() open one too.
  void beginPowerWindow();
  void closePowerWindow();
  // gpusc run --vcd with co-simulated blocks (docs/rtl-cosim.md "Waveforms"): closes the
  // voltage VCD (pdn.monitor.vcd_file) and merges the verilated blocks' waves into it. Without
  // them, nothing. InputError if the file cannot be rewritten.
  void closeWaves();
  // The waves of the verilated blocks (nullptr: not traced).
  rtl::RtlWaves* rtlWaves() { return waves_.get(); }
  // Violations the protocol checkers recorded (gpu.check_protocol), after finishing them.
  std::vector<std::string> protocolViolations();
  // The memory units holding requests, e.g. "sm3.l1d, interconnect (5 packets)"; empty when
  // the memory system is idle. For diagnostics.
  std::string memoryUnitsInFlight() const;

  // The energy model (nullptr with power.enabled false) and its inputs: what each SM's L1D and
  // the memory side did since the statistics were reset.
  power::EnergyModel* energyModel() { return energy_.get(); }
  std::vector<power::CacheEnergyInputs> l1EnergyInputs() const;
  power::UncoreEnergyInputs uncoreEnergyInputs() const;
  // The power-delivery network and its voltage monitor (nullptr with pdn.enabled false).
  pdn::Pdn* pdn() { return pdn_.get(); }

  cache::L1DataCache& l1(uint32_t sm) { return *l1_[sm]; }
  // L2 slice `slice` (partition-major: l2.slices_per_partition per partition).
  cache::L2Slice& l2(uint32_t slice) { return *l2_[slice]; }
  uint32_t l2Slices() const { return static_cast<uint32_t>(l2_.size()); }
  // The L2's lines the work since resetMemoryStats (a launch) touched, over all slices
  // (L2Slice::census; nothing without an L2).
  cache::L2Slice::LineCensus l2Census(double growth) const;
  // The host wrote [addr, addr + bytes) of device memory: with l2.host_writes write-back or
  // write-through (and an L2), each L2 line it touches takes the bytes written
  // (L2Slice::hostWrite), in address order. Nothing otherwise. Between launches only.
  void hostWrote(uint64_t addr, uint64_t bytes);
  // Sampled simulation: what ran in the functional engine touched the global lines in `log`;
  // each L2 line they map to takes them in order, oldest first (L2Slice::warm), as the
  // cycle-level model would have left it. Nothing without an L2. Between launches only.
  void warmL2(const func::AccessLog& log);
  dram::MemoryController& memoryController(uint32_t partition) { return *mc_[partition]; }
  noc::Interconnect& interconnect() { return *noc_; }

 private:
  // Calls f(slice, line, mask) for the pieces of device memory [addr, addr + bytes), in address
  // order: each lies in one interleave chunk (contiguous in its slice) and one L2 line; `line`
  // is that line's slice-local address and `mask` the piece's bytes in it.
  template <class F>
  void forEachL2Piece(const AddressMap& map, uint64_t addr, uint64_t bytes, F&& f) const;
  // Binds `from` to `to`, through a new checker when gpu.check_protocol is set.
  template <class From, class To>
  void connect(From& from, To& to, const std::string& name);

  // Traces the verilated blocks of the SMs pdn.monitor.vcd_sms selects, of their L1s, of the
  // L2 slices and of the CTA scheduler into waves_.
  void traceRtlBlocks();
  void attachUnits();

  PlatformConfig cfg_;
  sc_core::sc_time period_;
  std::unique_ptr<rtl::RtlWaves> waves_;  // first: outlives every block that writes to it
  bool wavesClosed_ = false;
  std::unique_ptr<CongestionProbe> probe_;  // over the interconnect (hierarchy only)
  PayloadPool pool_;
  // Each SM and its L1 take payloads from a pool of their own: a host thread evaluating the SM
  // acquires them (payloads go back to their pool on the simulation thread).
  std::vector<std::unique_ptr<PayloadPool>> smPools_;
  std::vector<std::unique_ptr<sm::Sm>> sms_;
  // Runs the clocked units below in a fixed order within each instant (edge_scheduler.hpp).
  std::unique_ptr<EdgeScheduler> edges_;
  std::unique_ptr<CoreClockDomain> coreDomain_;
  std::unique_ptr<CtaScheduler> ctaScheduler_;
  std::unique_ptr<FixedLatencyMemory> fixed_;
  std::vector<std::unique_ptr<cache::L1DataCache>> l1_;
  std::unique_ptr<noc::Interconnect> noc_;
  std::vector<std::unique_ptr<cache::L2Slice>> l2_;
  std::vector<std::unique_ptr<dram::MemoryController>> mc_;
  std::vector<std::unique_ptr<ProtocolChecker>> checkers_;
  std::unique_ptr<power::EnergyModel> energy_;
  std::unique_ptr<pdn::Pdn> pdn_;
};

}  // namespace gpusc::gpu
