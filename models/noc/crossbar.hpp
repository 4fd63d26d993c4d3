// A crossbar interconnect (GPGPU-Sim's GTX480 configuration, config_fermi_islip.icnt): every
// SM's and every L2 slice's network interface on one port of a single switch. The switch is a
// Router (noc/mesh_router.hpp) with a port per node and a routing table that sends a packet to
// its destination's port: one flit per output per cycle, noc.virtual_channels VCs per virtual
// network on every input with noc.vc_buffer_flits-flit buffers and credits, the same allocators
// (noc.allocator) and input speedup as a mesh router. A packet crosses it once: latency is the
// router pipeline plus one link (noc.link_latency) into the destination's NI.
#pragma once

#include <memory>

#include "noc/interconnect.hpp"
#include "noc/mesh_router.hpp"

namespace gpusc::noc {

class Crossbar : public Interconnect {
 public:
  Crossbar(const sc_core::sc_module_name& name, const PlatformConfig& cfg);
  ~Crossbar() override;

  static constexpr const char* kSwitchName = "switch";
  const Router& crossbarSwitch() const { return *switch_; }

 private:
  std::unique_ptr<Router> switch_;
};

}  // namespace gpusc::noc
